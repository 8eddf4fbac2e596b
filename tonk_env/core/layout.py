"""The compiled core's layout: one ``int64`` row per game, the rule vectors, and bit helpers.

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
``C_END_*``    3      how the hand ended (``result``): kind, seat, detail
``C_HANDS``    6      hands by seat
``C_KNOWN``    6      publicly known cards by seat
``C_OWNER``    6      cards on the table by spread owner
``C_WAITS``    6      drop waits by seat
``C_ADDS``     6      turns each seat drew or took (for ``opp_turns``)
``C_LAST``     6      value of each seat's latest discard (0 before one)
``C_THROWN``   6      cards each seat discarded (for ``thrown``)
``C_DECK``     52     the dealing order, top first
``C_PILE``     52     the discard pile, oldest first
``C_SP*``      6x18   spreads: mask, kind, key, lo, hi, owner
=============  =====  ===================================================

How a hand ended is written by the rules kernels when it ends, as the
engine's ``Result`` holds it: ``C_END_KIND`` is 1 + the index of the kind in
``tonk_env.engine.RESULT_KINDS`` (0 while the hand runs), ``C_END_SEAT`` the
seat that ended it (-1 for none: ``max_turns``, a void deal), ``C_END_DETAIL``
the index of the detail in :data:`END_DETAILS`.

Rules are an ``int64`` parameter vector (``P_*`` indices), a ``float64`` one
(``F_*``) and a boolean table of instant-win counts (built by
:func:`tonk_env.core.batch.rules_params`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..engine.state import RESULT_KINDS

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
C_END_KIND = 11
C_END_SEAT = 12
C_END_DETAIL = 13
C_HANDS = 14
C_KNOWN = C_HANDS + MAX_SEATS
C_OWNER = C_KNOWN + MAX_SEATS
C_WAITS = C_OWNER + MAX_SEATS
C_ADDS = C_WAITS + MAX_SEATS
C_LAST = C_ADDS + MAX_SEATS
C_THROWN = C_LAST + MAX_SEATS
C_DECK = C_THROWN + MAX_SEATS
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

#: ``C_END_KIND`` codes: 1 + the index in the engine's ``RESULT_KINDS``.
END_INSTANT_WIN = 1 + RESULT_KINDS.index("instant_win")
END_VOID = 1 + RESULT_KINDS.index("void")
END_TONK_OUT = 1 + RESULT_KINDS.index("tonk_out")
END_RUN_OUT = 1 + RESULT_KINDS.index("run_out")
END_DROP_WON = 1 + RESULT_KINDS.index("drop_won")
END_CAUGHT = 1 + RESULT_KINDS.index("caught")
END_STOCK_OUT = 1 + RESULT_KINDS.index("stock_out")
#: ``C_END_DETAIL`` codes index this tuple (the engine's ``Result.detail`` strings).
END_DETAILS = ("", "instant_win_tie", "empty_stock", "max_turns")
DETAIL_NONE = 0
DETAIL_INSTANT_TIE = 1
DETAIL_EMPTY_STOCK = 2
DETAIL_MAX_TURNS = 3

SUIT_BITS = 0x1FFF
FULL_DECK = (1 << 52) - 1


def end_kind_name(code: int) -> str:
    """The engine's result kind of a ``C_END_KIND`` code (ValueError while the hand runs)."""
    if not 1 <= code <= len(RESULT_KINDS):
        raise ValueError(f"end kind code {code}: the hand is not over")
    return RESULT_KINDS[code - 1]


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
