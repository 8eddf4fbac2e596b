"""What the learned opponent model reads: one seat's view as card planes and a few numbers.

The input is a function of a :class:`~tonk_env.engine.SeatInfo` alone (the
seat's hand, the public table, pile and history, the cards it has seen), so
the model can never read a hidden card. Opponents are numbered from the seat
(``k = 1`` sits to its left, ``(seat + k) % n``). Each plane is 52 bits
(bit ``suit * 13 + rank``):

========  =====================================================================
plane     cards
========  =====================================================================
0         my hand
1         unseen by me (in the stock or an opponent's hidden hand)
2         on the table (in spreads)
3         in the discard pile now
4         ever on the discard pile (the upcard included)
then, per opponent ``k = 1 .. n - 1``, 8 planes:
+0        known to be in its hand (taken from the pile, not played since)
+1        every card it discarded
+2        its latest discard
+3        its three latest discards
+4        every top discard it drew over (it drew from the stock instead)
+5        the top discard it drew over on its latest turn
+6        every card it spread or hit
+7        every card it took from the pile
========  =====================================================================

The numbers (float32), per opponent: hidden cards / 10, hand size / 10,
turns it drew or took / 10, turns it must still wait / 4, count of its known
cards / 50; then the stock size / 52, my count / 50, the turn / 50 and the
phase (1 in the play phase). :func:`view_features` returns the planes as 0/1
``uint8`` and the numbers; the network's input is their concatenation.
"""

from __future__ import annotations

import numpy as np

from tonk_env.engine import SeatInfo
from tonk_env.engine.actions import DISCARD, DRAW, HIT_BOOK, SPREAD, TAKE
from tonk_env.engine.cards import hand_value

__all__ = ["GLOBAL_PLANES", "OPP_PLANES", "feature_sizes", "mask_bits", "view_features"]

GLOBAL_PLANES = 5
OPP_PLANES = 8
_SCALARS_PER_OPP = 5
_SCALARS_GLOBAL = 4

_BIT = np.array([1 << c for c in range(52)], dtype=object)


def feature_sizes(n: int) -> tuple[int, int]:
    """``(number of plane bits, number of floats)`` of the view features for ``n`` players."""
    return 52 * (GLOBAL_PLANES + OPP_PLANES * (n - 1)), _SCALARS_PER_OPP * (n - 1) + _SCALARS_GLOBAL


def mask_bits(mask: int) -> np.ndarray:
    """A 52-card bitmask as 52 ``uint8`` values (bit ``c`` at index ``c``)."""
    return np.unpackbits(np.frombuffer(mask.to_bytes(7, "little"), dtype=np.uint8), bitorder="little")[:52]


def view_features(info: SeatInfo) -> tuple[np.ndarray, np.ndarray]:
    """The model's input for ``info``'s seat: ``(planes as uint8 0/1, numbers as float32)``."""
    n = info.n
    me = info.seat
    hist = info.history
    discards: list[list[int]] = [[] for _ in range(n)]
    passed = [0] * n
    last_pass = [-1] * n
    played = [0] * n
    took = [0] * n
    turns = [0] * n
    hist_discards = 0
    for _, a in hist:
        if DISCARD <= a < HIT_BOOK:
            hist_discards |= 1 << (a - DISCARD)
    up = info.discarded & ~hist_discards
    stack = [(up & -up).bit_length() - 1] if up else []
    table = info.table
    for seat, a in hist:
        if a == DRAW:
            turns[seat] += 1
            if stack:
                passed[seat] |= 1 << stack[-1]
                last_pass[seat] = stack[-1]
            else:
                last_pass[seat] = -1
        elif a == TAKE:
            turns[seat] += 1
            last_pass[seat] = -1
            if stack:
                took[seat] |= 1 << stack.pop()
        elif DISCARD <= a < HIT_BOOK:
            c = a - DISCARD
            discards[seat].append(c)
            stack.append(c)
        elif a >= SPREAD:
            played[seat] |= table.spreads[a - SPREAD].mask
        elif a >= HIT_BOOK:
            played[seat] |= 1 << ((a - HIT_BOOK) % 52)
    pile = 0
    for c in info.pile:
        pile |= 1 << c
    masks = [info.hand, info.unseen(), info.table_cards(), pile, info.discarded]
    nums = []
    for k in range(1, n):
        o = (me + k) % n
        ds = discards[o]
        last3 = 0
        for c in ds[-3:]:
            last3 |= 1 << c
        every = 0
        for c in ds:
            every |= 1 << c
        masks += [
            info.known[o],
            every,
            (1 << ds[-1]) if ds else 0,
            last3,
            passed[o],
            (1 << last_pass[o]) if last_pass[o] >= 0 else 0,
            played[o],
            took[o],
        ]
        hidden = info.hand_sizes[o] - info.known[o].bit_count()
        nums += [
            hidden / 10.0,
            info.hand_sizes[o] / 10.0,
            turns[o] / 10.0,
            min(info.waits[o], 4) / 4.0,
            hand_value(info.known[o]) / 50.0,
        ]
    nums += [info.stock_size / 52.0, hand_value(info.hand) / 50.0, info.turn / 50.0, float(info.phase != 0)]
    raw = b"".join(m.to_bytes(7, "little") for m in masks)
    bits = np.unpackbits(np.frombuffer(raw, dtype=np.uint8).reshape(len(masks), 7), axis=1, bitorder="little")
    return bits[:, :52].reshape(-1), np.asarray(nums, dtype=np.float32)
