"""Reading the opponents' last turn: a world is less likely if an opponent would have dropped in it.

At the start of its last turn every opponent chose not to drop (when it was
allowed to). In a sampled world the opponent's hand *then* is known up to the
card it drew::

    hand then = hand now + cards it spread or hit that turn + its discard - the card it drew

(a taken card is known: the discard just before the take). If that hand was
low enough that a player would have dropped on it, or if the opponent drew
from the stock although the top discard made a spread with that hand, the
world contradicts what happened and gets the weight ``doubt`` instead of 1.
A hidden card kept above the opponent's last discard that is not part of a
pair or near-run costs the weight ``caution``. "Would have dropped" is
judged the way the fast policy judges (:func:`agents.fast.drop_estimate`):
the table estimate of the drop's mean payoff, from the opponent's side of the
table, above ``opp_margin``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from tonk_env.engine import SeatInfo
from tonk_env.engine.actions import DISCARD, DRAW, DROP, HIT_BOOK, SPREAD, TAKE
from tonk_env.engine.cards import VALUES, hand_value
from tonk_env.odds import drop_win_chance

from .hand import connected, in_spread_with


@dataclass(frozen=True)
class LastTurn:
    """What an opponent did on its latest complete turn."""

    seat: int
    took: int  # the card taken from the pile, or -1 if it drew
    played: int  # cards it spread or hit
    discard: int
    passed: int = -1  # the top discard it drew instead of taking (-1 if it took, or unknown)


def last_turns(info: SeatInfo) -> list[LastTurn]:
    """Each opponent's latest complete turn (start with a draw or take, end with a discard).

    Opponents whose latest turn started with a take of an unknown card (the
    upcard) or who have not finished a turn yet are left out.
    """
    hist = info.history
    table = info.table
    out = []
    done: set[int] = set()
    i = len(hist) - 1
    while i >= 0 and len(done) < info.n - 1:
        seat, a = hist[i]
        if seat == info.seat or seat in done or not DISCARD <= a < HIT_BOOK:
            i -= 1
            continue
        # a discard by an opponent we have not read yet: walk back to the start of that turn
        discard = a - DISCARD
        played = 0
        j = i - 1
        while j >= 0 and hist[j][0] == seat and hist[j][1] not in (DRAW, TAKE, DROP):
            b = hist[j][1]
            if b >= SPREAD:
                played |= table.spreads[b - SPREAD].mask
            elif b >= HIT_BOOK:
                played |= 1 << ((b - HIT_BOOK) % 52)
            j -= 1
        done.add(seat)
        if j >= 0 and hist[j][0] == seat and hist[j][1] in (DRAW, TAKE):
            # the top of the pile at the start of that turn: the latest discard before it
            k = j - 1
            while k >= 0 and not DISCARD <= hist[k][1] < HIT_BOOK:
                k -= 1
            top = hist[k][1] - DISCARD if k >= 0 else -1  # -1: the upcard, not named in the history
            if hist[j][1] == TAKE:
                if top < 0:
                    i = j - 1
                    continue  # took the upcard: unknown here
                out.append(LastTurn(seat, top, played, discard))
            else:
                out.append(LastTurn(seat, -1, played, discard, top))
        i = j - 1
    return out


def would_drop(
    count: int, seat: int, info: SeatInfo, turns: list[int], selection: float, margin: float
) -> bool:
    """Whether a player of ``seat`` with ``count`` would drop, judged from public information."""
    p = drop_win_chance(count, seat, info.known, info.hand_sizes, turns, selection)
    return p * (info.n - 1) - 2.0 * (1.0 - p) > margin


def world_weight(
    hands: list[int],
    info: SeatInfo,
    lasts: list[LastTurn],
    turns: list[int],
    selection: float,
    margin: float,
    doubt: float,
    rng: random.Random,
    caution: float = 1.0,
) -> float:
    """The belief weight of a sampled world (``hands``: every seat's cards in it).

    ``doubt`` for each opponent who would have dropped at the start of its last
    turn, and ``caution`` for each hidden card an opponent keeps that counts
    more than its last discard and is not part of a pair or near-run.
    """
    w = 1.0
    ace_high = info.rules.ace_high
    for lt in lasts:
        o = lt.seat
        if caution < 1.0:
            limit = VALUES[lt.discard]
            full = hands[o]
            m = full & ~info.known[o]
            while m:
                low = m & -m
                m ^= low
                c = low.bit_length() - 1
                if VALUES[c] > limit and not connected(c, full & ~low, ace_high):
                    w *= caution
        before = hands[o] | lt.played | (1 << lt.discard)
        if lt.took >= 0:
            x = lt.took
        else:
            cand = (hands[o] & ~info.known[o]) | lt.played | (1 << lt.discard)
            k = int(rng.random() * cand.bit_count())
            while k:
                cand &= cand - 1
                k -= 1
            x = (cand & -cand).bit_length() - 1
        before &= ~(1 << x)
        if lt.passed >= 0 and in_spread_with(lt.passed, before, info.table):
            w *= doubt  # it drew rather than take a card that made a spread with its hand
        t = turns.copy()
        t[o] -= 1
        if would_drop(hand_value(before), o, info, t, selection, margin):
            w *= doubt
    return w
