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

The lobby keeps of each game what the cheap routes serve: the answer its
last committed request published (the person's view) and the finished
hand's record; the tables and agents are at the :class:`~.play.Desk`, which
the lobby tells when a game goes (``on_drop``).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fastapi import HTTPException

from agents.peek import refuse_peek
from agents.registry import AgentEntry, KindEntry, lookup, make_agent, resolve_params
from agents.zoo import NAME as PLAIN_NAME

from .errors import BadRequest, NoSuchGame, NotAllowed
from .limits import Limits, clip

DEFAULT_AGENTS = ("heuristic:expert", "heuristic:greedy", "heuristic:fast", "random", "search:ismcts")
#: Seconds a never-played game is kept for sure when the lobby is full.
FRESH_SECONDS = 60.0


class Refused(HTTPException):
    """A 4xx/5xx with a ``Retry-After`` header."""

    def __init__(self, status: int, detail: str, retry_after: int) -> None:
        super().__init__(status, detail, headers={"Retry-After": str(retry_after)})


@dataclass
class Game:
    """A live game as the lobby serves it: its last published answer and the finished hand's record."""

    gid: str
    seat: int
    client: str
    out: dict[str, Any]  # the person's view, as the last committed request left it
    record: dict[str, Any] | None = None  # the finished hand's record (None while a hand runs)
    played: bool = False  # a move or a deal since the game was made
    used: float = field(default_factory=time.monotonic)

    def publish(self, answer: dict[str, Any], played: bool = True) -> dict[str, Any]:
        """Take a desk's answer for this game; return the person's view."""
        self.out, self.record = answer["out"], answer["record"]
        self.played = self.played or played
        return self.out

    @property
    def over(self) -> bool:
        """Whether the current hand is over."""
        return bool(self.out.get("over"))


class Lobby:
    """The live games, their limits and the agent allow-list."""

    def __init__(
        self,
        agents: Sequence[str],
        max_games: int,
        idle_timeout: float,
        limits: Limits | None = None,
        on_drop: Callable[[str], None] = lambda gid: None,
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
        self.on_drop = on_drop
        #: Set when the server starts shutting down: running work stops, new work is refused (503).
        self.closing = threading.Event()

    def check_agent(self, spec: str) -> str:
        """:class:`BadRequest` for an unknown or malformed spec, :class:`NotAllowed` for a file not on the
        allow-list."""
        try:
            sp, entry, values = resolve_params(spec)
            refuse_peek([spec], "the server")
        except ValueError as e:
            raise BadRequest(clip(str(e), 300)) from None
        if isinstance(entry, AgentEntry):
            for p in entry.params:
                if p.agent_spec and values.get(p.name):
                    self.check_agent(str(values[p.name]))  # a nested spec obeys the same rules
                if p.file_ref and values.get(p.name) and not PLAIN_NAME.fullmatch(str(values[p.name])):
                    raise NotAllowed(
                        f"agent {entry.key}: {p.name}={clip(str(values[p.name]))!r} names a file; "
                        "this server accepts only the names of shipped files there",
                    )
            for (key, name), cap in self.limits.caps().items():
                param = entry.param(name)
                if entry.key == key and param is not None and values.get(name, param.default) > cap:
                    raise BadRequest(
                        f"agent {entry.key}: {name}={values.get(name, param.default)} is above this server's "
                        f"cap {cap} (tonk serve --max-budget/--max-samples/--max-candidates)",
                    )
        if isinstance(entry, KindEntry):
            if (sp.kind, Path(sp.name or "").resolve()) not in self.allowed_paths:
                allowed = ", ".join(f"{k}:{p}" for k, p in sorted(self.allowed_paths)) or "none"
                raise NotAllowed(
                    f"agent {clip(spec)!r} loads a file: only the paths the server was started with "
                    f"(tonk serve --agents KIND:PATH) are allowed; allowed: {allowed}",
                )
        return spec

    # -- the games ----------------------------------------------------------------------------------
    def purge(self) -> None:
        """Drop games idle for longer than the timeout."""
        now = time.monotonic()
        with self.lock:
            gone = [g for g, game in self.games.items() if now - game.used > self.idle_timeout]
            for gid in gone:
                del self.games[gid]
        for gid in gone:
            self.on_drop(gid)

    def get(self, gid: str) -> Game:
        """The live game ``gid`` (:class:`NoSuchGame` if unknown or expired)."""
        self.purge()
        with self.lock:
            game = self.games.get(gid)
        if game is None:
            raise NoSuchGame(
                f"no live game {clip(gid)!r} (unknown, deleted, evicted, or idle for over "
                f"{self.idle_timeout:g} s)",
            )
        game.used = time.monotonic()
        return game

    def forget_all(self) -> None:
        """Forget every game (the agents' process that held them died: ``ChildDesk.on_restart``)."""
        with self.lock:
            self.games.clear()

    def remove(self, gid: str) -> None:
        """End game ``gid`` (:class:`NoSuchGame` if unknown)."""
        self.get(gid)
        with self.lock:
            self.games.pop(gid, None)
        self.on_drop(gid)

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
        gid = min(idle, key=lambda g: g.used).gid
        del self.games[gid]
        self.on_drop(gid)
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
