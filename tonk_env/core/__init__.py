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

import hashlib
from pathlib import Path


def drop_stale_caches(here: Path = Path(__file__).parent) -> None:
    """Delete the kernels' numba caches when any source of this package changed since they were written.

    numba checks a cached function against its own file only: a kernel that
    calls into a changed module (``learner.advance`` into ``rules``) would
    load its old machine code. One hash over every source here decides for all.
    A cache folder that cannot be written is left as it is.
    """
    digest = hashlib.sha256(b"".join(p.read_bytes() for p in sorted(here.glob("*.py")))).hexdigest()
    cache = here / "__pycache__"
    stamp = cache / "numba_sources.sha256"
    try:
        if stamp.is_file() and stamp.read_text() == digest:
            return
        for f in [*cache.glob("*.nbi"), *cache.glob("*.nbc")]:
            f.unlink(missing_ok=True)
        cache.mkdir(exist_ok=True)
        stamp.write_text(digest)
    except OSError:
        pass


drop_stale_caches()

from .batch import BatchGames  # noqa: E402  (after the caches are checked)
from .exact import CoreMismatchError, exact_check, exact_runs  # noqa: E402

__all__ = ["BatchGames", "CoreMismatchError", "drop_stale_caches", "exact_check", "exact_runs"]
