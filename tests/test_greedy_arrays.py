"""``GreedyAgent.act_arrays`` (from observation arrays) makes the choices of ``act`` on a SeatInfo."""

from __future__ import annotations

import random

import numpy as np
import pytest

from agents.heuristic import GreedyAgent
from tonk_env.engine import legal_actions, make_rules, new_game, seat_info
from tonk_env.engine.actions import DISCARD, DRAW
from tonk_env.engine.state import OVER, legal_mask
from tonk_env.obs import observation
from tonk_env.vector import TonkVectorEnv


def _positions(rules, n: int, hands: int, seed: int):
    """Every decision of ``hands`` hands played by a mix of greedy and random seats."""
    rng = random.Random(seed)
    greedy = GreedyAgent()
    out = []
    for h in range(hands):
        s = new_game(rules, n, seed=seed * 1000 + h)
        while s.phase != OVER:
            seat = s.cur
            info = seat_info(s, seat)
            out.append((observation(s, seat), legal_mask(s), info))
            legal = legal_actions(s)
            s.play(greedy.act({}, info) if rng.random() < 0.6 else rng.choice(legal))
    return out


@pytest.mark.parametrize(
    ("preset", "options", "n", "drop_at"),
    [
        ("standard", {}, 2, 10),
        ("standard", {"ace_high": True}, 3, 10),
        ("hit_penalty", {}, 2, 14),
        ("seven_card", {}, 4, 5),
    ],
)
def test_act_arrays_chooses_as_act_does(preset: str, options: dict, n: int, drop_at: int) -> None:
    rules = make_rules(preset, **options)
    positions = _positions(rules, n, hands=60, seed=n + drop_at)
    agent = GreedyAgent(drop_at=drop_at)
    obs = np.stack([o for o, _, _ in positions])
    masks = np.stack([m for _, m, _ in positions])
    got = agent.act_arrays(obs, masks, rules, n)
    want = np.asarray([agent.act({}, info) for _, _, info in positions])
    kinds = {int(a) for a in want}
    assert len(positions) > 500 and len(kinds) > 20  # drops, takes, spreads, hits and discards
    bad = np.flatnonzero(got != want)
    assert not bad.size, (
        f"{bad.size} of {len(positions)} differ, first at {bad[0]}: {got[bad[0]]} != {want[bad[0]]}"
    )


def test_the_vector_env_plays_greedy_without_mirrors_and_as_the_engine_would() -> None:
    env = TonkVectorEnv(num_envs=16, opponents="heuristic:greedy", check=True)
    env.reset(seed=3)
    rng = np.random.default_rng(0)
    for _ in range(200):  # check=True compares every game with its engine mirror, the greedy's moves too
        masks = env.action_masks()
        env.step(np.asarray([rng.choice(np.flatnonzero(m)) for m in masks]))
    fast = TonkVectorEnv(num_envs=16, opponents="heuristic:greedy")
    fast.reset(seed=3)
    assert fast.mirror(0) is None


def test_masks_of_another_table_are_refused() -> None:
    with pytest.raises(ValueError, match="580"):
        GreedyAgent().act_arrays(np.zeros((1, 338), np.float32), np.zeros((1, 580), np.int8), make_rules(), 2)


def test_greedies_of_every_game_decide_in_one_call_per_round(monkeypatch: pytest.MonkeyPatch) -> None:
    import agents.heuristic as heuristic

    calls: list[int] = []
    real = heuristic.greedy_moves

    def counted(obs, masks, *args):
        calls.append(len(obs))
        return real(obs, masks, *args)

    monkeypatch.setattr(heuristic, "greedy_moves", counted)
    per_game = [GreedyAgent() for _ in range(32)]  # a pool per game: one greedy object each
    env = TonkVectorEnv(num_envs=32, opponent_sampler=[lambda gen, n, seat, a=a: [a] for a in per_game])
    env.reset(seed=5)  # the learner sits first
    env.step(np.full(32, DRAW))
    env.step(np.asarray([np.flatnonzero(m[DISCARD : DISCARD + 52])[0] + DISCARD for m in env.action_masks()]))
    assert calls[0] == 32 and len(calls) >= 2  # each round of the 32 greedies' moves in one call
    other = GreedyAgent(drop_at=4)
    assert other.arrays_key != per_game[0].arrays_key  # another threshold chooses otherwise: its own call
