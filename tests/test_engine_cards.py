"""Cards, stacked decks, the action table and action strings."""

from __future__ import annotations

import pytest
from helpers_engine import ALL_CARDS, play_script, stack

from tonk_env.engine import (
    action_from_string,
    action_table,
    action_to_string,
    card_to_string,
    cards_of,
    hand_value,
    legal_actions,
    make_rules,
    mask_of,
    mask_to_strings,
    new_game,
    parse_card,
    parse_cards,
    shuffled_deck,
)
from tonk_env.engine.actions import DISCARD, HIT_BOOK, HIT_HIGH, HIT_LOW, RUN, SPREAD


@pytest.mark.parametrize(
    "text, card",
    [
        ("AC", 0), ("2C", 1), ("TC", 9), ("10C", 9), ("KC", 12),
        ("AD", 13), ("KD", 25), ("AH", 26), ("4S", 42), ("KS", 51),
        ("th", 35), ("10h", 35), ("10H", 35), ("qS", 50), (" 9d ", 21),
        ("A♣", 0), ("5♦", 17), ("10♥", 35), ("Q♠", 50), ("t♠", 48),
        ("A♧", 0), ("5♢", 17), ("J♡", 36), ("K♤", 51),
    ],
)  # fmt: skip
def test_parse_card(text: str, card: int) -> None:
    assert parse_card(text) == card


@pytest.mark.parametrize(
    "text", ["", "A", "1C", "11C", "0S", "AX", "ZS", "KK", "C4", "4 S", "AS1", "♠A", "10", "1OH"]
)
def test_bad_cards_are_rejected(text: str) -> None:
    with pytest.raises(ValueError, match="not a card"):
        parse_card(text)


def test_card_strings_round_trip() -> None:
    assert len(set(ALL_CARDS)) == 52
    for c in range(52):
        s = card_to_string(c)
        assert len(s) == 2 and parse_card(s) == parse_card(s.lower()) == c
    assert card_to_string(9) == "TC"


def test_parse_cards_forms() -> None:
    assert parse_cards("KS, qh 10d") == [51, 37, 22]
    assert parse_cards(["KS", "QH", 5]) == [51, 37, 5]
    assert parse_cards("") == []
    with pytest.raises(ValueError, match="not a card"):
        parse_cards([52])
    with pytest.raises(ValueError, match="not a card"):
        parse_cards("KS ZZ")


def test_masks_and_counts() -> None:
    assert hand_value(mask_of(range(52))) == 340  # a full deck counts 340
    assert hand_value(mask_of(parse_cards("KS QH JD TC 9S"))) == 49
    assert hand_value(mask_of(parse_cards("AC AD AH AS 2C"))) == 6
    assert hand_value(0) == 0
    m = mask_of(parse_cards("3H KS AC 3C"))
    assert cards_of(m) == sorted(parse_cards("3H KS AC 3C"))
    assert mask_to_strings(m) == ["AC", "3C", "3H", "KS"]  # rank, then suit


def test_stacked_deck_full_and_prefix() -> None:
    deck = stack(["KS QH JD TC 8S", "2C 3C 4C 5C 6C"], "7H", "AS 2S")
    s = new_game("standard", 2, deck=deck, seed=11)
    assert [card_to_string(c) for c in s.deck[: len(deck)]] == deck
    assert sorted(s.deck) == list(range(52))
    assert s.stock[-1] == parse_card("AS") and s.stock[-2] == parse_card("2S")
    # the rest of a prefix is shuffled from the seed: same seed, same rest; another seed, another
    again = new_game("standard", 2, deck=deck, seed=11)
    other = new_game("standard", 2, deck=deck, seed=12)
    assert again.deck == s.deck
    assert other.deck[: len(deck)] == s.deck[: len(deck)] and other.deck != s.deck


def test_full_stacked_deck_is_dealt_as_given() -> None:
    order = list(reversed(range(52)))
    s = new_game("standard", 4, deck=order)
    assert list(s.deck) == order
    assert s.stock == order[21:][::-1]  # 20 dealt, 1 upcard, the stock's top is its last element


@pytest.mark.parametrize(
    "deck, match",
    [
        ("KS QH KS", "KS appears twice"),
        ("KS qh QH", "QH appears twice"),
        ("KS ZZ", "not a card"),
        ("KS 1C", "not a card"),
        (["KS", 60], "not a card"),
        (" ".join(ALL_CARDS + ["AC"]), "AC appears twice"),
    ],
)
def test_bad_stacked_decks(deck: object, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        new_game("standard", 2, deck=deck)  # type: ignore[arg-type]  # a wrong type on purpose


def test_shuffled_deck() -> None:
    assert shuffled_deck(5) == shuffled_deck(5)
    assert shuffled_deck(5) != shuffled_deck(6)
    assert sorted(shuffled_deck(None)) == list(range(52))
    assert shuffled_deck(1, prefix=[51, 0])[:2] == [51, 0]
    with pytest.raises(ValueError, match="appears twice"):
        shuffled_deck(1, prefix=[3, 3])


# ------------------------------------------------------------------------ action table
@pytest.mark.parametrize("ace_high, size", [(False, 540), (True, 580)])
def test_action_table_layout(ace_high: bool, size: int) -> None:
    t = action_table(ace_high)
    assert t.size == size
    assert action_table(ace_high) is t  # cached
    blocks = t.layout()
    assert blocks[0][1] == 0
    for (_, first, count), (_, nxt, _) in zip(blocks, blocks[1:], strict=False):
        assert first + count == nxt
    assert blocks[-1][1] + blocks[-1][2] == size
    names = [t.name(a) for a in range(size)]
    assert len(set(names)) == size  # every action's string is unique
    assert names[:4] == ["drop", "draw", "take", "discard AC"]
    assert t.name(SPREAD) == "spread AD AH AS" and t.name(SPREAD + 4) == "spread AC AD AH AS"
    assert t.name(RUN) == "spread AC 2C 3C"
    with pytest.raises(ValueError, match="out of range"):
        t.name(size)


def test_action_table_names_examples() -> None:
    t = action_table(False)
    assert t.name(HIT_BOOK + parse_card("KC")) == "hit KC on KD"
    assert t.name(HIT_BOOK + parse_card("KS")) == "hit KS on KC"
    assert t.name(HIT_HIGH + parse_card("9H")) == "hit 9H on 8H"
    assert t.name(HIT_LOW + parse_card("5H")) == "hit 5H on 6H"
    assert t.name(HIT_LOW + parse_card("AH")) == "hit AH on 2H"
    assert action_table(True).name(HIT_HIGH + parse_card("AH")) == "hit AH on KH"
    assert "spread QH KH AH" in {action_table(True).name(a) for a in range(SPREAD, 580)}
    assert "spread QH KH AH" not in {t.name(a) for a in range(SPREAD, 540)}


def test_every_spread_string_parses_to_its_id() -> None:
    """Holding exactly a spread's cards (and a spare), its string parses back to its id."""
    for ace_high in (False, True):
        t = action_table(ace_high)
        for a in range(SPREAD, t.size):
            shape = t.spreads[a - SPREAD]
            if shape.mask.bit_count() > 7:
                continue  # cannot be held with 7-card hands
            cards = mask_to_strings(shape.mask)
            rules = make_rules("seven_card", ace_high=ace_high)
            rest = [c for c in ALL_CARDS if c not in cards]
            hand = cards + rest[: 7 - len(cards)]
            s = new_game(rules, 2, deck=stack([" ".join(hand), " ".join(rest[7:14])], rest[14], rest[15]))
            s.play(1)  # draw
            assert action_from_string(s, t.name(a)) == a, t.name(a)
            assert a in legal_actions(s)


def test_spread_masks_are_unique_with_ace_high() -> None:
    t = action_table(True)
    assert len(t.spread_by_mask) == t.size - SPREAD


def test_string_aliases_and_case() -> None:
    s = new_game("standard", 2, deck=stack(["KS QH JD TC 8S", "2C 3C 4C 5C 6C"], "7H", "AS"))
    assert action_from_string(s, "  DROP ") == 0
    assert action_from_string(s, "knock") == 0
    assert action_from_string(s, "Draw") == 1
    assert action_from_string(s, "pick up") == 2
    assert action_from_string(s, "take") == 2
    s.play(1)
    assert action_from_string(s, "discard as") == DISCARD + parse_card("AS")
    assert action_from_string(s, "Discard 10c") == DISCARD + parse_card("TC")
    assert action_from_string(s, "discard Q♥") == DISCARD + parse_card("QH")


def test_action_to_string_without_a_state_uses_the_standard_table() -> None:
    assert action_to_string(None, 0) == "drop"
    assert action_to_string(None, HIT_HIGH + parse_card("9H")) == "hit 9H on 8H"


def _ace_on_a_two_to_king_run():
    """seven_card + ace_high: seat 0 lays 2H..7H, seat 1 hits 8H..KH; seat 0 holds AH and draws."""
    rules = make_rules("seven_card", ace_high=True)
    return play_script(
        rules, ["2H 3H 4H 5H 6H 7H AH", "8H 9H TH JH QH KH 2C"], "3C", "4C 5C 6C",
        ["draw", "spread 2H 3H 4H 5H 6H 7H", "discard 4C",
         "draw", "hit 8H", "hit 9H", "hit TH", "hit JH", "hit QH", "hit KH", "discard 5C", "draw"],
    )  # fmt: skip


def test_the_ace_can_join_a_two_to_king_run_at_either_end() -> None:
    s = _ace_on_a_two_to_king_run()
    ace = parse_card("AH")
    assert {HIT_HIGH + ace, HIT_LOW + ace} <= set(legal_actions(s))
    assert action_from_string(s, "hit AH on KH") == HIT_HIGH + ace
    with pytest.raises(ValueError, match="ambiguous"):
        action_from_string(s, "hit AH")


def test_the_low_ace_hit_string_parses_back() -> None:
    s = _ace_on_a_two_to_king_run()
    low = HIT_LOW + parse_card("AH")
    text = action_to_string(s, low)
    assert text == "hit AH on 2H"
    assert action_from_string(s, text) == low


def test_numpy_generator_seeds() -> None:
    """A ``numpy.random.Generator`` shuffles the deck too, reproducibly, with or without a prefix."""
    import numpy as np

    a = new_game("standard", 3, seed=np.random.default_rng(5))
    b = new_game("standard", 3, seed=np.random.default_rng(5))
    c = new_game("standard", 3, seed=np.random.default_rng(6))
    assert a.deck == b.deck != c.deck and sorted(a.deck) == list(range(52))
    p = new_game("standard", 2, seed=np.random.default_rng(5), deck="KS QH")
    q = new_game("standard", 2, seed=np.random.default_rng(5), deck="KS QH")
    assert p.deck == q.deck and p.deck[:2] == parse_cards("KS QH") and sorted(p.deck) == list(range(52))
    rng = np.random.default_rng(1)
    assert (
        new_game("standard", 2, seed=rng).deck != new_game("standard", 2, seed=rng).deck
    )  # the generator moves on
