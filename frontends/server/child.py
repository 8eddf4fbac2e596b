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
import threading
from collections.abc import Sequence
from concurrent.futures import Future
from multiprocessing.connection import Connection
from typing import Any

from fastapi import HTTPException

from agents.registry import make_agent
from tonk_env.agent import DecisionTimeout
from tonk_env.odds import above_table

from .errors import REFUSALS
from .play import Desk
from .work import Work

#: Seconds the child may take to start (imports and the search's odds table).
START_SECONDS = 120.0


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
    """A desk in a child process, with the desk's interface (``run``, ``drop``, ``close``)."""

    def __init__(self, workers: int, warm: Sequence[str] = ()) -> None:
        ctx = mp.get_context("spawn")  # never fork a process that runs threads and an event loop
        self._conn, child = ctx.Pipe()
        self._process = ctx.Process(
            target=_serve_desk, args=(child, workers, list(warm)), name="tonk-agents", daemon=True
        )
        self._process.start()
        child.close()
        self._send_lock = threading.Lock()
        self._pending: dict[int, Future[dict[str, Any]]] = {}
        self._jobs = itertools.count()
        self._lock = threading.Lock()
        if not self._conn.poll(START_SECONDS) or not self._conn.recv().get("ready"):
            self.close()
            raise ValueError(f"the agents' process did not start within {START_SECONDS:g} s")
        self._reader = threading.Thread(target=self._read, name="tonk-desk-reader", daemon=True)
        self._reader.start()

    def _send(self, message: dict[str, Any]) -> None:
        with self._send_lock:
            self._conn.send(message)

    def _read(self) -> None:
        """Hand each answer to the request waiting for it; fail them all if the child ends."""
        while True:
            try:
                msg = self._conn.recv()
            except (EOFError, OSError):
                break
            with self._lock:
                future = self._pending.pop(msg.get("job", -1), None)
            if future is not None:
                future.set_result(msg)
        with self._lock:
            pending, self._pending = self._pending, {}
        for future in pending.values():
            future.set_result({"error": [503, "the agents' process has stopped; nothing was changed"]})

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
        try:
            self._send({"op": "close"})
        except (OSError, ValueError):
            pass
        self._process.join(3)
        if self._process.is_alive():
            self._process.terminate()
            self._process.join(3)
        self._conn.close()
