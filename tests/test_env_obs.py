"""The observation tensor (tonk_env.obs): its layout, every slice against the state, its documentation."""

from __future__ import annotations

import re

import numpy as np
import pytest
from helpers_engine import state_st
from hypothesis import given, settings

import tonk_env.aec
import tonk_env.obs
from tonk_env.engine import PLAY, PRESETS, START, GameState, cards_of, hand_value, make_rules, new_game
from tonk_env.engine.actions import DISCARD, DRAW, TAKE
from tonk_env.engine.cards import VALUES
from tonk_env.obs import (
    COUNT_THRESHOLDS,
    OBS_VERSION,
    obs_layout,
    observation,
    observation_bounds,
    privileged_features,
    privileged_layout,
    privileged_size,
    upgrade_inputs,
)  # fmt: skip
from tonk_env.odds import drop_win_chance, prob_count_above

SLICES = [
    "hand", "top_discard", "discarded", "known", "spreads", "hand_sizes", "stock_size", "waits", "phase",
    "hand_count", "turn", "count_below", "opp_estimate", "opp_turns", "opp_discard", "opp_above", "drop_win",
    "top_fits", "thrown",
]  # fmt: skip


@pytest.mark.parametrize("n", range(2, 7))
def test_obs_layout_slices_cover_the_tensor(n: int) -> None:
    lay = obs_layout(n)
    assert lay is obs_layout(n)
    assert list(lay.slices) == SLICES
    pos = 0
    for name in SLICES:
        sl = lay[name]
        assert sl.start == pos and sl.stop > sl.start and sl.step is None
        pos = sl.stop
    # tail: n hand sizes, n waits, stock, 2 phase, count, turn, 11 count_below, 4 x (n - 1) per opponent,
    # drop_win, top_fits, n thrown masks
    assert pos == lay.size == 52 * (3 * n + 2) + 6 * n + 14
    assert [(name, lay[name].start, lay[name].stop - lay[name].start) for name in SLICES] == lay.describe()
    sizes = {k: v.stop - v.start for k, v in lay.slices.items()}
    assert sizes["known"] == 52 * (n - 1) and sizes["spreads"] == sizes["thrown"] == 52 * n
    assert sizes["hand_sizes"] == sizes["waits"] == n and sizes["phase"] == 2
    assert lay.version == OBS_VERSION
    assert (obs_layout(2).size, obs_layout(3).size, obs_layout(4).size) == (442, 604, 766)


@settings(max_examples=40, deadline=None)
@given(s=state_st)
def test_observation_slices_match_the_state(s: GameState) -> None:
    n = s.n
    lay = obs_layout(n)
    for seat in range(n):
        obs = observation(s, seat)
        assert obs.dtype == np.float32 and obs.shape == (lay.size,)
        assert np.all(np.isfinite(obs)) and np.all(obs >= 0)
        parts = lay.split(obs)
        assert np.flatnonzero(parts["hand"]).tolist() == cards_of(s.hands[seat])
        assert np.flatnonzero(parts["top_discard"]).tolist() == s.pile[-1:]
        assert np.flatnonzero(parts["discarded"]).tolist() == cards_of(s.discarded)
        order = [(seat + i) % n for i in range(n)]
        known = parts["known"].reshape(n - 1, 52)
        spreads = parts["spreads"].reshape(n, 52)
        for k, o in enumerate(order):
            assert np.flatnonzero(spreads[k]).tolist() == cards_of(s.spread_owner_masks[o])
            if k:
                assert np.flatnonzero(known[k - 1]).tolist() == cards_of(s.known[o])
        np.testing.assert_allclose(parts["hand_sizes"], [s.hands[o].bit_count() / 10 for o in order])
        np.testing.assert_allclose(parts["stock_size"], [len(s.stock) / 52])
        np.testing.assert_allclose(parts["waits"], [min(s.waits[o], 10) / 10 for o in order])
        assert parts["phase"].tolist() == [float(s.phase == START), float(s.phase == PLAY)]
        mine = hand_value(s.hands[seat])
        np.testing.assert_allclose(parts["hand_count"], [mine / 50], rtol=1e-6)
        assert parts["count_below"].tolist() == [float(mine <= t) for t in COUNT_THRESHOLDS]
        est = parts["opp_estimate"]
        assert est.shape == (n - 1,) and np.all(est >= 0)
        for i, o in enumerate(order[1:]):
            if s.hands[o] == s.known[o]:  # every card known: the estimate is exact
                assert est[i] == pytest.approx(min(hand_value(s.hands[o]) / 50, (s.rules.hand_size + 1) / 5))
        np.testing.assert_allclose(parts["turn"], [s.turn / s.rules.max_turns], rtol=1e-6)
        _check_v3_features(s, seat, parts)
        thrown = parts["thrown"].reshape(n, 52)
        for k, o in enumerate(order):
            threw = {a - DISCARD for p, a in s.history if p == o and DISCARD <= a < DISCARD + 52}
            assert np.flatnonzero(thrown[k]).tolist() == sorted(threw)
        buf = np.full(lay.size, -1, dtype=np.float32)
        assert observation(s, seat, out=buf) is buf
        np.testing.assert_array_equal(buf, obs)


def _check_v3_features(s: GameState, seat: int, parts: dict[str, np.ndarray]) -> None:
    """opp_turns, opp_discard, opp_above, drop_win and top_fits recomputed the slow way."""
    n = s.n
    order = [(seat + i) % n for i in range(n)]
    mine = hand_value(s.hands[seat])
    adds = [sum(1 for p, a in s.history if p == o and a in (DRAW, TAKE)) for o in order[1:]]
    np.testing.assert_allclose(parts["opp_turns"], [min(k, 20) / 20 for k in adds], rtol=1e-6)
    lasts = []
    for o in order[1:]:
        discards = [a - DISCARD for p, a in s.history if p == o and DISCARD <= a < DISCARD + 52]
        lasts.append(VALUES[discards[-1]] / 10 if discards else 0.0)
    np.testing.assert_allclose(parts["opp_discard"], lasts, rtol=1e-6)
    above = []
    for o, k in zip(order[1:], adds, strict=True):
        hidden = s.hands[o].bit_count() - s.known[o].bit_count()
        above.append(prob_count_above(hidden, int(0.6 * k + 0.5), mine - hand_value(s.known[o])))
    np.testing.assert_allclose(parts["opp_above"], above, rtol=1e-5, atol=1e-7)
    turns = [sum(1 for p, a in s.history if p == o and a in (DRAW, TAKE)) for o in range(n)]
    sizes = [h.bit_count() for h in s.hands]
    win = drop_win_chance(mine, seat, s.known, sizes, turns)
    assert parts["drop_win"][0] == pytest.approx(win, rel=1e-5, abs=1e-7)
    fits = False
    if s.pile:
        top = s.pile[-1]
        full = s.hands[seat] | 1 << top
        fits = any(sp.mask >> top & 1 and sp.mask & full == sp.mask for sp in s.table.spreads)
        fits = fits or bool((s.book_targets | s.high_targets | s.low_targets) >> top & 1)  # hits the table
    assert parts["top_fits"].tolist() == [float(fits)]


def test_the_module_docstring_table_lists_every_slice_in_order() -> None:
    lines = (tonk_env.obs.__doc__ or "").splitlines()
    rules = [i for i, line in enumerate(lines) if line.startswith("=====")]
    table = "\n".join(lines[rules[1] + 1 : rules[2]])  # between the header's rule and the closing one
    assert re.findall(r"^``(\w+)``\s", table, flags=re.MULTILINE) == SLICES


def test_the_aec_env_docstring_table_lists_every_slice_in_order() -> None:
    doc = tonk_env.aec.__doc__ or ""
    rows = re.findall(r"^\| `(\w+)`\s*\|", doc[doc.index("### Observation Space") :], flags=re.MULTILINE)
    assert rows == SLICES


@settings(max_examples=40, deadline=None)
@given(s=state_st)
def test_observation_stays_within_its_bounds(s: GameState) -> None:
    low, high = observation_bounds(s.rules, s.n)
    for seat in range(s.n):
        obs = observation(s, seat)
        assert np.all(obs >= low) and np.all(obs <= high)


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_observation_bounds_exceed_one_only_for_the_counts(preset: str) -> None:
    rules = make_rules(preset)
    lay = obs_layout(3)
    low, high = observation_bounds(rules, 3)
    assert low.dtype == high.dtype == np.float32 and not low.any()
    cap = (rules.hand_size + 1) * 10 / 50
    for name in SLICES:
        expect = cap if name in ("hand_count", "opp_estimate") else 1.0
        np.testing.assert_allclose(high[lay[name]], expect)


@pytest.mark.parametrize("n", [2, 4, 6])
def test_privileged_layout_names_the_hidden_features(n: int) -> None:
    """``privileged_layout``: opponents' hands, their counts, the next stock card, in seat order after me."""
    lay = privileged_layout(n)
    assert list(lay) == ["opp_hands", "opp_counts", "next_stock"]
    assert [sl.stop - sl.start for sl in lay.values()] == [52 * (n - 1), n - 1, 52]
    assert lay["opp_hands"].start == 0 and lay["opp_counts"].start == lay["opp_hands"].stop
    assert lay["next_stock"].stop == privileged_size(n) == 53 * (n - 1) + 52
    s = new_game("standard", n, seed=n)
    f = privileged_features(s, 1)
    for i in range(1, n):
        hand = f[lay["opp_hands"]][52 * (i - 1) : 52 * i]
        assert np.flatnonzero(hand).tolist() == [c for c in range(52) if s.hands[(1 + i) % n] >> c & 1]
    assert f[lay["next_stock"]].tolist() == [float(c == s.stock[-1]) for c in range(52)]


@pytest.mark.parametrize("n", [2, 3, 4])
def test_upgrade_inputs_gives_an_old_network_zero_weights_on_the_appended_slices(n: int) -> None:
    lay = obs_layout(n)
    old_size = lay.size - 52 * n  # version 3: no thrown masks
    rng = np.random.default_rng(n)
    w = rng.standard_normal((7, old_size)).astype(np.float32)
    up = upgrade_inputs(w, 3, n)
    assert up.shape == (7, lay.size) and up.dtype == np.float32
    assert not up[:, lay["thrown"]].any()
    obs = rng.random(lay.size).astype(np.float32)
    np.testing.assert_allclose(up @ obs, w @ obs[:old_size], rtol=1e-5)
    same = upgrade_inputs(up, OBS_VERSION, n)
    assert same is not up and np.array_equal(same, up)


@pytest.mark.parametrize(
    ("version", "size", "match"),
    [
        (2, 338, r"^observation layout version 2; this Tonk RL reads versions 3 to 4$"),
        (5, 338, r"^observation layout version 5; this Tonk RL reads versions 3 to 4$"),
        ("3", 338, r"^observation layout version '3'; this Tonk RL reads"),
        (3, 442, r"^442 inputs; a 2-player observation of layout version 3 has 338$"),
    ],
)
def test_upgrade_inputs_refuses_what_it_cannot_read(version: object, size: int, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        upgrade_inputs(np.zeros((4, size), np.float32), version, 2)  # type: ignore[arg-type]
