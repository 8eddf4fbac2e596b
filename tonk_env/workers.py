"""Process pools whose failures end the work with the worker's one-line message, never a hang.

``multiprocessing.Pool`` starts a new worker whenever one dies, and a
worker whose initializer raises dies at once: the pool then restarts
workers forever while the caller waits. :func:`process_map` runs the
initializer under a guard instead: a failure is kept in the worker, which
stays alive, and its first task raises :class:`WorkerStartError` with the
failure's one-line message; ``imap`` hands that exception to the caller,
which ends the command with it. A task's own exception reaches the caller
the same way. Evaluation, tournaments and pretraining all use it.

A pool is never left waiting on a SIGTERM. ``Pool.terminate`` sends its
workers SIGTERM and then waits for each without a limit, and a forked worker
can lose that signal: one that the scheduler had not yet run when the
signal came inherits the parent's Python-level handler (``tonk`` installs
one), and the interpreter clears the handler's pending flag right after the
fork, so the worker waits for a task forever and the caller for the worker.
A map that finished closes its pool instead (each idle worker takes its
stop sentinel and exits). One left early terminates it. Either way a watchdog
kills with SIGKILL, which nothing can lose, any worker still alive
:data:`GRACE_S` seconds later. It must come after the pool's own first step,
which takes the task queue's lock from the live workers.

Nor does a worker that dies end the map in a hang. ``multiprocessing.Pool``
replaces a dead worker, but the task it held is lost, and the caller waits
for that result forever; a worker that dies while it starts (a spawned one
whose parent script has no ``if __name__ == "__main__":`` guard) is
replaced forever. The pool here never replaces a worker, and the caller
checks its workers while it waits: the first that died ends the map with
:class:`WorkerDiedError`, which says how it died (killed by SIGKILL: out of
memory, most likely). A worker that died holding the task queue's read
lock would leave ``Pool.terminate`` waiting for that lock; the watchdog
frees it once the live workers are gone.

Nor is a SIGTERM or a Ctrl-C lost while a pool starts. ``os.fork`` runs its
at-fork hooks (logging's takes its lock) in the forking thread, and an
exception that a Python signal handler raises there is printed as "Exception
ignored" and dropped: the command went on as if never signalled, or, with
logging's lock left held, the pool's next fork waited for it forever. While the
main thread forks the workers, SIGINT and SIGTERM only are noted
(:func:`signals_held`), and once the workers have started each noted signal is
raised again for the handlers that were there before; a worker sets SIGTERM
back to its default first thing.
"""

from __future__ import annotations

import multiprocessing as mp
import multiprocessing.pool
import signal
import sys
import threading
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

from .errors import one_line

T = TypeVar("T")
R = TypeVar("R")

#: Seconds a terminated pool's workers get to exit on SIGTERM before they are killed.
GRACE_S = 5.0

#: Seconds between the caller's checks of its workers while it waits for a result.
POLL_S = 0.25

#: The signals noted, not handled, while the main thread forks (:func:`signals_held`).
_HELD = {signal.SIGINT, signal.SIGTERM}

#: The one-line message of this worker's failed start-up (None: it started, or this is no worker).
_START_ERROR: str | None = None


class WorkerStartError(ValueError):
    """A pool worker could not start (its initializer raised); the message is the worker's."""


def one_torch_thread() -> None:
    """Torch in this worker runs on one thread, if the parent imported it.

    A forked child inherits torch's OpenMP state but not the parent's OpenMP
    threads: a multi-threaded kernel there waits forever for them (libgomp is
    not fork-safe). On one thread no parallel region is entered, and a worker
    gets its parallelism from the processes anyway.
    """
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)


@contextmanager
def signals_held() -> Iterator[None]:
    """SIGINT and SIGTERM noted, not handled, meanwhile; then raised again (the module's docstring).

    For any fork of the main thread (a pool here, the overlapped trainer's env process); only the
    main thread runs Python signal handlers, so only its forks need it. The forked process must
    set the signals it cares about itself: it starts with the noting handler.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    came: list[int] = []
    old = {s: signal.signal(s, lambda signum, frame: came.append(signum)) for s in _HELD}
    try:
        yield
    finally:
        for sig, handler in old.items():
            signal.signal(sig, signal.SIG_DFL if handler is None else handler)
        for signum in dict.fromkeys(came):
            signal.raise_signal(signum)


def _guarded_init(initializer: Callable[..., Any] | None, initargs: Sequence[Any]) -> None:
    global _START_ERROR
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # not the noting handler of signals_held
    one_torch_thread()
    # Ctrl-C reaches the whole process group: the parent stops the pool (process_map), and a worker
    # that took the KeyboardInterrupt itself would only print its traceback over the parent's message.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if initializer is None:
        return
    try:
        initializer(*initargs)
    except Exception as e:  # kept, not raised: a raising initializer makes the pool restart workers forever
        _START_ERROR = one_line(e)


class WorkerDiedError(RuntimeError):
    """A worker process died before its work was done (killed, or crashed while it started).

    Not the user's mistake, but not a traceback either: ``tonk`` prints its one line and exits 1.
    """


class _Pool(multiprocessing.pool.Pool):
    """A pool that never replaces a worker: :func:`process_map` ends the map when one dies."""

    @staticmethod
    def _maintain_pool(ctx: Any, process: Any, processes: int, pool: list[Any], *rest: Any) -> None:
        # reap the dead (a dead worker's sentinel stays ready: left in, the handler would spin)
        multiprocessing.pool.Pool._join_exited_workers(pool)  # type: ignore[attr-defined]


def how_it_died(exitcode: int | None) -> str:
    """How a dead process ended: ``was killed by SIGKILL (out of memory, ...)`` or ``exited with status 1``.

    ``None`` (the process is still there, or its status was lost) reads as ``exited with status None``.
    """
    if exitcode is None or exitcode >= 0:
        return f"exited with status {exitcode}"
    try:
        name = signal.Signals(-exitcode).name
    except ValueError:
        name = f"signal {-exitcode}"
    if -exitcode == signal.SIGKILL:
        return f"was killed by {name} (out of memory, most likely: the kernel's OOM killer sends it)"
    return f"was killed by {name}"


def _death(proc: Any, method: str) -> str:
    """How a pool worker died, in one line, with the likely cause."""
    text = f"worker process {proc.pid} {how_it_died(proc.exitcode)} before the work was done"
    if method == "spawn" and proc.exitcode == 1:
        text += (
            " (a spawned worker re-imports the main script: a script that starts one must "
            "run its work under `if __name__ == '__main__':`)"
        )
    return text


def _results(it: Any, procs: list[Any], method: str) -> Iterator[Any]:
    """``it``'s results; while waiting for one, check that no worker of ``procs`` died."""
    while True:
        try:
            got = it.next(timeout=POLL_S)
        except StopIteration:
            return
        except mp.TimeoutError:
            dead = next((p for p in procs if p.exitcode is not None), None)
            if dead is not None:
                raise WorkerDiedError(_death(dead, method)) from None
            continue
        yield got


class _Guarded:
    """A task function that refuses to run in a worker whose start-up failed."""

    def __init__(self, fn: Callable[[Any], Any]) -> None:
        self.fn = fn

    def __call__(self, item: Any) -> Any:
        if _START_ERROR is not None:
            raise WorkerStartError(_START_ERROR)
        return self.fn(item)


def default_method() -> str:
    """``fork`` where the platform has it (fast start, shared imports), else ``spawn``."""
    return "fork" if "fork" in mp.get_all_start_methods() else "spawn"


def process_map(
    fn: Callable[[T], R],
    items: Iterable[T],
    workers: int,
    initializer: Callable[..., Any] | None = None,
    initargs: Sequence[Any] = (),
    method: str | None = None,
    ordered: bool = True,
) -> Generator[R, None, None]:
    """``fn`` over ``items`` in ``workers`` processes, results in order (or as they finish).

    A failed start-up or a failed task raises in the caller (the worker's
    message); leaving the loop early terminates the workers.
    """
    method = method or default_method()
    ctx = mp.get_context(method)
    pool = None
    finished = False
    try:
        with signals_held():
            pool = _Pool(workers, _guarded_init, (initializer, tuple(initargs)), context=ctx)
        # the map's workers, for all its life: the pool replaces none
        procs = list(pool._pool)  # type: ignore[attr-defined]
        task = _Guarded(fn)
        yield from _results(
            pool.imap(task, items) if ordered else pool.imap_unordered(task, items), procs, method
        )
        finished = True
    finally:
        if pool is not None:
            _stop(pool, finished)


def _stop(pool: Any, finished: bool) -> None:
    """Close (``finished``) or terminate the pool, then join it; kill what is left after :data:`GRACE_S` s."""
    watchdog = threading.Timer(GRACE_S, _kill_workers, (pool,))
    watchdog.daemon = True
    watchdog.start()
    try:
        if finished:
            pool.close()
        else:
            pool.terminate()
        pool.join()
    finally:
        watchdog.cancel()


def _kill_workers(pool: Any) -> None:
    """SIGKILL every live worker of ``pool`` (see the module's docstring: a SIGTERM can be lost).

    Then free the task queue's read lock if a dead worker holds it (a worker holds it while it
    waits for a task, and a killed one never lets go): ``Pool.terminate`` takes it first thing.
    """
    live = [p for p in list(getattr(pool, "_pool", ())) if p.exitcode is None]
    for proc in live:
        proc.kill()
    for proc in live:
        proc.join(GRACE_S)
    lock = getattr(getattr(pool, "_inqueue", None), "_rlock", None)
    if lock is not None:
        # free, held by a dead worker, or held by terminate (which never lets go): released, no one waits
        lock.acquire(block=False)
        lock.release()
