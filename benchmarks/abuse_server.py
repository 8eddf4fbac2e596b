"""Abuse a real ``tonk serve`` the ways issue 31 found, and print what it answered.

    python benchmarks/abuse_server.py [--burst-only] [--json]

Run it from the checkout whose code it serves (``python -m tonk_cli.main
serve``, default flags, on a free loopback port). It sends:

1. 45 simultaneous agent queries for the heaviest search the default caps
   allow, from 45 clients (loopback addresses 127.0.0.10 and up), each
   already connected: their statuses, median and longest wait;
2. request headers that never end, and a body that never ends: how long
   until the server closes the connection (the client gives up after 120 s),
   and its answer;
3. JSON numbers that are not finite, ``{"seed": false}``,
   ``{"agents": [""]}``, ``OPTIONS`` on a game, a ``Host`` not served;
4. 100 new games in a row from one client, then one from another client.

``--burst-only`` stops after the first. It only talks to 127.0.0.1, sends a
bounded number of requests and stops its server.
"""

from __future__ import annotations

import argparse
import json
import socket
import threading
import time
from typing import Any

import httpx
from soak_server import start_server, wait_ready

from tonk_env.engine import make_rules, new_game, to_record

SEARCH = "search:ismcts?budget=1000&drop_samples=2000&candidates=3&takes=all"


def burst(url: str, clients: int = 45) -> dict[str, Any]:
    """``clients`` simultaneous agent queries, each client from its own address."""
    go = threading.Barrier(clients)
    res: list[tuple[int, float]] = []
    lock = threading.Lock()

    def ask(k: int) -> None:
        rec = to_record(new_game(make_rules(), 2, seed=k))
        own = httpx.HTTPTransport(local_address=f"127.0.0.{10 + k}")
        with httpx.Client(base_url=url, transport=own, timeout=300) as c:
            c.get("/api/rules")  # connected before the clock starts
            go.wait()
            t0 = time.perf_counter()
            r = c.post("/api/agent-action", json={"agent": SEARCH, "record": rec})
            with lock:
                res.append((r.status_code, round(time.perf_counter() - t0, 2)))

    threads = [threading.Thread(target=ask, args=(k,)) for k in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    waits = sorted(w for _, w in res)
    statuses = sorted({s for s, _ in res})
    return {
        "status": {s: sum(1 for x, _ in res if x == s) for s in statuses},
        "median_s": waits[len(waits) // 2],
        "max_s": waits[-1],
    }


def stall(port: int, data: bytes) -> dict[str, Any]:
    """Send ``data`` and nothing more: seconds until the server closes, and its status line."""
    with socket.create_connection(("127.0.0.1", port)) as c:
        c.settimeout(120)
        t0 = time.perf_counter()
        c.sendall(data)
        got = b""
        try:
            while chunk := c.recv(4096):
                got += chunk
        except TimeoutError:
            pass
        return {
            "closed_after_s": round(time.perf_counter() - t0, 1),
            "answer": got.split(b"\r\n")[0].decode(),
        }


def inputs(url: str) -> dict[str, Any]:
    """Bad inputs: non-finite numbers, a boolean seed, an empty spec, OPTIONS, a Host not served."""
    out: dict[str, Any] = {}
    gid = httpx.post(url + "/api/games", json={"agents": ["random"], "seed": 1}).json()["game_id"]
    for route, body in [
        ("/api/games", '{"seed": NaN}'),
        ("/api/games", '{"seed": 1e400}'),
        (f"/api/games/{gid}/actions", '{"action": Infinity}'),
        ("/api/agent-action", '{"agent": "random", "record": {}, "seed": NaN}'),
    ]:
        r = httpx.post(url + route, content=body, headers={"content-type": "application/json"})
        out[body] = r.status_code
    out["seed_false"] = httpx.post(url + "/api/games", json={"seed": False}).status_code
    out["agents_empty"] = httpx.post(url + "/api/games", json={"agents": [""]}).status_code
    r = httpx.options(url + f"/api/games/{gid}")
    out["options_game"] = [r.status_code, r.headers.get("allow")]
    r = httpx.get(url + "/api/rules", headers={"host": "evil.example"})
    out["bad_host"] = [r.status_code, r.text[:160]]
    return out


def lobby_burst(url: str) -> dict[str, Any]:
    """100 new games in a row from one client, then one from another."""
    codes = [httpx.post(url + "/api/games", json={"agents": ["random"]}).status_code for _ in range(100)]
    with httpx.Client(transport=httpx.HTTPTransport(local_address="127.0.0.9")) as c:
        other = c.post(url + "/api/games", json={"agents": ["random"]}).status_code
    return {"burst_100": {c: codes.count(c) for c in sorted(set(codes))}, "another_client": other}


def main(argv: list[str] | None = None) -> int:
    """Run the abuse and print what the server answered."""
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--burst-only", action="store_true", help="only the 45 simultaneous agent queries")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    url, server = start_server()
    port = int(url.rsplit(":", 1)[1])
    try:
        wait_ready(url)
        out: dict[str, Any] = {"45_agent_queries": burst(url)}
        if not args.burst_only:
            out["stalled_headers"] = stall(port, b"GET /api/rules HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            out["stalled_body"] = stall(
                port,
                b"POST /api/games HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                b"Content-Length: 100\r\n\r\n{",
            )
            out["inputs"] = inputs(url)
            out["lobby"] = lobby_burst(url)
    finally:
        server.terminate()
        server.wait(10)
    print(json.dumps(out) if args.json else json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
