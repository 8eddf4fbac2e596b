"""The server's bounds: work caps, body size, Host header, strict actions, short echoes, SIGTERM."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="the server tests need fastapi (pip install 'tonk-rl[serve]')")

with warnings.catch_warnings():  # starlette's TestClient warns about httpx on import
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from frontends.server import Limits, create_app, loopback_hosts  # noqa: E402 - must follow importorskip
from tonk_env.engine import make_rules, new_game, to_record  # noqa: E402 - must follow importorskip


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
    assert c.get("/api/rules", headers={"host": "evil.example"}).status_code == 400
    assert "evil.example" not in loopback_hosts("127.0.0.1") and "0.0.0.0" in loopback_hosts("0.0.0.0")


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


def test_sigterm_stops_the_server_within_seconds() -> None:
    httpx = pytest.importorskip("httpx")
    port = _free_port()
    tonk = Path(sys.executable).with_name("tonk")
    p = subprocess.Popen(
        [str(tonk), "serve", "--port", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        for _ in range(300):
            try:
                httpx.get(f"http://127.0.0.1:{port}/api/rules", timeout=1)
                break
            except httpx.HTTPError:
                time.sleep(0.1)
        t0 = time.monotonic()
        os.kill(p.pid, signal.SIGTERM)
        p.wait(timeout=15)
        assert time.monotonic() - t0 < 10
    finally:
        if p.poll() is None:
            p.kill()


def test_a_broken_agent_file_is_refused_at_startup(tmp_path: Path) -> None:
    bad = tmp_path / "cut.npz"
    bad.write_bytes(b"PK\x03\x04 truncated")
    with pytest.raises(ValueError, match=r"--agents npz:.*cut.npz: .*not a readable"):
        create_app(agents=[f"npz:{bad}"])


def test_a_search_past_the_time_limit_stops_with_a_503_and_changes_nothing() -> None:
    c = TestClient(create_app(limits=Limits(max_seconds=0.0)))
    rec = to_record(new_game(make_rules(), 2, seed=1))
    r = c.post("/api/agent-action", json={"agent": "search:ismcts?budget=200&takes=all", "record": rec})
    assert r.status_code == 503 and "--max-seconds" in r.json()["detail"]
    assert c.post("/api/agent-action", json={"agent": "heuristic:greedy", "record": rec}).status_code == 200
    made = c.post("/api/games", json={"agents": ["search:ismcts?budget=200&takes=all"], "seat": 1, "seed": 2})
    assert made.status_code == 503
    assert "0 s" in c.get("/openapi.json").json()["info"]["description"]
