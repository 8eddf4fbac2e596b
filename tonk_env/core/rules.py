"""The compiled rules: deal, legal actions, moves and payments of one game row (numba kernels).

The kernels read and write one game ``g`` of the state array ``S`` and the
payoff array ``pay`` (the row layout of :mod:`tonk_env.core.layout`) under
the rule vectors ``P``, ``F`` and ``instant``. The engine
(:mod:`tonk_env.engine`) is the specification; :mod:`tonk_env.core.exact`
checks these kernels against it. When a hand ends, the kernel that ends it
writes how (``C_END_KIND``, ``C_END_SEAT``, ``C_END_DETAIL``), as the
engine's ``_finish`` fills ``Result``.

:func:`redeal` is the one seeded re-deal: the next seeded deal of a game
(:func:`tonk_env.core.seeding.seeded_deck`), counted in ``counters[g]``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

# the engine's phases and action-table offsets: plain ints, folded into the compiled code
from ..engine.actions import BOOK, DISCARD, DRAW, DROP, HIT_BOOK, HIT_HIGH, HIT_LOW, SPREAD, TAKE
from ..engine.state import OVER, PLAY, START
from .layout import (
    C_ADDS,
    C_BOOKT,
    C_CUR,
    C_DECK,
    C_DISC,
    C_END_DETAIL,
    C_END_KIND,
    C_END_SEAT,
    C_HANDS,
    C_HIGHT,
    C_KNOWN,
    C_LAST,
    C_LOWT,
    C_NSP,
    C_OWNER,
    C_PHASE,
    C_PILE,
    C_PILEN,
    C_PTR,
    C_SPHI,
    C_SPKEY,
    C_SPKIND,
    C_SPLO,
    C_SPMASK,
    C_SPOWNER,
    C_TAKEN,
    C_THROWN,
    C_TURN,
    C_WAITS,
    DETAIL_EMPTY_STOCK,
    DETAIL_INSTANT_TIE,
    DETAIL_MAX_TURNS,
    DETAIL_NONE,
    END_CAUGHT,
    END_DROP_WON,
    END_INSTANT_WIN,
    END_RUN_OUT,
    END_STOCK_OUT,
    END_TONK_OUT,
    END_VOID,
    F_INSTANT_PAY,
    F_RUN_PAY,
    F_TONK_PAY,
    MAX_SEATS,
    NUM_COLS,
    P_ACE_HIGH,
    P_ACTIONS,
    P_ANY_INSTANT,
    P_CAUGHT,
    P_HAND_SIZE,
    P_HIT_WAIT,
    P_INSTANT_TIE,
    P_LOW_MAX,
    P_MAX_TURNS,
    P_MAY_DISCARD_TAKEN,
    P_N,
    P_SPREAD_WAIT,
    P_STOCK_TIE,
    P_UPCARD,
    P_WAIT_CUMULATIVE,
    SUIT_BITS,
    hand_value,
    low_bit_index,
    popcount,
)  # fmt: skip
from .seeding import seeded_deck


@njit(cache=True, inline="always")
def _end(S: np.ndarray, g: int, kind: int, seat: int, detail: int) -> None:
    """End game ``g``'s hand and record how (``C_END_*``; ``seat`` -1 for none)."""
    S[g, C_PHASE] = OVER
    S[g, C_END_KIND] = kind
    S[g, C_END_SEAT] = seat
    S[g, C_END_DETAIL] = detail


@njit(cache=True, nogil=True)
def _finish_win(pay: np.ndarray, g: int, n: int, winner: int, amount: float) -> None:
    for s in range(n):
        pay[g, s] = -amount
    pay[g, winner] = amount * (n - 1)


@njit(cache=True, nogil=True)
def _clear_pay(pay: np.ndarray, g: int) -> None:
    for s in range(MAX_SEATS):
        pay[g, s] = 0.0


@njit(cache=True, nogil=True)
def _stock_out(
    S: np.ndarray, pay: np.ndarray, g: int, P: np.ndarray, suit_value: np.ndarray, seat: int, detail: int
) -> None:
    """Stock-out scoring (``scoring.stock_out``), ended by ``seat`` (-1: none) for ``detail``."""
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
    if nlow == 1:
        _end(S, g, END_STOCK_OUT, seat, detail)
        _finish_win(pay, g, n, w, 1.0)
        return
    if P[P_STOCK_TIE] == 0 or nlow == n:
        _end(S, g, END_VOID, seat, detail)
        return
    _end(S, g, END_STOCK_OUT, seat, detail)
    for s in range(n):
        if hand_value(S[g, C_HANDS + s], suit_value) != low:
            for t in range(n):
                if hand_value(S[g, C_HANDS + t], suit_value) == low:
                    pay[g, s] -= 1.0
                    pay[g, t] += 1.0


@njit(cache=True, nogil=True)
def _drop(S: np.ndarray, pay: np.ndarray, g: int, P: np.ndarray, suit_value: np.ndarray) -> None:
    n = P[P_N]
    d = S[g, C_CUR]
    counts = np.empty(MAX_SEATS, dtype=np.int64)
    for s in range(n):
        counts[s] = hand_value(S[g, C_HANDS + s], suit_value)
    mine = counts[d]
    wins = True
    lowest = 1 << 30
    for s in range(n):
        if s != d:
            if counts[s] <= mine:
                wins = False
            if counts[s] < lowest:
                lowest = counts[s]
    if wins:
        _end(S, g, END_DROP_WON, d, DETAIL_NONE)
        _finish_win(pay, g, n, d, 1.0)
        return
    _end(S, g, END_CAUGHT, d, DETAIL_NONE)
    _caught(pay, g, n, d, counts, mine, lowest, P[P_CAUGHT])


@njit(cache=True, nogil=True)
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


@njit(cache=True, nogil=True)
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


@njit(cache=True, nogil=True)
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
    if nwin > 1 and P[P_INSTANT_TIE] == 0:
        _end(S, g, END_VOID, -1, DETAIL_INSTANT_TIE)
        return True
    ntop = 0
    w = -1
    for s in range(n):
        c = hand_value(S[g, C_HANDS + s], suit_value)
        if (instant[c] or (low >= 0 and c <= low)) and _strength(c, low) == best:
            ntop += 1
            w = s
    if ntop == 1:
        _end(S, g, END_INSTANT_WIN, w, DETAIL_NONE)
        _finish_win(pay, g, n, w, F[F_INSTANT_PAY])
    else:
        _end(S, g, END_VOID, -1, DETAIL_INSTANT_TIE)
    return True


@njit(cache=True, nogil=True)
def legal_mask_into(
    S: np.ndarray, g: int, P: np.ndarray, shapes: np.ndarray, suit_runs: np.ndarray, out: np.ndarray
) -> int:
    """Write game ``g``'s legal actions as 0/1 into ``out`` (int8, table size); returns how many."""
    idx = np.empty(P[P_ACTIONS], dtype=np.int64)
    return legal_into(S, g, P, shapes, suit_runs, out, idx)


@njit(cache=True, nogil=True)
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


@njit(cache=True, nogil=True)
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


@njit(cache=True, nogil=True)
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


@njit(cache=True, nogil=True)
def _add_wait(S: np.ndarray, g: int, seat: int, w: int, cumulative: int) -> None:
    if w:
        if cumulative:
            S[g, C_WAITS + seat] += w
        elif S[g, C_WAITS + seat] < w:
            S[g, C_WAITS + seat] = w


@njit(cache=True, nogil=True)
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
            S[g, C_ADDS + cur] += 1  # the engine's history holds the draw that found the stock empty
            _stock_out(S, pay, g, P, suit_value, cur, DETAIL_EMPTY_STOCK)
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
        S[g, C_THROWN + cur] |= bit
        if hand == 0:
            _end(S, g, END_RUN_OUT, cur, DETAIL_NONE)
            _finish_win(pay, g, n, cur, F[F_RUN_PAY])
            return True
        S[g, C_TURN] += 1
        S[g, C_PHASE] = START
        S[g, C_TAKEN] = -1
        S[g, C_CUR] = (cur + 1) % n
        if S[g, C_TURN] >= P[P_MAX_TURNS]:
            _stock_out(S, pay, g, P, suit_value, -1, DETAIL_MAX_TURNS)
            return True
        return False
    return _lay(S, pay, g, a, cur, P, F, shapes)


@njit(cache=True, nogil=True)
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


@njit(cache=True, nogil=True)
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
        _end(S, g, END_TONK_OUT, cur, DETAIL_NONE)
        _finish_win(pay, g, P[P_N], cur, F[F_TONK_PAY])
        return True
    return False


@njit(cache=True, nogil=True)
def redeal(
    S: np.ndarray,
    pay: np.ndarray,
    g: int,
    seed: int,
    counters: np.ndarray,
    dealer: int,
    P: np.ndarray,
    F: np.ndarray,
    instant: np.ndarray,
    suit_value: np.ndarray,
    deck: np.ndarray,
) -> bool:
    """Deal game ``g`` its next seeded deal (number ``counters[g]``, then counted); True if it ends at once.

    ``deck`` is scratch space of 52 int64.
    """
    seeded_deck(seed, g, counters[g], deck)
    counters[g] += 1
    return deal(S, pay, g, deck, dealer, P, F, instant, suit_value)
