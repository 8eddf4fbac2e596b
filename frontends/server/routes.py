"""The API's routes: the cheap ones answer on the event loop, the ones that make agents work queue it.

Cheap routes (the page, rules, agents, a game's view, its record, ending
it) never wait for an agent: a view is the answer the game's last committed
request published. The others check what they can at once (4xx), then hand
the agents' work to the :class:`~.work.WorkQueue` and watch it
(:func:`run_work`): until its deadline (``max_seconds`` from the request's
arrival, less :data:`ANSWER_SECONDS` to answer in time), its client's
presence and the server's shutdown. The lobby and the desk refuse in the
games' words (:mod:`.errors`); :data:`STATUS` gives each refusal its HTTP
status (:func:`add_refusal_answers`).
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from fastapi import APIRouter, FastAPI, HTTPException, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response

from agents.registry import describe_agents
from tonk_env.agent import DecisionTimeout
from tonk_env.engine import OPTION_NAMES, PRESETS, TonkRules

from ..replay import replay_frames
from .errors import AgentFailed, BadRequest, NoSuchGame, NotAllowed, NotNow
from .limits import clip
from .lobby import Game, Lobby, Refused
from .models import ActionIn, AgentQuery, NewGame, ReplayQuery, responses
from .play import DeskLike, new_rules, query_position
from .work import Busy, Work, WorkQueue

PAGE = Path(__file__).parent.parent / "static" / "index.html"
REPLAY_PAGE = PAGE.with_name("replay.html")
#: Seconds between two looks at a running request (client gone? past its deadline? shutting down?).
WATCH_SECONDS = 0.1
#: Seconds before the time limit (a tenth of it at most) at which a request's work stops, to answer in time.
ANSWER_SECONDS = 0.5
SHUTTING_DOWN = "the server is shutting down"
CLIENT_GONE = "the client went away"
T = TypeVar("T")

#: The HTTP status of each refusal of the lobby and the desk.
STATUS: dict[type[Exception], int] = {
    BadRequest: 400,
    NotAllowed: 403,
    NoSuchGame: 404,
    NotNow: 409,
    AgentFailed: 500,
}


async def _refused(request: Request, exc: Exception) -> JSONResponse:
    """A refusal's HTTP answer: its status and its words as the one-line ``detail``."""
    return JSONResponse({"detail": str(exc)}, status_code=STATUS[type(exc)])


def add_refusal_answers(app: FastAPI) -> None:
    """Answer each refusal of :mod:`.errors` with its status from :data:`STATUS`."""
    for cls in STATUS:
        app.exception_handler(cls)(_refused)


def client_of(request: Request) -> str:
    """The key a client's shares are counted under: its address."""
    return request.client.host if request.client else "unknown"


async def run_work(
    request: Request, lobby: Lobby, queue: WorkQueue, fn: Callable[[Work], T], key: str | None = None
) -> T:
    """Queue ``fn(work)`` for the request's client (and game ``key``) and wait for it, within the deadline.

    A full queue or share is a 429/503 with ``Retry-After``; a request still
    waiting at its deadline is taken off the queue (503); a running one past
    it, whose client went away or whose server shuts down, is stopped (503);
    nothing was changed in any of these cases.
    """
    arrived = request.scope.get("tonk.arrived", time.monotonic())
    if lobby.closing.is_set():
        raise Refused(503, f"{SHUTTING_DOWN}; nothing was changed", 1)
    limit = lobby.limits.max_seconds
    work = Work(arrived + limit - min(ANSWER_SECONDS, limit / 10))
    try:
        job = queue.submit(client_of(request), key, lambda: fn(work))
    except Busy as e:
        raise Refused(e.status, e.detail, e.retry_after) from None
    task = asyncio.wrap_future(job.future)
    try:
        while not task.done():
            await asyncio.wait({task}, timeout=max(0.0, min(WATCH_SECONDS, work.deadline - time.monotonic())))
            if task.done():
                break
            reason = SHUTTING_DOWN if lobby.closing.is_set() else work.reason
            if reason is None and time.monotonic() >= work.deadline:
                reason = f"past the time limit of {lobby.limits.max_seconds:g} s (tonk serve --max-seconds)"
            if reason is None and await request.is_disconnected():
                reason = CLIENT_GONE
            if reason is not None:
                if queue.cancel(job):
                    waited = time.monotonic() - arrived
                    raise Refused(
                        503,
                        f"waited {waited:.1f} s for an agent worker: {reason}; nothing was changed",
                        queue.retry_after(),
                    )
                work.stop(reason)  # again at every look: a decision started since sets its own deadline
    except asyncio.CancelledError:  # uvicorn gave up on the request: stop its work too
        if not queue.cancel(job):
            work.stop(SHUTTING_DOWN)
        raise
    try:
        return task.result()
    except DecisionTimeout:
        if work.reason is None:
            raise
        raise Refused(503, f"{work.reason}; nothing was changed", queue.retry_after()) from None


def add_page_route(router: APIRouter) -> None:
    """``GET /``: the browser game (kept out of the OpenAPI schema)."""

    @router.get("/", response_class=HTMLResponse, include_in_schema=False)
    async def page() -> HTMLResponse:
        return HTMLResponse(PAGE.read_text(encoding="utf-8"))

    @router.get("/replay", response_class=HTMLResponse, include_in_schema=False)
    async def replay_page() -> HTMLResponse:
        return HTMLResponse(REPLAY_PAGE.read_text(encoding="utf-8"))


def add_replay_route(router: APIRouter) -> None:
    """``POST /api/replay``: every position of a recorded hand (:func:`frontends.replay.replay_frames`)."""

    @router.post(
        "/api/replay",
        summary="a hand record as every position from one seat's view (or all open)",
        responses=responses(400, 413, 422),
    )
    def post_replay(body: ReplayQuery) -> dict[str, Any]:
        try:
            return replay_frames(body.record, body.seat)
        except (ValueError, KeyError, TypeError) as e:
            what = f"missing field {e}" if isinstance(e, KeyError) else str(e)
            raise HTTPException(400, f"cannot replay the record: {clip(what, 300)}") from None


def add_catalog_routes(router: APIRouter, lobby: Lobby) -> None:
    """``GET /api/agents`` and ``GET /api/rules``: what a new game may be made of."""
    agents = {
        "offered": lobby.offered,
        "allowed_paths": [f"{k}:{p}" for k, p in sorted(lobby.allowed_paths)],
        "registered": describe_agents(),
    }
    rules = {
        "presets": {k: dict(v) for k, v in PRESETS.items()},
        "options": list(OPTION_NAMES),
        "defaults": TonkRules().to_dict(),
    }

    @router.get("/api/agents", summary="agent specs offered, and the registered kinds", responses=responses())
    async def list_agents() -> dict[str, Any]:
        return agents

    @router.get("/api/rules", summary="rules presets and options", responses=responses())
    async def list_rules() -> dict[str, Any]:
        return rules


def check_new_game(lobby: Lobby, body: NewGame, client: str) -> TonkRules:
    """Everything about a new game that can be checked without the agents (4xx if bad)."""
    lobby.make_room(client)
    rules = new_rules(body)
    for spec in body.agents or [lobby.offered[0]]:
        lobby.check_agent(spec)
    return rules


def add_game_routes(router: APIRouter, lobby: Lobby, queue: WorkQueue, desk: DeskLike) -> None:
    """``/api/games``: start, view, play, deal, record and end the lobby's games."""
    limits = lobby.limits.describe()

    @router.post(
        "/api/games",
        status_code=201,
        summary="start a game; the agents play until it is your turn",
        description=limits,
        responses=responses(403, 422, 429, 503),
    )
    async def new_game(body: NewGame, request: Request) -> dict[str, Any]:
        client = client_of(request)
        rules = check_new_game(lobby, body, client)  # at once: the lobby's room, the rules, the agents
        gid = secrets.token_urlsafe(12)
        cmd = {
            "op": "new",
            "gid": gid,
            "rules": rules,
            "players": body.players,
            "seat": body.seat,
            "specs": body.agents or [lobby.offered[0]],
            "seed": body.seed,
        }
        try:
            answer = await run_work(request, lobby, queue, lambda w: desk.run(cmd, w))
            game = Game(gid, body.seat, client, answer["out"], answer["record"])
            lobby.add(game)
        except BaseException:
            desk.drop(gid)  # the desk may have seated it (or may still): it is nobody's
            raise
        return game.out

    @router.get("/api/games/{gid}", summary="your seat's view of a game", responses=responses(404, 422))
    async def get_game(gid: str) -> dict[str, Any]:
        return lobby.get(gid).out

    @router.post(
        "/api/games/{gid}/actions",
        summary="play your move; the agents answer",
        description=limits,
        responses=responses(404, 409, 422, 429, 503),
    )
    async def post_action(gid: str, body: ActionIn, request: Request) -> dict[str, Any]:
        game = lobby.get(gid)
        cmd = {"op": "move", "gid": gid, "action": body.action, "seat": body.seat}
        answer = await run_work(request, lobby, queue, lambda w: desk.run(cmd, w), key=gid)
        return game.publish(answer)

    @router.post(
        "/api/games/{gid}/next",
        summary="deal the next hand of a game",
        description=limits,
        responses=responses(404, 409, 422, 429, 503),
    )
    async def next_hand(gid: str, request: Request) -> dict[str, Any]:
        game = lobby.get(gid)
        if not game.over:
            raise HTTPException(409, "the hand is not over yet")
        cmd = {"op": "next", "gid": gid}
        answer = await run_work(request, lobby, queue, lambda w: desk.run(cmd, w), key=gid)
        return game.publish(answer)

    @router.get(
        "/api/games/{gid}/record",
        summary="the record of a finished hand (deck included)",
        responses=responses(404, 409, 422),
    )
    async def get_record(gid: str) -> dict[str, Any]:
        game = lobby.get(gid)
        if not game.over or game.record is None:
            raise HTTPException(409, "the record holds the deck: it is served once the hand is over")
        return game.record

    @router.delete("/api/games/{gid}", status_code=204, summary="end a game", responses=responses(404, 422))
    async def delete_game(gid: str) -> Response:
        lobby.remove(gid)
        return Response(status_code=204)


def add_agent_route(router: APIRouter, lobby: Lobby, queue: WorkQueue, desk: DeskLike) -> None:
    """``POST /api/agent-action``: an agent's move in any position, with no game kept."""

    @router.post(
        "/api/agent-action",
        summary="stateless: an agent's move in the position a hand record reaches",
        description=lobby.limits.describe(),
        responses=responses(403, 409, 422, 429, 503),
    )
    async def agent_action(body: AgentQuery, request: Request) -> dict[str, Any]:
        lobby.check_agent(body.agent)
        s = query_position(body)  # at once: 400/409 for a record that does not replay or has no move
        cmd = {"op": "ask", "spec": body.agent, "record": body.record, "seed": body.seed}
        answer = await run_work(request, lobby, queue, lambda w: desk.run(cmd, w))
        a = int(answer["action"])
        return {"seat": s.cur, "action": s.table.name(a), "action_id": a}
