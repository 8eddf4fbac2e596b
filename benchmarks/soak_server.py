"""A bounded soak of ``tonk serve``: many requests from concurrent clients, valid and invalid mixed.

    python benchmarks/soak_server.py [--requests 10000] [--clients 20] [--seed 0] [--json]
    python benchmarks/soak_server.py --search-clients 45 [--seconds 60] [--json]

It starts ``tonk serve`` (``python -m tonk_cli.main serve``, so ``PYTHONPATH``
chooses the code served) on a free loopback port, then ``--clients`` threads
send ``--requests`` requests in all: new games, legal moves (from the game's
own ``legal_actions``), illegal and malformed moves, next hands, records,
agent queries, unknown games, oversized and malformed bodies. At the end it
checks that

- no request got a 5xx or lost its connection,
- every finished hand's record replays (``tonk_env.engine.replay``) to the
  result stored in it, and every live game's view is consistent (its hand
  counts add up to 52 cards with the stock, pile and table),
- the server's memory (RSS from ``/proc``) at the end, against after warm-up,

and prints the figures (``--json`` for a machine-readable line).

With ``--search-clients N`` it measures instead the cheap routes under search
load (:mod:`soak_search`): N client threads drive searches for ``--seconds``
(new games and moves against ``search:ismcts``, stateless ``search:ismcts``
queries; a 429/503 answer's ``Retry-After`` is honoured), while a probe in
its own process reads ``GET /api/rules``, ``GET /api/agents`` and the view of
a game whose agent is searching, one request every 50 ms. It prints each
cheap route's median, p99 and maximum latency, and the searching requests'
statuses and longest wait against the server's time limit.

It only talks to 127.0.0.1 and stops by itself.
"""

from __future__ import annotations

import argparse
import json
import random
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx

from tonk_env.engine import replay


def free_port() -> int:
    """A free TCP port on 127.0.0.1."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def rss_kib(pid: int) -> int:
    """Resident memory of a process in KiB (Linux ``/proc``)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return -1


def start_server(*flags: str) -> tuple[str, subprocess.Popen[bytes]]:
    """``tonk serve`` on a free loopback port (the code ``PYTHONPATH`` names): its URL and process."""
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "tonk_cli.main", "serve", "--port", str(port), "--max-games", "200", *flags],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    return f"http://127.0.0.1:{port}", server


def wait_ready(url: str, seconds: float = 180.0) -> None:
    """Wait until the server answers (``seconds`` at most: a loaded machine starts it slowly)."""
    end = time.monotonic() + seconds
    with httpx.Client(base_url=url, timeout=30) as c:
        while time.monotonic() < end:
            try:
                c.get("/api/rules")
                return
            except httpx.HTTPError:
                time.sleep(0.2)
    raise SystemExit(f"the server at {url} did not answer within {seconds:g} s")


class Soak:
    """The clients' shared state: the server's URL, the live games, the counters."""

    def __init__(self, url: str, seed: int) -> None:
        self.url = url
        self.seed = seed
        self.lock = threading.Lock()
        self.games: list[str] = []
        self.status: Counter[int] = Counter()
        self.kinds: Counter[str] = Counter()
        self.errors: list[str] = []
        self.finished_records: list[dict[str, Any]] = []

    def note(self, kind: str, r: httpx.Response | None, error: str | None = None) -> None:
        """Count one request's outcome."""
        with self.lock:
            self.kinds[kind] += 1
            if r is None:
                self.errors.append(f"{kind}: {error}")
                return
            self.status[r.status_code] += 1
            if r.status_code >= 500:
                self.errors.append(f"{kind}: {r.status_code} {r.text[:200]}")

    def pick_game(self, rng: random.Random) -> str | None:
        """A live game id, if any."""
        with self.lock:
            return rng.choice(self.games) if self.games else None

    def one(self, client: httpx.Client, rng: random.Random) -> None:
        """Send one request of a random kind."""
        kind = rng.choices(
            ["new", "move", "bad_move", "next", "record", "agent", "unknown", "junk", "big"],
            [6, 40, 10, 6, 6, 8, 4, 6, 2],
        )[0]
        try:
            getattr(self, f"do_{kind}")(client, rng, kind)
        except httpx.HTTPError as e:
            self.note(kind, None, repr(e))

    def do_new(self, client: httpx.Client, rng: random.Random, kind: str) -> None:
        """Start a game (sometimes with bad options)."""
        body: dict[str, Any] = {"players": rng.choice([2, 2, 3, 4]), "agents": ["random", "heuristic:greedy"]}
        if rng.random() < 0.2:
            body[rng.choice(["players", "rules", "options", "seat"])] = rng.choice([9, "nope", {"x": 1}, -1])
        r = client.post("/api/games", json=body)
        self.note(kind, r)
        if r.status_code == 201:
            with self.lock:
                self.games.append(r.json()["game_id"])
                while len(self.games) > 50:  # keep the lobby under its limit
                    gone = self.games.pop(0)
                    client.delete(f"/api/games/{gone}")

    def do_move(self, client: httpx.Client, rng: random.Random, kind: str) -> None:
        """Play a legal move of a live game (from its own view)."""
        gid = self.pick_game(rng)
        if gid is None:
            return self.do_new(client, rng, "new")
        g = client.get(f"/api/games/{gid}")
        if g.status_code != 200:
            return self.note(kind, g)
        legal = g.json()["view"]["legal_actions"]
        if g.json()["over"] or not legal:
            r = client.get(f"/api/games/{gid}/record")
            self.note("record", r)
            if r.status_code == 200:
                with self.lock:
                    self.finished_records.append(r.json())
            return self.note(kind, client.post(f"/api/games/{gid}/next"))
        self.note(kind, client.post(f"/api/games/{gid}/actions", json={"action": rng.choice(legal)}))

    def do_bad_move(self, client: httpx.Client, rng: random.Random, kind: str) -> None:
        """An illegal or malformed move."""
        gid = self.pick_game(rng) or "none"
        action = rng.choice(["discard ZZ", 9999, -1, True, None, "hit 2C on 9D", "x" * 500, [1]])
        self.note(kind, client.post(f"/api/games/{gid}/actions", json={"action": action}))

    def do_next(self, client: httpx.Client, rng: random.Random, kind: str) -> None:
        """Ask for the next hand (often too early)."""
        gid = self.pick_game(rng) or "none"
        self.note(kind, client.post(f"/api/games/{gid}/next"))

    def do_record(self, client: httpx.Client, rng: random.Random, kind: str) -> None:
        """Ask for a record (often of a running hand)."""
        gid = self.pick_game(rng) or "none"
        self.note(kind, client.get(f"/api/games/{gid}/record"))

    def do_agent(self, client: httpx.Client, rng: random.Random, kind: str) -> None:
        """An agent query on a fresh deal (sometimes malformed)."""
        record: dict[str, Any] = {"format": "tonk-record/1", "players": 2, "rules": "standard"}
        if rng.random() < 0.5:
            record = {"actions": [1, 2, 3]}
        body = {
            "agent": rng.choice(["random", "heuristic:expert", "nope:x", "search:ismcts?budget=8"]),
            "record": record,
        }
        self.note(kind, client.post("/api/agent-action", json=body))

    def do_unknown(self, client: httpx.Client, rng: random.Random, kind: str) -> None:
        """A game that does not exist."""
        self.note(kind, client.get(f"/api/games/{rng.getrandbits(40):x}"))

    def do_junk(self, client: httpx.Client, rng: random.Random, kind: str) -> None:
        """A body that is not JSON, or JSON of the wrong shape."""
        content = rng.choice([b"{", b"[]", b"null", b"\xff\xfe", b'{"players": "two"}'])
        self.note(
            kind, client.post("/api/games", content=content, headers={"content-type": "application/json"})
        )

    def do_big(self, client: httpx.Client, rng: random.Random, kind: str) -> None:
        """An oversized body (1 MiB of options)."""
        body = {"players": 2, "options": {f"k{i}": "v" * 100 for i in range(10_000)}}
        self.note(kind, client.post("/api/games", json=body))

    def check_integrity(self, client: httpx.Client) -> list[str]:
        """Finished hands' records replay to their stored results; live views account for 52 cards."""
        bad = []
        for rec in self.finished_records:
            try:
                s = replay(rec, check=True)  # raises if the moves do not lead to the stored result
            except ValueError as e:
                bad.append(f"record does not replay: {e}")
                continue
            if s.result is None:
                bad.append("a finished hand's record replays to an unfinished hand")
        for gid in self.games:
            r = client.get(f"/api/games/{gid}")
            if r.status_code != 200:
                continue
            v = r.json()["view"]
            on_table = sum(len(sp["cards"]) for sp in v["spreads"]) if v["spreads"] else 0
            total = sum(v["hand_sizes"]) + v["stock_size"] + len(v["discards"]) + on_table
            if total != 52:
                bad.append(f"game {gid}: {total} cards accounted for")
        return bad


def main(argv: list[str] | None = None) -> int:
    """Run the soak and print its figures; exit 1 if any check failed."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=10_000)
    ap.add_argument("--clients", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", action="store_true")
    ap.add_argument(
        "--search-clients", type=int, default=0, help="measure the cheap routes under N searching clients"
    )
    ap.add_argument("--seconds", type=float, default=60.0, help="length of the search-load run")
    args = ap.parse_args(argv)
    if args.search_clients:
        from soak_search import run_search_load  # noqa: PLC0415 - a sibling script, not a package

        return run_search_load(args.search_clients, args.seconds, args.seed, args.json)
    url, server = start_server()
    try:
        wait_ready(url)
        with httpx.Client(base_url=url, timeout=30) as c:
            soak = Soak(url, args.seed)
            warm = random.Random(args.seed)
            for _ in range(100):
                soak.one(c, warm)
            rss_warm = rss_kib(server.pid)
        per = args.requests // args.clients
        t0 = time.perf_counter()

        def client_loop(k: int) -> None:
            rng = random.Random(f"{args.seed}:{k}")
            with httpx.Client(base_url=url, timeout=60) as c:
                for _ in range(per):
                    soak.one(c, rng)

        threads = [threading.Thread(target=client_loop, args=(k,)) for k in range(args.clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.perf_counter() - t0
        rss_end = rss_kib(server.pid)
        with httpx.Client(base_url=url, timeout=30) as c:
            bad = soak.check_integrity(c)
    finally:
        server.terminate()
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()
    sent = sum(soak.kinds.values())
    out = {
        "requests": sent,
        "clients": args.clients,
        "wall_s": round(wall, 1),
        "requests_per_s": round(sent / wall, 1),
        "status": dict(sorted(soak.status.items())),
        "errors": soak.errors[:10],
        "error_count": len(soak.errors),
        "records_replayed": len(soak.finished_records),
        "integrity_failures": bad[:10],
        "rss_kib_after_warmup": rss_warm,
        "rss_kib_end": rss_end,
        "server_exit": server.returncode,
    }
    if args.json:
        print(json.dumps(out))
    else:
        for k, v in out.items():
            print(f"{k:22s} {v}")
    return 1 if soak.errors or bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
