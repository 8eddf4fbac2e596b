"""``heuristic:fast``: the fast policy, the rollout policy of ``search:ismcts`` (:mod:`agents.search`).

The policy (:func:`fast_action`) reads only what its seat may know, so the
search's rollouts do not give the opponents sight of the searcher's cards.
It drops when the table estimate of the drop's payoff
(:func:`drop_estimate`) beats ``drop_margin``, takes the discard when it
wins at once, completes a spread or hits the table, lays its biggest
spread, hits its highest card and discards the card whose count, less what
its partial spreads are worth, is highest (:func:`fast_discard`).
:class:`FastAgent` plays it as an agent.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tonk_env.engine import START, GameState, SeatInfo, sample_state
from tonk_env.engine.actions import DISCARD, DRAW, DROP, HIT_BOOK, HIT_HIGH, HIT_LOW, SPREAD, TAKE
from tonk_env.engine.cards import RANK_MASKS, VALUES, hand_value
from tonk_env.odds import drop_win_chance

from .base import BaseAgent
from .hand import in_spread_with, spread_ids, wins_by_taking

__all__ = [
    "FastAgent", "FastParams", "drop_estimate", "fast_action", "fast_discard", "turns_adding_all",
]  # fmt: skip

_DESC = sorted(range(52), key=lambda c: (-VALUES[c], -(c % 13), -(c // 13)))


class FastParams:
    """Knobs of the fast default policy: the drop margin (optionally another one for one seat)."""

    __slots__ = ("margin", "selection", "seat", "seat_margin")

    def __init__(
        self, margin: float = 0.1, selection: float = 0.6, seat: int = -1, seat_margin: float | None = None
    ) -> None:
        self.margin = margin
        self.selection = selection
        self.seat = seat
        self.seat_margin = margin if seat_margin is None else seat_margin


def turns_adding_all(history: list[tuple[int, int]] | tuple[tuple[int, int], ...], n: int) -> list[int]:
    """Per seat, the turns on which it drew or took a card."""
    out = [0] * n
    for seat, a in history:
        if a == DRAW or a == TAKE:
            out[seat] += 1
    return out


def drop_estimate(s: GameState, seat: int, turns: list[int], fp: FastParams) -> float:
    """Approximate mean payoff of ``seat`` dropping now (table estimate, public information only)."""
    hands = s.hands
    p = drop_win_chance(
        hand_value(hands[seat]), seat, s.known, [h.bit_count() for h in hands], turns, fp.selection
    )
    return p * (s.n - 1) - 2.0 * (1.0 - p)


def fast_action(s: GameState, turns: list[int], fp: FastParams) -> int:
    """The fast default policy's action for the seat to act (reads only that seat's knowledge)."""
    cur = s.cur
    hand = s.hands[cur]
    if s.phase == START:
        fits = False
        if s.pile:
            top = s.pile[-1]
            fits = bool((s.book_targets | s.high_targets | s.low_targets) >> top & 1) or in_spread_with(
                top, hand, s.table
            )
            if fits and hand.bit_count() <= 3 and _wins_by_taking_state(s, hand, top):
                return TAKE
        margin = fp.seat_margin if cur == fp.seat else fp.margin
        if not s.waits[cur] and drop_estimate(s, cur, turns, fp) > margin:
            return DROP
        return TAKE if fits else DRAW
    table = s.table
    ids = spread_ids(hand, table)
    if ids:
        best = ids[0]
        bk = None
        for a in ids:
            m = table.spreads[a - SPREAD].mask
            k = (hand_value(m), m.bit_count())
            if bk is None or k > bk:
                best, bk = a, k
        return best
    hits = hand & (s.book_targets | s.high_targets | s.low_targets)
    if hits:
        for c in _DESC:
            if hits >> c & 1:
                if s.book_targets >> c & 1:
                    return HIT_BOOK + c
                if s.high_targets >> c & 1:
                    return HIT_HIGH + c
                return HIT_LOW + c
    cand = hand
    if s.taken >= 0 and not s.rules.may_discard_taken and hand != 1 << s.taken:
        cand &= ~(1 << s.taken)
    return DISCARD + fast_discard(hand, cand)


#: Per card: the other cards of its rank, its suit neighbours one rank away, and two ranks away.
_PAIR = tuple(RANK_MASKS[c % 13] & ~(1 << c) for c in range(52))
_ADJ = tuple(sum(1 << (c - c % 13 + r) for r in (c % 13 - 1, c % 13 + 1) if 0 <= r <= 12) for c in range(52))
_GAP = tuple(sum(1 << (c - c % 13 + r) for r in (c % 13 - 2, c % 13 + 2) if 0 <= r <= 12) for c in range(52))
#: Chance weights of completing a pair, a two-card run and a gapped run within a few draws.
K_PAIR = 0.19
K_ADJ = 0.19
K_GAP = 0.10


def _keep_value(c: int, hand: int) -> float:
    """What keeping ``c`` is worth beyond its count: the partial spreads it is part of, by their odds."""
    v = VALUES[c]
    out = 0.0
    m = hand & _PAIR[c]
    while m:
        low = m & -m
        out += K_PAIR * (v + VALUES[low.bit_length() - 1])
        m ^= low
    m = hand & _ADJ[c]
    while m:
        low = m & -m
        out += K_ADJ * (v + VALUES[low.bit_length() - 1])
        m ^= low
    m = hand & _GAP[c]
    while m:
        low = m & -m
        out += K_GAP * (v + VALUES[low.bit_length() - 1])
        m ^= low
    return out


def fast_discard(hand: int, allowed: int) -> int:
    """The card of ``allowed`` whose count, less what its partial spreads are worth, is highest."""
    best = -1
    bv = -1e9
    for c in _DESC:
        if allowed >> c & 1:
            sc = VALUES[c] - _keep_value(c, hand)
            if sc > bv + 1e-9:
                best, bv = c, sc
    return best


def _wins_by_taking_state(s: GameState, hand: int, top: int) -> bool:
    spreads = tuple((x.owner, x.mask, x.kind, x.key, x.lo, x.hi) for x in s.spreads)
    return wins_by_taking(hand, top, s.table, spreads, s.rules.ace_high) > 0


class FastAgent(BaseAgent):
    """``heuristic:fast``: the fast policy as an agent (see the module docstring)."""

    def __init__(self, seed: int | None = None, drop_margin: float = 0.1, selection: float = 0.6) -> None:
        super().__init__(seed)
        self.fp = FastParams(drop_margin, selection)

    def act(self, obs: Mapping[str, Any], info: SeatInfo) -> int:
        """The fast policy's action (on a sampled world; it reads only this seat's knowledge)."""
        s = sample_state(info, self.rng)
        return fast_action(s, turns_adding_all(info.history, info.n), self.fp)
