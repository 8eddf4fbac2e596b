"""The compiled rules, masks and observations: numba kernels over one int64 row per game.

Every game is one row of an ``int64`` state array ``S[g, :]`` with the
columns below (fixed offsets, module constants that numba folds in), and one
row of a ``float64`` payoff array. Card sets are 52-bit masks in ``int64``.

=============  =====  ===================================================
columns        size   content (the engine's ``GameState`` field)
=============  =====  ===================================================
``C_CUR``      1      seat to act (``cur``)
``C_PHASE``    1      0 start, 1 play, 2 over (``phase``)
``C_TAKEN``    1      card taken from the pile this turn, or -1
``C_TURN``     1      turns completed (all seats)
``C_DISC``     1      every card that has been on the pile (``discarded``)
``C_BOOKT``..  3      book / run-high / run-low hit targets
``C_PTR``      1      index in ``deck`` of the next stock card
``C_PILEN``    1      cards on the discard pile
``C_NSP``      1      spreads on the table
``C_HANDS``    6      hands by seat
``C_KNOWN``    6      publicly known cards by seat
``C_OWNER``    6      cards on the table by spread owner
``C_WAITS``    6      drop waits by seat
``C_ADDS``     6      turns each seat drew or took (for ``opp_turns``)
``C_LAST``     6      value of each seat's latest discard (0 before one)
``C_DECK``     52     the dealing order, top first
``C_PILE``     52     the discard pile, oldest first
``C_SP*``      6x18   spreads: mask, kind, key, lo, hi, owner
=============  =====  ===================================================

Rules are an ``int64`` parameter vector (``P_*`` indices), a ``float64`` one
(``F_*``) and a boolean table of instant-win counts. The engine
(:mod:`tonk_env.engine`) is the specification; :mod:`tonk_env.core.exact`
checks these kernels against it.
"""

from __future__ import annotations

import numpy as np
from numba import njit

# the engine's phases and action-table offsets: plain ints, folded into the compiled code
from ..engine.actions import BOOK, DISCARD, DRAW, DROP, HIT_BOOK, HIT_HIGH, HIT_LOW, SPREAD, TAKE
from ..engine.state import OVER, PLAY, START

MAX_SEATS = 6
MAX_SPREADS = 18

C_CUR = 0
C_PHASE = 1
C_TAKEN = 2
C_TURN = 3
C_DISC = 4
C_BOOKT = 5
C_HIGHT = 6
C_LOWT = 7
C_PTR = 8
C_PILEN = 9
C_NSP = 10
C_HANDS = 11
C_KNOWN = C_HANDS + MAX_SEATS
C_OWNER = C_KNOWN + MAX_SEATS
C_WAITS = C_OWNER + MAX_SEATS
C_ADDS = C_WAITS + MAX_SEATS
C_LAST = C_ADDS + MAX_SEATS
C_DECK = C_LAST + MAX_SEATS
C_PILE = C_DECK + 52
C_SPMASK = C_PILE + 52
C_SPKIND = C_SPMASK + MAX_SPREADS
C_SPKEY = C_SPKIND + MAX_SPREADS
C_SPLO = C_SPKEY + MAX_SPREADS
C_SPHI = C_SPLO + MAX_SPREADS
C_SPOWNER = C_SPHI + MAX_SPREADS
NUM_COLS = C_SPOWNER + MAX_SPREADS

P_N = 0
P_HAND_SIZE = 1
P_UPCARD = 2
P_ACE_HIGH = 3
P_MAY_DISCARD_TAKEN = 4
P_MAX_TURNS = 5
P_SPREAD_WAIT = 6
P_HIT_WAIT = 7
P_WAIT_CUMULATIVE = 8
P_CAUGHT = 9  # 0 standard, 1 double_to_lowest_only, 2 everyone_double
P_STOCK_TIE = 10  # 0 void, 1 split
P_INSTANT_TIE = 11  # 0 void, 1 rank
P_LOW_MAX = 12  # -1 = off
P_ANY_INSTANT = 13
P_ACTIONS = 14
NUM_PARAMS = 15

F_INSTANT_PAY = 0
F_TONK_PAY = 1
F_RUN_PAY = 2
F_SELECTION = 3
NUM_FPARAMS = 4

SUIT_BITS = 0x1FFF
FULL_DECK = (1 << 52) - 1
MAX_HIDDEN = 8
MAX_EXTRA = 24
MAX_SUM = 80


@njit(cache=True, inline="always")
def popcount(x: int) -> int:
    """Number of set bits of a non-negative int64."""
    x = x - ((x >> 1) & 0x5555555555555555)
    x = (x & 0x3333333333333333) + ((x >> 2) & 0x3333333333333333)
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0F
    x = x + (x >> 8)  # byte sums without a multiply (signed overflow is undefined for LLVM)
    x = x + (x >> 16)
    x = x + (x >> 32)
    return x & 0x7F


@njit(cache=True, inline="always")
def low_bit_index(x: int) -> int:
    """Index of the lowest set bit of a non-zero int64."""
    return popcount((x & -x) - 1)


@njit(cache=True, inline="always")
def hand_value(m: int, suit_value: np.ndarray) -> int:
    """Count of a card mask (ace 1, faces 10)."""
    return (
        suit_value[m & SUIT_BITS]
        + suit_value[(m >> 13) & SUIT_BITS]
        + suit_value[(m >> 26) & SUIT_BITS]
        + suit_value[(m >> 39) & SUIT_BITS]
    )


@njit(cache=True)
def _finish_win(pay: np.ndarray, g: int, n: int, winner: int, amount: float) -> None:
    for s in range(n):
        pay[g, s] = -amount
    pay[g, winner] = amount * (n - 1)


@njit(cache=True)
def _clear_pay(pay: np.ndarray, g: int) -> None:
    for s in range(MAX_SEATS):
        pay[g, s] = 0.0


@njit(cache=True)
def _stock_out(S: np.ndarray, pay: np.ndarray, g: int, P: np.ndarray, suit_value: np.ndarray) -> None:
    n = P[P_N]
    low = 1 << 30
    for s in range(n):
        c = hand_value(S[g, C_HANDS + s], suit_value)
        if c < low:
            low = c
    nlow = 0
    w = -1
    for s in range(n):
        if hand_value(S[g, C_HANDS + s], suit_value) == low:
            nlow += 1
            w = s
    S[g, C_PHASE] = OVER
    if nlow == 1:
        _finish_win(pay, g, n, w, 1.0)
        return
    if P[P_STOCK_TIE] == 0 or nlow == n:
        return
    for s in range(n):
        if hand_value(S[g, C_HANDS + s], suit_value) != low:
            for t in range(n):
                if hand_value(S[g, C_HANDS + t], suit_value) == low:
                    pay[g, s] -= 1.0
                    pay[g, t] += 1.0


@njit(cache=True)
def _drop(S: np.ndarray, pay: np.ndarray, g: int, P: np.ndarray, suit_value: np.ndarray) -> None:
    n = P[P_N]
    d = S[g, C_CUR]
    counts = np.empty(MAX_SEATS, dtype=np.int64)
    for s in range(n):
        counts[s] = hand_value(S[g, C_HANDS + s], suit_value)
    mine = counts[d]
    S[g, C_PHASE] = OVER
    wins = True
    lowest = 1 << 30
    for s in range(n):
        if s != d:
            if counts[s] <= mine:
                wins = False
            if counts[s] < lowest:
                lowest = counts[s]
    if wins:
        _finish_win(pay, g, n, d, 1.0)
        return
    _caught(pay, g, n, d, counts, mine, lowest, P[P_CAUGHT])


@njit(cache=True)
def _caught(
    pay: np.ndarray, g: int, n: int, d: int, counts: np.ndarray, mine: int, lowest: int, mode: int
) -> None:
    if mode == 0:
        for s in range(n):
            if s != d and counts[s] <= mine:
                pay[g, d] -= 2.0
                pay[g, s] += 2.0
        for s in range(n):
            if s != d and counts[s] != lowest:
                for w in range(n):
                    if w != d and counts[w] == lowest:
                        pay[g, s] -= 1.0
                        pay[g, w] += 1.0
    elif mode == 1:
        for w in range(n):
            if w != d and counts[w] == lowest:
                pay[g, d] -= 2.0
                pay[g, w] += 2.0
    else:
        for s in range(n):
            if s != d:
                pay[g, d] -= 2.0
                pay[g, s] += 2.0


@njit(cache=True)
def deal(
    S: np.ndarray,
    pay: np.ndarray,
    g: int,
    deck: np.ndarray,
    dealer: int,
    P: np.ndarray,
    F: np.ndarray,
    instant: np.ndarray,
    suit_value: np.ndarray,
) -> bool:
    """Deal game ``g`` from ``deck`` (top first) as ``new_game`` does; True if the deal ends the hand."""
    n = P[P_N]
    for j in range(NUM_COLS):
        S[g, j] = 0
    _clear_pay(pay, g)
    for j in range(52):
        S[g, C_DECK + j] = deck[j]
    first = (dealer + 1) % n
    hs = P[P_HAND_SIZE]
    k = n * hs
    for i in range(k):
        seat = (first + i % n) % n
        S[g, C_HANDS + seat] |= 1 << deck[i]
    if P[P_UPCARD]:
        up = deck[k]
        S[g, C_PILE] = up
        S[g, C_PILEN] = 1
        S[g, C_DISC] = 1 << up
        k += 1
    S[g, C_PTR] = k
    S[g, C_CUR] = first
    S[g, C_PHASE] = START
    S[g, C_TAKEN] = -1
    if not P[P_ANY_INSTANT]:
        return False
    return _instant_win(S, pay, g, P, F, instant, suit_value)


@njit(cache=True, inline="always")
def _strength(c: int, low: int) -> int:
    """Instant-win rank of an instant-winning count: a low count (lower better) beats 50 beats 49."""
    if low >= 0 and c <= low:
        return 1000 - c
    return c


@njit(cache=True)
def _instant_win(
    S: np.ndarray,
    pay: np.ndarray,
    g: int,
    P: np.ndarray,
    F: np.ndarray,
    instant: np.ndarray,
    suit_value: np.ndarray,
) -> bool:
    """Score an instant win at the deal (``scoring.instant_win``); True if the hand ended."""
    n = P[P_N]
    low = P[P_LOW_MAX]
    nwin = 0
    best = -1
    for s in range(n):
        c = hand_value(S[g, C_HANDS + s], suit_value)
        if instant[c] or (low >= 0 and c <= low):
            nwin += 1
            best = max(best, _strength(c, low))
    if nwin == 0:
        return False
    S[g, C_PHASE] = OVER
    if nwin > 1 and P[P_INSTANT_TIE] == 0:
        return True
    ntop = 0
    w = -1
    for s in range(n):
        c = hand_value(S[g, C_HANDS + s], suit_value)
        if (instant[c] or (low >= 0 and c <= low)) and _strength(c, low) == best:
            ntop += 1
            w = s
    if ntop == 1:
        _finish_win(pay, g, n, w, F[F_INSTANT_PAY])
    return True


@njit(cache=True)
def legal_mask_into(
    S: np.ndarray, g: int, P: np.ndarray, shapes: np.ndarray, suit_runs: np.ndarray, out: np.ndarray
) -> int:
    """Write game ``g``'s legal actions as 0/1 into ``out`` (int8, table size); returns how many."""
    idx = np.empty(P[P_ACTIONS], dtype=np.int64)
    return legal_into(S, g, P, shapes, suit_runs, out, idx)


@njit(cache=True)
def legal_into(
    S: np.ndarray,
    g: int,
    P: np.ndarray,
    shapes: np.ndarray,
    suit_runs: np.ndarray,
    out: np.ndarray,
    idx: np.ndarray,
) -> int:
    """Write game ``g``'s legal actions as 0/1 into ``out`` and, ascending, into ``idx[:k]``; return ``k``."""
    size = P[P_ACTIONS]
    for j in range(size):
        out[j] = 0
    phase = S[g, C_PHASE]
    cur = S[g, C_CUR]
    if phase == START:
        k = 0
        if S[g, C_WAITS + cur] == 0:
            out[DROP] = 1
            idx[k] = DROP
            k += 1
        out[DRAW] = 1
        idx[k] = DRAW
        k += 1
        if S[g, C_PILEN] > 0:
            out[TAKE] = 1
            idx[k] = TAKE
            k += 1
        return k
    if phase != PLAY:
        return 0
    hand = S[g, C_HANDS + cur]
    taken = S[g, C_TAKEN]
    if taken >= 0 and not P[P_MAY_DISCARD_TAKEN] and popcount(hand) > 1:
        k = _bits_into(hand & ~(1 << taken), DISCARD, out, idx, 0)  # the taken card may not go back
    else:
        k = _bits_into(hand, DISCARD, out, idx, 0)
    k = _bits_into(hand & S[g, C_BOOKT], HIT_BOOK, out, idx, k)
    k = _bits_into(hand & S[g, C_HIGHT], HIT_HIGH, out, idx, k)
    k = _bits_into(hand & S[g, C_LOWT], HIT_LOW, out, idx, k)
    return _spreads_into(hand, P[P_ACE_HIGH], shapes, suit_runs, out, idx, k)


@njit(cache=True, inline="always")
def _bits_into(m: int, base: int, out: np.ndarray, idx: np.ndarray, k: int) -> int:
    """Set ``out[base + card]`` and append it to ``idx`` for every card of ``m``; returns the new count."""
    while m:
        a = base + low_bit_index(m)
        out[a] = 1
        idx[k] = a
        k += 1
        m &= m - 1
    return k


@njit(cache=True)
def _spreads_into(
    hand: int,
    ace_high: int,
    shapes: np.ndarray,
    suit_runs: np.ndarray,
    out: np.ndarray,
    idx: np.ndarray,
    k: int,
) -> int:
    """Set and append the spread actions (books, then runs) that ``hand`` can lay; returns the new count."""
    a = hand & SUIT_BITS
    b = (hand >> 13) & SUIT_BITS
    c2 = (hand >> 26) & SUIT_BITS
    d = (hand >> 39) & SUIT_BITS
    triple = (a & b & (c2 | d)) | (c2 & d & (a | b))
    while triple:
        r = low_bit_index(triple)
        triple &= triple - 1
        pat = (a >> r & 1) | (b >> r & 1) << 1 | (c2 >> r & 1) << 2 | (d >> r & 1) << 3
        for q in range(4):
            if pat | (1 << q) == 15:
                out[SPREAD + 5 * r + q] = 1
                idx[k] = SPREAD + 5 * r + q
                k += 1
        if pat == 15:
            out[SPREAD + 5 * r + 4] = 1
            idx[k] = SPREAD + 5 * r + 4
            k += 1
    for s in range(4):
        p = (hand >> (13 * s)) & SUIT_BITS
        if p & (p >> 1) & (p >> 2) or (ace_high and p & 1 and (p >> 12) & 1 and (p >> 11) & 1):
            for j in range(suit_runs[s, 0], suit_runs[s, 1]):
                sm = shapes[j, 0]
                if hand & sm == sm:
                    out[SPREAD + j] = 1
                    idx[k] = SPREAD + j
                    k += 1
    return k


@njit(cache=True)
def _index_targets(S: np.ndarray, g: int, ace_high: int) -> None:
    book = 0
    high = 0
    low = 0
    for i in range(S[g, C_NSP]):
        mask = S[g, C_SPMASK + i]
        key = S[g, C_SPKEY + i]
        if S[g, C_SPKIND + i] == BOOK:
            if popcount(mask) == 3:
                four = (1 << key) | (1 << (13 + key)) | (1 << (26 + key)) | (1 << (39 + key))
                book |= four & ~mask
            continue
        lo = S[g, C_SPLO + i]
        hi = S[g, C_SPHI + i]
        if hi < 12 or (hi == 12 and ace_high and lo > 0):
            pos = hi + 1
            high |= 1 << (key * 13 + (0 if pos == 13 else pos))
        if lo > 0 and not (lo == 1 and hi == 13):
            low |= 1 << (key * 13 + lo - 1)
    S[g, C_BOOKT] = book
    S[g, C_HIGHT] = high
    S[g, C_LOWT] = low


@njit(cache=True)
def _add_wait(S: np.ndarray, g: int, seat: int, w: int, cumulative: int) -> None:
    if w:
        if cumulative:
            S[g, C_WAITS + seat] += w
        elif S[g, C_WAITS + seat] < w:
            S[g, C_WAITS + seat] = w


@njit(cache=True)
def apply_action(
    S: np.ndarray,
    pay: np.ndarray,
    g: int,
    a: int,
    P: np.ndarray,
    F: np.ndarray,
    shapes: np.ndarray,
    values: np.ndarray,
    suit_value: np.ndarray,
) -> bool:
    """Play legal action ``a`` in game ``g`` (unchecked); True if the hand ended."""
    cur = S[g, C_CUR]
    n = P[P_N]
    if a == DRAW:
        if S[g, C_PTR] >= 52:
            _stock_out(S, pay, g, P, suit_value)
            return True
        c = S[g, C_DECK + S[g, C_PTR]]
        S[g, C_PTR] += 1
        S[g, C_HANDS + cur] |= 1 << c
        S[g, C_PHASE] = PLAY
        S[g, C_TAKEN] = -1
        if S[g, C_WAITS + cur]:
            S[g, C_WAITS + cur] -= 1
        S[g, C_ADDS + cur] += 1
        return False
    if a == TAKE:
        S[g, C_PILEN] -= 1
        c = S[g, C_PILE + S[g, C_PILEN]]
        S[g, C_HANDS + cur] |= 1 << c
        S[g, C_KNOWN + cur] |= 1 << c
        S[g, C_PHASE] = PLAY
        S[g, C_TAKEN] = c
        if S[g, C_WAITS + cur]:
            S[g, C_WAITS + cur] -= 1
        S[g, C_ADDS + cur] += 1
        return False
    if a == DROP:
        _drop(S, pay, g, P, suit_value)
        return True
    if a < HIT_BOOK:
        c = a - DISCARD
        bit = 1 << c
        hand = S[g, C_HANDS + cur] & ~bit
        S[g, C_HANDS + cur] = hand
        S[g, C_KNOWN + cur] &= ~bit
        S[g, C_PILE + S[g, C_PILEN]] = c
        S[g, C_PILEN] += 1
        S[g, C_DISC] |= bit
        S[g, C_LAST + cur] = values[c]
        if hand == 0:
            S[g, C_PHASE] = OVER
            _finish_win(pay, g, n, cur, F[F_RUN_PAY])
            return True
        S[g, C_TURN] += 1
        S[g, C_PHASE] = START
        S[g, C_TAKEN] = -1
        S[g, C_CUR] = (cur + 1) % n
        if S[g, C_TURN] >= P[P_MAX_TURNS]:
            _stock_out(S, pay, g, P, suit_value)
            return True
        return False
    return _lay(S, pay, g, a, cur, P, F, shapes)


@njit(cache=True)
def _hit_target(S: np.ndarray, g: int, a: int) -> int:
    """Index of the spread that hit action ``a`` joins."""
    c = (a - HIT_BOOK) % 52
    suit = c // 13
    rank = c % 13
    for i in range(S[g, C_NSP]):
        kind = S[g, C_SPKIND + i]
        key = S[g, C_SPKEY + i]
        if a < HIT_HIGH:
            if kind == BOOK and key == rank:
                return i
        elif kind != BOOK and key == suit:
            lo = S[g, C_SPLO + i]
            pos = S[g, C_SPHI + i] + 1
            if a < HIT_LOW:
                if pos <= 13 and suit * 13 + (0 if pos == 13 else pos) == c:
                    return i
            elif lo > 0 and suit * 13 + lo - 1 == c:
                return i
    return -1


@njit(cache=True)
def _lay(
    S: np.ndarray, pay: np.ndarray, g: int, a: int, cur: int, P: np.ndarray, F: np.ndarray, shapes: np.ndarray
) -> bool:
    """Play a legal hit or spread (a tonk out if it empties the hand); True if the hand ended."""
    if a < SPREAD:
        target = _hit_target(S, g, a)
        bit = 1 << ((a - HIT_BOOK) % 52)
        S[g, C_SPMASK + target] |= bit
        if a >= HIT_LOW:
            S[g, C_SPLO + target] -= 1
        elif a >= HIT_HIGH:
            S[g, C_SPHI + target] += 1
        owner = S[g, C_SPOWNER + target]
        S[g, C_OWNER + owner] |= bit
        played = bit
        _add_wait(S, g, owner, P[P_HIT_WAIT], P[P_WAIT_CUMULATIVE])
    else:
        j = a - SPREAD
        played = shapes[j, 0]
        i = S[g, C_NSP]
        S[g, C_SPMASK + i] = played
        S[g, C_SPKIND + i] = shapes[j, 1]
        S[g, C_SPKEY + i] = shapes[j, 2]
        S[g, C_SPLO + i] = shapes[j, 3]
        S[g, C_SPHI + i] = shapes[j, 4]
        S[g, C_SPOWNER + i] = cur
        S[g, C_NSP] = i + 1
        S[g, C_OWNER + cur] |= played
        _add_wait(S, g, cur, P[P_SPREAD_WAIT], P[P_WAIT_CUMULATIVE])
    hand = S[g, C_HANDS + cur] & ~played
    S[g, C_HANDS + cur] = hand
    S[g, C_KNOWN + cur] &= ~played
    taken = S[g, C_TAKEN]
    if taken >= 0 and (played >> taken) & 1:
        S[g, C_TAKEN] = -1
    _index_targets(S, g, P[P_ACE_HIGH])
    if hand == 0:
        S[g, C_PHASE] = OVER
        _finish_win(pay, g, P[P_N], cur, F[F_TONK_PAY])
        return True
    return False


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


@njit(cache=True)
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


@njit(cache=True)
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
    fits = 0.0
    if pilen > 0:
        if (S[g, C_BOOKT] | S[g, C_HIGHT] | S[g, C_LOWT]) >> top & 1 or _forms_spread(
            top, hand, P[P_ACE_HIGH]
        ):
            fits = 1.0
    out[pos] = fits


@njit(cache=True, inline="always")
def _mix(x: int) -> int:
    """splitmix64 finalizer on uint64 arithmetic."""
    z = np.uint64(x) + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@njit(cache=True)
def seeded_deck(seed: int, game: int, index: int, out: np.ndarray) -> None:
    """Shuffle a deck for the ``index``-th deal of game ``game`` under ``seed`` (Fisher-Yates, splitmix64)."""
    for j in range(52):
        out[j] = j
    state = _mix(_mix(_mix(seed) ^ np.uint64(game)) ^ np.uint64(index))
    for j in range(51, 0, -1):
        state = _mix(state)
        r = int(state % np.uint64(j + 1))
        t = out[j]
        out[j] = out[r]
        out[r] = t


@njit(cache=True)
def masks_batch(
    S: np.ndarray,
    P: np.ndarray,
    shapes: np.ndarray,
    suit_runs: np.ndarray,
    out: np.ndarray,
    idx: np.ndarray,
    counts: np.ndarray,
) -> None:
    """Write every game's legal mask into ``out[g]``, its legal ids into ``idx[g, :counts[g]]``."""
    for g in range(S.shape[0]):
        counts[g] = legal_into(S, g, P, shapes, suit_runs, out[g], idx[g])


@njit(cache=True)
def observe_batch(
    S: np.ndarray, P: np.ndarray, F: np.ndarray, above: np.ndarray, suit_value: np.ndarray, out: np.ndarray
) -> None:
    """Write every game's acting-seat observation into ``out[g]``."""
    for g in range(S.shape[0]):
        observe_into(S, g, S[g, C_CUR], P, F, above, suit_value, out[g])


@njit(cache=True, inline="always")
def _step_game(
    S: np.ndarray,
    pay: np.ndarray,
    g: int,
    a: int,
    P: np.ndarray,
    F: np.ndarray,
    instant: np.ndarray,
    shapes: np.ndarray,
    values: np.ndarray,
    suit_value: np.ndarray,
    rewards: np.ndarray,
    seed: int,
    counters: np.ndarray,
    dealer: int,
    auto_reset: bool,
    deck: np.ndarray,
) -> bool:
    """Play ``a`` in game ``g``; its rewards (and those of deals ending at once when it re-deals); done."""
    n = P[P_N]
    for s in range(n):
        rewards[g, s] = 0.0
    done = apply_action(S, pay, g, a, P, F, shapes, values, suit_value)
    if done:
        for s in range(n):
            rewards[g, s] += pay[g, s]
        if auto_reset:
            while True:
                counters[g] += 1
                seeded_deck(seed, g, counters[g], deck)
                if not deal(S, pay, g, deck, dealer, P, F, instant, suit_value):
                    break
                for s in range(n):
                    rewards[g, s] += pay[g, s]
    return done


@njit(cache=True)
def step_batch(
    S: np.ndarray,
    pay: np.ndarray,
    actions: np.ndarray,
    P: np.ndarray,
    F: np.ndarray,
    instant: np.ndarray,
    shapes: np.ndarray,
    values: np.ndarray,
    suit_value: np.ndarray,
    rewards: np.ndarray,
    dones: np.ndarray,
    seed: int,
    counters: np.ndarray,
    dealer: int,
    auto_reset: bool,
) -> None:
    """Step every game by ``actions[g]``; rewards, dones, and auto-reset from seeded deals."""
    deck = np.empty(52, dtype=np.int64)
    for g in range(S.shape[0]):
        dones[g] = _step_game(
            S, pay, g, actions[g], P, F, instant, shapes, values, suit_value,
            rewards, seed, counters, dealer, auto_reset, deck,
        )  # fmt: skip


@njit(cache=True)
def step_observe_batch(
    S: np.ndarray,
    pay: np.ndarray,
    actions: np.ndarray,
    P: np.ndarray,
    F: np.ndarray,
    instant: np.ndarray,
    shapes: np.ndarray,
    suit_runs: np.ndarray,
    values: np.ndarray,
    suit_value: np.ndarray,
    above: np.ndarray,
    rewards: np.ndarray,
    dones: np.ndarray,
    seed: int,
    counters: np.ndarray,
    dealer: int,
    masks: np.ndarray,
    ids: np.ndarray,
    counts: np.ndarray,
    obs: np.ndarray,
) -> None:
    """:func:`step_batch` with auto-reset, then every game's next mask, legal ids and observation."""
    deck = np.empty(52, dtype=np.int64)
    for g in range(S.shape[0]):
        dones[g] = _step_game(
            S, pay, g, actions[g], P, F, instant, shapes, values, suit_value,
            rewards, seed, counters, dealer, True, deck,
        )  # fmt: skip
        counts[g] = legal_into(S, g, P, shapes, suit_runs, masks[g], ids[g])
        observe_into(S, g, S[g, C_CUR], P, F, above, suit_value, obs[g])


@njit(cache=True)
def apply_rows(
    S: np.ndarray,
    pay: np.ndarray,
    rows: np.ndarray,
    actions: np.ndarray,
    P: np.ndarray,
    F: np.ndarray,
    shapes: np.ndarray,
    values: np.ndarray,
    suit_value: np.ndarray,
    ended: np.ndarray,
) -> None:
    """Play ``actions[i]`` in game ``rows[i]`` (no auto-reset); ``ended[i]``: that hand ended."""
    for i in range(rows.shape[0]):
        ended[i] = apply_action(S, pay, rows[i], actions[i], P, F, shapes, values, suit_value)
