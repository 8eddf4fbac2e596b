"""``heuristic:greedy`` inside the compiled step: the public bots' rules of thumb on a game row.

:func:`greedy_move` makes the choice of ``agents.heuristic.GreedyAgent.act``
(and of its batched form, ``agents.greedy_arrays.greedy_moves``) for the seat
to act in a game of the compiled core, so the learner kernel
(:func:`tonk_env.core.learner.advance`) plays greedy opponents itself, as it
plays random ones, without a round trip to Python per move. ``TonkVectorEnv``
seats a greedy there when the agent says so (``core_policy``); under
``check=True`` every such move is compared with ``act`` on the engine mirror.

The rules, with ties broken by static keys (:func:`greedy_keys`):

- at the start of a turn: drop at a count of ``drop_at`` or less, take the
  top discard when it makes a book or a run of three with the hand, else draw;
- in the play phase: the best spread (most count, then most cards, then the
  lowest id), else the highest hit (value, rank, suit; then the lowest id),
  else the highest card that is in no pair or near-run (a card of its suit one
  or two ranks away; with ``ace_high`` the ace also sits above the king), else
  the highest card.
"""

from __future__ import annotations

from functools import cache

import numpy as np
from numba import njit

from ..engine import action_table
from ..engine.actions import DISCARD, DRAW, DROP, HIT_BOOK, SPREAD, TAKE
from ..engine.cards import VALUES, hand_value
from ..engine.state import START
from .layout import C_CUR, C_HANDS, C_PHASE, C_PILE, C_PILEN, P_ACE_HIGH, SUIT_BITS, low_bit_index
from .rules import legal_into

__all__ = ["ID_MASK", "card_keys", "greedy_keys", "greedy_move"]

_ID_BITS = 12  # action ids are below 4,096; the low bits of a key hold 4095 - id
ID_MASK = (1 << _ID_BITS) - 1


def card_keys() -> np.ndarray:
    """Per card id: a key that orders the cards highest first (value, then rank, then suit), all > 0."""
    return np.asarray([((VALUES[c] << 4 | c % 13) << 2) | c // 13 for c in range(52)], dtype=np.int64)


@cache
def greedy_keys(ace_high: bool) -> np.ndarray:
    """int64 ``(3, A)``: per action id the spread key and the hit key (-1 elsewhere); row 2: the card keys."""
    table = action_table(ace_high)
    keys = np.full((3, table.size), -1, dtype=np.int64)
    for a in range(SPREAD, table.size):
        m = table.spreads[a - SPREAD].mask
        keys[0, a] = ((hand_value(m) << 5 | m.bit_count()) << _ID_BITS) | (ID_MASK - a)
    cards = card_keys()
    for a in range(HIT_BOOK, SPREAD):
        keys[1, a] = (int(cards[(a - HIT_BOOK) % 52]) << _ID_BITS) | (ID_MASK - a)
    keys[2, :52] = cards
    keys.flags.writeable = False
    return keys


@njit(cache=True, inline="always")
def _top_makes_spread(hand: int, top: int, ace_high: int) -> bool:
    """Whether card ``top`` forms a book or a run of three with cards of ``hand``."""
    full = hand | (1 << top)
    suit, rank = top // 13, top % 13
    same = 0
    for s in range(4):
        same += (full >> (13 * s + rank)) & 1
    if same >= 3:
        return True
    pat = (full >> (13 * suit)) & SUIT_BITS
    for d in range(3):
        lo = rank - d
        if 0 <= lo <= 10 and (pat >> lo) & 7 == 7:
            return True
    return bool(ace_high) and (rank == 0 or rank >= 11) and (pat & 1) == 1 and (pat >> 11) & 3 == 3


@njit(cache=True, inline="always")
def _loose(hand: int, ace_high: int) -> int:
    """The cards of ``hand`` in no pair (two of a rank) and no near-run (a suit's card 1 or 2 ranks away)."""
    out = 0
    for s in range(4):
        pat = (hand >> (13 * s)) & SUIT_BITS
        near = (pat << 1) | (pat << 2) | (pat >> 1) | (pat >> 2)
        if ace_high and pat & 1:  # the ace also sits above the king: Q-A, K-A
            near |= 3 << 11
        if ace_high and (pat >> 11) & 3:
            near |= 1
        out |= (pat & ~near & SUIT_BITS) << (13 * s)
    for r in range(13):
        n = 0
        for s in range(4):
            n += (hand >> (13 * s + r)) & 1
        if n >= 2:
            for s in range(4):
                out &= ~(1 << (13 * s + r))
    return out


@njit(cache=True, nogil=True)
def greedy_move(
    S: np.ndarray,
    g: int,
    drop_at: int,
    P: np.ndarray,
    shapes: np.ndarray,
    suit_runs: np.ndarray,
    values: np.ndarray,
    keys: np.ndarray,
    scratch: np.ndarray,
    ids: np.ndarray,
) -> int:
    """The greedy's action for the seat to act in game ``g`` (``keys``: :func:`greedy_keys`)."""
    k = legal_into(S, g, P, shapes, suit_runs, scratch, ids)
    hand = S[g, C_HANDS + S[g, C_CUR]]
    ace_high = P[P_ACE_HIGH]
    if S[g, C_PHASE] == START:
        if scratch[DROP]:
            count = 0
            m = hand
            while m:
                count += values[low_bit_index(m)]
                m &= m - 1
            if count <= drop_at:
                return DROP
        pilen = S[g, C_PILEN]
        if scratch[TAKE] and pilen > 0 and _top_makes_spread(hand, S[g, C_PILE + pilen - 1], ace_high):
            return TAKE
        return DRAW
    best_spread = -1
    best_hit = -1
    for j in range(k):
        a = ids[j]
        if keys[0, a] > best_spread:
            best_spread = keys[0, a]
        if keys[1, a] > best_hit:
            best_hit = keys[1, a]
    if best_spread >= 0:
        return ID_MASK - (best_spread & ID_MASK)
    if best_hit >= 0:
        return ID_MASK - (best_hit & ID_MASK)
    loose = _loose(hand, ace_high)
    best, best_loose = -1, -1
    best_key, loose_key = -1, -1
    m = hand
    while m:
        c = low_bit_index(m)
        m &= m - 1
        if not scratch[DISCARD + c]:
            continue
        key = keys[2, c]
        if key > best_key:
            best, best_key = c, key
        if (loose >> c) & 1 and key > loose_key:
            best_loose, loose_key = c, key
    return DISCARD + (best_loose if best_loose >= 0 else best)
