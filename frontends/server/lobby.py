"""The live games: their store, the share of it each client holds, eviction, and the agent allow-list.

The lobby holds at most ``max_games`` games and at most ``max_client_games``
of one client (told apart by address). When it is full, a new game first
makes room (:meth:`Lobby.make_room`):

1. games idle for longer than ``idle_timeout`` are dropped;
2. then the game idle longest among those nobody has played yet (no move
   and no deal since it was made), once idle for ``FRESH_SECONDS``;

so a burst of creates that nobody plays fills the lobby for about a minute,
not for the whole idle timeout. A refusal is a 429 with ``Retry-After``:
when the next game could be evicted.

A game's answer to its person (:func:`game_out`) is published when a
request's work commits, so views read it without waiting for the agents.
"""

from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fastapi import HTTPException

from agents.registry import AgentEntry, KindEntry, lookup, make_agent, resolve_params
from tonk_env.engine import OVER, GameState, IllegalActionError, view
from tonk_env.play import decide, start_hand

from ..table import Move, Table, describe_result
from .limits import Limits, clip
from .work import Work

DEFAULT_AGENTS = ("heuristic:expert", "heuristic:greedy", "heuristic:fast", "random", "search:ismcts")
#: Seconds a never-played game is kept for sure when the lobby is full.
FRESH_SECONDS = 60.0
#: Agent specs whose instances ``Lobby.ask`` keeps (the most recently used).
CACHED_SPECS = 16


class Refused(HTTPException):
    """A 4xx/5xx with a ``Retry-After`` header."""

    def __init__(self, status: int, detail: str, retry_after: int) -> None:
        super().__init__(status, detail, headers={"Retry-After": str(retry_after)})


@dataclass
class Game:
    """A live game: a table, the current hand and its public log."""

    gid: str
    table: Table
    seat: int
    state: GameState
    log: list[Move] = field(default_factory=list)
    last_moves: list[Move] = field(default_factory=list)
    client: str = ""
    played: bool = False  # a move or a deal since the game was made
    used: float = field(default_factory=time.monotonic)
    lock: threading.Lock = field(default_factory=threading.Lock)
    out: dict[str, Any] = field(default_factory=dict)  # the published answer (game_out)

    def publish(self) -> None:
        """Publish the game's answer to its person (after a request's work is committed)."""
        self.out = game_out(self)


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


class Lobby:
    """The live games, their limits and the agent allow-list."""

    def __init__(
        self, agents: Sequence[str], max_games: int, idle_timeout: float, limits: Limits | None = None
    ) -> None:
        if isinstance(max_games, bool) or not isinstance(max_games, int) or max_games < 1:
            raise ValueError(f"--max-games must be at least 1, got {max_games}")
        if not (isinstance(idle_timeout, int | float) and 0 < idle_timeout < math.inf):
            raise ValueError(f"--idle-timeout must be a positive finite number, got {idle_timeout}")
        self.max_games = max_games
        self.idle_timeout = idle_timeout
        self.limits = limits or Limits()
        self.allowed_paths: set[tuple[str, Path]] = set()
        offered = []
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
        self._agents: OrderedDict[str, list[Any]] = OrderedDict()  # spec -> idle instances
        self._agent_lock = threading.Lock()
        #: Set when the server starts shutting down: running work stops, new work is refused (503).
        self.closing = threading.Event()

    def check_agent(self, spec: str) -> str:
        """Raise 400 for an unknown or malformed spec, 403 for a file not on the allow-list."""
        try:
            sp, entry, values = resolve_params(spec)
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

    # -- the games ----------------------------------------------------------------------------------
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
                f"no live game {clip(gid)!r} (unknown, deleted, evicted, or idle for over "
                f"{self.idle_timeout:g} s)",
            )
        game.used = time.monotonic()
        return game

    def remove(self, gid: str) -> None:
        """End game ``gid`` (404 if unknown)."""
        self.get(gid)
        with self.lock:
            self.games.pop(gid, None)

    def make_room(self, client: str) -> None:
        """Make room for a new game of ``client`` (evicting if need be), or raise a 429 with Retry-After."""
        self.purge()
        now = time.monotonic()
        with self.lock:
            mine = [g for g in self.games.values() if g.client == client]
            if len(mine) >= self.limits.max_client_games and not self._evict(mine, now):
                raise Refused(
                    429,
                    f"you have {len(mine)} live games (at most {self.limits.max_client_games}: tonk serve "
                    "--max-client-games); DELETE one you no longer play",
                    self._soonest(mine, now),
                )
            if len(self.games) < self.max_games or self._evict(list(self.games.values()), now):
                return
            retry = self._soonest(list(self.games.values()), now)
        raise Refused(
            429,
            f"too many live games ({self.max_games}); DELETE a finished one, or retry when an unplayed game "
            f"has been idle for {FRESH_SECONDS:g} s or any game for {self.idle_timeout:g} s",
            retry,
        )

    def _evict(self, games: list[Game], now: float) -> bool:
        """Drop the longest idle unplayed game of ``games`` once idle ``FRESH_SECONDS`` (lock held)."""
        idle = [g for g in games if not g.played and now - g.used >= FRESH_SECONDS]
        if not idle:
            return False
        del self.games[min(idle, key=lambda g: g.used).gid]
        return True

    def _soonest(self, games: list[Game], now: float) -> int:
        """Seconds until one of ``games`` can be evicted or expires (1 at least)."""
        times = [g.used + (self.idle_timeout if g.played else FRESH_SECONDS) for g in games]
        return max(1, math.ceil(min(times, default=now + 1) - now))

    def add(self, game: Game) -> None:
        """Register a new game (making room first; 429 if there is none)."""
        self.make_room(game.client)
        with self.lock:
            self.games[game.gid] = game

    # -- stateless queries ----------------------------------------------------------------------------
    def ask(self, spec: str, s: GameState, seed: int | None, work: Work | None = None) -> int:
        """The action agent ``spec`` chooses as the seat to act in ``s`` (stateless queries).

        Each request gets an instance of its own (idle ones of the 16 most recent specs
        are kept for reuse); ``seed`` reseeds it first, so an answer depends only on the request.
        """
        work = work or Work()
        with self._agent_lock:
            idle = self._agents.pop(spec, [])
            agent = idle.pop() if idle else None
            self._agents[spec] = idle
            while len(self._agents) > CACHED_SPECS:
                self._agents.popitem(last=False)
        if agent is None:
            agent = make_agent(spec, seed=0)
        seat = s.cur
        try:
            with work.using([agent]):
                start_hand({seat: agent}, s.n, s.rules, {seat: 0 if seed is None else seed})
                deadline = work.deadline if work.deadline < math.inf else None
                return decide(agent, s, lambda _: f"agent {spec}", deadline)
        except IllegalActionError as e:
            raise HTTPException(500, str(e)) from None
        finally:
            with self._agent_lock:
                pool = self._agents.setdefault(spec, [])
                if len(pool) < self.limits.workers:
                    pool.append(agent)
