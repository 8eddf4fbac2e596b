"""``tonk serve``: Tonk over HTTP/JSON (FastAPI), and the browser game at ``/``.

Endpoints (the OpenAPI schema is at ``/openapi.json``, interactive docs at ``/docs``):

=======================================  ====================================================
``GET /``                                the browser game (one static page)
``GET /api/agents``                      agent specs offered, and the registered kinds
``GET /api/rules``                       presets and rule options with their defaults
``POST /api/games``                      new game: rules, players, your seat, agent specs
``GET /api/games/{id}``                  your seat's view, the running score, the hand's log
``POST /api/games/{id}/actions``         play your move (string or id); the agents answer
``POST /api/games/{id}/next``            deal the next hand (the deal passes to the left)
``GET /api/games/{id}/record``           the finished hand's record (deck included)
``DELETE /api/games/{id}``               end a game
``POST /api/agent-action``               stateless: ask any agent for its move in a position
=======================================  ====================================================

A game has one person's seat (``seat``, default 0); every other seat is played
by an agent, automatically, right after each move of the person (and after
the deal), until the person must act or the hand is over. A game's id is a
random token: whoever knows it plays that seat; only that seat's view is
served while the hand runs (``GET /api/games/{id}/record`` refuses until the
hand is over, because a record holds the deck).

``POST /api/agent-action`` takes a hand record (:mod:`tonk_env.engine.record`:
``rules``, ``num_players``, ``dealer``, ``deck``, ``actions``) and optionally
the seat that must be to act. The server replays it, builds the agent from
its spec and asks it; the agent sees only that seat's
:class:`~tonk_env.engine.SeatInfo` (never the deck), but the caller sends the
whole deal. Unseen cards in ``deck`` may be any consistent arrangement.

Every bad request is answered 4xx with ``{"detail": "..."}`` and changes
nothing: 400 illegal action, bad rules or agent spec, a parameter above a cap,
a ``Host`` not allowed; 403 an agent file not allowed; 404 unknown or expired
game; 409 not your turn / hand not over; 413 a body over the size limit; 422
malformed JSON or fields; 429 too many live games. Moves are applied to a
copy of the game that replaces it only when everything succeeded, so a 503
(an agent's decision past the time limit, or the server shutting down) also
changes nothing. Error messages quote input cut to about 100 characters.

Limits: at most ``max_games`` live games; a game unused for ``idle_timeout``
seconds is dropped. Agents loaded from files (path kinds such as
``ppo:PATH``, ``npz:PATH``, ``onnx:DIR``) are allowed only for the paths the
server was started with (``--agents ppo:PATH``); any other path is refused
with 403, whatever the parameters. Built-in agents (``random``,
``heuristic:*``, ``search:*``) are always allowed within the caps of
:class:`Limits`. The agents' work runs in a worker thread with a deadline
(:class:`Work`); it is stopped when the client goes away or the server shuts
down (SIGTERM: the running requests are answered 503 and the process exits
within a few seconds). ``tonk serve`` binds to 127.0.0.1 unless told otherwise.
"""

from __future__ import annotations

import asyncio
import json
import math
import secrets
import socket
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from fastapi import APIRouter, FastAPI, HTTPException, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr
from starlette.concurrency import run_in_threadpool
from starlette.middleware.trustedhost import TrustedHostMiddleware

from agents.peek import refuse_peek
from agents.registry import AgentEntry, KindEntry, describe_agents, lookup, make_agent, resolve_params
from tonk_env.agent import DecisionTimeout
from tonk_env.engine import (
    OPTION_NAMES,
    OVER,
    PRESETS,
    GameState,
    IllegalActionError,
    TonkRules,
    action_from_string,
    make_rules,
    replay,
    to_record,
    view,
)
from tonk_env.odds import above_table
from tonk_env.play import decide, start_hand

from .table import Move, Table, describe_result, move_text

PAGE = Path(__file__).with_name("static") / "index.html"
DEFAULT_AGENTS = ("heuristic:expert", "heuristic:greedy", "heuristic:fast", "random", "search:ismcts")
#: Seconds between two looks at a running request (client gone? shutting down?).
WATCH_SECONDS = 0.1
SHUTTING_DOWN = "the server is shutting down"
CLIENT_GONE = "the client went away"
T = TypeVar("T")


# -- request bodies -----------------------------------------------------------------------------
class NewGame(BaseModel):
    """A new game: the table, the rules and who sits where."""

    model_config = ConfigDict(extra="forbid")

    players: int = Field(2, ge=2, le=6, description="seats at the table")
    rules: str = Field("standard", description="rules preset (see GET /api/rules)")
    options: dict[str, Any] = Field(default_factory=dict, description="rule options changed from the preset")
    seat: int = Field(0, ge=0, le=5, description="the person's seat (seat 0 plays first in the first hand)")
    agents: list[str] = Field(
        default_factory=list,
        description="agent specs for the other seats, cycled (default: the first offered)",
    )
    seed: int | None = Field(None, description="seed of the deals and the agents (default: random)")


class ActionIn(BaseModel):
    """A move of the person's seat."""

    model_config = ConfigDict(extra="forbid")

    action: StrictStr | StrictInt = Field(
        ..., description="an action string ('draw', 'discard 4S', 'hit 9H on 8H') or id (not a boolean)"
    )
    seat: int | None = Field(None, description="must be the game's seat if given")


class AgentQuery(BaseModel):
    """Ask an agent for its move in the position a hand record reaches."""

    model_config = ConfigDict(extra="forbid")

    agent: str = Field(..., description="agent spec, e.g. heuristic:expert")
    record: dict[str, Any] = Field(..., description="a hand record (tonk-record/1) of an unfinished hand")
    seat: int | None = Field(None, description="the seat expected to act (checked if given)")
    seed: int | None = Field(None, description="seed of the agent's random choices (default 0)")


# -- the games ------------------------------------------------------------------------------------
@dataclass
class Game:
    """A live game: a table, the current hand and its public log."""

    gid: str
    table: Table
    seat: int
    state: GameState
    log: list[Move] = field(default_factory=list)
    last_moves: list[Move] = field(default_factory=list)
    seconds: float | None = None  # the time limit of each agent decision
    used: float = field(default_factory=time.monotonic)
    lock: threading.Lock = field(default_factory=threading.Lock)


@dataclass(frozen=True)
class Limits:
    """The bounds on one request's work and size (``tonk serve --max-budget ...``; shown in /openapi.json)."""

    max_budget: int = 1000
    """``search:ismcts`` budget (sampled worlds per searched decision) at most."""
    max_samples: int = 2000
    """``search:ismcts`` drop_samples and ``heuristic:expert`` samples at most."""
    max_candidates: int = 3
    """``search:ismcts`` candidates (discards searched) at most."""
    max_body: int = 65536
    """Request body size in bytes at most (413 above)."""
    max_seconds: float = 10.0
    """Seconds the agents' decisions of one request may take; a search past it stops (503)."""

    def __post_init__(self) -> None:
        for flag, value, least in [
            ("--max-budget", self.max_budget, 0),
            ("--max-samples", self.max_samples, 0),
            ("--max-candidates", self.max_candidates, 0),
            ("--max-body", self.max_body, 1),
        ]:
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise ValueError(f"{flag} must be a whole number >= {least}, got {value!r}")
        if not (isinstance(self.max_seconds, int | float) and 0 <= self.max_seconds < math.inf):
            raise ValueError(f"--max-seconds must be a finite number >= 0, got {self.max_seconds!r}")

    def caps(self) -> dict[tuple[str, str], int]:
        """``{(agent key, parameter): cap}``."""
        return {
            ("search:ismcts", "budget"): self.max_budget,
            ("search:ismcts", "drop_samples"): self.max_samples,
            ("search:ismcts", "candidates"): self.max_candidates,
            ("heuristic:expert", "samples"): self.max_samples,
        }

    def describe(self) -> str:
        """The limits in words, for the OpenAPI description and the docs."""
        caps = ", ".join(f"{key} {param} <= {cap}" for (key, param), cap in self.caps().items())
        return (
            f"Limits per request: {caps} (above: 400); the agents' decisions <= {self.max_seconds:g} s "
            f"(a search past it stops: 503, the game unchanged; so does a request whose client goes "
            f"away); request bodies <= {self.max_body} bytes (413); action strings <= {MAX_TEXT} "
            "characters."
        )


#: Length of an action string at most (400 above).
MAX_TEXT = 100


def clip(text: str, limit: int = MAX_TEXT) -> str:
    """``text`` cut to ``limit`` characters (for echoing input back in an error)."""
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} characters)"


class BodyLimit:
    """ASGI middleware: a request body larger than ``max_body`` bytes is answered 413, unread beyond that."""

    def __init__(self, app: Any, max_body: int) -> None:
        self.app = app
        self.max_body = max_body

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        """Check Content-Length, read at most ``max_body + 1`` bytes, then hand the body on."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", ()):
            if name == b"content-length" and value.isdigit() and int(value) > self.max_body:
                await self._too_large(send)
                return
        body = b""
        more = True
        while more:
            message = await receive()
            if message["type"] != "http.request":  # the client went away
                return
            body += message.get("body", b"")
            more = message.get("more_body", False)
            if len(body) > self.max_body:
                await self._too_large(send)
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
        body = json.dumps({"detail": f"request body larger than {self.max_body} bytes"}).encode()
        headers = [(b"content-type", b"application/json")]
        await send({"type": "http.response.start", "status": 413, "headers": headers})
        await send({"type": "http.response.body", "body": body})


class Work:
    """One request's agent work, which the server stops when its client goes away or it shuts down.

    The work runs in a worker thread and names the agents it is driving
    (:meth:`using`); :meth:`stop` moves the ``deadline`` of those that search
    (:mod:`tonk_env.agent`) into the past, so a running search raises
    ``DecisionTimeout`` at its next sampled world. A decision that starts after
    a stop sets its own deadline again, so the watcher calls :meth:`stop` at
    every look until the work has ended.
    """

    def __init__(self) -> None:
        self.reason: str | None = None
        self._agents: list[Any] = []
        self._lock = threading.Lock()

    @contextmanager
    def using(self, agents: Iterable[Any]) -> Iterator[None]:
        """Let :meth:`stop` reach ``agents`` (held by this work alone) while the block runs."""
        with self._lock:
            if self.reason is not None:
                raise DecisionTimeout(self.reason)
            self._agents = [a for a in agents if hasattr(a, "deadline")]
        try:
            yield
        finally:
            with self._lock:
                for agent in self._agents:
                    agent.deadline = None
                self._agents = []

    def stop(self, reason: str) -> None:
        """Stop the work (the first reason is kept): the agents in use see their deadline passed."""
        with self._lock:
            self.reason = self.reason or reason
            for agent in self._agents:
                agent.deadline = -math.inf


def loopback_hosts(host: str) -> list[str]:
    """The Host names a server bound to ``host`` answers by default (DNS-rebinding guard)."""
    names = (
        {host, "localhost", "127.0.0.1", "[::1]", "::1"}
        if host in ("127.0.0.1", "localhost", "::1")
        else {host}
    )
    return sorted(names)


class Lobby:
    """The live games, their limits and the agent allow-list."""

    def __init__(
        self, agents: Sequence[str], max_games: int, idle_timeout: float, limits: Limits | None = None
    ) -> None:
        if max_games < 1:
            raise ValueError(f"--max-games must be at least 1, got {max_games}")
        if not idle_timeout > 0:
            raise ValueError(f"--idle-timeout must be positive, got {idle_timeout}")
        self.max_games = max_games
        self.idle_timeout = idle_timeout
        self.limits = limits or Limits()
        self.allowed_paths: set[tuple[str, Path]] = set()
        offered = []
        refuse_peek(agents, "the server")
        for spec in agents:
            sp, entry = lookup(spec)
            if isinstance(entry, KindEntry):
                path = Path(sp.name or "").resolve()
                if not path.exists():
                    raise ValueError(f"--agents {spec}: no such file or folder {path}")
                try:
                    make_agent(spec)  # load it once now: a broken file is refused at startup, not per request
                except ValueError as e:
                    raise ValueError(f"--agents {spec}: {e}") from None
                self.allowed_paths.add((sp.kind, path))
            offered.append(spec)
        self.offered = list(dict.fromkeys([*offered, *DEFAULT_AGENTS]))
        self.games: dict[str, Game] = {}
        self.lock = threading.Lock()
        self._agent_cache: OrderedDict[str, Any] = OrderedDict()
        self._agent_lock = threading.Lock()
        #: Set when the server starts shutting down: running work stops, new work is refused (503).
        self.closing = threading.Event()

    def check_agent(self, spec: str) -> str:
        """Raise 400 for an unknown or malformed spec, 403 for a file not on the allow-list."""
        try:
            sp, entry, values = resolve_params(spec)
            refuse_peek([spec], "the server")
        except ValueError as e:
            raise HTTPException(400, clip(str(e), 300)) from None
        if isinstance(entry, AgentEntry):
            for p in entry.params:
                if p.agent_spec and values.get(p.name):
                    self.check_agent(str(values[p.name]))  # a nested spec obeys the same rules
            for (key, name), cap in self.limits.caps().items():
                param = entry.param(name)
                if entry.key == key and param is not None and values.get(name, param.default) > cap:
                    raise HTTPException(
                        400,
                        f"agent {entry.key}: {name}={values.get(name, param.default)} is above this server's "
                        f"cap {cap} (tonk serve --max-budget/--max-samples/--max-candidates)",
                    )
        if isinstance(entry, KindEntry):
            if (sp.kind, Path(sp.name or "").resolve()) not in self.allowed_paths:
                allowed = ", ".join(f"{k}:{p}" for k, p in sorted(self.allowed_paths)) or "none"
                raise HTTPException(
                    403,
                    f"agent {clip(spec)!r} loads a file: only the paths the server was started with "
                    f"(tonk serve --agents KIND:PATH) are allowed; allowed: {allowed}",
                )
        return spec

    def purge(self) -> None:
        """Drop games idle for longer than the timeout."""
        now = time.monotonic()
        with self.lock:
            for gid in [g for g, game in self.games.items() if now - game.used > self.idle_timeout]:
                del self.games[gid]

    def get(self, gid: str) -> Game:
        """The live game ``gid`` (404 if unknown or expired)."""
        self.purge()
        with self.lock:
            game = self.games.get(gid)
        if game is None:
            raise HTTPException(
                404,
                f"no live game {clip(gid)!r} (unknown, deleted, or idle for over {self.idle_timeout:g} s)",
            )
        game.used = time.monotonic()
        return game

    def check_room(self) -> None:
        """429 when ``max_games`` games are live (after dropping the idle ones)."""
        self.purge()
        with self.lock:
            full = len(self.games) >= self.max_games
        if full:
            raise HTTPException(
                429,
                f"too many live games ({self.max_games}); DELETE a finished one or wait "
                f"{self.idle_timeout:g} s for idle games to expire",
            )

    def add(self, game: Game) -> None:
        """Register a new game, or 429 when the table limit is reached."""
        self.check_room()
        with self.lock:
            self.games[game.gid] = game

    def ask(self, spec: str, s: GameState, seed: int | None, work: Work | None = None) -> int:
        """The action agent ``spec`` chooses as the seat to act in ``s`` (stateless queries).

        Agents are built once per spec (the 16 most recent are kept), each used by one
        request at a time; ``seed`` reseeds it first, so an answer depends only on the request.
        """
        work = work or Work()
        with self._agent_lock:
            entry = self._agent_cache.pop(spec, None)
            if entry is None:
                entry = (make_agent(spec, seed=0), threading.Lock())
            self._agent_cache[spec] = entry
            while len(self._agent_cache) > 16:
                self._agent_cache.popitem(last=False)
        agent, lock = entry
        seat = s.cur
        with lock, work.using([agent]):
            start_hand({seat: agent}, s.n, s.rules, {seat: 0 if seed is None else seed})
            try:
                return decide(agent, s, lambda _: f"agent {spec}", time.monotonic() + self.limits.max_seconds)
            except IllegalActionError as e:
                raise HTTPException(500, str(e)) from None


def game_out(game: Game) -> dict[str, Any]:
    """The JSON answer describing a game to its person."""
    s = game.state
    t = game.table
    names = ["you" if p == game.seat else f"seat {p}" for p in range(s.n)]
    return {
        "game_id": game.gid,
        "seat": game.seat,
        "hand_number": t.hands_dealt,
        "hands_played": t.hands_played,
        "scores": list(t.scores),
        "agents": {str(p): spec for p, spec in t.specs.items()},
        "over": s.phase == OVER,
        "summary": describe_result(s, names) if s.phase == OVER else None,
        "moves": [[m.seat, m.text] for m in game.last_moves],
        "log": [[m.seat, m.text] for m in game.log],
        "view": view(s, game.seat),
    }


# -- request handling ------------------------------------------------------------------------------
def _parse_action(s: GameState, action: str | int, max_text: int = MAX_TEXT) -> int:
    """The legal action id ``action`` names in ``s`` (400 if unknown, too long or not legal now)."""
    if isinstance(action, str):
        if len(action) > max_text:
            raise HTTPException(400, f"action string of {len(action)} characters; at most {max_text}")
        try:
            return action_from_string(s, action)
        except IllegalActionError as e:
            raise HTTPException(400, str(e)) from None
    legal = s.legal_actions()
    if action not in legal:
        names = ", ".join(s.table.name(a) for a in legal)
        what = (
            s.table.name(action) if 0 <= action < s.table.size else f"id {clip(str(action))} (out of range)"
        )
        raise HTTPException(400, f"action {what} is not legal now; legal actions: {names}")
    return action


def _score_if_over(table: Table, s: GameState) -> None:
    """Add the hand's payoffs to the table's score once it is over."""
    if s.phase == OVER:
        table.score(s)


def _new_rules(body: NewGame) -> TonkRules:
    """The rules of a new game, checked for its player count and seat (400 if bad)."""
    try:
        rules = make_rules(body.rules, **body.options)
        rules.check_players(body.players)
    except (ValueError, TypeError) as e:
        raise HTTPException(400, clip(str(e), 300)) from None
    if body.seat >= body.players:
        raise HTTPException(400, f"seat must be 0..{body.players - 1} for {body.players} players")
    return rules


def start_game(lobby: Lobby, body: NewGame, work: Work | None = None) -> Game:
    """Seat a new game, deal its first hand and let the agents play until the person must act."""
    work = work or Work()
    lobby.check_room()
    rules = _new_rules(body)
    specs = body.agents or [lobby.offered[0]]
    for spec in specs:
        lobby.check_agent(spec)
    try:
        table = Table(rules, body.players, [body.seat], specs, seed=body.seed)
        s = table.deal()
        with work.using(table.agents.values()):
            moves = table.run_agents(s, seconds=lobby.limits.max_seconds)
    except ValueError as e:
        raise HTTPException(400, clip(str(e), 300)) from None
    _score_if_over(table, s)
    game = Game(
        secrets.token_urlsafe(12), table, body.seat, s, list(moves), list(moves), lobby.limits.max_seconds
    )
    lobby.add(game)
    return game


def play_move(game: Game, body: ActionIn, work: Work | None = None) -> None:
    """Play the person's move in ``game``, then the agents' answers (409 if it is not theirs to play)."""
    work = work or Work()
    if body.seat is not None and body.seat != game.seat:
        raise HTTPException(409, f"this game's person plays seat {game.seat}, not seat {body.seat}")
    s = game.state
    if s.phase == OVER:
        raise HTTPException(409, "the hand is over; POST .../next deals the next one")
    if s.cur != game.seat:
        raise HTTPException(409, f"not your turn: seat {s.cur} is to act")
    s = s.copy()
    a = _parse_action(s, body.action)
    mine = Move(game.seat, a, move_text(s, a))
    s.play(a)
    with work.using(game.table.agents.values()):
        moves = game.table.run_agents(s, seconds=game.seconds)
    _score_if_over(game.table, s)
    game.state = s
    game.log += [mine, *moves]
    game.last_moves = moves


def deal_next(game: Game, work: Work | None = None) -> None:
    """Deal the next hand of ``game`` and let the agents play (409 while the hand runs)."""
    work = work or Work()
    if game.state.phase != OVER:
        raise HTTPException(409, "the hand is not over yet")
    table = game.table
    before = table.rng.getstate(), table.hands_dealt
    s = table.deal()
    try:
        with work.using(table.agents.values()):
            moves = table.run_agents(s, seconds=game.seconds)
    except DecisionTimeout:
        table.rng.setstate(before[0])  # undo the deal: the next request deals this hand again
        table.hands_dealt = before[1]
        raise
    _score_if_over(game.table, s)
    game.state, game.log, game.last_moves = s, list(moves), list(moves)


def query_position(body: AgentQuery) -> GameState:
    """The position a query's record reaches, checked to have ``body.seat`` to act (400/409 if not)."""
    try:
        s = replay(body.record, check=False)
    except (ValueError, KeyError, TypeError) as e:
        what = f"missing field {e}" if isinstance(e, KeyError) else str(e)
        raise HTTPException(400, f"cannot replay the record: {clip(what, 300)}") from None
    if s.phase == OVER:
        raise HTTPException(409, "the hand in the record is over: no move to choose")
    if body.seat is not None and body.seat != s.cur:
        raise HTTPException(409, f"seat {body.seat} is not to act: seat {s.cur} is")
    return s


async def _watch(request: Request, lobby: Lobby, task: asyncio.Future[Any], work: Work) -> None:
    """Wait for ``task``; meanwhile stop ``work`` if the client goes away or the server shuts down."""
    while not task.done():
        await asyncio.wait({task}, timeout=WATCH_SECONDS)
        if task.done():
            return
        reason = SHUTTING_DOWN if lobby.closing.is_set() else work.reason
        if reason is None and await request.is_disconnected():
            reason = CLIENT_GONE
        if reason is not None:
            work.stop(reason)  # again at every look: a decision started since sets its own deadline


async def run_work(request: Request, lobby: Lobby, fn: Callable[[Work], T]) -> T:
    """Run ``fn(work)`` in a worker thread, stopped early if the client goes away or the server shuts down.

    A stopped work is a 503 naming why (nothing was changed); a deadline past is
    a ``DecisionTimeout`` (503 too, from its handler).
    """
    if lobby.closing.is_set():
        raise HTTPException(503, f"{SHUTTING_DOWN}; nothing was changed")
    work = Work()
    task = asyncio.ensure_future(run_in_threadpool(fn, work))
    try:
        await _watch(request, lobby, task, work)
    except asyncio.CancelledError:  # uvicorn gave up waiting for the request: stop its work too
        work.stop(SHUTTING_DOWN)
        raise
    try:
        return task.result()
    except DecisionTimeout:
        if work.reason is None:
            raise
        raise HTTPException(503, f"{work.reason}; nothing was changed") from None


def _clip_input(error: dict[str, Any]) -> dict[str, Any]:
    """A validation error whose echoed ``input`` is cut to about 100 characters."""
    if "input" in error:
        text = json.dumps(error["input"])
        if len(text) > MAX_TEXT:
            error = {**error, "input": clip(text)}
    return error


async def _timed_out(request: Request, exc: DecisionTimeout) -> JSONResponse:
    """503 when the agents' decisions ran past the server's time limit (nothing was changed)."""
    limit = request.app.state.lobby.limits.max_seconds
    return JSONResponse(
        {
            "detail": f"the agents' decisions took over {limit:g} s (tonk serve --max-seconds); "
            "nothing was changed"
        },
        status_code=503,
    )


async def _invalid_request(request: Request, exc: RequestValidationError) -> JSONResponse:
    """422 with one readable ``detail`` line naming every bad field, and the errors themselves."""
    errors = [_clip_input(e) for e in jsonable_encoder(exc.errors())]
    parts = []
    for e in errors:
        where = ".".join(str(x) for x in e.get("loc", ()) if x != "body") or "body"
        parts.append(f"{where}: {e.get('msg', 'invalid')}")
    return JSONResponse({"detail": "invalid request: " + "; ".join(parts), "errors": errors}, status_code=422)


# -- the routes ------------------------------------------------------------------------------------
def add_page_route(router: APIRouter) -> None:
    """``GET /``: the browser game (kept out of the OpenAPI schema)."""

    @router.get("/", response_class=HTMLResponse, include_in_schema=False)
    def page() -> HTMLResponse:
        return HTMLResponse(PAGE.read_text(encoding="utf-8"))


def add_catalog_routes(router: APIRouter, lobby: Lobby) -> None:
    """``GET /api/agents`` and ``GET /api/rules``: what a new game may be made of."""

    @router.get("/api/agents", summary="agent specs offered, and the registered kinds")
    def list_agents() -> dict[str, Any]:
        return {
            "offered": lobby.offered,
            "allowed_paths": [f"{k}:{p}" for k, p in sorted(lobby.allowed_paths)],
            "registered": describe_agents(),
        }

    @router.get("/api/rules", summary="rules presets and options")
    def list_rules() -> dict[str, Any]:
        return {
            "presets": {k: dict(v) for k, v in PRESETS.items()},
            "options": list(OPTION_NAMES),
            "defaults": TonkRules().to_dict(),
        }


#: The OpenAPI answer a route that makes agents work adds to its own.
WORK_RESPONSES: dict[int | str, dict[str, Any]] = {
    503: {
        "description": "the agents' work was stopped (past --max-seconds, the client gone, or the server "
        "shutting down); nothing was changed"
    }
}


def add_game_routes(router: APIRouter, lobby: Lobby) -> None:
    """``/api/games``: start, view, play, deal, record and end the lobby's games."""
    limits = lobby.limits.describe()

    @router.post(
        "/api/games",
        status_code=201,
        summary="start a game; the agents play until it is your turn",
        description=limits,
        responses=WORK_RESPONSES,
    )
    async def new_game(body: NewGame, request: Request) -> dict[str, Any]:
        return game_out(await run_work(request, lobby, lambda work: start_game(lobby, body, work)))

    @router.get("/api/games/{gid}", summary="your seat's view of a game")
    def get_game(gid: str) -> dict[str, Any]:
        game = lobby.get(gid)
        with game.lock:
            return game_out(game)

    @router.post(
        "/api/games/{gid}/actions",
        summary="play your move; the agents answer",
        description=limits,
        responses=WORK_RESPONSES,
    )
    async def post_action(gid: str, body: ActionIn, request: Request) -> dict[str, Any]:
        def work(w: Work) -> dict[str, Any]:
            game = lobby.get(gid)
            with game.lock:
                play_move(game, body, w)
                return game_out(game)

        return await run_work(request, lobby, work)

    @router.post(
        "/api/games/{gid}/next",
        summary="deal the next hand of a game",
        description=limits,
        responses=WORK_RESPONSES,
    )
    async def next_hand(gid: str, request: Request) -> dict[str, Any]:
        def work(w: Work) -> dict[str, Any]:
            game = lobby.get(gid)
            with game.lock:
                deal_next(game, w)
                return game_out(game)

        return await run_work(request, lobby, work)

    @router.get("/api/games/{gid}/record", summary="the record of a finished hand (deck included)")
    def get_record(gid: str) -> dict[str, Any]:
        game = lobby.get(gid)
        with game.lock:
            if game.state.phase != OVER:
                raise HTTPException(409, "the record holds the deck: it is served once the hand is over")
            return to_record(game.state)

    @router.delete("/api/games/{gid}", status_code=204, summary="end a game")
    def delete_game(gid: str) -> Response:
        lobby.get(gid)
        with lobby.lock:
            lobby.games.pop(gid, None)
        return Response(status_code=204)


def add_agent_route(router: APIRouter, lobby: Lobby) -> None:
    """``POST /api/agent-action``: an agent's move in any position, with no game kept."""

    @router.post(
        "/api/agent-action",
        summary="stateless: an agent's move in the position a hand record reaches",
        description=lobby.limits.describe(),
        responses=WORK_RESPONSES,
    )
    async def agent_action(body: AgentQuery, request: Request) -> dict[str, Any]:
        lobby.check_agent(body.agent)
        s = query_position(body)
        seat = s.cur

        def work(w: Work) -> int:
            try:
                return lobby.ask(body.agent, s, body.seed, w)
            except ValueError as e:
                raise HTTPException(400, clip(str(e), 300)) from None

        a = await run_work(request, lobby, work)
        return {"seat": seat, "action": s.table.name(a), "action_id": a}


def create_app(
    agents: Sequence[str] = (),
    max_games: int = 100,
    idle_timeout: float = 3600.0,
    limits: Limits | None = None,
    allowed_hosts: Sequence[str] | None = None,
) -> FastAPI:
    """The FastAPI app of ``tonk serve`` (``agents``: offered specs; path kinds form the allow-list).

    ``limits`` bound each request's work and size; ``allowed_hosts`` (when
    given) is the allow-list of ``Host`` headers (``tonk serve`` always gives
    one: the bound address, plus the loopback names for a loopback bind).
    """
    limits = limits or Limits()
    lobby = Lobby(agents, max_games, idle_timeout, limits)
    app = FastAPI(
        title="Tonk RL",
        version="1",
        summary="Play Tonk against agents, or ask an agent for its move.",
        description=(__doc__ or "").split("\n\n")[0] + "\n\n" + limits.describe(),
    )
    app.state.lobby = lobby
    app.add_middleware(BodyLimit, max_body=limits.max_body)
    if allowed_hosts is not None:
        app.add_middleware(TrustedHostMiddleware, allowed_hosts=list(allowed_hosts))
    app.exception_handler(RequestValidationError)(_invalid_request)
    app.exception_handler(DecisionTimeout)(_timed_out)
    add_page_route(app.router)
    add_catalog_routes(app.router, lobby)
    add_game_routes(app.router, lobby)
    add_agent_route(app.router, lobby)
    return app


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
    try:
        import uvicorn
    except ImportError:
        raise ValueError("tonk serve needs uvicorn: pip install uvicorn") from None
    if isinstance(port, bool) or not 0 <= port <= 65535:
        raise ValueError(f"--port must be 0..65535, got {port}")
    hosts = sorted({*loopback_hosts(host), *allowed_hosts})
    app = create_app(
        agents, max_games=max_games, idle_timeout=idle_timeout, limits=limits, allowed_hosts=hosts
    )
    lobby: Lobby = app.state.lobby

    class Server(uvicorn.Server):
        """uvicorn's server, which also stops the running requests' work on SIGTERM or Ctrl-C."""

        def handle_exit(self, sig: int, frame: Any) -> None:
            lobby.closing.set()
            super().handle_exit(sig, frame)

    above_table()  # the search's odds table, built once (~3 s): now, not in a request no deadline can stop
    sock = listen(host, port)
    port = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    print(
        f"Tonk: open http://{shown}:{port}/ to play (API docs at /docs); Ctrl-C stops the server", flush=True
    )
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", timeout_graceful_shutdown=3)
    Server(config).run(sockets=[sock])
