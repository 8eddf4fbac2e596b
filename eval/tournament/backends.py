"""Backends: where the matches are played, here (one process or a ``multiprocessing`` pool) or on Ray.

Each backend plays a list of tasks (see :mod:`eval.tournament.matches`) and
hands every finished match's record to ``on_done`` in the driver process, in
the order they finish. Results do not depend on the backend or the number of
workers.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from contextlib import closing
from typing import Any

from tonk_env.runtime import start_ray
from tonk_env.workers import process_map

from .matches import play_match

OnDone = Callable[[dict[str, Any]], None]


def run_local(tasks: Sequence[dict[str, Any]], workers: int, on_done: OnDone) -> None:
    """Play tasks here: in this process (1 worker) or a ``multiprocessing`` pool, one match a task."""
    if workers <= 1 or len(tasks) <= 1:
        for t in tasks:
            on_done(play_match(t))
        return
    with closing(process_map(play_match, tasks, min(workers, len(tasks)), ordered=False)) as records:
        for rec in records:  # closing: an interrupt takes the workers down at once
            on_done(rec)


def run_ray(tasks: Sequence[dict[str, Any]], address: str | None, workers: int, on_done: OnDone) -> None:
    """Play tasks as Ray tasks (one CPU each) on the cluster at ``address``.

    Without an address, a new local Ray with ``workers`` CPUs is started for
    the run (:func:`tonk_env.runtime.start_ray`, as ``backend: rllib`` of
    ``tonk train`` starts it). An already initialised Ray (``ray.init`` in
    this process) is used as it is.
    """
    started = start_ray(
        address,
        workers,
        setting="--address",
        install_hint="pip install 'tonk-rl[ray]' (or pip install 'ray>=2.9')",
        logging_level=logging.WARNING,
    )
    import ray  # optional: the ``ray`` extra (start_ray said how to install it)

    try:
        remote = ray.remote(num_cpus=1, max_retries=2)(play_match)
        pending = [remote.remote(t) for t in tasks]
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            for ref in done:
                on_done(ray.get(ref))
    finally:
        if started:
            ray.shutdown()


def run_backend(
    backend: str, tasks: Sequence[dict[str, Any]], workers: int, address: str | None, on_done: OnDone
) -> None:
    """Play tasks on the named backend (``local`` or ``ray``); nothing to do for no tasks."""
    if not tasks:
        return
    if backend == "ray":
        run_ray(tasks, address, workers, on_done)
    else:
        run_local(tasks, workers, on_done)
