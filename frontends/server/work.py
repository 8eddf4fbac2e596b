"""The agents' work: a few worker threads, shared fairly between clients, with a bounded queue.

Requests that make agents play (a new game, a move, a deal, an agent query)
hand their work to a :class:`WorkQueue`; nothing else in the server uses its
threads, so the cheap routes (rules, agents, views, records) never wait
behind a search. The queue is fair and bounded:

- the workers take the waiting requests client by client in turn (round
  robin), so one client's burst waits behind its own requests, not others';
- a client has at most ``max_client`` requests queued or running (a 429
  :class:`Busy`), a game one (a 429: its moves come one at a time);
- at most ``max_queue`` requests wait in all (a 503 :class:`Busy`);
- every :class:`Busy` carries a ``Retry-After`` estimated from the recent
  work's length.

Each request has one deadline from its arrival; a request still waiting at
its deadline is taken off the queue (:meth:`WorkQueue.cancel`), and a
running one is stopped through its :class:`Work`.
"""

from __future__ import annotations

import math
import threading
import time
from collections import Counter, OrderedDict, deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from tonk_env.agent import DecisionTimeout


class Busy(Exception):
    """The work was not queued: ``status`` 429 (this client's or game's share) or 503 (the server's)."""

    def __init__(self, status: int, detail: str, retry_after: int) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.retry_after = retry_after


class Work:
    """One request's agent work, which the server stops when its client goes away or it shuts down.

    The work runs in a worker thread and names the agents it is driving
    (:meth:`using`); :meth:`stop` moves the ``deadline`` of those that search
    (:mod:`tonk_env.agent`) into the past, so a running search raises
    ``DecisionTimeout`` at its next sampled world. A decision that starts after
    a stop sets its own deadline again, so the watcher calls :meth:`stop` at
    every look until the work has ended. ``deadline`` is the request's
    (``time.monotonic()``): the agents' decisions must end before it.
    """

    def __init__(self, deadline: float = math.inf) -> None:
        self.reason: str | None = None
        self.deadline = deadline
        self._agents: list[Any] = []
        self._listeners: list[Callable[[str], None]] = []
        self._lock = threading.Lock()

    def on_stop(self, listener: Callable[[str], None]) -> None:
        """Call ``listener(reason)`` at every :meth:`stop` (how a stop reaches a desk in another process)."""
        with self._lock:
            self._listeners.append(listener)

    def seconds_left(self) -> float:
        """Seconds until the deadline (0 when past it)."""
        return max(0.0, self.deadline - time.monotonic())

    @contextmanager
    def using(self, agents: Iterable[Any]) -> Iterator[None]:
        """Let :meth:`stop` reach ``agents`` (held by this work alone) while the block runs."""
        with self._lock:
            if self.reason is not None:
                raise DecisionTimeout(self.reason)
            self._agents = [a for a in agents if hasattr(a, "deadline")]
        try:
            yield
        finally:
            with self._lock:
                for agent in self._agents:
                    agent.deadline = None
                self._agents = []

    def stop(self, reason: str) -> None:
        """Stop the work (the first reason is kept): the agents in use see their deadline passed."""
        with self._lock:
            self.reason = self.reason or reason
            for agent in self._agents:
                agent.deadline = -math.inf
            listeners = list(self._listeners)
        for listener in listeners:
            listener(self.reason)


@dataclass(eq=False)
class Job:
    """A request's work in the queue: its client, its game (if any) and the call that does it."""

    client: str
    key: str | None
    fn: Callable[[], Any]
    future: Future[Any] = field(default_factory=Future)


class WorkQueue:
    """Worker threads running :class:`Job` s client by client in turn, with bounded shares."""

    def __init__(self, workers: int, max_queue: int, max_client: int, max_seconds: float) -> None:
        self.workers = workers
        self.max_queue = max_queue
        self.max_client = max_client
        self.max_seconds = max_seconds
        self._cv = threading.Condition()
        self._waiting: OrderedDict[str, deque[Job]] = OrderedDict()  # client -> its jobs; turn order
        self._held: Counter[str] = Counter()  # client -> jobs queued or running
        self._keys: set[str] = set()  # games with a job queued or running
        self._queued = 0
        self._running = 0
        self._mean = 0.5  # seconds a job takes (moving average)
        self._threads: list[threading.Thread] = []
        self._closed = False

    # -- admission ------------------------------------------------------------------------------
    def retry_after(self) -> int:
        """Seconds after which a refused request may well be taken (1 at least)."""
        with self._cv:
            ahead = self._queued + self._running
            mean = self._mean
        guess = math.ceil(mean * max(1, ahead) / self.workers)
        return max(1, min(guess, max(1, math.ceil(self.max_seconds))))

    def submit(self, client: str, key: str | None, fn: Callable[[], Any]) -> Job:
        """Queue ``fn`` for ``client`` (and game ``key``), or raise :class:`Busy` saying why not."""
        refused: tuple[int, str] | None = None
        with self._cv:
            if key is not None and key in self._keys:
                refused = 429, "this game is busy with another request (its moves are played one at a time)"
            elif self._held[client] >= self.max_client:
                refused = (
                    429,
                    (
                        f"{self._held[client]} requests of yours are already queued or running "
                        f"(at most {self.max_client}: tonk serve --max-client-work)"
                    ),
                )
            elif self._queued >= self.max_queue:
                refused = (
                    503,
                    (
                        f"the agents are busy: {self._running} requests running and {self._queued} waiting "
                        f"(at most {self.max_queue}: tonk serve --max-queue)"
                    ),
                )
            if refused is None:
                job = Job(client, key, fn)
                self._held[client] += 1
                if key is not None:
                    self._keys.add(key)
                self._waiting.setdefault(client, deque()).append(job)
                self._queued += 1
                self._start_workers()
                self._cv.notify()
                return job
        status, detail = refused
        raise Busy(status, f"{detail}; nothing was changed, retry later", self.retry_after())

    def cancel(self, job: Job) -> bool:
        """Take ``job`` off the queue if it has not started (True), its future cancelled."""
        with self._cv:
            jobs = self._waiting.get(job.client)
            if jobs is None or job not in jobs:
                return False
            jobs.remove(job)
            if not jobs:
                del self._waiting[job.client]
            self._queued -= 1
            self._release(job)
        job.future.cancel()
        return True

    def counts(self) -> tuple[int, int]:
        """``(running, waiting)`` jobs now."""
        with self._cv:
            return self._running, self._queued

    def close(self) -> None:
        """Stop the workers once they are idle (queued jobs are cancelled)."""
        with self._cv:
            self._closed = True
            jobs = [j for q in self._waiting.values() for j in q]
            self._waiting.clear()
            self._queued = 0
            for job in jobs:
                self._release(job)
            self._cv.notify_all()
        for job in jobs:
            job.future.cancel()

    # -- the workers ------------------------------------------------------------------------------
    def _release(self, job: Job) -> None:
        """Free ``job``'s share (the lock held)."""
        self._held[job.client] -= 1
        if self._held[job.client] <= 0:
            del self._held[job.client]
        if job.key is not None:
            self._keys.discard(job.key)

    def _start_workers(self) -> None:
        """Start the worker threads on the first job (the lock held)."""
        while len(self._threads) < self.workers:
            t = threading.Thread(target=self._work, name=f"tonk-agents-{len(self._threads)}", daemon=True)
            self._threads.append(t)
            t.start()

    def _next(self) -> Job | None:
        """The next client's oldest job (round robin), or None once closed."""
        with self._cv:
            while not self._waiting and not self._closed:
                self._cv.wait()
            if self._closed:
                return None
            client, jobs = next(iter(self._waiting.items()))
            job = jobs.popleft()
            del self._waiting[client]
            if jobs:
                self._waiting[client] = jobs  # back at the end of the turn order
            self._queued -= 1
            self._running += 1
            return job

    def _work(self) -> None:
        """A worker thread: run jobs until the queue is closed.

        A job's share (its client's count, its game) is freed *before* its
        answer is handed over, so a client that sends its next request as soon
        as the last one is answered never finds its own game still busy.
        """
        while (job := self._next()) is not None:
            t0 = time.monotonic()
            run = job.future.set_running_or_notify_cancel()
            result: Any = None
            error: Exception | None = None
            try:
                if run:
                    try:
                        result = job.fn()
                    except Exception as e:  # handed to the request, which answers it
                        error = e
            finally:
                with self._cv:
                    self._running -= 1
                    self._release(job)
                    self._mean = 0.8 * self._mean + 0.2 * (time.monotonic() - t0)
            if not run:
                continue
            if error is not None:
                job.future.set_exception(error)
            else:
                job.future.set_result(result)
