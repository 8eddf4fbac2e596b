"""What one seat sees: the JSON view, text rendering, and leaks (the observation tensor: test_env_obs.py)."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
from helpers_engine import BiasedPlayer, play_script, snapshot, state_st
from hypothesis import given, settings
from hypothesis import strategies as st

from tonk_env.engine import (
    OVER,
    START,
    GameState,
    action_from_string,
    action_to_string,
    cards_of,
    check_invariants,
    hand_value,
    legal_actions,
    mask_to_strings,
    new_game,
    render,
    sample_state,
    seat_info,
    view,
)
from tonk_env.engine.actions import DRAW, TAKE
from tonk_env.obs import observation

VIEW_KEYS = {
    "seat", "num_players", "rules", "rules_hash", "dealer", "current_player", "phase", "hand", "count",
    "top_discard", "discards", "stock_size", "spreads", "hand_sizes", "known_cards", "waits", "turn",
    "history", "legal_actions", "result",
}  # fmt: skip


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
        if s.phase == OVER:
            assert v["phase"] == "over" and v["current_player"] is None and v["legal_actions"] == []
            assert v["result"]["kind"] == s.result.kind  # type: ignore[union-attr]  # the hand is over, so result is set
            assert v["result"]["payoffs"] == list(s.result.payoffs)  # type: ignore[union-attr]  # the hand is over, so result is set
        else:
            assert v["result"] is None and v["current_player"] == s.cur
            assert v["phase"] == ("start" if s.phase == START else "play")
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
    if s.phase == OVER:
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


@settings(max_examples=30, deadline=None)
@given(s=state_st, seed=st.integers(0, 2**16))
def test_sample_state_is_consistent_with_what_i_know(s: GameState, seed: int) -> None:
    if s.phase == OVER:
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
    while d.phase != OVER:
        d.play(player(d))
    assert abs(sum(d.result.payoffs)) < 1e-9  # type: ignore[union-attr]  # the hand is over, so result is set


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
    assert s.phase == START
    assert view(s, 0)["legal_actions"] == ["drop", "draw", "take"]
    assert [view(s, p)["legal_actions"] for p in (1, 2, 3)] == [[], [], []]
    s.play(TAKE)
    assert view(s, 0)["known_cards"][0] == view(s, 2)["known_cards"][0] != []
    with pytest.raises(ValueError, match="seat"):
        view(s, 4)
    assert snapshot(s) == snapshot(s.copy())
