"""The learner-seat kernels: a learner's move, then random opponents, in one compiled call per batch.

:class:`tonk_env.vector.TonkVectorEnv` plays one seat (the learner's) of
every game of a :class:`~tonk_env.core.batch.BatchGames`. :func:`advance`
plays, for each game of a list, the learner's action (or nothing) and then
every opponent move it can make itself: seats marked ``external`` are played
outside (by agents in Python), seats marked in ``greedy_at`` play
``heuristic:greedy`` (:mod:`tonk_env.core.greedy`), every other opponent seat
plays a uniformly random legal action drawn from the game's own generator
(:func:`tonk_env.core.seeding.next_random` on ``rng[g]``). It stops at the
learner's turn, an external seat's turn, or the end of the hand, and writes
why in ``status[g]``:

==================  =====  ===========================================
status              value  meaning
==================  =====  ===========================================
:data:`ST_LEARNER`  0      the learner is to act
:data:`ST_OVER`     1      the hand is over
:data:`ST_WAIT`     2      an external seat is to act
==================  =====  ===========================================

Every move played is appended to ``log[g]`` (``log_len[g]`` entries; the
caller empties it), so a reference-engine mirror of the game can replay the
moves. How a hand ended is in the game's row (``C_END_*`` of
:mod:`tonk_env.core.layout`), written by the rules kernels.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..engine.state import OVER
from .greedy import greedy_move
from .layout import C_CUR, C_PHASE, P_ACTIONS
from .rules import apply_action, legal_into, legal_mask_into
from .seeding import next_random

ST_LEARNER = 0
ST_OVER = 1
ST_WAIT = 2

#: Moves one game's log holds between two emptyings (a learner move and the opponents' turns after it).
LOG_SIZE = 512


@njit(cache=True, nogil=True)
def random_legal(
    S: np.ndarray,
    g: int,
    P: np.ndarray,
    shapes: np.ndarray,
    suit_runs: np.ndarray,
    scratch: np.ndarray,
    ids: np.ndarray,
    rng: np.ndarray,
) -> int:
    """A uniformly random legal action of game ``g`` (its acting seat), from the game's generator.

    ``scratch`` takes the mask and ``ids`` the legal ids (ascending), as ``legal_into`` writes them.
    """
    k = legal_into(S, g, P, shapes, suit_runs, scratch, ids)
    return ids[int(next_random(rng, g) % np.uint64(k))]


@njit(cache=True, inline="always")
def _play(
    S: np.ndarray,
    pay: np.ndarray,
    g: int,
    a: int,
    P: np.ndarray,
    F: np.ndarray,
    shapes: np.ndarray,
    values: np.ndarray,
    suit_value: np.ndarray,
    log: np.ndarray,
    log_len: np.ndarray,
) -> bool:
    """Play ``a`` in game ``g``, logging it; True if the hand ended."""
    k = log_len[g]
    if k < log.shape[1]:
        log[g, k] = a
    log_len[g] = k + 1
    return apply_action(S, pay, g, a, P, F, shapes, values, suit_value)


@njit(cache=True, nogil=True)
def advance(
    S: np.ndarray,
    pay: np.ndarray,
    games: np.ndarray,
    actions: np.ndarray,
    learner: np.ndarray,
    external: np.ndarray,
    greedy_at: np.ndarray,
    greedy_keys: np.ndarray,
    rng: np.ndarray,
    status: np.ndarray,
    log: np.ndarray,
    log_len: np.ndarray,
    P: np.ndarray,
    F: np.ndarray,
    shapes: np.ndarray,
    suit_runs: np.ndarray,
    values: np.ndarray,
    suit_value: np.ndarray,
    scratch: np.ndarray,
) -> None:
    """For each ``games[i]``: play ``actions[i]`` (unless -1), then the kernel's opponents until a stop.

    A seat ``p`` with ``greedy_at[g, p] >= 0`` plays the greedy with that drop
    count (:func:`~tonk_env.core.greedy.greedy_move`, ``greedy_keys`` its
    keys), any other seat that is not ``external`` a random legal action. The
    actions are not checked: the caller plays legal ones only. The stop is
    written to ``status[g]`` (see the module docstring).
    """
    ids = np.empty(P[P_ACTIONS], dtype=np.int64)
    for i in range(games.shape[0]):
        g = games[i]
        a = actions[i]
        if a >= 0:
            _play(S, pay, g, a, P, F, shapes, values, suit_value, log, log_len)
        while True:
            if S[g, C_PHASE] == OVER:
                status[g] = ST_OVER
                break
            cur = S[g, C_CUR]
            if cur == learner[g]:
                status[g] = ST_LEARNER
                break
            if external[g, cur]:
                status[g] = ST_WAIT
                break
            drop_at = greedy_at[g, cur]
            if drop_at >= 0:
                r = greedy_move(S, g, drop_at, P, shapes, suit_runs, values, greedy_keys, scratch, ids)
            else:
                r = random_legal(S, g, P, shapes, suit_runs, scratch, ids, rng)
            _play(S, pay, g, r, P, F, shapes, values, suit_value, log, log_len)


@njit(cache=True, nogil=True)
def learner_masks(
    S: np.ndarray,
    status: np.ndarray,
    pending: np.ndarray,
    acknowledge: int,
    P: np.ndarray,
    shapes: np.ndarray,
    suit_runs: np.ndarray,
    out: np.ndarray,
) -> None:
    """The learner's mask of every game: its legal actions, or only ``acknowledge`` in a pending hand."""
    for g in range(S.shape[0]):
        if pending[g]:
            for j in range(P[P_ACTIONS]):
                out[g, j] = 0
            out[g, acknowledge] = 1
        elif status[g] == ST_LEARNER:
            legal_mask_into(S, g, P, shapes, suit_runs, out[g])
        else:
            for j in range(P[P_ACTIONS]):
                out[g, j] = 0
