"""Bitmask helpers the hand-written agents share: spreads in a hand, partial spreads, hit targets.

All sets of cards are ``int`` bitmasks (bit ``suit * 13 + rank``), as in
:mod:`tonk_env.engine.cards`. A *partial spread* is two cards that a single
further card turns into a spread: a pair (two of a rank) or two cards of a
suit at most two ranks apart (a near-run, e.g. 5H 6H or 5H 7H).
"""

from __future__ import annotations

from tonk_env.engine.actions import BOOK, SPREAD, ActionTable
from tonk_env.engine.cards import RANK_MASKS, SUIT_BITS, VALUES, forms_spread, hand_value

__all__ = [
    "RANK_MASKS", "VALUES", "cards_desc", "cards_of_mask", "completing_cards", "connected", "hand_value",
    "hit_targets", "in_spread_with", "meld_down", "spread_ids", "wins_by_taking",
]  # fmt: skip

#: Cards ordered for "highest first" decisions: by value, then rank, then suit (deterministic).
_DESC_ORDER = sorted(range(52), key=lambda c: (-VALUES[c], -(c % 13), -(c // 13)))


_DESC_POS = [0] * 52
for _i, _c in enumerate(_DESC_ORDER):
    _DESC_POS[_c] = _i


def cards_desc(mask: int) -> list[int]:
    """Cards of ``mask``, highest value first (ties: higher rank, then higher suit)."""
    cards = []
    while mask:
        low = mask & -mask
        cards.append(low.bit_length() - 1)
        mask ^= low
    cards.sort(key=_DESC_POS.__getitem__)
    return cards


def spread_ids(hand: int, table: ActionTable) -> list[int]:
    """Spread action ids whose cards are all in ``hand`` (books and runs)."""
    a = hand & SUIT_BITS
    b = (hand >> 13) & SUIT_BITS
    c = (hand >> 26) & SUIT_BITS
    d = hand >> 39
    out: list[int] = []
    triple = (a & b & (c | d)) | (c & d & (a | b))
    if triple:
        bi = table.book_ids
        for r in range(13):
            if triple >> r & 1:
                out.extend(bi[r][(a >> r & 1) | (b >> r & 1) << 1 | (c >> r & 1) << 2 | (d >> r & 1) << 3])
    ri = table.run_ids
    out += ri[0][a]
    out += ri[1][b]
    out += ri[2][c]
    out += ri[3][d & SUIT_BITS]
    return out


def in_spread_with(card: int, hand: int, table: ActionTable) -> bool:
    """Whether ``card`` together with cards of ``hand`` forms a spread (book or run)."""
    return forms_spread(card, hand, table.ace_high)


def connected(card: int, others: int, ace_high: bool = False) -> bool:
    """Whether ``card`` makes a partial spread with a card of ``others`` (pair or near-run)."""
    if others & RANK_MASKS[card % 13] & ~(1 << card):
        return True
    suit, rank = divmod(card, 13)
    pat = (others >> (suit * 13)) & SUIT_BITS & ~(1 << rank)
    near = 0
    for d in (-2, -1, 1, 2):
        r = rank + d
        if 0 <= r <= 12:
            near |= 1 << r
    if ace_high:
        if rank == 0:
            near |= (1 << 12) | (1 << 11)
        elif rank == 12:
            near |= 1
        elif rank == 11:
            near |= 1
    return bool(pat & near)


def completing_cards(hand: int, ace_high: bool = False) -> int:
    """Cards not in ``hand`` that would make a new spread together with two or more cards of it."""
    out = 0
    for r in range(13):
        if (hand & RANK_MASKS[r]).bit_count() >= 2:
            out |= RANK_MASKS[r] & ~hand
    for s in range(4):
        pat = (hand >> (s * 13)) & SUIT_BITS
        if not pat:
            continue
        ext = pat | ((pat & 1) << 13 if ace_high else 0)  # ace high: position 13 is the ace
        need = 0
        for r in range(14 if ace_high else 13):
            if ext >> r & 1:
                continue
            # r completes a run with two neighbours on one side or one on each side
            lo1 = r >= 1 and ext >> (r - 1) & 1
            lo2 = r >= 2 and ext >> (r - 2) & 1
            hi1 = ext >> (r + 1) & 1
            hi2 = ext >> (r + 2) & 1
            if (lo1 and lo2) or (lo1 and hi1) or (hi1 and hi2):
                need |= 1 << (0 if r == 13 else r)
        need &= ~pat & SUIT_BITS
        out |= need << (s * 13)
    return out


def hit_targets(spreads: tuple[tuple[int, int, int, int, int, int], ...], ace_high: bool = False) -> int:
    """Cards that can hit a spread on the table (``SeatInfo.spreads`` tuples)."""
    out = 0
    for _owner, mask, kind, key, lo, hi in spreads:
        if kind == BOOK:
            if mask.bit_count() == 3:
                out |= RANK_MASKS[key] & ~mask
            continue
        if hi < 12 or (hi == 12 and ace_high and lo > 0):
            out |= 1 << (key * 13 + (0 if hi + 1 == 13 else hi + 1))
        if lo > 0 and not (lo == 1 and hi == 13):
            out |= 1 << (key * 13 + lo - 1)
    return out


def cards_of_mask(mask: int) -> list[int]:
    """Cards of a mask in ascending order."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def meld_down(
    hand: int,
    table: ActionTable,
    spreads: tuple[tuple[int, int, int, int, int, int], ...] = (),
    ace_high: bool = False,
) -> int:
    """The cards left after laying spreads (biggest count first) and hitting every card that fits.

    ``spreads`` are the table's spreads (``SeatInfo.spreads`` tuples); spreads
    laid here become hit targets too, and a hit on a run end opens the next card.
    """
    table_spreads = list(spreads)
    h = hand
    while True:
        ids = spread_ids(h, table)
        if ids:
            best = max(
                ids,
                key=lambda a: (
                    hand_value(table.spreads[a - SPREAD].mask),
                    table.spreads[a - SPREAD].mask.bit_count(),
                    -a,
                ),
            )
            sh = table.spreads[best - SPREAD]
            h &= ~sh.mask
            table_spreads.append((-1, sh.mask, sh.kind, sh.key, sh.lo, sh.hi))
            continue
        hits = h & hit_targets(tuple(table_spreads), ace_high)
        if not hits:
            return h
        c = (hits & -hits).bit_length() - 1
        h &= ~(1 << c)
        for i, (o, m, kind, key, lo, hi) in enumerate(table_spreads):
            if hit_targets(((o, m, kind, key, lo, hi),), ace_high) >> c & 1:
                if kind == BOOK:
                    table_spreads[i] = (o, m | 1 << c, kind, key, lo, hi)
                else:
                    pos = c % 13
                    if pos == lo - 1:
                        table_spreads[i] = (o, m | 1 << c, kind, key, lo - 1, hi)
                    else:
                        table_spreads[i] = (o, m | 1 << c, kind, key, lo, hi + 1)
                break


def wins_by_taking(
    hand: int,
    top: int,
    table: ActionTable,
    spreads: tuple[tuple[int, int, int, int, int, int], ...],
    ace_high: bool = False,
) -> int:
    """2 if taking ``top`` lets the hand tonk out now, 1 if it can run out (one card left), else 0."""
    if not in_spread_with(top, hand, table) and not hit_targets(spreads, ace_high) >> top & 1:
        return 0
    left = meld_down(hand | (1 << top), table, spreads, ace_high).bit_count()
    return 2 if left == 0 else 1 if left == 1 else 0
