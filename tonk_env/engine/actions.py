"""The flat action table, one per rules config (it depends only on ``ace_high``).

=========  ==================  =============================================
ids        action              meaning
=========  ==================  =============================================
0          ``drop``            end the hand now, claiming the lowest count
1          ``draw``            draw the top stock card (stock empty: end the hand, RULES §4)
2          ``take``            take the top card of the discard pile
3..54      ``discard C``       discard card ``C`` (id ``3 + card``), ends the turn
55..106    ``hit C on B``      add ``C`` as the 4th card of the book of its rank
107..158   ``hit C on L``      add ``C`` above the high end of a run (``L`` = the
                               card below it; the ace above a king with ``ace_high``)
159..210   ``hit C on H``      add ``C`` below the low end of a run (``H`` = the card above it)
211..275   ``spread ...``      books: rank ``r`` uses ids ``211 + 5r + k``; ``k`` 0..3 is the
                               three without suit ``k``, ``k = 4`` the four
276..      ``spread ...``      runs: suit by suit (C, D, H, S), by low card, then by
                               length; 66 per suit (76 with ``ace_high``, where
                               position 13 is the ace above the king; the whole
                               suit is only A..K)
=========  ==================  =============================================

The table has 540 actions (580 with ``ace_high``). A hit is named by its card and
the end of the target spread it joins, and a card can join at most one book,
one run's high end and one run's low end, so the three hit blocks identify the
target without ambiguity. Every action's string form is unique; a hit's long
form ``hit 9H on 8H`` is valid in every state, the short form ``hit 9H`` is
accepted when the card has a single legal hit.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass
from functools import cache

import numpy as np

from .cards import SUIT_RANKS, card_to_string

DROP = 0
DRAW = 1
TAKE = 2
DISCARD = 3
HIT_BOOK = 55
HIT_HIGH = 107
HIT_LOW = 159
SPREAD = 211
RUN = SPREAD + 65

BOOK = 0
RUN_KIND = 1


@dataclass(frozen=True)
class SpreadShape:
    """One spread of the action table: a book or a run, with its card mask."""

    mask: int
    kind: int  # BOOK or RUN_KIND
    key: int  # rank for a book, suit for a run
    lo: int  # run: lowest position (0 = ace low); book: 0
    hi: int  # run: highest position (13 = ace high); book: 0


#: The kinds of action ids, in id order (:func:`action_kind`).
ACTION_KINDS = ("drop", "draw", "take", "discard", "hit", "spread")

#: The first id of each kind after ``drop`` (id 0): a kind's index is how many of these are <= the id.
_KIND_STARTS = (DRAW, TAKE, DISCARD, HIT_BOOK, SPREAD)


def action_kind(action: int) -> str:
    """The kind of an action id: ``drop``, ``draw``, ``take``, ``discard``, ``hit`` or ``spread``."""
    return ACTION_KINDS[bisect_right(_KIND_STARTS, action)]


def action_kind_index(actions: np.ndarray) -> np.ndarray:
    """Per action id, the index of its kind in :data:`ACTION_KINDS` (:func:`action_kind` on arrays)."""
    return np.searchsorted(_KIND_STARTS, actions, side="right")


def position_card(suit: int, pos: int) -> int:
    """The card at run position ``pos`` (0..13, 13 = ace high) of ``suit``."""
    return suit * 13 + (0 if pos == 13 else pos)


class ActionTable:
    """All actions of one ruleset, with the lookup tables for fast legality."""

    def __init__(self, ace_high: bool) -> None:
        self.ace_high = ace_high
        shapes: list[SpreadShape] = []
        for rank in range(13):
            four = sum(1 << (s * 13 + rank) for s in range(4))
            for missing in range(4):
                shapes.append(SpreadShape(four & ~(1 << (missing * 13 + rank)), BOOK, rank, 0, 0))
            shapes.append(SpreadShape(four, BOOK, rank, 0, 0))
        top = 13 if ace_high else 12
        runs_per_suit = 0
        for suit in range(4):
            for lo in range(top + 1):
                for hi in range(lo + 2, top + 1):
                    if lo == 0 and hi == 13:
                        continue  # the ace cannot be both low and high
                    if lo == 1 and hi == 13:
                        continue  # 2..K+A holds the same 13 cards as A..K: one action for one set
                    mask = 0
                    for pos in range(lo, hi + 1):
                        mask |= 1 << position_card(suit, pos)
                    shapes.append(SpreadShape(mask, RUN_KIND, suit, lo, hi))
                    if suit == 0:
                        runs_per_suit += 1
        self.runs_per_suit = runs_per_suit
        self.spreads: tuple[SpreadShape, ...] = tuple(shapes)
        self.size = SPREAD + len(shapes)
        self.spread_by_mask = {sh.mask: SPREAD + i for i, sh in enumerate(shapes)}

        # RUN_IDS[suit][13-bit pattern] -> spread action ids of runs inside it.
        self.run_ids: tuple[tuple[tuple[int, ...], ...], ...] = tuple(
            self._runs_for_suit(suit) for suit in range(4)
        )
        # BOOK_IDS[rank][4-bit suit pattern] -> spread action ids of books inside it.
        self.book_ids = tuple(
            tuple(
                tuple(
                    SPREAD + 5 * rank + k
                    for k in range(5)
                    if (k < 4 and pat | (1 << k) == 15) or (k == 4 and pat == 15)
                )
                for pat in range(16)
            )
            for rank in range(13)
        )
        # DISCARD_IDS[suit][pattern] -> discard ids of the cards in the pattern.
        self.discard_ids = tuple(
            tuple(tuple(DISCARD + suit * 13 + r for r in SUIT_RANKS[p]) for p in range(1 << 13))
            for suit in range(4)
        )
        self._names = [self._name(a) for a in range(self.size)]
        self._by_name = {n: a for a, n in enumerate(self._names)}

    def _runs_for_suit(self, suit: int) -> tuple[tuple[int, ...], ...]:
        base = RUN + suit * self.runs_per_suit
        local = [
            (i, sh.mask >> (suit * 13))
            for i, sh in enumerate(self.spreads[65 + suit * self.runs_per_suit :][: self.runs_per_suit])
        ]
        empty: tuple[int, ...] = ()
        out = []
        for p in range(1 << 13):
            if p & (p >> 1) & (p >> 2) or (self.ace_high and p & 1 and p & (1 << 12) and p & (1 << 11)):
                out.append(tuple(base + i for i, m in local if p & m == m))
            else:
                out.append(empty)
        return tuple(out)

    def _name(self, a: int) -> str:
        if a == DROP:
            return "drop"
        if a == DRAW:
            return "draw"
        if a == TAKE:
            return "take"
        if a < HIT_BOOK:
            return "discard " + card_to_string(a - DISCARD)
        if a < SPREAD:
            c = (a - HIT_BOOK) % 52
            suit, rank = divmod(c, 13)
            if a < HIT_HIGH:
                other = ((suit + 1) % 4 if suit == 0 else 0) * 13 + rank
            elif a < HIT_LOW:
                other = suit * 13 + (12 if rank == 0 else rank - 1)
            else:
                other = suit * 13 + rank + 1 if rank < 12 else -1
            return f"hit {card_to_string(c)} on {card_to_string(other) if other >= 0 else '-'}"
        sh = self.spreads[a - SPREAD]
        if sh.kind == BOOK:
            cards = [s * 13 + sh.key for s in range(4) if sh.mask >> (s * 13 + sh.key) & 1]
        else:
            cards = [position_card(sh.key, p) for p in range(sh.lo, sh.hi + 1)]
        return "spread " + " ".join(card_to_string(c) for c in cards)

    def name(self, action: int) -> str:
        """The canonical string of an action id (hits in their long form)."""
        if not 0 <= action < self.size:
            raise ValueError(f"action id {action} is out of range 0..{self.size - 1}")
        return self._names[action]

    def layout(self) -> list[tuple[str, int, int]]:
        """``(block, first id, count)`` for each block of the table."""
        return [
            ("drop", DROP, 1),
            ("draw", DRAW, 1),
            ("take", TAKE, 1),
            ("discard", DISCARD, 52),
            ("hit_book", HIT_BOOK, 52),
            ("hit_run_high", HIT_HIGH, 52),
            ("hit_run_low", HIT_LOW, 52),
            ("spread_book", SPREAD, 65),
            ("spread_run", RUN, 4 * self.runs_per_suit),
        ]


@cache
def action_table(ace_high: bool = False) -> ActionTable:
    """The (cached) action table for a ruleset's ``ace_high`` option."""
    return ActionTable(bool(ace_high))
