"""What one seat knows, as bitmasks: :class:`SeatInfo`, and determinization.

``seat_info(state, seat)`` copies out exactly the information ``seat`` may
know (its own hand, the public table, pile, counts, waits, the public action
history and the cards each player is known to hold because they took them
from the pile). The JSON view (:func:`tonk_env.engine.view.view_from_info`)
is built from a ``SeatInfo`` alone, so nothing hidden can leak into it. Agents receive
a ``SeatInfo``; search agents call :func:`sample_state` to draw full game
states consistent with it (a determinization, as OpenSpiel's
``ResampleFromInfostate``).
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass

from .actions import ActionTable
from .cards import FULL_DECK, cards_of, hand_value
from .rules import TonkRules
from .state import OVER, GameState, Result, Spread, index_targets, legal_actions


@dataclass(frozen=True)
class SeatInfo:
    """Everything one seat may know at one moment, in engine form."""

    seat: int
    rules: TonkRules
    table: ActionTable
    n: int
    dealer: int
    cur: int
    phase: int
    hand: int
    pile: tuple[int, ...]
    discarded: int
    stock_size: int
    hand_sizes: tuple[int, ...]
    known: tuple[int, ...]
    spreads: tuple[tuple[int, int, int, int, int, int], ...]  # owner, mask, kind, key, lo, hi
    spread_owner_masks: tuple[int, ...]
    waits: tuple[int, ...]
    turn: int
    taken: int
    history: tuple[tuple[int, int], ...]
    legal: tuple[int, ...]
    result: Result | None

    @property
    def my_turn(self) -> bool:
        """Whether this seat is to act."""
        return self.phase != OVER and self.cur == self.seat

    @property
    def count(self) -> int:
        """The count of my hand."""
        return hand_value(self.hand)

    @property
    def top_discard(self) -> int | None:
        """The top card of the discard pile, or None."""
        return self.pile[-1] if self.pile else None

    def unseen(self) -> int:
        """Cards this seat has not seen: in the stock or others' hands, not known."""
        seen = self.hand | self.table_cards() | sum_masks(1 << c for c in self.pile)
        for o in range(self.n):
            if o != self.seat:
                seen |= self.known[o]
        return FULL_DECK & ~seen

    def table_cards(self) -> int:
        """All cards in spreads on the table."""
        return sum_masks(self.spread_owner_masks)


def sum_masks(masks: Iterable[int]) -> int:
    """Union of bitmasks."""
    m = 0
    for x in masks:
        m |= x
    return m


def seat_info(s: GameState, seat: int) -> SeatInfo:
    """Copy out what ``seat`` may know of ``s``."""
    if not 0 <= seat < s.n:
        raise ValueError(f"seat must be 0..{s.n - 1}, got {seat}")
    mine = s.phase != OVER and s.cur == seat
    return SeatInfo(
        seat=seat,
        rules=s.rules,
        table=s.table,
        n=s.n,
        dealer=s.dealer,
        cur=s.cur,
        phase=s.phase,
        hand=s.hands[seat],
        pile=tuple(s.pile),
        discarded=s.discarded,
        stock_size=len(s.stock),
        hand_sizes=tuple(h.bit_count() for h in s.hands),
        known=tuple(s.known),
        spreads=tuple((x.owner, x.mask, x.kind, x.key, x.lo, x.hi) for x in s.spreads),
        spread_owner_masks=tuple(s.spread_owner_masks),
        waits=tuple(s.waits),
        turn=s.turn,
        taken=s.taken if mine else -1,
        history=tuple(s.history),
        legal=tuple(legal_actions(s)) if mine else (),
        result=s.result,
    )


def sample_state(info: SeatInfo, rng: random.Random) -> GameState:
    """A full game state consistent with ``info``: others' unknown cards and the stock drawn at random."""
    unseen = cards_of(info.unseen())
    rng.shuffle(unseen)
    hands = [0] * info.n
    k = 0
    for o in range(info.n):
        if o == info.seat:
            hands[o] = info.hand
            continue
        h = info.known[o]
        need = info.hand_sizes[o] - h.bit_count()
        for c in unseen[k : k + need]:
            h |= 1 << c
        k += need
        hands[o] = h
    stock = unseen[k:]
    if len(stock) != info.stock_size:
        raise AssertionError(
            f"determinization mismatch: {len(stock)} cards left for a stock of {info.stock_size}"
        )
    s = GameState.__new__(GameState)
    s.rules = info.rules
    s.table = info.table
    s.n = info.n
    s.dealer = info.dealer
    s.deck = []
    s.hands = hands
    s.stock = stock
    s.pile = list(info.pile)
    s.cur = info.cur
    s.phase = info.phase
    s.taken = info.taken
    s.waits = list(info.waits)
    s.known = list(info.known)
    s.discarded = info.discarded
    s.spreads = [Spread(*x) for x in info.spreads]
    s.spread_owner_masks = list(info.spread_owner_masks)
    s.turn = info.turn
    s.history = list(info.history)
    s.result = info.result
    index_targets(s)
    return s
