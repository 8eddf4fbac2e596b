"""``search:playouts``: the network's candidates valued by its own playouts at play time."""

from __future__ import annotations

import time

import numpy as np
import pytest

from agents.playout_search import PlayoutSearchAgent, gumbel_candidates
from agents.registry import make_agent
from tonk_env.agent import DecisionTimeout
from tonk_env.engine import is_over, make_rules, new_game, seat_info
from tonk_env.obs import LazyObs
from tonk_env.play import play, start_hand

SPEC = "search:playouts?worlds=6&candidates=3"


def _hand(spec: str, deal: int, seed: int = 3) -> tuple[list[tuple[int, int]], list[int]]:
    """Every (seat, action) of one hand of ``spec`` in seat 0 against zoo:2p, and the searcher's moves
    where it had a choice, next to its network's own."""
    rules = make_rules()
    agent = make_agent(spec, seed=seed)
    seats = [agent, make_agent("zoo:2p", seed=1)]
    s = new_game(rules, 2, seed=deal)
    start_hand(seats, 2, rules, seeds=[seed, 1])
    moves: list[tuple[int, int]] = []
    differs: list[int] = []

    def on_move(st: object, a: int) -> None:
        moves.append((st.cur, a))  # type: ignore[attr-defined]

    real = agent.act

    def act(obs: dict, info: object) -> int:
        a = real(obs, info)
        if len(info.legal) > 1:  # type: ignore[attr-defined]
            differs.append(int(a != agent.net.act(obs, info)))
        return a

    agent.act = act  # type: ignore[method-assign]
    play(s, seats, on_move=on_move)  # the hand loop refuses an illegal move
    assert is_over(s)
    return moves, differs


def test_plays_legal_moves_the_same_for_a_seed_and_sometimes_not_the_networks() -> None:
    differs: list[int] = []
    for deal in range(6):
        first, d = _hand(SPEC, deal)
        assert first == _hand(SPEC, deal)[0]  # same seed, same hand: the same moves
        differs += d
    assert len(differs) > 10 and 0 < sum(differs) < len(differs)


def test_a_large_tau_plays_the_networks_choice() -> None:
    for deal in range(3):
        _, d = _hand(SPEC + "&tau=10", deal)
        assert d and sum(d) == 0


def test_candidates_start_with_the_argmax() -> None:
    logits = np.array([0.0, 3.0, 1.0, 2.0, 5.0])
    mask = np.array([1, 1, 1, 1, 0], dtype=np.int8)
    got = gumbel_candidates(logits, mask, 3, np.random.default_rng(0))
    assert got[0] == 1 and len(set(got.tolist())) == 3 and all(mask[a] for a in got)


def test_bad_parameters_and_tables_are_refused_in_one_line() -> None:
    with pytest.raises(ValueError, match=r"'search:playouts': parameter net='heuristic:expert' is not"):
        make_agent("search:playouts?net=heuristic:expert")
    with pytest.raises(ValueError, match="worlds"):
        make_agent("search:playouts?worlds=0")
    agent = make_agent("search:playouts?net=zoo:3p")
    with pytest.raises(ValueError, match="2p"):
        agent.reset_hand(0, 3, make_rules())  # the learned opponent model is for 2 players
    make_agent("search:playouts?net=zoo:3p&belief=").reset_hand(0, 3, make_rules())  # the selection model


def test_an_opponent_network_changes_the_values_and_must_fit_the_table() -> None:
    rules = make_rules()
    s = new_game(rules, 2, seed=4)
    while len(seat_info(s, s.cur).legal) < 3:
        s.play(seat_info(s, s.cur).legal[-1])
    info = seat_info(s, s.cur)
    acts = np.array(info.legal[:3])
    base, same, other = (
        make_agent(SPEC + extra, seed=0) for extra in ("", "&opponent=zoo:2p", "&opponent=zoo:hit_penalty")
    )
    for agent in (base, same):  # `other` (a network of another rules preset) is not seated, only asked
        agent.reset_hand(s.cur, 2, rules)
    assert np.array_equal(base.values(info, acts), same.values(info, acts))  # the network itself as opponent
    assert not np.array_equal(base.values(info, acts), other.values(info, acts))
    with pytest.raises(ValueError, match="trained for 3 players"):
        make_agent(SPEC + "&opponent=zoo:3p").reset_hand(0, 2, rules)
    with pytest.raises(ValueError, match=r"parameter opponent='heuristic:expert' is not a policy network"):
        make_agent(SPEC + "&opponent=heuristic:expert")


def test_a_passed_deadline_stops_the_decision() -> None:
    agent = make_agent(SPEC, seed=0)
    assert isinstance(agent, PlayoutSearchAgent)
    rules = make_rules()
    agent.reset_hand(0, 2, rules)
    s = new_game(rules, 2, seed=4)
    while len(seat_info(s, s.cur).legal) < 2:
        s.play(seat_info(s, s.cur).legal[0])
    agent.reset_hand(s.cur, 2, rules)
    agent.deadline = time.monotonic() - 1
    with pytest.raises(DecisionTimeout):
        agent.act(LazyObs(s, s.cur), seat_info(s, s.cur))
