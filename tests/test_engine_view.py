"""What one seat sees: the JSON view, the observation tensor, text rendering, and leaks."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
from helpers_engine import BiasedPlayer, play_script, playout, snapshot
from hypothesis import given, settings
from hypothesis import strategies as st

from tonk_env.engine import (
    OBS_VERSION,
    PRESETS,
    GameState,
    action_from_string,
    action_to_string,
    cards_of,
    check_invariants,
    hand_value,
    legal_actions,
    make_rules,
    mask_to_strings,
    new_game,
    obs_layout,
    observation,
    render,
    sample_state,
    seat_info,
    view,
)
from tonk_env.engine.actions import DISCARD, DRAW, TAKE
from tonk_env.engine.cards import VALUES
from tonk_env.engine.odds import drop_win_chance, prob_count_above

VIEW_KEYS = {
    "seat", "num_players", "rules", "rules_hash", "dealer", "current_player", "phase", "hand", "count",
    "top_discard", "discards", "stock_size", "spreads", "hand_sizes", "known_cards", "waits", "turn",
    "history", "legal_actions", "result",
}  # fmt: skip

SLICES = [
    "hand", "top_discard", "discarded", "known", "spreads", "hand_sizes", "stock_size", "waits", "phase",
    "hand_count", "turn", "count_below", "opp_estimate", "opp_turns", "opp_discard", "opp_above", "drop_win",
    "top_fits",
]  # fmt: skip


def random_state(preset: str, n: int, seed: int, cut: float) -> GameState:
    """A state part way through a random hand (the end state if ``cut`` is 1)."""
    _, states = playout(make_rules(preset), n, seed)
    return states[int(cut * (len(states) - 1))]


state_st = st.builds(
    random_state,
    st.sampled_from(sorted(PRESETS)),
    st.integers(2, 6),
    st.integers(0, 2**32 - 1),
    st.floats(0, 1),
)


@settings(max_examples=40, deadline=None)
@given(s=state_st)
def test_view_is_json_with_the_documented_keys(s: GameState) -> None:
    for seat in range(s.n):
        v = view(s, seat)
        assert set(v) == VIEW_KEYS
        assert json.loads(json.dumps(v)) == v
        assert v["seat"] == seat and v["num_players"] == s.n
        assert v["rules"] == s.rules.to_dict() and v["rules_hash"] == s.rules.hash
        assert v["hand"] == mask_to_strings(s.hands[seat])
        assert v["count"] == hand_value(s.hands[seat])
        assert v["hand_sizes"] == [h.bit_count() for h in s.hands]
        assert v["stock_size"] == len(s.stock)
        assert v["discards"] == [action_to_string(None, 3 + c)[8:] for c in s.pile]
        assert v["top_discard"] == (v["discards"][-1] if s.pile else None)
        assert v["turn"] == s.turn and v["waits"] == list(s.waits)
        assert len(v["history"]) == len(s.history)
        assert all(text in ("drop", "draw", "take") or " " in text for _, text in v["history"])
        assert sum(len(sp["cards"]) for sp in v["spreads"]) == sum(sp.mask.bit_count() for sp in s.spreads)
        if s.phase == 2:
            assert v["phase"] == "over" and v["current_player"] is None and v["legal_actions"] == []
            assert v["result"]["kind"] == s.result.kind  # type: ignore[union-attr]
            assert v["result"]["payoffs"] == list(s.result.payoffs)  # type: ignore[union-attr]
        else:
            assert v["result"] is None and v["current_player"] == s.cur
            assert v["phase"] == ("start" if s.phase == 0 else "play")
            if seat == s.cur:
                assert v["legal_actions"] == [action_to_string(s, a) for a in legal_actions(s)]
                assert [action_from_string(s, t) for t in v["legal_actions"]] == legal_actions(s)
            else:
                assert v["legal_actions"] == []


def test_view_hides_the_drawn_card_and_shows_the_taken_one() -> None:
    s = play_script("standard", ["3H 4H 5H KC 9D", "KS QS JS TS 8S"], "2C", "7D 6D",
                    ["draw", "discard 9D", "take"])  # fmt: skip
    v = view(s, 0)
    assert v["history"] == [[0, "draw"], [0, "discard 9D"], [1, "take"]]
    assert v["known_cards"] == [[], ["9D"]]
    assert v["hand_sizes"] == [5, 6]
    assert view(s, 1)["hand"] == ["8S", "9D", "TS", "JS", "QS", "KS"]
    assert "7D" in v["hand"]  # seat 0 drew 7D; seat 1 cannot see which card it was
    assert "7D" not in json.dumps(view(s, 1))


def test_view_after_the_end_shows_every_hand() -> None:
    s = play_script("standard", ["AC AD AH 2C 3C", "KS QH JD TC 8S"], "8H", "", ["drop"])
    for seat in (0, 1):
        r = view(s, seat)["result"]
        assert r["kind"] == "drop_won" and r["payoffs"] == [1, -1] and r["counts"] == [8, 48]
        assert r["hands"] == [["AC", "AD", "AH", "2C", "3C"], ["8S", "TC", "JD", "QH", "KS"]]
        assert r["seat"] == 0


def _swap_hidden_card(s: GameState, owner: int, rng: random.Random) -> GameState | None:
    """A copy of ``s`` where one card of ``owner`` that nobody saw is swapped with a stock card."""
    hidden = cards_of(s.hands[owner] & ~s.known[owner])
    if not hidden or not s.stock:
        return None
    t = s.copy()
    c = rng.choice(hidden)
    i = rng.randrange(len(t.stock))
    d = t.stock[i]
    t.hands[owner] = t.hands[owner] & ~(1 << c) | (1 << d)
    t.stock[i] = c
    check_invariants(t)
    return t


@settings(max_examples=50, deadline=None)
@given(s=state_st, seed=st.integers(0, 2**16))
def test_leak_opponent_hidden_cards_do_not_change_my_view_or_observation(s: GameState, seed: int) -> None:
    if s.phase == 2:
        return  # once the hand is over every hand is shown
    rng = random.Random(seed)
    me = rng.randrange(s.n)
    owner = rng.choice([p for p in range(s.n) if p != me])
    t = _swap_hidden_card(s, owner, rng)
    if t is None:
        return
    assert view(t, me) == view(s, me)
    np.testing.assert_array_equal(observation(t, me), observation(s, me))
    assert seat_info(t, me) == seat_info(s, me)
    assert render(t, me) == render(s, me)
    # ... while the owner does see the change (so this test can fail)
    assert view(t, owner)["hand"] != view(s, owner)["hand"]
    assert not np.array_equal(observation(t, owner), observation(s, owner))


def test_leak_test_detects_a_change_of_a_known_card() -> None:
    """Swapping a card an opponent is known to hold (taken from the pile) does change my view."""
    s = play_script("standard", ["3H 4H 5H KC 9D", "KS QS JS TS 8S"], "2C", "7D 6D",
                    ["draw", "discard 9D", "take"])  # fmt: skip
    t = s.copy()
    nine = 1 << 21  # 9D, known to be in seat 1's hand
    t.hands[1] = t.hands[1] & ~nine | (1 << t.stock[0])
    t.stock[0] = 21
    t.known[1] = t.hands[1] & ~s.hands[1]
    assert view(t, 0) != view(s, 0)
    assert not np.array_equal(observation(t, 0), observation(s, 0))


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
    # drop_win, top_fits
    assert pos == lay.size == 52 * (2 * n + 2) + 6 * n + 14
    assert [(name, lay[name].start, lay[name].stop - lay[name].start) for name in SLICES] == lay.describe()
    sizes = {k: v.stop - v.start for k, v in lay.slices.items()}
    assert sizes["known"] == 52 * (n - 1) and sizes["spreads"] == 52 * n
    assert sizes["hand_sizes"] == sizes["waits"] == n and sizes["phase"] == 2
    assert lay.version == OBS_VERSION
    assert (obs_layout(2).size, obs_layout(3).size, obs_layout(4).size) == (338, 448, 558)


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
        assert parts["phase"].tolist() == [float(s.phase == 0), float(s.phase == 1)]
        mine = hand_value(s.hands[seat])
        np.testing.assert_allclose(parts["hand_count"], [mine / 50], rtol=1e-6)
        from tonk_env.engine.view import COUNT_THRESHOLDS

        assert parts["count_below"].tolist() == [float(mine <= t) for t in COUNT_THRESHOLDS]
        est = parts["opp_estimate"]
        assert est.shape == (n - 1,) and np.all(est >= 0)
        for i, o in enumerate(order[1:]):
            if s.hands[o] == s.known[o]:  # every card known: the estimate is exact
                assert est[i] == pytest.approx(min(hand_value(s.hands[o]) / 50, (s.rules.hand_size + 1) / 5))
        np.testing.assert_allclose(parts["turn"], [s.turn / s.rules.max_turns], rtol=1e-6)
        _check_v3_features(s, seat, parts)
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


@settings(max_examples=30, deadline=None)
@given(s=state_st, seed=st.integers(0, 2**16))
def test_sample_state_is_consistent_with_what_i_know(s: GameState, seed: int) -> None:
    if s.phase == 2:
        return
    me = seed % s.n
    info = seat_info(s, me)
    d = sample_state(info, random.Random(seed))
    check_invariants(d)
    assert d.hands[me] == s.hands[me]
    for o in range(s.n):
        assert d.hands[o].bit_count() == s.hands[o].bit_count()
        assert d.hands[o] & s.known[o] == s.known[o]
    assert view(d, me) == view(s, me)
    # the sampled hand can be played on to the end
    player = BiasedPlayer(random.Random(seed))
    while d.phase != 2:
        d.play(player(d))
    assert abs(sum(d.result.payoffs)) < 1e-9  # type: ignore[union-attr]


def test_render() -> None:
    s = play_script("standard", ["3H 4H 5H KC 9D", "KS QS JS TS 8S"], "2C", "7D 6D",
                    ["draw", "spread 3H 4H 5H", "discard 9D"])  # fmt: skip
    mine = render(s, 1)
    assert "Seat 1 (you)" in mine and "KS" in mine and "Seat 0: 2 cards" in mine and "KC" not in mine
    assert "seat 0: 3H 4H 5H" in mine
    full = render(s)
    assert "KC" in full and "KS" in full
    s.play(DRAW)
    s.play(action_from_string(s, "discard 6D"))
    s.play(0)
    assert "Payoffs (stakes): seat 0: +1, seat 1: -1" in render(s, 1)
    assert "KC" in render(s, 1)  # every hand is shown at the end


def test_view_legal_actions_only_for_the_acting_seat_at_the_deal() -> None:
    s = new_game("standard", 4, seed=2)
    assert s.phase == 0
    assert view(s, 0)["legal_actions"] == ["drop", "draw", "take"]
    assert [view(s, p)["legal_actions"] for p in (1, 2, 3)] == [[], [], []]
    s.play(TAKE)
    assert view(s, 0)["known_cards"][0] == view(s, 2)["known_cards"][0] != []
    with pytest.raises(ValueError, match="seat"):
        view(s, 4)
    assert snapshot(s) == snapshot(s.copy())
