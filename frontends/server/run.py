"""Running the app: the listening socket, the Host names served by default, uvicorn with read timeouts.

uvicorn (its h11 protocol) has no limit on how long a client may take to
send a request's headers: :func:`timed_protocol` adds one, closing a
connection whose request line and headers are not complete within
``header_seconds`` of its opening (or of their first byte, on a kept-alive
connection, which uvicorn's keep-alive timeout closes while it is idle),
with a 408. The body's time limit is :class:`~.middleware.BodyGuard`'s.
"""

from __future__ import annotations

import asyncio
import json
import socket
import time
from collections.abc import Sequence
from typing import Any, cast

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from .app import create_app
from .limits import Limits
from .lobby import Lobby

LOOPBACK = ("127.0.0.1", "localhost", "::1")
WILDCARD = ("0.0.0.0", "::", "")


def loopback_hosts(host: str) -> list[str]:
    """The ``Host`` names (besides IP addresses, always served) a server bound to ``host`` answers.

    A loopback bind answers ``localhost``; a wildcard bind (``0.0.0.0``,
    ``::``) also this machine's name; any other bind the name it was given.
    ``--allowed-hosts`` adds more.
    """
    names = {"localhost"}
    if host in WILDCARD:
        names |= {socket.gethostname().lower()}
    elif host not in LOOPBACK:
        names |= {host.lower()}
    return sorted(names)


def listen(host: str, port: int) -> socket.socket:
    """A TCP socket bound to ``host:port`` (a ``ValueError`` saying why when it cannot be)."""
    sock = None
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        sock = socket.socket(family, kind, proto)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
    except OSError as e:
        if sock is not None:
            sock.close()
        raise ValueError(f"cannot listen on {host}:{port}: {e.strerror or e}") from None
    return sock


def timed_protocol(header_seconds: float) -> type[asyncio.Protocol]:
    """uvicorn's h11 protocol, closing a connection whose request headers take over ``header_seconds``."""

    class TimedH11Protocol(H11Protocol):
        """H11Protocol with a time limit on each request's line and headers."""

        _header_timer: asyncio.TimerHandle | None = None

        def _arm(self) -> None:
            self._disarm()
            self._header_timer = self.loop.call_later(header_seconds, self._headers_late)

        def _disarm(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def _headers_late(self) -> None:
            self._header_timer = None
            if self.transport.is_closing() or self.conn.their_state is not h11.IDLE:
                return
            if self.conn.our_state is h11.IDLE:  # no response of ours is under way: say why
                detail = (
                    f"the request headers were not sent within {header_seconds:g} s; closing the connection"
                )
                body = json.dumps({"detail": detail}).encode()
                head = (
                    "HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\n"
                    f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
                )
                self.transport.write(head.encode() + body)
            self.transport.close()

        def connection_made(self, transport: Any) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._arm()  # uvicorn sets no timer on a new connection

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self.conn.their_state is not h11.IDLE:  # the headers are in
                if self.scope is not None:  # the request's time limit counts from now (routes.run_work)
                    cast(dict, self.scope).setdefault("tonk.arrived", time.monotonic())
                self._disarm()
            elif self._header_timer is None and not self.transport.is_closing():
                self._arm()  # part of the next request's headers on a kept-alive connection

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

    return TimedH11Protocol


def serve(
    host: str = "127.0.0.1",
    port: int = 8000,
    agents: Sequence[str] = (),
    max_games: int = 100,
    idle_timeout: float = 3600.0,
    limits: Limits | None = None,
    allowed_hosts: Sequence[str] = (),
) -> None:
    """Run the server with uvicorn until interrupted (SIGTERM or Ctrl-C stop it within a few seconds)."""
    if isinstance(port, bool) or not 0 <= port <= 65535:
        raise ValueError(f"--port must be 0..65535, got {port}")
    limits = limits or Limits()
    hosts = sorted({*loopback_hosts(host), *allowed_hosts})
    sock = listen(host, port)
    try:  # the agents' process starts last: nothing is left running when a flag or a file is refused
        app = create_app(
            agents,
            max_games=max_games,
            idle_timeout=idle_timeout,
            limits=limits,
            allowed_hosts=hosts,
            isolate=True,
        )
    except BaseException:
        sock.close()
        raise
    lobby: Lobby = app.state.lobby

    class Server(uvicorn.Server):
        """uvicorn's server, which also stops the running requests' work on SIGTERM or Ctrl-C."""

        def handle_exit(self, sig: int, frame: Any) -> None:
            lobby.closing.set()
            super().handle_exit(sig, frame)

    port = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    print(
        f"Tonk: open http://{shown}:{port}/ to play (API docs at /docs); Ctrl-C stops the server", flush=True
    )
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        timeout_graceful_shutdown=3,
        http=timed_protocol(limits.header_seconds),
    )
    try:
        Server(config).run(sockets=[sock])
    finally:
        app.state.queue.close()
        app.state.desk.close()
