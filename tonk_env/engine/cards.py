"""Cards as integers and sets of cards as integer bitmasks.

A card is an ``int`` in ``0..51``::

    card = suit * 13 + rank

    rank  0  1  2  3  4  5  6  7  8  9 10 11 12
          A  2  3  4  5  6  7  8  9  T  J  Q  K
    suit  0 = C (clubs)  1 = D (diamonds)  2 = H (hearts)  3 = S (spades)

A set of cards is one Python ``int`` whose bit ``card`` is set, so the clubs
are bits 0..12, diamonds 13..25, hearts 26..38 and spades 39..51. Counting a
hand, finding runs and finding hits are bit operations over tables that are
built once at import.

Card strings are rank ``A 2-9 T J Q K`` (``10`` is accepted for ``T``) followed
by a suit ``C D H S`` (``♣ ♦ ♥ ♠`` and the outlined ``♧ ♢ ♡ ♤`` are accepted),
case-insensitive: ``"4S"``, ``"th"``, ``"10♥"``.
"""

from __future__ import annotations

from collections.abc import Iterable

RANKS = "A23456789TJQK"
SUITS = "CDHS"
NUM_CARDS = 52
FULL_DECK = (1 << NUM_CARDS) - 1
SUIT_BITS = 0x1FFF  # the 13 bits of one suit

#: Counting value of each card: ace 1, 2-10 face value, J/Q/K 10.
VALUES: tuple[int, ...] = tuple(min(c % 13 + 1, 10) for c in range(NUM_CARDS))

#: ``SUIT_VALUE[pattern]`` is the count of the ranks set in a 13-bit pattern.
SUIT_VALUE: tuple[int, ...] = tuple(
    sum(min(r + 1, 10) for r in range(13) if p >> r & 1) for p in range(1 << 13)
)

#: ``SUIT_RANKS[pattern]`` lists the ranks set in a 13-bit pattern, ascending.
SUIT_RANKS: tuple[tuple[int, ...], ...] = tuple(
    tuple(r for r in range(13) if p >> r & 1) for p in range(1 << 13)
)

#: Masks of all cards of one rank (index = rank), for shifting masks by a rank.
RANK_MASKS: tuple[int, ...] = tuple(sum(1 << (s * 13 + r) for s in range(4)) for r in range(13))

_SUIT_ALIASES = {
    "C": 0,
    "♣": 0,
    "♧": 0,
    "D": 1,
    "♦": 1,
    "♢": 1,
    "H": 2,
    "♥": 2,
    "♡": 2,
    "S": 3,
    "♠": 3,
    "♤": 3,
}
_RANK_ALIASES = {ch: i for i, ch in enumerate(RANKS)} | {"10": 9}


def card_to_string(card: int) -> str:
    """Return the two-character name of a card, e.g. ``"TH"``."""
    return RANKS[card % 13] + SUITS[card // 13]


def parse_card(text: str) -> int:
    """Parse a card string such as ``"4S"``, ``"10h"`` or ``"Q♠"``."""
    t = text.strip().upper()
    if len(t) < 2 or t[:-1] not in _RANK_ALIASES or t[-1] not in _SUIT_ALIASES:
        raise ValueError(f"not a card: {text!r} (expected rank A 2-9 T J Q K or 10, then suit C D H S)")
    return _SUIT_ALIASES[t[-1]] * 13 + _RANK_ALIASES[t[:-1]]


def parse_cards(text: str | Iterable[str | int]) -> list[int]:
    """Parse a space/comma separated string or a list of card strings/ints."""
    items: Iterable[str | int] = text.replace(",", " ").split() if isinstance(text, str) else text
    out = []
    for item in items:
        if isinstance(item, int) and not isinstance(item, bool):
            if not 0 <= item < NUM_CARDS:
                raise ValueError(f"not a card: {item} (card ids are 0..51)")
            out.append(item)
        else:
            out.append(parse_card(str(item)))
    return out


def mask_of(cards: Iterable[int]) -> int:
    """Return the bitmask of a collection of cards."""
    m = 0
    for c in cards:
        m |= 1 << c
    return m


def cards_of(mask: int) -> list[int]:
    """List the cards of a bitmask in ascending card order."""
    out: list[int] = []
    for s in range(4):
        base = s * 13
        out.extend(base + r for r in SUIT_RANKS[(mask >> base) & SUIT_BITS])
    return out


def hand_value(mask: int) -> int:
    """Count a set of cards (ace 1, faces 10)."""
    return (
        SUIT_VALUE[mask & SUIT_BITS]
        + SUIT_VALUE[(mask >> 13) & SUIT_BITS]
        + SUIT_VALUE[(mask >> 26) & SUIT_BITS]
        + SUIT_VALUE[(mask >> 39) & SUIT_BITS]
    )


def sort_for_display(cards: Iterable[int]) -> list[int]:
    """Sort cards by rank, then suit, the way a person holds them."""
    return sorted(cards, key=lambda c: (c % 13, c // 13))


def mask_to_strings(mask: int) -> list[str]:
    """Card strings of a bitmask, ordered by rank then suit."""
    return [card_to_string(c) for c in sort_for_display(cards_of(mask))]


def forms_spread(card: int, hand: int, ace_high: bool = False) -> bool:
    """Whether ``card`` together with cards of ``hand`` forms a spread (a book or a run of 3+).

    ``ace_high`` also allows the run Q-K-A.
    """
    full = hand | 1 << card
    if (full & RANK_MASKS[card % 13]).bit_count() >= 3:
        return True
    suit, rank = divmod(card, 13)
    pat = (full >> (suit * 13)) & SUIT_BITS
    for lo in (rank - 2, rank - 1, rank):
        if lo >= 0 and lo + 2 <= 12 and (pat >> lo) & 7 == 7:
            return True
    return bool(ace_high and rank in (0, 11, 12) and pat >> 11 & 1 and pat >> 12 & 1 and pat & 1)
