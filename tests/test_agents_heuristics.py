"""Key decisions of the baseline agents on scripted positions (stacked decks, scripted actions)."""

from __future__ import annotations

import random

import pytest
from helpers_engine import stack

from agents.registry import make_agent
from tonk_env.engine import (
    OVER,
    GameState,
    action_from_string,
    make_rules,
    new_game,
    seat_info,
    view_from_info,
)
from tonk_env.engine.actions import DROP, HIT_BOOK, SPREAD, TAKE
from tonk_env.obs import LazyObs


def position(
    hands: list[str],
    upcard: str,
    stock: str = "",
    actions: tuple[str, ...] = (),
    rules: str = "standard",
    **options: object,
) -> GameState:
    """Deal a stacked deck (the rest shuffled from a fixed seed) and play ``actions``."""
    r = make_rules(rules, **options)
    s = new_game(r, len(hands), seed=0, deck=stack(hands, upcard, stock))
    for text in actions:
        s.play(action_from_string(s, text))
    return s


def choose(spec: str, s: GameState, seed: int = 0) -> str:
    """The action string ``spec`` picks for the seat to act."""
    agent = make_agent(spec, seed=seed)
    info = seat_info(s, s.cur)
    a = agent.act(LazyObs(s, s.cur), info)
    assert a in info.legal
    return s.table.name(a)


AGENTS = ["random", "heuristic:greedy", "heuristic:expert", "heuristic:fast", "search:ismcts?budget=16"]


# --- greedy ------------------------------------------------------------------------------------


def test_greedy_takes_the_discard_that_completes_a_spread() -> None:
    s = position(["4H 5H 9C KD QS", "2C 3D 8S JC TD"], "6H")
    assert choose("heuristic:greedy", s) == "take"
    s.play(TAKE)
    assert choose("heuristic:greedy", s) == "spread 4H 5H 6H"


def test_greedy_draws_when_the_discard_does_not_help() -> None:
    s = position(["4H 5H 9C KD QS", "2C 3D 8S JC TD"], "7C")
    assert choose("heuristic:greedy", s) == "draw"


def test_greedy_drops_at_its_threshold_and_not_above() -> None:
    low = position(["AH 2C 3D 4S KD", "9C 9D 8S JC TD"], "7C")  # 1+2+3+4+10 = 20
    assert choose("heuristic:greedy?drop_at=20", low) == "drop"
    assert choose("heuristic:greedy?drop_at=19", low) == "draw"


def test_greedy_hits_its_highest_card() -> None:
    s = hit_position()
    hits = [s.table.name(a) for a in seat_info(s, 0).legal if HIT_BOOK <= a < SPREAD]
    assert sorted(hits) == ["hit 6H on 7H", "hit TH on 9H"]
    assert choose("heuristic:greedy", s) == "hit TH on 9H"


def test_greedy_discards_its_highest_loose_card() -> None:
    # KS KD are a pair, so QC is the highest loose card
    s = position(["KS KD QC 2H 3C", "9C 9D 8S JC TD"], "4C", "5D", actions=("draw",))
    assert choose("heuristic:greedy", s) == "discard QC"


def hit_position() -> GameState:
    """Seat 1 owns 7H 8H 9H; seat 0 holds TH (hits the high end) and 6H (the low end)."""
    return position(
        ["TH 6H 2S 3S KC", "7H 8H 9H QD JD"],
        "4C",
        "AC AD 8C",
        actions=("draw", "discard AC", "draw", "spread 7H 8H 9H", "discard QD", "draw"),
    )


def catch_position() -> GameState:
    """Seat 0 holds 3S 4S (7); seat 1 holds exactly AH AS, both taken from the pile (known)."""
    return position(
        ["AH AS 2C 2D 2H", "7C 7D 7S 9D JD"],
        "QC",
        "3S 4S",
        actions=(
            "draw",
            "spread 2C 2D 2H",
            "discard AH",  # seat 0: AS 3S
            "take",
            "spread 7C 7D 7S",
            "discard 9D",  # seat 1: AH JD
            "draw",
            "discard AS",  # seat 0: 3S 4S
            "take",
            "discard JD",  # seat 1: AH AS
        ),
    )


# --- expert ------------------------------------------------------------------------------------


def test_expert_takes_the_discard_that_completes_a_spread() -> None:
    s = position(["9H TH 8C KD QS", "2C 3D 8S JC TD"], "JH")
    assert choose("heuristic:expert", s) == "take"


def test_expert_does_not_drop_into_an_obvious_catch() -> None:
    s = catch_position()
    info = seat_info(s, 0)
    assert info.count == 7 and DROP in info.legal
    assert info.hand_sizes[1] == 2 and info.known[1].bit_count() == 2  # seat 1 has exactly AH AS = 2
    assert choose("heuristic:greedy", s) == "drop"  # a fixed threshold walks into the catch
    for spec in ["heuristic:expert", "heuristic:fast", "search:ismcts?budget=16"]:
        assert choose(spec, s) != "drop", spec


def test_expert_drops_a_very_low_hand_early() -> None:
    s = position(["AS AC 2D 2H 3C", "9C 9D 8S JC TD"], "KC")  # count 9 against five unknown cards
    assert choose("heuristic:expert", s) == "drop"


def test_expert_hits_its_highest_card() -> None:
    assert choose("heuristic:expert", hit_position()) == "hit TH on 9H"


def test_expert_hits_an_opponents_spread_under_hit_wait() -> None:
    # 6S can join seat 0's own book of sixes or seat 1's run 7S 8S 9S; with hit_wait the
    # expert makes the opponent wait instead of itself
    def pos(rules: str) -> GameState:
        return position(
            ["6D 6H 6C KC 2C", "7S 8S 9S QD 3D"],
            "JS",
            "TH 4D 6S",
            actions=(
                "draw",
                "spread 6C 6D 6H",
                "discard KC",
                "draw",
                "spread 7S 8S 9S",
                "discard QD",
                "draw",
            ),
            rules=rules,
        )

    assert choose("heuristic:expert", pos("hit_penalty")) == "hit 6S on 7S"
    s = pos("hit_penalty")
    s.play(action_from_string(s, "hit 6S on 7S"))
    assert s.waits[1] == 1 and s.waits[0] == 0


def test_expert_avoids_feeding_the_next_players_known_cards() -> None:
    # seat 1 took 9D from the pile; seat 0 holds loose 9C and 8H: 9C would pair the known 9D
    s = position(
        ["9D 9C 8H AS 2D", "8S 8C JD QD KH"],
        "5S",
        "4C 3H",
        actions=("draw", "discard 9D", "take", "discard KH", "draw"),
    )
    info = seat_info(s, 0)
    assert info.known[1] >> (13 + 8) & 1  # 9D is known to be in seat 1's hand
    assert choose("heuristic:expert?feed=0", s) == "discard 9C"
    assert choose("heuristic:expert", s) == "discard 8H"


# --- every agent -------------------------------------------------------------------------------


@pytest.mark.parametrize("spec", AGENTS)
@pytest.mark.parametrize(
    "rules,players",
    [("standard", 2), ("hit_penalty", 3), ("seven_card", 4), ("full_waiting", 2), ("no_upcard", 3)],
)
def test_agents_play_legal_actions_to_the_end(spec: str, rules: str, players: int) -> None:
    agents = [make_agent(spec, seed=i) for i in range(players)]
    for hand in range(3):
        s = new_game(make_rules(rules), players, seed=hand)
        for p, ag in enumerate(agents):
            ag.reset_hand(p, players, s.rules)
        while s.phase != OVER:
            info = seat_info(s, s.cur)
            a = agents[s.cur].act(LazyObs(s, s.cur), info)
            assert a in info.legal
            s.play(a)


@pytest.mark.parametrize("spec", AGENTS)
def test_agents_are_deterministic_given_their_seed(spec: str) -> None:
    def run(seed: int) -> list[int]:
        random.seed(12345)  # the global generator must not matter
        agents = [make_agent(spec, seed=seed), make_agent(spec, seed=seed + 1)]
        out = []
        for hand in range(3):
            s = new_game(make_rules(), 2, seed=hand)
            while s.phase != OVER:
                random.random()
                a = agents[s.cur].act(LazyObs(s, s.cur), seat_info(s, s.cur))
                out.append(a)
                s.play(a)
        return out

    assert run(3) == run(3)


def test_agents_use_only_the_seats_view() -> None:
    # the same view with different hidden cards must give the same choice
    s = position(["4H 5H 9C KD QS", "2C 3D 8S JC TD"], "7C", "AS 2S 3S 4S 5S")
    t = position(["4H 5H 9C KD QS", "KC KH QD 2H AH"], "7C", "AS 2S 3S 4S 5S")
    assert view_from_info(seat_info(s, 0)) == view_from_info(seat_info(t, 0))
    for spec in ["heuristic:expert", "search:ismcts?budget=24", "heuristic:fast", "random"]:
        a = make_agent(spec, seed=5).act(LazyObs(s, 0), seat_info(s, 0))
        b = make_agent(spec, seed=5).act(LazyObs(t, 0), seat_info(t, 0))
        assert a == b, spec


def test_every_agent_takes_a_discard_that_tonks_out() -> None:
    # seat 0 is down to 4H 5H; seat 1 throws 6H: taking it spreads 4H 5H 6H and empties the hand
    s = position(
        ["KC KD KH 4H 5H", "2C 3D 8S JC TD"],
        "QS",
        "9C 6H",
        actions=("draw", "spread KC KD KH", "discard 9C", "draw", "discard 6H"),
    )
    assert choose("heuristic:greedy", s) == "drop"  # count 9: greedy drops before looking at the pile
    for spec in ["heuristic:expert", "heuristic:fast", "search:ismcts?budget=16"]:
        assert choose(spec, s) == "take", spec


def test_lazy_obs_computes_on_first_access_only() -> None:
    s = new_game(make_rules(), 2, seed=1)
    obs = LazyObs(s, 0)
    assert not obs._cache
    assert obs["action_mask"].sum() == len(seat_info(s, 0).legal)
    assert set(obs) == {"observation", "action_mask"} and len(obs) == 2
    assert obs["observation"].dtype.name == "float32"
    assert LazyObs(s, 1)["action_mask"].sum() == 0  # not seat 1's turn
    with pytest.raises(KeyError):
        obs["nope"]


# --- the expert's fast paths against the plain formulas ------------------------------------------


def _plain_potential(hand: int, ctx) -> float:
    """potential() as first written: every rank, then every suit's near-runs."""
    from agents.heuristic import _NEAR_PAIRS, _near_run
    from tonk_env.engine.cards import RANK_MASKS, VALUES

    pot = 0.0
    for r in range(13):
        if (hand & RANK_MASKS[r]).bit_count() == 2:
            pot += ctx.p_any[(RANK_MASKS[r] & ctx.unseen).bit_count()] * 2 * VALUES[r]
    for s in range(4):
        for r, r2 in _NEAR_PAIRS[(hand >> (s * 13)) & 0x1FFF]:
            outs, value = _near_run(s, r, r2, ctx.ace_high)
            pot += ctx.p_any[(outs & ctx.unseen).bit_count()] * value
    return pot


def _plain_hidden_counts(pool, hidden, turns, selection, rng):
    """sample_hidden_counts() as first written: it shuffles the cards themselves."""
    from agents.hidden_counts import extra_cards
    from tonk_env.engine.cards import VALUES

    pool = pool.copy()
    out = [0] * len(hidden)
    for o, h in enumerate(hidden):
        if h <= 0:
            continue
        k = min(len(pool), h + extra_cards(turns[o], selection, rng))
        for i in range(k):
            j = i + int(rng.random() * (len(pool) - i))
            pool[i], pool[j] = pool[j], pool[i]
        kept = sorted(pool[:k], key=VALUES.__getitem__)[:h]
        out[o] = sum(VALUES[c] for c in kept)
        pool = [c for c in pool if c not in set(kept)]
    return out


def test_potential_is_the_plain_formula_bit_for_bit() -> None:
    from agents.heuristic import _Context, hand_score, potential
    from tonk_env.engine.cards import hand_value

    rng = random.Random(5)
    for g in range(40):
        s = new_game(make_rules("standard" if g % 2 else "hit_penalty"), 2 + g % 3, seed=g)
        ctx = _Context(seat_info(s, s.cur), horizon=4.0)
        for _ in range(50):
            hand = sum(1 << c for c in rng.sample(range(52), rng.randint(0, 9)))
            assert potential(hand, ctx) == _plain_potential(hand, ctx)
            want = hand_value(hand) - _plain_potential(hand, ctx) if hand else -25.0
            assert hand_score(hand, ctx) == want  # twice: computed, then memoised
            assert hand_score(hand, ctx) == want


def test_hidden_count_sampling_reads_the_generator_as_the_card_version() -> None:
    from agents.hidden_counts import sample_hidden_counts_many

    rng = random.Random(9)
    for trial in range(200):
        pool = rng.sample(range(52), rng.randint(5, 40))
        hidden = [rng.choice([0, 0, 1, 3, 5]) for _ in range(rng.randint(2, 4))]
        turns = [rng.randint(0, 12) for _ in hidden]
        a, b = random.Random(trial), random.Random(trial)
        got = sample_hidden_counts_many(pool, hidden, turns, 0.6, a, 7)
        want = [_plain_hidden_counts(pool, hidden, turns, 0.6, b) for _ in range(7)]
        assert got == want
        assert a.random() == b.random()  # the same draws consumed
