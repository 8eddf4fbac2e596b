"""The server's HTTP plumbing: Host names, OPTIONS and Allow, read timeouts, the OpenAPI contract."""

from __future__ import annotations

import socket
import threading
import time
import warnings
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the server tests need fastapi (pip install 'tonk-rl[serve]')")
uvicorn = pytest.importorskip("uvicorn")

with warnings.catch_warnings():  # starlette's TestClient warns about httpx on import
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from frontends.server import Limits, create_app, listen, loopback_hosts, timed_protocol  # noqa: E402
from tonk_cli.main import main  # noqa: E402


# -- Host ----------------------------------------------------------------------------------------------
def test_a_wildcard_bind_answers_addresses_and_this_machine_and_explains_a_refusal() -> None:
    c = TestClient(create_app(allowed_hosts=loopback_hosts("0.0.0.0")))
    for host in ["192.168.1.20:8000", "10.0.0.1", "[fe80::1]:8000", "localhost:8000", socket.gethostname()]:
        assert c.get("/api/rules", headers={"host": host}).status_code == 200, host
    r = c.get("/api/rules", headers={"host": "rebind.example:8000"})
    assert r.status_code == 400 and r.headers["content-type"] == "application/json"
    assert "tonk serve --allowed-hosts rebind.example" in r.json()["detail"]
    c = TestClient(create_app(allowed_hosts=[*loopback_hosts("0.0.0.0"), "*.example.org"]))
    assert c.get("/api/rules", headers={"host": "tonk.example.org"}).status_code == 200
    assert c.get("/api/rules", headers={"host": "example.org.evil"}).status_code == 400


# -- methods ---------------------------------------------------------------------------------------------
def test_options_and_wrong_methods_list_every_method_of_the_path() -> None:
    c = TestClient(create_app())
    gid = c.post("/api/games", json={"agents": ["random"], "seed": 1}).json()["game_id"]
    r = c.options(f"/api/games/{gid}")
    assert r.status_code == 204 and r.headers["allow"] == "DELETE, GET, OPTIONS"
    r = c.put(f"/api/games/{gid}", json={})
    assert r.status_code == 405 and r.headers["allow"] == "DELETE, GET, OPTIONS"
    assert "allowed: DELETE, GET, OPTIONS" in r.json()["detail"]
    assert c.options("/api/games").headers["allow"] == "OPTIONS, POST"
    assert c.options("/nowhere").status_code == 404


# -- read timeouts on a real server ----------------------------------------------------------------------
@pytest.fixture
def live() -> Iterator[tuple[str, int]]:
    """A uvicorn server on a free loopback port with short header and body time limits."""
    limits = Limits(header_seconds=0.5, body_seconds=0.5)
    sock = listen("127.0.0.1", 0)
    port = sock.getsockname()[1]
    config = uvicorn.Config(
        create_app(limits=limits), log_level="warning", http=timed_protocol(limits.header_seconds)
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    for _ in range(300):
        if server.started:
            break
        time.sleep(0.05)
    yield "127.0.0.1", port
    server.should_exit = True
    thread.join(10)


def _read_all(conn: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (30 s at most)."""
    conn.settimeout(30)
    data = b""
    while chunk := conn.recv(4096):
        data += chunk
    return data


def test_stalled_headers_are_answered_408_and_the_connection_closed(live: tuple[str, int]) -> None:
    with socket.create_connection(live) as conn:
        conn.sendall(b"GET /api/rules HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # the headers never end
        answer = _read_all(conn)
    assert answer.startswith(b"HTTP/1.1 408 ") and b"headers were not sent" in answer
    with socket.create_connection(live) as conn:  # a connection that sends nothing is closed too
        assert _read_all(conn).startswith(b"HTTP/1.1 408 ")
    with socket.create_connection(live) as conn:  # a whole request is answered
        conn.sendall(b"GET /api/rules HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        assert _read_all(conn).startswith(b"HTTP/1.1 200 ")


def test_a_stalled_body_is_answered_408_and_the_connection_closed(live: tuple[str, int]) -> None:
    with socket.create_connection(live) as conn:
        conn.sendall(
            b"POST /api/games HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b'Content-Length: 100\r\n\r\n{"players": '
        )
        answer = _read_all(conn)
    assert answer.startswith(b"HTTP/1.1 408 ") and b"body was not sent" in answer


# -- the OpenAPI document ----------------------------------------------------------------------------------
EXPECTED = {
    ("post", "/api/games"): {"201", "400", "403", "408", "413", "422", "429", "503"},
    ("get", "/api/games/{gid}"): {"200", "400", "404", "408", "413", "422"},
    ("delete", "/api/games/{gid}"): {"204", "400", "404", "408", "413", "422"},
    ("post", "/api/games/{gid}/actions"): {"200", "400", "404", "408", "409", "413", "422", "429", "503"},
    ("post", "/api/games/{gid}/next"): {"200", "400", "404", "408", "409", "413", "422", "429", "503"},
    ("get", "/api/games/{gid}/record"): {"200", "400", "404", "408", "409", "413", "422"},
    ("post", "/api/agent-action"): {"200", "400", "403", "408", "409", "413", "422", "429", "503"},
    ("get", "/api/rules"): {"200", "400", "408", "413"},
    ("get", "/api/agents"): {"200", "400", "408", "413"},
}


def test_the_openapi_document_declares_every_status_and_the_error_shapes() -> None:
    c = TestClient(create_app())
    doc = c.get("/openapi.json").json()
    for (method, path), codes in EXPECTED.items():
        responses = doc["paths"][path][method]["responses"]
        assert set(responses) == codes, (method, path)
        invalid = responses.get("422", {}).get("content", {}).get("application/json", {}).get("schema", {})
        assert invalid in ({}, {"$ref": "#/components/schemas/InvalidOut"}), (method, path)
        for code in {"429", "503"} & codes:
            assert "Retry-After" in responses[code]["headers"]
    invalid = doc["components"]["schemas"]["InvalidOut"]
    assert (
        invalid["properties"]["detail"]["type"] == "string"
        and invalid["properties"]["errors"]["type"] == "array"
    )
    r = c.post("/api/games", json={"players": "two"})
    body: dict[str, Any] = r.json()
    assert r.status_code == 422 and set(body) == {"detail", "errors"} and isinstance(body["detail"], str)


@pytest.mark.parametrize(
    ("flag", "value"),
    [
        ("--workers", "0"),
        ("--max-client-work", "0"),
        ("--max-client-games", "0"),
        ("--header-seconds", "0"),
        ("--body-seconds", "inf"),
    ],
)
def test_serve_refuses_bad_capacity_flags(flag: str, value: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", flag, value]) == 2
    err = capsys.readouterr().err
    assert flag in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
