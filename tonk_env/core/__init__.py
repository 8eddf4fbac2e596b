"""The compiled, batched core of the Tonk rules, observations and masks (numba), checked against the engine.

:class:`BatchGames` is the core's one host: the rule vectors, a batch of
games on preallocated arrays, the seeded deals, and the methods that run the
kernels. The kernels live by concept: the row layout (:mod:`.layout`),
splitmix64 and the seeded deals (:mod:`.seeding`), the rules
(:mod:`.rules`), the observation and privileged features (:mod:`.observe`),
the loops over many games (:mod:`.drivers`) and the learner-seat kernels of
the vector env (:mod:`.learner`). :func:`exact_check` plays the same deals and
actions through the core and :mod:`tonk_env.engine` and compares legal sets,
observations and payoffs.
"""

from __future__ import annotations

from .batch import BatchGames
from .exact import CoreMismatchError, exact_check, exact_runs

__all__ = ["BatchGames", "CoreMismatchError", "exact_check", "exact_runs"]
