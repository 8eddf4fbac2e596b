"""The compiled observation: a seat's observation tensor and the oracle's privileged features of a game row.

:func:`observe_into` writes what :func:`tonk_env.obs.observation` computes,
float for float; :func:`privileged_into` writes what
:func:`tonk_env.obs.privileged_features` computes, in the layout of
:func:`tonk_env.obs.privileged_layout`. ``tests/test_core_exact.py`` and
``tonk bench exact`` check the first, ``tests/test_vector_env.py`` the second.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..engine.state import PLAY, START
from ..odds import MAX_EXTRA, MAX_HIDDEN, MAX_SUM
from .layout import (
    C_ADDS,
    C_BOOKT,
    C_DECK,
    C_DISC,
    C_HANDS,
    C_HIGHT,
    C_KNOWN,
    C_LAST,
    C_LOWT,
    C_OWNER,
    C_PHASE,
    C_PILE,
    C_PILEN,
    C_PTR,
    C_THROWN,
    C_TURN,
    C_WAITS,
    F_SELECTION,
    FULL_DECK,
    P_ACE_HIGH,
    P_HAND_SIZE,
    P_MAX_TURNS,
    P_N,
    SUIT_BITS,
    hand_value,
    low_bit_index,
    popcount,
)  # fmt: skip

_BYTE_BITS = np.array([[(v >> j) & 1 for j in range(8)] for v in range(256)], dtype=np.float32)
"""Row ``v``: the 8 bits of byte ``v`` as floats (a constant of the compiled code)."""


@njit(cache=True, inline="always")
def _unpack(m: int, out: np.ndarray, pos: int) -> None:
    """Write the 52 bits of card mask ``m`` as 0.0/1.0 into ``out[pos:pos + 52]``, a byte at a time."""
    for b in range(6):
        row = (m >> (8 * b)) & 255
        for j in range(8):
            out[pos + 8 * b + j] = _BYTE_BITS[row, j]
    row = (m >> 48) & 15
    for j in range(4):
        out[pos + 48 + j] = _BYTE_BITS[row, j]


@njit(cache=True, nogil=True)
def _forms_spread(card: int, hand: int, ace_high: int) -> bool:
    full = hand | (1 << card)
    rank = card % 13
    rm = (1 << rank) | (1 << (13 + rank)) | (1 << (26 + rank)) | (1 << (39 + rank))
    if popcount(full & rm) >= 3:
        return True
    suit = card // 13
    pat = (full >> (suit * 13)) & SUIT_BITS
    for lo in range(rank - 2, rank + 1):
        if lo >= 0 and lo + 2 <= 12:
            if ((pat >> lo) & 7) == 7:
                return True
    if ace_high != 0 and (rank == 0 or rank == 11 or rank == 12):
        if ((pat >> 11) & 1) != 0 and ((pat >> 12) & 1) != 0 and (pat & 1) != 0:
            return True
    return False


@njit(cache=True, inline="always")
def _above(table: np.ndarray, t: int, hidden: int, turns: int, selection: float) -> float:
    extra = int(selection * turns + 0.5)
    if hidden <= 0:
        return 1.0 if t < 0 else 0.0
    if t < 0:
        return 1.0
    if t >= MAX_SUM:
        return 0.0
    return table[min(hidden, MAX_HIDDEN), min(extra, MAX_EXTRA), t + 1]


@njit(cache=True, inline="always")
def _rel(seat: int, i: int, n: int) -> int:
    """The seat ``i`` places after ``seat`` (``(seat + i) % n`` for ``0 <= i < n``, without a division)."""
    o = seat + i
    return o - n if o >= n else o


@njit(cache=True, inline="always")
def _opponents_into(
    S: np.ndarray,
    g: int,
    seat: int,
    n: int,
    hand: int,
    mine: int,
    P: np.ndarray,
    F: np.ndarray,
    above: np.ndarray,
    suit_value: np.ndarray,
    out: np.ndarray,
    pos: int,
) -> int:
    """Write ``opp_estimate`` .. ``drop_win`` of ``seat``'s observation at ``out[pos]``; returns the end."""
    seen = hand | S[g, C_DISC]
    for s in range(n):
        seen |= S[g, C_OWNER + s] | S[g, C_KNOWN + s]
    unseen = FULL_DECK & ~seen
    n_unseen = popcount(unseen)
    mean_unseen = hand_value(unseen, suit_value) / n_unseen if n_unseen else 0.0
    cap = (P[P_HAND_SIZE] + 1) * 0.2
    for i in range(1, n):
        o = _rel(seat, i, n)
        k = S[g, C_KNOWN + o]
        est = (hand_value(k, suit_value) + (popcount(S[g, C_HANDS + o]) - popcount(k)) * mean_unseen) * 0.02
        out[pos] = est if est < cap else cap
        pos += 1
    for i in range(1, n):
        ad = S[g, C_ADDS + _rel(seat, i, n)]
        out[pos] = (ad if ad < 20 else 20) * 0.05
        pos += 1
    for i in range(1, n):
        out[pos] = S[g, C_LAST + _rel(seat, i, n)] * 0.1
        pos += 1
    win = 1.0
    for i in range(1, n):
        o = _rel(seat, i, n)
        k = S[g, C_KNOWN + o]
        p = _above(
            above,
            mine - hand_value(k, suit_value),
            popcount(S[g, C_HANDS + o]) - popcount(k),
            S[g, C_ADDS + o],
            F[F_SELECTION],
        )
        out[pos] = p
        win *= p
        pos += 1
    out[pos] = win
    pos += 1
    return pos


@njit(cache=True, nogil=True)
def observe_into(
    S: np.ndarray,
    g: int,
    seat: int,
    P: np.ndarray,
    F: np.ndarray,
    above: np.ndarray,
    suit_value: np.ndarray,
    out: np.ndarray,
) -> None:
    """Write ``seat``'s observation of game ``g`` into ``out`` (float32), as ``tonk_env.obs.observation``."""
    n = P[P_N]
    hand = S[g, C_HANDS + seat]
    _unpack(hand, out, 0)
    pilen = S[g, C_PILEN]
    top = S[g, C_PILE + pilen - 1] if pilen > 0 else -1
    _unpack((1 << top) if pilen > 0 else 0, out, 52)
    _unpack(S[g, C_DISC], out, 104)
    pos = 156
    for i in range(1, n):
        _unpack(S[g, C_KNOWN + _rel(seat, i, n)], out, pos)
        pos += 52
    for i in range(n):
        _unpack(S[g, C_OWNER + _rel(seat, i, n)], out, pos)
        pos += 52
    for i in range(n):
        out[pos] = popcount(S[g, C_HANDS + _rel(seat, i, n)]) * 0.1
        pos += 1
    out[pos] = (52 - S[g, C_PTR]) / 52
    pos += 1
    for i in range(n):
        w = S[g, C_WAITS + _rel(seat, i, n)]
        out[pos] = (w if w < 10 else 10) * 0.1
        pos += 1
    phase = S[g, C_PHASE]
    out[pos] = 1.0 if phase == START else 0.0
    out[pos + 1] = 1.0 if phase == PLAY else 0.0
    pos += 2
    mine = hand_value(hand, suit_value)
    out[pos] = mine / 50
    out[pos + 1] = S[g, C_TURN] / P[P_MAX_TURNS]
    pos += 2
    thresholds = (3, 5, 7, 9, 11, 13, 15, 18, 21, 25, 30)
    for t in thresholds:
        out[pos] = 1.0 if mine <= t else 0.0
        pos += 1
    pos = _opponents_into(S, g, seat, n, hand, mine, P, F, above, suit_value, out, pos)
    fits = 0.0
    if pilen > 0:
        if (S[g, C_BOOKT] | S[g, C_HIGHT] | S[g, C_LOWT]) >> top & 1 or _forms_spread(
            top, hand, P[P_ACE_HIGH]
        ):
            fits = 1.0
    out[pos] = fits
    pos += 1
    for i in range(n):
        _unpack(S[g, C_THROWN + _rel(seat, i, n)], out, pos)
        pos += 52


@njit(cache=True, nogil=True)
def privileged_into(
    S: np.ndarray, g: int, seat: int, P: np.ndarray, suit_value: np.ndarray, out: np.ndarray
) -> None:
    """Write ``tonk_env.obs.privileged_features`` of game ``g`` for ``seat`` into ``out`` (float32).

    In the order of ``tonk_env.obs.privileged_layout``: the opponents' hands
    (52 bits each, in seat order after ``seat``), their counts / 50, and the
    next stock card one-hot (zeros when the stock is empty).
    """
    n = P[P_N]
    size = 53 * (n - 1) + 52
    for j in range(size):
        out[j] = 0.0
    for i in range(1, n):
        h = S[g, C_HANDS + _rel(seat, i, n)]
        base = 52 * (i - 1)
        while h:
            out[base + low_bit_index(h)] = 1.0
            h &= h - 1
        out[52 * (n - 1) + i - 1] = hand_value(S[g, C_HANDS + _rel(seat, i, n)], suit_value) / 50
    ptr = S[g, C_PTR]
    if ptr < 52:
        out[53 * (n - 1) + S[g, C_DECK + ptr]] = 1.0
