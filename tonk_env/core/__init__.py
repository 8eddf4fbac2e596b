"""The compiled, batched core of the Tonk rules, observations and masks (numba), checked against the engine.

:class:`BatchGames` steps many hands at once on preallocated arrays;
:func:`exact_check` plays the same deals and actions through the core and
:mod:`tonk_env.engine` and compares legal sets, observations and payoffs.
"""

from __future__ import annotations

from .batch import BatchGames
from .exact import CoreMismatchError, exact_check, exact_runs

__all__ = ["BatchGames", "CoreMismatchError", "exact_check", "exact_runs"]
