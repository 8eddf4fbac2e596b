"""The cheap routes of ``tonk serve`` under search load (``soak_server.py --search-clients N``).

N client threads, each from an address of its own (127.0.0.2, 127.0.0.3,
...: the server tells clients apart by address), drive searches for a
fixed time, each in turn: it plays its own game against the search (a
move, then the agent searches for its answer; a new hand when one ends),
asks the search for a move in a fresh
deal (``POST /api/agent-action``), or reads the view of one game that client
0 plays against the search (then waits 0.2 s). The search is the heaviest
one the default caps allow (:data:`SEARCH`). A 429 or 503 answer's
``Retry-After`` is honoured (at most 4 s, under uvicorn's keep-alive
timeout). Meanwhile a probe, in its own process so that the load's threads
do not slow its clock, sends one cheap
request every 50 ms: ``GET /api/rules``, ``GET /api/agents`` and the view of
a game whose agent is searching, in turn.

The probe first runs alone for 10 s (``cheap_idle``: the latency the
machine gives without searches, as loaded as it is by others). It reports
each cheap route's median, p99 and maximum latency under the load, and the
searching requests' statuses, median and longest wait against the server's
time limit (``--max-seconds``, 10 s by default). It only talks to 127.0.0.1,
sends a bounded number of requests and stops by itself.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import random
import threading
import time
from collections import Counter
from typing import Any

import httpx
from soak_server import start_server, wait_ready

from tonk_env.engine import make_rules, new_game, to_record

#: The searching agent the clients drive: the heaviest that ``tonk serve``'s default caps allow.
SEARCH = "search:ismcts?budget=1000&drop_samples=2000&candidates=3&takes=all"
#: Seconds between two probe requests.
PROBE_EVERY = 0.05
#: Seconds the probe runs alone first (the machine's own latency, without searches).
IDLE_SECONDS = 10.0
#: The server's time limit per request (tonk serve --max-seconds default).
LIMIT_S = 10.0


def quantile(xs: list[float], q: float) -> float:
    """The ``q`` quantile of ``xs`` (nearest rank), or NaN when empty."""
    if not xs:
        return float("nan")
    ys = sorted(xs)
    return ys[min(len(ys) - 1, max(0, round(q * len(ys)) - 1))]


def summary(xs: list[float]) -> dict[str, Any]:
    """Count, median, p99 and maximum of latencies in seconds, as milliseconds."""
    return {
        "n": len(xs),
        "median_ms": round(1000 * quantile(xs, 0.5), 1),
        "p99_ms": round(1000 * quantile(xs, 0.99), 1),
        "max_ms": round(1000 * max(xs), 1) if xs else None,
    }


def probe(url: str, gid: str, seconds: float, out: Any) -> None:
    """Send cheap requests in turn for ``seconds``; put ``{route: [latency s]}`` and statuses on ``out``."""
    routes = {"rules": "/api/rules", "agents": "/api/agents", "view": f"/api/games/{gid}"}
    times: dict[str, list[float]] = {k: [] for k in routes}
    status: Counter[str] = Counter()
    end = time.monotonic() + seconds
    with httpx.Client(base_url=url, timeout=120) as c:
        i = 0
        while time.monotonic() < end:
            name = list(routes)[i % len(routes)]
            i += 1
            t0 = time.perf_counter()
            try:
                r = c.get(routes[name])
                status[f"{name} {r.status_code}"] += 1
            except httpx.HTTPError as e:
                status[f"{name} {type(e).__name__}"] += 1
            times[name].append(time.perf_counter() - t0)
            time.sleep(max(0.0, PROBE_EVERY - (time.perf_counter() - t0)))
    out.put({"times": times, "status": dict(status)})


class Load:
    """The searching clients' counters."""

    def __init__(self, url: str, watched: str, seconds: float, seed: int) -> None:
        self.url = url
        self.watched = watched
        self.end = time.monotonic() + seconds
        self.seed = seed
        self.lock = threading.Lock()
        self.status: Counter[str] = Counter()
        self.waits: list[float] = []
        self.retry_after: list[float] = []

    def send(
        self, c: httpx.Client, method: str, path: str, kind: str, body: Any = None
    ) -> httpx.Response | None:
        """One request, timed and counted; on 429/503 sleep its ``Retry-After`` (at most 4 s)."""
        t0 = time.perf_counter()
        try:
            r = c.request(method, path, json=body)
        except httpx.HTTPError as e:
            with self.lock:
                self.status[f"{kind} {type(e).__name__}"] += 1
                self.waits.append(time.perf_counter() - t0)
            return None
        with self.lock:
            self.status[f"{kind} {r.status_code}"] += 1
            self.waits.append(time.perf_counter() - t0)
        if r.status_code in (429, 503):
            after = float(r.headers.get("retry-after", "1") or 1)
            with self.lock:
                self.retry_after.append(after)
            time.sleep(min(4.0, after, max(0.0, self.end - time.monotonic())))
        return r

    def client(self, k: int, gid: str | None) -> None:
        """Drive searches until the time is up: moves in a game against the search, and queries."""
        rng = random.Random(f"{self.seed}:{k}")
        own = httpx.HTTPTransport(local_address=f"127.0.0.{2 + k}")  # a client of its own to the server
        with httpx.Client(base_url=self.url, timeout=120, transport=own) as c:
            while time.monotonic() < self.end:
                turn = rng.random()
                if turn < 1 / 3:
                    self.send(c, "GET", f"/api/games/{self.watched}", "read")
                    time.sleep(0.2)
                    continue
                if turn < 2 / 3:
                    s = new_game(make_rules(), 2, seed=rng.getrandbits(32))
                    body = {"agent": SEARCH, "record": to_record(s), "seed": rng.getrandbits(31)}
                    self.send(c, "POST", "/api/agent-action", "agent", body)
                    continue
                if gid is None:
                    r = self.send(c, "POST", "/api/games", "new", {"agents": [SEARCH], "seed": k})
                    gid = r.json()["game_id"] if r is not None and r.status_code == 201 else None
                    continue
                g = c.get(f"/api/games/{gid}")
                if g.status_code != 200:
                    gid = None
                    continue
                game = g.json()
                if game["over"]:
                    self.send(c, "POST", f"/api/games/{gid}/next", "next")
                elif game["view"]["legal_actions"]:
                    move = rng.choice(game["view"]["legal_actions"])
                    self.send(c, "POST", f"/api/games/{gid}/actions", "move", {"action": move})
                else:
                    time.sleep(0.05)  # the agent is still to act (a request of ours is running)


def run_search_load(clients: int, seconds: float, seed: int, as_json: bool) -> int:
    """Run the search-load measurement and print it; exit status 1 if a request got a 5xx other than 503."""
    if not 1 <= clients <= 250:
        raise SystemExit("--search-clients must be 1..250 (one loopback address each)")
    url, server = start_server()
    try:
        wait_ready(url)
        with httpx.Client(base_url=url, timeout=120) as c:
            watched = c.post("/api/games", json={"agents": [SEARCH], "seed": seed}).json()["game_id"]
        ctx = mp.get_context("fork")
        out = ctx.Queue()
        prober = ctx.Process(target=probe, args=(url, watched, IDLE_SECONDS, out))
        prober.start()  # first alone: the cheap routes on this machine as loaded as it is, without searches
        idle = out.get(timeout=IDLE_SECONDS + 300)
        prober.join()
        load = Load(url, watched, seconds, seed)
        prober = ctx.Process(target=probe, args=(url, watched, seconds, out))
        prober.start()
        threads = [
            threading.Thread(target=load.client, args=(k, watched if k == 0 else None))
            for k in range(clients)
        ]
        for t in threads:
            t.start()
        probed = out.get(timeout=seconds + 300)
        prober.join()
        for t in threads:
            t.join()
    finally:
        server.terminate()
        try:
            server.wait(10)
        except Exception:
            server.kill()
    cheap = {name: summary(xs) for name, xs in probed["times"].items()}
    every = [x for xs in probed["times"].values() for x in xs]
    result = {
        "search_clients": clients,
        "seconds": seconds,
        "cheap_idle": summary([x for xs in idle["times"].values() for x in xs]),
        "cheap_routes": cheap,
        "cheap_all": summary(every),
        "cheap_status": probed["status"],
        "search_spec": SEARCH,
        "load_requests": summary(load.waits),
        "load_status": dict(sorted(load.status.items())),
        "load_over_limit": sum(w > LIMIT_S for w in load.waits),
        "limit_s": LIMIT_S,
        "retry_after_median_s": quantile(load.retry_after, 0.5) if load.retry_after else None,
        "server_exit": server.returncode,
    }
    if as_json:
        print(json.dumps(result))
    else:
        for k, v in result.items():
            print(f"{k:22s} {v}")
    bad = any(k.endswith(("500", "502", "504")) for k in load.status)
    return 1 if bad else 0
