"""The vector env's kernels: a learner's move, then random opponents, in one compiled call per batch.

:class:`tonk_env.vector.TonkVectorEnv` keeps one row of the core's state
(:mod:`tonk_env.core.kernels`) per game. :func:`advance` plays, for each
game of a list, the learner's action (or nothing) and then every opponent
move it can make itself: seats marked ``external`` are played outside (by
agents in Python), every other opponent seat plays a uniformly random legal
action drawn from the game's own generator (splitmix64 on one ``uint64`` per
game, ``rng[g]``). It stops at the learner's turn, an external seat's turn,
or the end of the hand, and writes why in ``status[g]``:

==================  =====  ===========================================
status              value  meaning
==================  =====  ===========================================
:data:`ST_LEARNER`  0      the learner is to act
:data:`ST_OVER`     1      the hand is over
:data:`ST_WAIT`     2      an external seat is to act
==================  =====  ===========================================

Every move played is appended to ``log[g]`` (``log_len[g]`` entries; the
caller empties it), so a reference-engine mirror of the game can replay the
moves, and ``last_action[g]`` / ``last_seat[g]`` keep the move that ended a
hand (-1 for a hand that ended at the deal) for the end-of-hand info.
:func:`privileged_into` writes the oracle critic's features
(``train.oracle.privileged_features``).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .kernels import (
    C_CUR,
    C_DECK,
    C_HANDS,
    C_PHASE,
    C_PTR,
    OVER,
    P_ACTIONS,
    P_N,
    apply_action,
    deal,
    hand_value,
    legal_into,
    legal_mask_into,
    low_bit_index,
    observe_into,
    seeded_deck,
)

ST_LEARNER = 0
ST_OVER = 1
ST_WAIT = 2

#: Moves one game's log holds between two emptyings (a learner move and the opponents' turns after it).
LOG_SIZE = 512

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


@njit(cache=True, inline="always")
def _finalize(z: np.uint64) -> np.uint64:
    """splitmix64's output function."""
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@njit(cache=True, inline="always")
def _next_random(rng: np.ndarray, g: int) -> np.uint64:
    """The next 64 random bits of game ``g``'s splitmix64 generator."""
    s = rng[g] + _GOLDEN
    rng[g] = s
    return _finalize(s)


@njit(cache=True)
def seed_generators(rng: np.ndarray, seed: int) -> None:
    """Seed every game's generator from ``seed`` (game ``g`` gets its own stream)."""
    base = _finalize(np.uint64(seed) ^ np.uint64(0x5DEECE66D))
    for g in range(rng.shape[0]):
        rng[g] = _finalize(base + np.uint64(g + 1) * _GOLDEN)


@njit(cache=True)
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

    ``scratch`` takes the mask and ``ids`` the legal ids (ascending), as :func:`legal_into` writes them.
    """
    k = legal_into(S, g, P, shapes, suit_runs, scratch, ids)
    return ids[int(_next_random(rng, g) % np.uint64(k))]


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
    last_action: np.ndarray,
    last_seat: np.ndarray,
    log: np.ndarray,
    log_len: np.ndarray,
) -> bool:
    """Play ``a`` in game ``g``, remembering and logging it; True if the hand ended."""
    last_action[g] = a
    last_seat[g] = S[g, C_CUR]
    k = log_len[g]
    if k < log.shape[1]:
        log[g, k] = a
    log_len[g] = k + 1
    return apply_action(S, pay, g, a, P, F, shapes, values, suit_value)


@njit(cache=True)
def advance(
    S: np.ndarray,
    pay: np.ndarray,
    games: np.ndarray,
    actions: np.ndarray,
    learner: np.ndarray,
    external: np.ndarray,
    rng: np.ndarray,
    status: np.ndarray,
    last_action: np.ndarray,
    last_seat: np.ndarray,
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
    """For each ``games[i]``: play ``actions[i]`` (unless -1), then random opponents until a stop.

    The actions are not checked: the caller plays legal ones only. The stop is
    written to ``status[g]`` (see the module docstring).
    """
    ids = np.empty(P[P_ACTIONS], dtype=np.int64)
    for i in range(games.shape[0]):
        g = games[i]
        a = actions[i]
        if a >= 0:
            _play(S, pay, g, a, P, F, shapes, values, suit_value, last_action, last_seat, log, log_len)
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
            r = random_legal(S, g, P, shapes, suit_runs, scratch, ids, rng)
            _play(S, pay, g, r, P, F, shapes, values, suit_value, last_action, last_seat, log, log_len)


@njit(cache=True)
def deal_seeded(
    S: np.ndarray,
    pay: np.ndarray,
    games: np.ndarray,
    seed: int,
    counters: np.ndarray,
    dealers: np.ndarray,
    last_action: np.ndarray,
    last_seat: np.ndarray,
    P: np.ndarray,
    F: np.ndarray,
    instant: np.ndarray,
    suit_value: np.ndarray,
) -> None:
    """Deal each of ``games`` its next seeded deal (``seeded_deck(seed, g, counters[g])``, then count it)."""
    deck = np.empty(52, dtype=np.int64)
    for i in range(games.shape[0]):
        g = games[i]
        seeded_deck(seed, g, counters[g], deck)
        counters[g] += 1
        deal(S, pay, g, deck, dealers[g], P, F, instant, suit_value)
        last_action[g] = -1
        last_seat[g] = -1


@njit(cache=True)
def observe_learners(
    S: np.ndarray,
    games: np.ndarray,
    seats: np.ndarray,
    P: np.ndarray,
    F: np.ndarray,
    above: np.ndarray,
    suit_value: np.ndarray,
    out: np.ndarray,
) -> None:
    """Write seat ``seats[g]``'s observation of each game ``g`` of ``games`` into ``out[g]``."""
    for i in range(games.shape[0]):
        g = games[i]
        observe_into(S, g, seats[g], P, F, above, suit_value, out[g])


@njit(cache=True)
def observe_rows(
    S: np.ndarray,
    games: np.ndarray,
    P: np.ndarray,
    F: np.ndarray,
    above: np.ndarray,
    suit_value: np.ndarray,
    obs: np.ndarray,
    masks: np.ndarray,
    shapes: np.ndarray,
    suit_runs: np.ndarray,
) -> None:
    """Row ``i``: the acting seat's observation and legal mask of game ``games[i]``."""
    for i in range(games.shape[0]):
        g = games[i]
        observe_into(S, g, S[g, C_CUR], P, F, above, suit_value, obs[i])
        legal_mask_into(S, g, P, shapes, suit_runs, masks[i])


@njit(cache=True)
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


@njit(cache=True)
def privileged_into(
    S: np.ndarray, g: int, seat: int, P: np.ndarray, suit_value: np.ndarray, out: np.ndarray
) -> None:
    """Write ``train.oracle.privileged_features`` of game ``g`` for ``seat`` into ``out`` (float32).

    The opponents' hands (52 bits each, in seat order after ``seat``), their
    counts / 50, and the next stock card one-hot (zeros when the stock is empty).
    """
    n = P[P_N]
    size = 53 * (n - 1) + 52
    for j in range(size):
        out[j] = 0.0
    for i in range(1, n):
        h = S[g, C_HANDS + (seat + i) % n]
        base = 52 * (i - 1)
        while h:
            out[base + low_bit_index(h)] = 1.0
            h &= h - 1
        out[52 * (n - 1) + i - 1] = hand_value(S[g, C_HANDS + (seat + i) % n], suit_value) / 50
    ptr = S[g, C_PTR]
    if ptr < 52:
        out[53 * (n - 1) + S[g, C_DECK + ptr]] = 1.0


@njit(cache=True)
def privileged_games(
    S: np.ndarray,
    games: np.ndarray,
    seats: np.ndarray,
    P: np.ndarray,
    suit_value: np.ndarray,
    out: np.ndarray,
) -> None:
    """:func:`privileged_into` for each game ``g`` of ``games``, from seat ``seats[g]``, into ``out[g]``."""
    for i in range(games.shape[0]):
        g = games[i]
        privileged_into(S, g, seats[g], P, suit_value, out[g])
