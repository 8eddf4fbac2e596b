"""Properties of random playouts, for every preset and 2-6 players (hypothesis).

The random player (``helpers_engine.BiasedPlayer``) drops rarely and prefers
spreads and hits, so that hands run long enough to reach spreads, hits, stock
exhaustion and ``max_turns``.
"""

from __future__ import annotations

import json
import random
from collections import Counter

import numpy as np
from helpers_engine import BiasedPlayer, playout, snapshot
from hypothesis import given, settings
from hypothesis import strategies as st

from tonk_env.engine import (
    PRESETS,
    RESULT_KINDS,
    TonkRules,
    action_from_string,
    action_to_string,
    apply,
    check_invariants,
    counts,
    is_legal,
    is_over,
    legal_actions,
    legal_mask,
    make_rules,
    new_game,
    payoffs,
    replay,
    to_record,
)
from tonk_env.engine.actions import HIT_HIGH, HIT_LOW

PRESET_NAMES = sorted(PRESETS)


@st.composite
def rules_st(draw: st.DrawFn) -> TonkRules:
    """A preset, sometimes changed in a few options (small max_turns included)."""
    preset = draw(st.sampled_from(PRESET_NAMES))
    options = draw(
        st.fixed_dictionaries(
            {},
            optional={
                "max_turns": st.integers(1, 40),
                "ace_high": st.booleans(),
                "may_discard_taken": st.booleans(),
                "caught_pay": st.sampled_from(["standard", "double_to_lowest_only", "everyone_double"]),
                "stock_out_tie": st.sampled_from(["void", "split"]),
                "wait_cumulative": st.booleans(),
                "spread_wait": st.integers(0, 3),
                "tonk_out_pay": st.sampled_from([0, 1.5, 3]),
            },
        )
    )
    return make_rules(preset, **options)


players_st = st.integers(2, 6)
seeds = st.integers(0, 2**32 - 1)
SETTINGS = settings(max_examples=40, deadline=None)


@SETTINGS
@given(rules=rules_st(), n=players_st, seed=seeds)
def test_playout_invariants(rules: TonkRules, n: int, seed: int) -> None:
    """52 cards at every step, a legal action for the seat to act, mask == legal set, the hand ends."""
    s, states = playout(rules, n, seed)
    size = s.table.size
    for st_ in states:
        check_invariants(st_)
        legal = legal_actions(st_)
        assert legal == sorted(set(legal))
        mask = legal_mask(st_)
        assert mask.dtype == np.int8 and mask.shape == (size,)
        assert np.flatnonzero(mask).tolist() == legal
        assert [a for a in range(size) if is_legal(st_, a)] == legal
        assert not is_legal(st_, -1) and not is_legal(st_, size)
        assert st_.turn <= rules.max_turns
        assert sum(h.bit_count() for h in st_.hands) <= n * (rules.hand_size + 1)
        if is_over(st_):
            assert legal == []
        else:
            assert legal, "the seat to act must have a legal action"
            assert payoffs(st_) == (0,) * n
    assert is_over(s) and s.result is not None
    assert s.result.kind in RESULT_KINDS
    assert len(payoffs(s)) == n and abs(sum(payoffs(s))) < 1e-9
    assert list(s.result.counts) == counts(s)
    assert s.turn <= rules.max_turns
    assert len(states) - 1 == len(s.history)


@SETTINGS
@given(rules=rules_st(), n=players_st, seed=seeds)
def test_every_legal_action_string_parses_back(rules: TonkRules, n: int, seed: int) -> None:
    _, states = playout(rules, n, seed)
    for st_ in states:
        legal = legal_actions(st_)
        for a in legal:
            if _ace_at_both_ends(legal, a):
                continue  # a known engine bug, see test_engine_cards.test_the_low_ace_hit_string_parses_back
            text = action_to_string(st_, a)
            assert action_from_string(st_, text) == a, text
            long = st_.table.name(a)
            assert action_from_string(st_, long) == a, long


def _ace_at_both_ends(legal: list[int], a: int) -> bool:
    card = (a - HIT_HIGH) % 52 if HIT_HIGH <= a < HIT_LOW + 52 else -1
    return card % 13 == 0 and HIT_HIGH + card in legal and HIT_LOW + card in legal


@SETTINGS
@given(rules=rules_st(), n=players_st, seed=seeds, cut=st.floats(0, 1))
def test_record_replays_to_the_same_result(rules: TonkRules, n: int, seed: int, cut: float) -> None:
    s, states = playout(rules, n, seed)
    rec = json.loads(json.dumps(to_record(s)))
    back = replay(json.dumps(rec))
    assert back.result == s.result
    assert back.history == s.history and back.hands == s.hands
    assert replay(rec).result == s.result
    # an unfinished hand replays to the same state too
    mid = states[int(cut * (len(states) - 1))]
    again = replay(to_record(mid))
    assert snapshot(again) == snapshot(mid)


@settings(max_examples=30, deadline=None)
@given(rules=rules_st(), n=players_st, seed=seeds)
def test_same_seed_same_hand_whatever_the_global_rngs(rules: TonkRules, n: int, seed: int) -> None:
    """The engine reads no global random state (RLCard's trick: disturb the global RNGs between steps)."""
    first, _ = playout(rules, n, seed)
    assert new_game(rules, n, seed=seed).deck == new_game(rules, n, seed=seed).deck
    s = new_game(rules, n, seed=seed)
    player = BiasedPlayer(random.Random(seed))
    while not is_over(s):
        random.seed(random.random())
        np.random.seed(np.random.randint(2**31))
        random.random()
        np.random.random(7)
        s = apply(s, player(s))
    assert s.history == first.history
    assert s.result == first.result


@settings(max_examples=30, deadline=None)
@given(rules=rules_st(), n=players_st, seed=seeds)
def test_apply_does_not_mutate_its_input(rules: TonkRules, n: int, seed: int) -> None:
    _, states = playout(rules, n, seed)
    for st_ in states[:-1]:
        before = snapshot(st_)
        spreads_before = [(sp.mask, sp.lo, sp.hi) for sp in st_.spreads]
        for a in legal_actions(st_):
            after = apply(st_, a)
            assert after is not st_ and after.history[-1] == (st_.cur, a)
        assert snapshot(st_) == before
        assert [(sp.mask, sp.lo, sp.hi) for sp in st_.spreads] == spreads_before
        # copy() is independent too
        c = st_.copy()
        c.play(legal_actions(c)[-1])
        assert snapshot(st_) == before


def test_random_play_reaches_every_way_a_hand_ends() -> None:
    """Over a batch of hands the biased player produces several result kinds."""
    kinds: Counter[tuple[str, str]] = Counter()
    for i, preset in enumerate(PRESET_NAMES * 50):
        n = 2 + i % 5
        s, _ = playout(make_rules(preset), n, seed=i)
        kinds[(s.result.kind, s.result.detail)] += 1  # type: ignore[union-attr]  # the hand is over, so result is set
    for key in [
        ("tonk_out", ""),
        ("run_out", ""),
        ("drop_won", ""),
        ("caught", ""),
        ("stock_out", "empty_stock"),
    ]:
        assert kinds[key] > 0, (key, kinds)
    assert len(kinds) >= 6, kinds
    small = Counter(playout(make_rules(max_turns=12), 3, seed=i)[0].result.detail for i in range(40))  # type: ignore[union-attr]  # the hand is over, so result is set
    assert small["max_turns"] > 0, small


@settings(max_examples=60, deadline=None)
@given(rules=rules_st(), n=players_st, seed=seeds)
def test_the_deal(rules: TonkRules, n: int, seed: int) -> None:
    s = new_game(rules, n, seed=seed)
    check_invariants(s)
    assert [h.bit_count() for h in s.hands] == [rules.hand_size] * n
    assert len(s.pile) == (1 if rules.upcard else 0)
    assert len(s.stock) == 52 - n * rules.hand_size - len(s.pile)
    assert s.cur == 0 and s.turn == 0 and s.history == []
    if is_over(s):
        assert s.result is not None and s.result.kind in ("instant_win", "void")
        assert s.result.detail == ("instant_win_tie" if s.result.kind == "void" else "")
