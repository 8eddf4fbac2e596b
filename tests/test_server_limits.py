"""The server's bounds: work caps, body size, Host header, strict actions, short echoes, SIGTERM."""

from __future__ import annotations

import asyncio
import json
import math
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the server tests need fastapi (pip install 'tonk-rl[serve]')")

with warnings.catch_warnings():  # starlette's TestClient warns about httpx on import
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from frontends.server import Limits, create_app, listen, loopback_hosts  # noqa: E402 - must follow importorskip
from tonk_env.engine import make_rules, new_game, to_record  # noqa: E402 - must follow importorskip
from tonk_env.odds import above_table  # noqa: E402 - must follow importorskip

#: A search far above the default caps: tens of seconds per decision unless it is stopped.
SLOW = "search:ismcts?budget=20000&drop_samples=20000&candidates=10&takes=all"
#: Caps that let SLOW through.
HIGH = Limits(max_budget=100000, max_samples=100000, max_candidates=10, max_seconds=300)


@pytest.fixture
def client() -> TestClient:
    return TestClient(create_app(limits=Limits(max_budget=50, max_samples=100, max_candidates=2)))


def _game(client: TestClient) -> str:
    r = client.post("/api/games", json={"players": 2, "agents": ["random"], "seed": 3})
    assert r.status_code == 201, r.text
    return str(r.json()["game_id"])


def test_search_parameters_above_the_caps_are_refused(client: TestClient) -> None:
    rec = to_record(new_game(make_rules(), 2, seed=1))
    ok = client.post(
        "/api/agent-action", json={"agent": "search:ismcts?budget=20&drop_samples=50", "record": rec}
    )
    assert ok.status_code == 200, ok.text
    for spec, word in [
        ("search:ismcts?budget=100000&drop_samples=100000&candidates=10&takes=all", "budget=100000"),
        ("search:ismcts?budget=10&drop_samples=101", "drop_samples=101"),
        ("search:ismcts?budget=10&drop_samples=50&candidates=3", "candidates=3"),
        ("search:ismcts", "budget=300"),  # the default budget is above this server's cap of 50
        ("heuristic:expert?samples=5000", "samples=5000"),
    ]:
        r = client.post("/api/agent-action", json={"agent": spec, "record": rec})
        assert r.status_code == 400 and word in r.json()["detail"] and "cap" in r.json()["detail"], r.text
    new = client.post("/api/games", json={"agents": ["search:ismcts?budget=100000"]})
    assert new.status_code == 400


def test_the_caps_are_in_the_openapi_schema(client: TestClient) -> None:
    text = client.get("/openapi.json").json()["info"]["description"]
    assert "search:ismcts budget <= 50" in text and "request bodies <= 65536 bytes" in text


def test_a_large_body_is_refused_before_it_is_read() -> None:
    c = TestClient(create_app(limits=Limits(max_body=2000)))
    r = c.post("/api/games", json={"options": {f"k{i}": "v" * 50 for i in range(200)}})
    assert r.status_code == 413 and "2000 bytes" in r.json()["detail"]
    chunks = (b'{"players": 2, "x": "' + b"y" * 5000 + b'"}',)
    r = c.post("/api/games", content=iter(chunks), headers={"content-type": "application/json"})
    assert r.status_code == 413


def test_the_host_header_is_checked() -> None:
    c = TestClient(create_app(allowed_hosts=loopback_hosts("127.0.0.1")), base_url="http://127.0.0.1")
    assert c.get("/api/rules").status_code == 200
    assert c.get("/api/rules", headers={"host": "localhost:8000"}).status_code == 200
    assert c.get("/api/rules", headers={"host": "[::1]:8000"}).status_code == 200
    r = c.get("/api/rules", headers={"host": "evil.example"})
    assert r.status_code == 400 and "--allowed-hosts evil.example" in r.json()["detail"]
    assert "evil.example" not in loopback_hosts("127.0.0.1")


def test_booleans_long_strings_and_int_records_are_4xx(client: TestClient) -> None:
    gid = _game(client)
    before = client.get(f"/api/games/{gid}").json()
    r = client.post(f"/api/games/{gid}/actions", json={"action": True})
    assert r.status_code == 422
    r = client.post(f"/api/games/{gid}/actions", json={"action": "x" * 50_000})
    assert r.status_code == 400 and len(r.text) < 300 and "50000 characters" in r.text
    assert client.get(f"/api/games/{gid}").json() == before
    rec = to_record(new_game(make_rules(), 2, seed=1))
    rec["actions"] = [1, 2]
    r = client.post("/api/agent-action", json={"agent": "random", "record": rec})
    assert r.status_code == 400 and "not an action string" in r.json()["detail"]


def test_serve_refuses_a_bad_port_with_a_message() -> None:
    tonk = Path(sys.executable).with_name("tonk")
    r = subprocess.run([str(tonk), "serve", "--port", "99999"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "not a port number" in r.stderr and "Traceback" not in r.stderr


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_sigterm_during_a_slow_request_stops_the_server_within_seconds() -> None:
    httpx = pytest.importorskip("httpx")
    port = _free_port()
    tonk = Path(sys.executable).with_name("tonk")
    caps = [
        "--max-budget",
        "100000",
        "--max-samples",
        "100000",
        "--max-candidates",
        "10",
        "--max-seconds",
        "300",
    ]
    p = subprocess.Popen(
        [str(tonk), "serve", "--port", str(port), *caps], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    answer: dict[str, Any] = {}

    def slow_request() -> None:
        rec = to_record(new_game(make_rules(), 2, seed=1))
        r = httpx.post(
            f"http://127.0.0.1:{port}/api/agent-action", json={"agent": SLOW, "record": rec}, timeout=60
        )
        answer["status"], answer["detail"] = r.status_code, r.json()["detail"]

    try:
        for _ in range(600):
            try:
                httpx.get(f"http://127.0.0.1:{port}/api/rules", timeout=1)
                break
            except httpx.HTTPError:
                time.sleep(0.1)
        client = threading.Thread(target=slow_request)
        client.start()
        time.sleep(1.5)  # the search is running
        assert client.is_alive()
        t0 = time.monotonic()
        os.kill(p.pid, signal.SIGTERM)
        p.wait(timeout=15)
        assert time.monotonic() - t0 < 5
        client.join(timeout=15)
        assert answer == {"status": 503, "detail": "the server is shutting down; nothing was changed"}
        assert p.stderr is not None and b"Traceback" not in p.stderr.read()
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


def test_a_broken_agent_file_is_refused_at_startup(tmp_path: Path) -> None:
    bad = tmp_path / "cut.npz"
    bad.write_bytes(b"PK\x03\x04 truncated")
    with pytest.raises(ValueError, match=r"--agents npz:.*cut.npz: .*not a readable"):
        create_app(agents=[f"npz:{bad}"])


def test_a_search_past_the_time_limit_stops_with_a_503_and_changes_nothing() -> None:
    limits = Limits(max_budget=100000, max_samples=100000, max_candidates=10, max_seconds=1.0)
    c = TestClient(create_app(limits=limits))
    rec = to_record(new_game(make_rules(), 2, seed=1))
    r = c.post("/api/agent-action", json={"agent": SLOW, "record": rec})
    assert r.status_code == 503 and "--max-seconds" in r.json()["detail"] and "retry-after" in r.headers
    assert c.post("/api/agent-action", json={"agent": "heuristic:greedy", "record": rec}).status_code == 200
    made = c.post("/api/games", json={"agents": [SLOW], "seat": 1, "seed": 2})
    assert made.status_code == 503 and c.app.state.lobby.games == {}
    assert "within 1 s of its arrival" in c.get("/openapi.json").json()["info"]["description"]


# -- work stops when its client goes away or the server shuts down ---------------------------------
async def _call(app: Any, method: str, path: str, body: dict[str, Any] | None, gone_after: float) -> int:
    """Send one request straight to the ASGI app; the client disconnects ``gone_after`` seconds in.

    Returns the status the app answered (nobody would read it).
    """
    t0 = time.monotonic()
    messages = [
        {"type": "http.request", "body": json.dumps(body).encode() if body else b"", "more_body": False}
    ]
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        if messages:
            return messages.pop()
        while time.monotonic() - t0 < gone_after:
            await asyncio.sleep(0.01)
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "method": method,
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "scheme": "http",
        "http_version": "1.1",
        "server": ("testserver", 80),
        "client": ("testclient", 50000),
        "headers": [(b"content-type", b"application/json"), (b"host", b"testserver")],
    }
    await app(scope, receive, send)
    return int(sent[0]["status"])


def test_a_request_whose_client_goes_away_stops_its_work_and_changes_nothing() -> None:
    above_table()  # built once per process (seconds); no deadline can stop it
    app = create_app(limits=HIGH)
    rec = to_record(new_game(make_rules(), 2, seed=1))
    t0 = time.monotonic()
    status = asyncio.run(_call(app, "POST", "/api/agent-action", {"agent": SLOW, "record": rec}, 0.5))
    assert status == 503 and time.monotonic() - t0 < 3

    # a new game whose agents move first: stopped, and no game was made
    t0 = time.monotonic()
    body = {"players": 3, "agents": [SLOW], "seat": 2, "seed": 4}
    assert asyncio.run(_call(app, "POST", "/api/games", body, 0.5)) == 503
    assert time.monotonic() - t0 < 3 and app.state.lobby.games == {}

    # a move the agents answer: stopped, and the game is as it was
    c = TestClient(app)
    made = c.post("/api/games", json={"players": 2, "agents": [SLOW], "seat": 0, "seed": 4})
    assert made.status_code == 201, made.text
    gid = made.json()["game_id"]
    for _ in range(5):  # draw (or take), then discard: the agent's turn comes after the discard
        view = c.get(f"/api/games/{gid}").json()["view"]
        legal = view["legal_actions"]
        move = next((a for a in legal if a.startswith("discard")), "draw" if "draw" in legal else None)
        if move is None or move.startswith("discard"):
            break
        assert c.post(f"/api/games/{gid}/actions", json={"action": move}).status_code == 200
    assert move is not None and move.startswith("discard"), legal
    before = c.get(f"/api/games/{gid}").json()
    t0 = time.monotonic()
    assert asyncio.run(_call(app, "POST", f"/api/games/{gid}/actions", {"action": move}, 0.5)) == 503
    assert time.monotonic() - t0 < 3
    assert c.get(f"/api/games/{gid}").json() == before


def test_work_is_refused_while_the_server_shuts_down() -> None:
    app = create_app()
    client = TestClient(app)
    gid = _game(client)
    before = client.get(f"/api/games/{gid}").json()
    app.state.lobby.closing.set()  # what SIGTERM does first
    rec = to_record(new_game(make_rules(), 2, seed=1))
    for r in [
        client.post("/api/games", json={"agents": ["random"]}),
        client.post(f"/api/games/{gid}/actions", json={"action": "draw"}),
        client.post("/api/agent-action", json={"agent": "random", "record": rec}),
    ]:
        assert r.status_code == 503 and "shutting down" in r.json()["detail"], r.text
    assert client.get(f"/api/games/{gid}").json() == before


# -- flags and echoes ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("limits", "flag"),
    [
        ({"max_seconds": math.nan}, "--max-seconds"),
        ({"max_seconds": -1.0}, "--max-seconds"),
        ({"max_body": 0}, "--max-body"),
        ({"max_budget": -5}, "--max-budget"),
        ({"max_candidates": True}, "--max-candidates"),
    ],
)
def test_bad_limits_are_refused_naming_the_flag(limits: dict[str, Any], flag: str) -> None:
    with pytest.raises(ValueError, match=flag):
        Limits(**limits)


def test_serve_refuses_bad_flags_and_a_busy_port_with_a_message() -> None:
    tonk = Path(sys.executable).with_name("tonk")
    r = subprocess.run(
        [str(tonk), "serve", "--max-seconds", "nan"], capture_output=True, text=True, timeout=60
    )
    assert (
        r.returncode == 2
        and "--max-seconds=nan is invalid; allowed: a finite number" in r.stderr
        and "Traceback" not in r.stderr
    )
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        with pytest.raises(ValueError, match=f"cannot listen on 127.0.0.1:{port}: "):
            listen("127.0.0.1", port)
    with pytest.raises(ValueError, match="cannot listen on no.such.host.invalid"):
        listen("no.such.host.invalid", 0)


def test_errors_never_echo_long_input(client: TestClient, tmp_path: Path) -> None:
    long = "x" * 20_000
    for r in [
        client.post("/api/games", json={"agents": [f"npz:{tmp_path}/{long}.npz"]}),
        client.post("/api/games", json={"agents": [f"heuristic:expert?{long}=1"]}),
        client.post("/api/games", json={"options": {long: 1}}),
        client.post("/api/games", json={"players": long}),
        client.get(f"/api/games/{'g' * 5000}"),
        client.post(f"/api/games/{_game(client)}/actions", json={"action": 10**3000}),
    ]:
        assert 400 <= r.status_code < 500 and len(r.text) < 1500, (r.status_code, len(r.text), r.text[:200])


def test_the_limits_are_in_the_routes_descriptions(client: TestClient) -> None:
    paths = client.get("/openapi.json").json()["paths"]
    for path in ["/api/games", "/api/games/{gid}/actions", "/api/games/{gid}/next", "/api/agent-action"]:
        post = paths[path]["post"]
        assert "search:ismcts budget <= 50" in post["description"] and "503" in post["responses"], path


def test_a_belief_model_given_by_path_is_refused(client: TestClient) -> None:
    """``belief=`` may name a file; a client may only use the shipped names (an unknown name is a 400)."""
    rec = to_record(new_game(make_rules(), 2, seed=1))
    r = client.post("/api/agent-action", json={"agent": "heuristic:expert?belief=/etc/passwd", "record": rec})
    assert r.status_code == 403 and "names a file" in r.json()["detail"], r.text
    r = client.post("/api/agent-action", json={"agent": "heuristic:expert?belief=nope", "record": rec})
    assert r.status_code == 400 and "unknown belief model 'nope'" in r.json()["detail"], r.text
