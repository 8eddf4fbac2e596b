"""The compiled drivers: one call runs a rules or observation kernel over many game rows.

Each driver loops over the games of a batch (every row, or the rows listed in
``games``) inside compiled code, so a batch costs one Python call. The
host object :class:`tonk_env.core.batch.BatchGames` calls them with its
arrays and rule vectors.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .layout import C_CUR, P_N
from .observe import observe_into, privileged_into
from .rules import apply_action, legal_into, legal_mask_into, redeal


@njit(cache=True, nogil=True)
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


@njit(cache=True, nogil=True)
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
            while redeal(S, pay, g, seed, counters, dealer, P, F, instant, suit_value, deck):
                for s in range(n):
                    rewards[g, s] += pay[g, s]
    return done


@njit(cache=True, nogil=True)
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


@njit(cache=True, nogil=True)
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


@njit(cache=True, nogil=True)
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


@njit(cache=True, nogil=True)
def redeal_rows(
    S: np.ndarray,
    pay: np.ndarray,
    games: np.ndarray,
    seed: int,
    counters: np.ndarray,
    dealers: np.ndarray,
    skip: bool,
    P: np.ndarray,
    F: np.ndarray,
    instant: np.ndarray,
    suit_value: np.ndarray,
    over: np.ndarray,
) -> None:
    """Deal each game ``g`` of ``games`` its next seeded deal (from dealer ``dealers[g]``).

    ``over[i]``: that deal ended at once; with ``skip`` such deals are dealt
    again until one has a decision.
    """
    deck = np.empty(52, dtype=np.int64)
    for i in range(games.shape[0]):
        g = games[i]
        while True:
            over[i] = redeal(S, pay, g, seed, counters, dealers[g], P, F, instant, suit_value, deck)
            if not (over[i] and skip):
                break


@njit(cache=True, nogil=True)
def observe_seats(
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


@njit(cache=True, nogil=True)
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


@njit(cache=True, nogil=True)
def privileged_seats(
    S: np.ndarray,
    games: np.ndarray,
    seats: np.ndarray,
    P: np.ndarray,
    suit_value: np.ndarray,
    out: np.ndarray,
) -> None:
    """:func:`~tonk_env.core.observe.privileged_into` of each game ``g`` of ``games``, from ``seats[g]``."""
    for i in range(games.shape[0]):
        g = games[i]
        privileged_into(S, g, seats[g], P, suit_value, out[g])
