"""The FastAPI app of ``tonk serve``: the routes, their error answers, the middleware and the work queue."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from tonk_env.agent import DecisionTimeout

from .child import ChildDesk
from .limits import MAX_TEXT, Limits, clip
from .lobby import Lobby
from .middleware import BodyGuard, HostGuard, Methods
from .play import Desk, DeskLike
from .routes import (
    add_agent_route,
    add_catalog_routes,
    add_game_routes,
    add_page_route,
    add_refusal_answers,
    add_replay_route,
)
from .work import WorkQueue

DESCRIPTION = (
    "Play Tonk against agents over HTTP/JSON, or ask an agent for its move (the browser game is at /). "
    "Every error is a JSON object with a one-line `detail`."
)


def _plain(value: Any) -> Any:
    """``value`` with every non-finite float written as a string (JSON cannot hold them)."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _clip_input(error: dict[str, Any]) -> dict[str, Any]:
    """A validation error whose echoed ``input`` is cut to about 100 characters (and is plain JSON)."""
    error = _plain(error)
    if "input" in error:
        text = json.dumps(error["input"])
        if len(text) > MAX_TEXT:
            error = {**error, "input": clip(text)}
    return error


async def _timed_out(request: Request, exc: DecisionTimeout) -> JSONResponse:
    """503 when the agents' decisions ran past the server's time limit (nothing was changed)."""
    limit = request.app.state.lobby.limits.max_seconds
    detail = (
        f"the request's agents' decisions ran past its {limit:g} s (tonk serve --max-seconds, counted from "
        "its arrival); nothing was changed"
    )
    retry = request.app.state.queue.retry_after()
    return JSONResponse({"detail": detail}, status_code=503, headers={"Retry-After": str(retry)})


async def _invalid_request(request: Request, exc: RequestValidationError) -> JSONResponse:
    """422 with one readable ``detail`` line naming every bad field, and the errors themselves."""
    errors = [_clip_input(e) for e in jsonable_encoder(exc.errors())]
    parts = []
    for e in errors:
        where = ".".join(str(x) for x in e.get("loc", ()) if x != "body") or "body"
        parts.append(f"{where}: {e.get('msg', 'invalid')}")
    return JSONResponse({"detail": "invalid request: " + "; ".join(parts), "errors": errors}, status_code=422)


def create_app(
    agents: Sequence[str] = (),
    max_games: int = 100,
    idle_timeout: float = 3600.0,
    limits: Limits | None = None,
    allowed_hosts: Sequence[str] | None = None,
    isolate: bool = False,
) -> FastAPI:
    """The FastAPI app of ``tonk serve`` (``agents``: offered specs; path kinds form the allow-list).

    ``limits`` bound each request's work, time and size and each client's
    share; ``allowed_hosts`` (when given) is the allow-list of ``Host`` names
    besides IP addresses (``tonk serve`` always gives one: see
    :func:`~.run.loopback_hosts`). With ``isolate``, the games' tables and
    agents live in a child process (:mod:`.child`; ``tonk serve`` does this;
    ``app.state.desk.close()`` ends it), else in this one.
    """
    limits = limits or Limits()
    lobby = Lobby(agents, max_games, idle_timeout, limits)  # checks the flags and the agent files first
    desk: DeskLike = ChildDesk(limits.workers, lobby.offered) if isolate else Desk(limits.workers)
    lobby.on_drop = desk.drop
    if isinstance(desk, ChildDesk):
        desk.on_restart = lobby.forget_all
    queue = WorkQueue(limits.workers, limits.max_queue, limits.max_client_work, limits.max_seconds)
    app = FastAPI(
        title="Tonk RL",
        version="1",
        summary="Play Tonk against agents, or ask an agent for its move.",
        description=DESCRIPTION + "\n\n" + limits.describe(),
    )
    app.state.lobby = lobby
    app.state.queue = queue
    app.state.desk = desk
    # the last added runs first: Host, then methods, then the body
    app.add_middleware(BodyGuard, max_body=limits.max_body, body_seconds=limits.body_seconds)
    app.add_middleware(Methods, routes=app.router.routes)
    if allowed_hosts is not None:
        app.add_middleware(HostGuard, allowed=list(allowed_hosts))
    app.exception_handler(RequestValidationError)(_invalid_request)
    app.exception_handler(DecisionTimeout)(_timed_out)
    add_refusal_answers(app)
    add_page_route(app.router)
    add_catalog_routes(app.router, lobby)
    add_game_routes(app.router, lobby, queue, desk)
    add_agent_route(app.router, lobby, queue, desk)
    add_replay_route(app.router)
    return app
