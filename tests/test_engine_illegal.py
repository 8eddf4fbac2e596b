"""Illegal moves: refused with a ValueError that names the action and lists the legal ones."""

from __future__ import annotations

import pytest
from helpers_engine import dd, play_script

from tonk_env.engine import (
    START,
    GameState,
    IllegalActionError,
    action_from_string,
    action_to_string,
    apply,
    legal_actions,
    new_game,
    parse_cards,
)
from tonk_env.engine.actions import DISCARD, DRAW, DROP, HIT_BOOK, HIT_HIGH, HIT_LOW, TAKE

W1 = "KS QS JS TS 8S"


def legal_strings(s: GameState) -> list[str]:
    return [action_to_string(s, a) for a in legal_actions(s)]


def assert_refused(s: GameState, text: str, *must_name: str, lists_legal: bool = True) -> str:
    """``text`` is refused by action_from_string; the message names it and every legal action."""
    with pytest.raises(ValueError) as info:
        action_from_string(s, text)
    assert isinstance(info.value, IllegalActionError)
    msg = str(info.value)
    for word in must_name:
        assert word in msg, msg
    if lists_legal and legal_actions(s):
        assert "legal actions: " + ", ".join(legal_strings(s)) in msg, msg
    return msg


def two_runs() -> GameState:
    """Seat 0 lays 2H 3H 4H, seat 1 lays 6H 7H 8H; seat 0 has drawn and holds 5H: two targets."""
    return play_script(
        "standard",
        ["2H 3H 4H 5H KC", "6H 7H 8H QS JS"],
        "2C",
        "9D 9C 7D 6D",
        ["draw", "spread 2H 3H 4H", "discard 9D", "draw", "spread 6H 7H 8H", "discard 9C", "draw"],
    )


def jqk_run() -> GameState:
    """Seat 0 lays JH QH KH; seat 1 has drawn and holds AH and QC."""
    return play_script(
        "standard",
        ["JH QH KH 9C 8D", "AH QC JS TS 8S"],
        "2C",
        "7C 6C",
        ["draw", "spread JH QH KH", "discard 7C", "draw"],
    )


def test_hitting_a_q_k_run_with_an_ace_under_standard() -> None:
    s = jqk_run()
    assert_refused(s, "hit AH", "AH")
    assert_refused(s, "hit AH on KH", "AH", "KH")
    ace = parse_cards("AH")[0]
    with pytest.raises(IllegalActionError) as info:
        s.play(HIT_HIGH + ace)
    msg = str(info.value)
    assert "'hit AH on KH'" in msg and f"id {HIT_HIGH + ace}" in msg
    assert "legal actions: " + ", ".join(legal_strings(s)) in msg


def test_no_fifth_card_on_a_book() -> None:
    # seat 1 lays KD KH KS; seat 0 hits KC, the fourth; no card can join the book after that
    s = play_script(
        "standard",
        ["KC QC 9D 8D 7D", "KD KH KS 2S 3S"],
        "2C",
        "6C 5C 4C",
        ["draw", "discard 6C", "draw", "spread KD KH KS", "discard 5C", "draw", "hit KC"],
    )
    assert s.spreads[0].mask.bit_count() == 4 and s.book_targets == 0
    assert_refused(s, "hit QC on KD", "QC", "KD")
    assert_refused(s, "hit QC", "QC")
    for card in ("QC", "9D", "4C"):  # nothing in the hand has any book hit
        c = parse_cards(card)[0]
        with pytest.raises(IllegalActionError, match="legal actions: "):
            s.play(HIT_BOOK + c)


def test_dropping_while_waiting() -> None:
    s = play_script(
        "full_waiting",
        ["3H 4H 5H KC 9D", W1],
        "2C",
        "2S 3S",
        ["draw", "spread 3H 4H 5H", "discard 2S", *dd("3S")],
    )
    assert s.waits[0] == 3 and DROP not in legal_actions(s)
    msg = assert_refused(s, "drop", "'drop'")
    assert "legal actions: draw, take" in msg
    with pytest.raises(IllegalActionError, match=r"illegal action 'drop' .*legal actions: draw, take"):
        s.play(DROP)


@pytest.fixture
def finished() -> GameState:
    s = new_game("standard", 2, deck="AC KS AD QS AH JS 2C TS 3C 8S 9H")
    s.play(DROP)
    assert s.result is not None and s.result.kind == "drop_won"
    return s


def test_discarding_after_the_hand_ended(finished: GameState) -> None:
    msg = assert_refused(finished, "discard AC", "'discard AC'")
    assert "over" in msg
    with pytest.raises(IllegalActionError, match="hand is over"):
        finished.play(DISCARD + parse_cards("AC")[0])


@pytest.mark.parametrize("action", [DROP, DRAW, TAKE, DISCARD, HIT_LOW])
def test_no_action_after_the_hand_ended(finished: GameState, action: int) -> None:
    with pytest.raises(ValueError, match="over"):
        apply(finished, action)
    for text in ("drop", "draw", "take", "hit AC"):
        with pytest.raises(IllegalActionError, match="over"):
            action_from_string(finished, text)


@pytest.mark.parametrize(
    "text, names",
    [
        ("spred 3H", ["spred 3H"]),
        ("discard 1X", ["1x"]),
        ("discard", []),
        ("hit", []),
        ("spread 3H 4H", ["spread 3H 4H"]),
        ("spread 3H 4H 6H", ["spread 3H 4H 6H"]),
        ("spread 3H 3H 4H 5H", ["spread 3H 3H 4H 5H"]),
        ("spread 3H 4C 5H", ["spread 3H 4C 5H"]),
        ("", []),
        ("draw draw", ["draw draw"]),
    ],
)
def test_malformed_strings(text: str, names: list[str]) -> None:
    s = new_game("standard", 2, seed=3)
    s.play(DRAW)
    assert_refused(s, text, *names)


def test_malformed_card_message_names_the_action() -> None:
    s = new_game("standard", 2, seed=3)
    s.play(DRAW)
    assert_refused(s, "discard 1X", "discard 1X")


def test_non_integer_actions_are_refused() -> None:
    s = new_game("standard", 2, seed=3)
    for bad in ("draw", 1.5, None):
        with pytest.raises(IllegalActionError, match="integer"):
            s.play(bad)  # type: ignore[arg-type]  # a wrong type on purpose
    for bad_id in (-1, 10_000, DISCARD):  # out of range / not in the start phase
        with pytest.raises(IllegalActionError, match="legal actions: drop, draw, take"):
            s.play(bad_id)


def test_ambiguous_hit_must_say_on() -> None:
    s = two_runs()
    five = parse_cards("5H")[0]
    assert {HIT_HIGH + five, HIT_LOW + five} <= set(legal_actions(s))
    msg = assert_refused(
        s, "hit 5H", "'hit 5H'", "ambiguous", "hit 5H on 4H", "hit 5H on 6H", lists_legal=False
    )
    assert " on " in msg
    # with a state, the string of each of the two hits is the long form, and parses back
    assert action_to_string(s, HIT_HIGH + five) == "hit 5H on 4H"
    assert action_to_string(s, HIT_LOW + five) == "hit 5H on 6H"


def test_ambiguous_hit_message_lists_the_legal_actions() -> None:
    assert_refused(two_runs(), "hit 5H", "ambiguous")


@pytest.mark.parametrize(
    "target, block",
    [("2H", HIT_HIGH), ("3H", HIT_HIGH), ("4H", HIT_HIGH), ("6H", HIT_LOW), ("7H", HIT_LOW), ("8h", HIT_LOW)],
)
def test_hit_on_names_any_card_of_the_target(target: str, block: int) -> None:
    s = two_runs()
    assert action_from_string(s, f"hit 5H on {target}") == block + parse_cards("5H")[0]
    assert action_from_string(s, f"HIT 5♥ ON {target}") == block + parse_cards("5H")[0]


def test_hit_on_a_card_that_is_not_a_target() -> None:
    s = two_runs()
    assert_refused(s, "hit 5H on 9C", "5H", "9C")
    assert_refused(s, "hit 5H on KC", "5H", "KC")  # KC is in my hand, not on the table
    assert_refused(s, "hit KC", "KC")
    assert_refused(s, "hit 9S", "9S")  # not in my hand


def test_hit_in_the_start_phase() -> None:
    s = two_runs()
    s.play(action_from_string(s, "discard KC"))
    s.play(action_from_string(s, "draw"))
    s.play(action_from_string(s, "discard 6D"))
    assert s.cur == 0 and s.phase == START
    assert_refused(s, "hit 5H on 2H", "start")


def test_refused_action_changes_nothing() -> None:
    s = two_runs()
    before = (list(s.hands), list(s.stock), list(s.pile), s.phase, s.cur, list(s.history))
    for text in ("hit 5H", "drop", "spread 5H 6H 7H", "discard 9S"):
        with pytest.raises(IllegalActionError):
            s.play(action_from_string(s, text))
    assert (list(s.hands), list(s.stock), list(s.pile), s.phase, s.cur, list(s.history)) == before


def test_discard_not_held_and_take_from_an_empty_pile() -> None:
    s = new_game("no_upcard", 2, seed=5)
    assert_refused(s, "take", "'take'")
    s.play(DRAW)
    held = {a - DISCARD for a in legal_actions(s) if a < HIT_BOOK}
    other = next(c for c in range(52) if c not in held)
    with pytest.raises(IllegalActionError, match="legal actions: "):
        s.play(DISCARD + other)
