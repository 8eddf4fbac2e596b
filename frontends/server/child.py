"""The agents' process: a :class:`~.play.Desk` in a process of its own, driven over a pipe.

Python runs one thread at a time in a process. With the agents' searches on
threads of the server's process, the event loop waits for the interpreter
at every step of every request, and longest when the machine is busy and
the thread holding it is not running. ``tonk serve`` therefore keeps the
games' tables and agents in a child process: the server's process only
parses, checks, queues and answers, and its threads only wait on the pipe.

:class:`ChildDesk` has the desk's interface (``run``, ``drop``, ``close``).
Each ``run`` sends its command with the request's deadline and a job
number; a :meth:`Work.stop <.work.Work.stop>` of the request sends a
``stop`` for that job, which stops its searches in the child. The child
runs each command on a thread of its own (the server's queue lets at most
``workers`` run at once), ignores Ctrl-C (the server stops it) and ends
when the pipe closes.
"""

from __future__ import annotations

import itertools
import multiprocessing as mp
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from multiprocessing.connection import Connection
from typing import Any

from fastapi import HTTPException

from agents.registry import make_agent
from tonk_env.agent import DecisionTimeout
from tonk_env.odds import above_table
from tonk_env.workers import how_it_died

from .errors import REFUSALS
from .play import Desk
from .work import Work

#: Seconds the child may take to start (imports and the search's odds table).
START_SECONDS = 120.0

#: A child that died is replaced at most this many times in :data:`RESTART_WINDOW_S` seconds.
MAX_RESTARTS = 5
RESTART_WINDOW_S = 600.0


def _log(line: str) -> None:
    print(f"tonk serve: {line}", file=sys.stderr, flush=True)


def _serve_desk(conn: Connection, workers: int, warm: list[str]) -> None:
    """The child's main loop: run commands on threads, route stops to their work, end at EOF."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole group: the server stops us
    above_table()  # built once now, not in a request no deadline can stop
    for spec in warm:  # import what the offered agents need now, not within a request's time limit
        try:
            make_agent(spec)
        except Exception:  # the lobby has checked them; a spec that fails here fails in its request
            pass
    desk = Desk(workers)
    works: dict[int, Work] = {}
    lock = threading.Lock()

    def reply(message: dict[str, Any]) -> None:
        with lock:
            conn.send(message)

    def run(job: int, cmd: dict[str, Any], work: Work) -> None:
        try:
            answer: dict[str, Any] = {"job": job, "ok": desk.run(cmd, work)}
        except tuple(REFUSALS.values()) as e:  # a refusal goes back by name, its words unchanged
            answer = {"job": job, "refused": [type(e).__name__, str(e)]}
        except DecisionTimeout as e:
            answer = {"job": job, "timeout": str(e)}
        except Exception as e:  # a bug: the request gets a 500 naming it, the desk goes on
            answer = {"job": job, "crash": f"{type(e).__name__}: {e}"}
        with lock:
            works.pop(job, None)
        reply(answer)

    reply({"ready": True})
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            return
        op = msg.get("op")
        if op == "close":
            return
        if op == "drop":
            desk.drop(msg["gid"])
        elif op == "stop":
            with lock:
                work = works.get(msg["job"])
            if work is not None:
                work.stop(msg["reason"])
        else:
            work = Work(msg["deadline"])
            with lock:
                works[msg["job"]] = work
            threading.Thread(target=run, args=(msg["job"], msg, work), daemon=True).start()


class ChildDesk:
    """A desk in a child process, with the desk's interface (``run``, ``drop``, ``close``).

    If the child dies (out of memory, most likely), the requests waiting on it get a 503, the
    games it held are gone (``on_restart`` tells the lobby), and a new child takes its place: at
    most :data:`MAX_RESTARTS` in :data:`RESTART_WINDOW_S` seconds, after which every request
    gets the 503 and the log says why.
    """

    def __init__(self, workers: int, warm: Sequence[str] = ()) -> None:
        self._workers, self._warm = workers, list(warm)
        self._send_lock = threading.Lock()
        self._pending: dict[int, Future[dict[str, Any]]] = {}
        self._jobs = itertools.count()
        self._lock = threading.Lock()
        self._closing = False
        self._restarted: list[float] = []
        #: Called before a new child starts: the dead one's games are gone.
        self.on_restart: Callable[[], None] = lambda: None
        self._conn, self._process = self._start()
        self._reader = threading.Thread(target=self._read, name="tonk-desk-reader", daemon=True)
        self._reader.start()

    @property
    def restarts(self) -> int:
        """How many times a dead child was replaced."""
        return len(self._restarted)

    def _start(self) -> tuple[Connection, Any]:
        """A new child and the pipe to it, once it is ready."""
        ctx = mp.get_context("spawn")  # never fork a process that runs threads and an event loop
        conn, child = ctx.Pipe()
        process = ctx.Process(
            target=_serve_desk, args=(child, self._workers, self._warm), name="tonk-agents", daemon=True
        )
        process.start()
        child.close()
        try:
            ready = conn.poll(START_SECONDS) and conn.recv().get("ready")
        except (EOFError, OSError):
            ready = False
        if not ready:
            process.kill()
            process.join(3)
            conn.close()
            raise ValueError(f"the agents' process did not start within {START_SECONDS:g} s")
        return conn, process

    def _send(self, message: dict[str, Any]) -> None:
        with self._send_lock:
            self._conn.send(message)

    def _read(self) -> None:
        """Hand each answer to the request waiting for it; if the child ends, fail them all and restart it."""
        while True:
            try:
                msg = self._conn.recv()
            except (EOFError, OSError):
                self._fail_pending()
                if self._closing or not self._restart():
                    return
                continue
            with self._lock:
                future = self._pending.pop(msg.get("job", -1), None)
            if future is not None:
                future.set_result(msg)

    def _fail_pending(self) -> None:
        with self._lock:
            pending, self._pending = self._pending, {}
        for future in pending.values():
            future.set_result({"error": [503, "the agents' process has stopped; nothing was changed"]})

    def _restart(self) -> bool:
        """Replace the dead child (unless it died too often lately); whether a new one runs."""
        self._process.join(3)
        why = f"the agents' process {how_it_died(self._process.exitcode)}; the games it held are gone"
        now = time.monotonic()
        self._restarted = [t for t in self._restarted if now - t < RESTART_WINDOW_S]
        if len(self._restarted) >= MAX_RESTARTS:
            _log(f"{why}; it was restarted {MAX_RESTARTS} times in {RESTART_WINDOW_S:g} s: not again")
            return False
        _log(f"{why}; starting a new one")
        self.on_restart()
        try:
            conn, process = self._start()
        except ValueError as e:
            _log(f"{e}: requests that need an agent get 503")
            return False
        if self._closing:  # the server stopped meanwhile
            conn.close()
            process.kill()
            return False
        with self._send_lock:
            old, self._conn, self._process = self._conn, conn, process
        old.close()
        self._restarted.append(now)
        return True

    def run(self, cmd: dict[str, Any], work: Work) -> dict[str, Any]:
        """Run ``cmd`` at the child's desk within ``work`` (its deadline and stops); its answer."""
        job = next(self._jobs)
        future: Future[dict[str, Any]] = Future()
        with self._lock:
            self._pending[job] = future
        work.on_stop(lambda reason: self._send({"op": "stop", "job": job, "reason": reason}))
        try:
            self._send({**cmd, "job": job, "deadline": work.deadline})
        except (OSError, ValueError):
            with self._lock:
                self._pending.pop(job, None)
            raise HTTPException(503, "the agents' process has stopped; nothing was changed") from None
        msg = future.result()
        if "ok" in msg:
            return dict(msg["ok"])
        if "timeout" in msg:
            raise DecisionTimeout(msg["timeout"])
        if "refused" in msg:
            name, detail = msg["refused"]
            raise REFUSALS[name](detail)
        if "error" in msg:
            status, detail = msg["error"]
            raise HTTPException(status, detail)
        raise RuntimeError(f"the agents' process failed: {msg.get('crash')}")

    def drop(self, gid: str) -> None:
        """Forget game ``gid`` at the child's desk."""
        try:
            self._send({"op": "drop", "gid": gid})
        except (OSError, ValueError):
            pass  # the child has ended: nothing to forget

    def close(self) -> None:
        """End the child process (within a few seconds)."""
        self._closing = True
        try:
            self._send({"op": "close"})
        except (OSError, ValueError):
            pass
        self._process.join(3)
        if self._process.is_alive():
            self._process.terminate()
            self._process.join(3)
        self._conn.close()
