"""The compiled core's randomness: splitmix64, the seeded deals and the games' own generators.

splitmix64 (Steele, Lea and Flood, 2014) is written once here:
:func:`splitmix` is its output function on a 64-bit state.

- **Seeded deals.** Game ``g``'s ``k``-th deal under ``seed`` is
  :func:`seeded_deck` ``(seed, g, k)`` (a Fisher-Yates shuffle driven by
  splitmix64). A batch counts the deals: ``counters[g]`` is how many seeded
  deals game ``g`` has had since the seed, so its next one is number
  ``counters[g]`` and its current one number ``counters[g] - 1``.
  :func:`tonk_env.core.rules.redeal` is the one kernel that deals the next
  seeded deal and counts it.
- **Game generators.** Each game has one ``uint64`` generator state
  (``rng[g]``, splitmix64's Weyl sequence), seeded by :func:`seed_generators`
  and read by :func:`next_random` (the random opponents of
  :mod:`tonk_env.core.learner`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

GOLDEN = np.uint64(0x9E3779B97F4A7C15)
"""splitmix64's increment (2**64 / the golden ratio)."""


@njit(cache=True, inline="always")
def splitmix(z: np.uint64) -> np.uint64:
    """splitmix64's output function (its finalizer) on 64 bits."""
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@njit(cache=True, inline="always")
def _mix(x: int | np.uint64) -> np.uint64:
    """One splitmix64 step from state ``x``: advance by the increment, then the output function."""
    return splitmix(np.uint64(x) + GOLDEN)


@njit(cache=True, nogil=True)
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


@njit(cache=True, inline="always")
def next_random(rng: np.ndarray, g: int) -> np.uint64:
    """The next 64 random bits of game ``g``'s splitmix64 generator."""
    s = rng[g] + GOLDEN
    rng[g] = s
    return splitmix(s)


@njit(cache=True, nogil=True)
def seed_generators(rng: np.ndarray, seed: int) -> None:
    """Seed every game's generator from ``seed`` (game ``g`` gets its own stream)."""
    base = splitmix(np.uint64(seed) ^ np.uint64(0x5DEECE66D))
    for g in range(rng.shape[0]):
        rng[g] = splitmix(base + np.uint64(g + 1) * GOLDEN)
