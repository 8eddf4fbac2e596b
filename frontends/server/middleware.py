"""The HTTP plumbing in front of the routes (ASGI middleware), outermost first in ``create_app``.

- :class:`HostGuard`: the ``Host`` header must name this server (a guard
  against DNS rebinding): an IP address, or a name on the allow-list;
  anything else is a JSON 400 naming ``--allowed-hosts``.
- :class:`Methods`: ``OPTIONS`` on any path answers 204 with an ``Allow``
  header listing every method of every route on it; a method no route of the
  path takes is a JSON 405 with the same ``Allow``.
- :class:`BodyGuard`: a body over ``max_body`` bytes is a 413 (unread beyond
  that), one not sent within ``body_seconds`` a 408 that closes the
  connection, and a JSON body with a number that is not finite (``NaN``,
  ``Infinity``, ``1e400``) or that is not JSON at all a 422 that does not
  echo it.

Errors here have the routes' shape: ``{"detail": "..."}`` (a 422 adds
``errors``).
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import time
from collections.abc import Sequence
from typing import Any

from .limits import clip

Scope = dict[str, Any]


async def send_json(
    send: Any, status: int, body: dict[str, Any], headers: Sequence[tuple[bytes, bytes]] = ()
) -> None:
    """Answer ``status`` with the JSON ``body`` (and ``headers``)."""
    data = json.dumps(body).encode()
    head = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode()), *headers]
    await send({"type": "http.response.start", "status": status, "headers": head})
    await send({"type": "http.response.body", "body": data})


def header(scope: Scope, name: bytes) -> bytes | None:
    """The first value of header ``name`` (lower case), if any."""
    for key, value in scope.get("headers", ()):
        if key == name:
            return bytes(value)
    return None


# -- Host ----------------------------------------------------------------------------------------------
def host_name(value: str) -> str:
    """The host part of a ``Host`` header (``[::1]:8000`` -> ``::1``, ``a.b:80`` -> ``a.b``), lower case."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1 : value.find("]")] if "]" in value else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


def is_address(name: str) -> bool:
    """Whether ``name`` is an IPv4 or IPv6 address (no DNS name can rebind to it)."""
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


class HostGuard:
    """ASGI middleware: answer only ``Host`` headers that are IP addresses or names on ``allowed``.

    ``allowed`` holds names (``localhost``), patterns (``*.example.org``
    matches its subdomains) or ``*`` (any name: no guard).
    """

    def __init__(self, app: Any, allowed: Sequence[str]) -> None:
        self.app = app
        self.names = {n.lower() for n in allowed if not n.startswith("*")}
        self.suffixes = tuple(n.lower()[1:] for n in allowed if n.startswith("*.") and len(n) > 2)
        self.any = "*" in allowed

    def allows(self, name: str) -> bool:
        """Whether ``name`` (a ``Host`` without its port) is served."""
        return self.any or is_address(name) or name in self.names or name.endswith(self.suffixes)

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        """Refuse a request whose Host is not served with a JSON 400 naming ``--allowed-hosts``."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        raw = (header(scope, b"host") or b"").decode("latin-1")
        name = host_name(raw)
        if self.allows(name):
            await self.app(scope, receive, send)
            return
        shown = clip(raw) if raw else "(none)"
        detail = (
            f"Host {shown!r} is not served here (a guard against DNS rebinding); to accept it, start the "
            f"server with tonk serve --allowed-hosts {clip(name or 'NAME')}"
        )
        await send_json(send, 400, {"detail": detail})


# -- methods -----------------------------------------------------------------------------------------
class Methods:
    """ASGI middleware: ``OPTIONS`` answers the path's methods; an unknown method is a 405 listing them."""

    def __init__(self, app: Any, routes: Sequence[Any]) -> None:
        self.app = app
        self.routes = routes  # the app's routes (read at each request: they are added after this)

    def allowed(self, path: str) -> set[str]:
        """Every method that some route of ``path`` takes (empty: no route has this path)."""
        methods: set[str] = set()
        for route in self.routes:
            regex = getattr(route, "path_regex", None)
            if regex is not None and regex.match(path) and getattr(route, "methods", None):
                methods |= set(route.methods)
        return methods

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        """Answer OPTIONS (204) and unknown methods (405) with a full ``Allow`` header."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        methods = self.allowed(scope["path"])
        method = scope["method"]
        if not methods or (method in methods and method != "OPTIONS"):
            await self.app(scope, receive, send)
            return
        allow = ", ".join(sorted(methods | {"OPTIONS"}))
        headers = [(b"allow", allow.encode())]
        if method == "OPTIONS":
            await send({"type": "http.response.start", "status": 204, "headers": headers})
            await send({"type": "http.response.body", "body": b""})
            return
        detail = f"method {clip(method, 20)} is not allowed on {clip(scope['path'])}; allowed: {allow}"
        await send_json(send, 405, {"detail": detail}, headers)


# -- bodies ------------------------------------------------------------------------------------------
class NotFinite(ValueError):
    """A JSON number that is not a finite double (NaN, Infinity, or beyond ~1.8e308)."""


def _refuse_constant(name: str) -> Any:
    raise NotFinite(name)


def _finite_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise NotFinite("a number too large for a double")
    return value


def json_problem(body: bytes) -> str | None:
    """Why ``body`` is not JSON this API reads (None when it is): not JSON, or a number not finite."""
    try:
        json.loads(body, parse_constant=_refuse_constant, parse_float=_finite_float)
    except NotFinite:
        return "a JSON number must be finite: NaN, Infinity and numbers beyond 1.8e308 are not accepted"
    except json.JSONDecodeError as e:
        return f"the body is not JSON ({e.msg} at line {e.lineno} column {e.colno})"
    except (ValueError, RecursionError) as e:  # integers of over 4300 digits, nesting too deep
        return f"the body is not JSON this server reads ({clip(str(e).splitlines()[0], 120)})"
    return None


def is_json(scope: Scope) -> bool:
    """Whether the request's body is read as JSON (no content type, or a JSON one: FastAPI's rule)."""
    kind = (header(scope, b"content-type") or b"").decode("latin-1").split(";")[0].strip().lower()
    return (
        not kind or kind == "application/json" or (kind.startswith("application/") and kind.endswith("+json"))
    )


class BodyGuard:
    """ASGI middleware: bound a request body's size and time, and check that a JSON body is plain JSON."""

    def __init__(self, app: Any, max_body: int, body_seconds: float) -> None:
        self.app = app
        self.max_body = max_body
        self.body_seconds = body_seconds

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        """Read the body (413 past ``max_body``, 408 past ``body_seconds``, 422 not plain JSON); go on."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        length = header(scope, b"content-length")
        if length is not None and length.isdigit() and int(length) > self.max_body:
            await self._too_large(send)
            return
        body = b""
        more = True
        end = time.monotonic() + self.body_seconds
        while more:
            try:
                message = await asyncio.wait_for(receive(), max(0.0, end - time.monotonic()))
            except asyncio.TimeoutError:
                detail = (
                    f"the request body was not sent within {self.body_seconds:g} s; closing the connection"
                )
                await send_json(send, 408, {"detail": detail}, [(b"connection", b"close")])
                return
            if message["type"] != "http.request":  # the client went away
                return
            body += message.get("body", b"")
            more = message.get("more_body", False)
            if len(body) > self.max_body:
                await self._too_large(send)
                return
        scope.setdefault("tonk.arrived", time.monotonic())  # its headers' arrival, if the server said
        if body and is_json(scope):
            problem = json_problem(body)
            if problem is not None:
                error = {"loc": ["body"], "msg": problem, "type": "json_invalid"}
                await send_json(send, 422, {"detail": f"invalid request: body: {problem}", "errors": [error]})
                return
        sent = False

        async def replay() -> dict[str, Any]:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return dict(await receive())

        await self.app(scope, replay, send)

    async def _too_large(self, send: Any) -> None:
        detail = f"request body larger than {self.max_body} bytes"
        await send_json(send, 413, {"detail": detail}, [(b"connection", b"close")])
