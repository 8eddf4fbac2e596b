"""The desk: the games' tables and agents, and what the requests that make agents work do.

A :class:`Desk` holds every live game's :class:`~frontends.table.Table`
(its agents, the hand, the log) and runs the commands of the requests that
make agents play (:meth:`Desk.run`): ``new`` (seat a game, deal, let the
agents play until the person must act), ``move``, ``next`` (deal the next
hand) and ``ask`` (a stateless agent query). Each builds its result on a
copy and commits it only when every agent has answered, so a refused or
stopped request changes nothing. A command's answer is plain data (the
person's view, the finished hand's record), so a desk may live in the
server's process (tests) or in a process of its own (:mod:`.child`, what
``tonk serve`` does) and be driven the same way. The table plays the
person's move and scores the hand (:meth:`~frontends.table.Table.play_person`,
:meth:`~frontends.table.Table.advance`), as in the terminal game. A refused
command raises one of the refusals of :mod:`.errors`; the routes give it its
HTTP status.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Protocol

from agents.registry import make_agent
from tonk_env.agent import DecisionTimeout
from tonk_env.engine import (
    OVER,
    GameState,
    IllegalActionError,
    TonkRules,
    action_from_string,
    make_rules,
    replay,
    to_record,
    view,
)
from tonk_env.play import decide, start_hand

from ..table import Move, NotNow, ScoreError, Table, describe_result
from .errors import AgentFailed, BadRequest, NoSuchGame
from .limits import MAX_TEXT, clip
from .models import AgentQuery, NewGame
from .work import Work

#: Agent specs whose idle instances ``Desk.ask`` keeps (the most recently used).
CACHED_SPECS = 16


def parse_action(s: GameState, action: str | int, max_text: int = MAX_TEXT) -> int:
    """The legal action id ``action`` names in ``s`` (:class:`BadRequest` if unknown, too long or illegal)."""
    if isinstance(action, str):
        if len(action) > max_text:
            raise BadRequest(f"action string of {len(action)} characters; at most {max_text}")
        try:
            return action_from_string(s, action)
        except IllegalActionError as e:
            raise BadRequest(str(e)) from None
    legal = s.legal_actions()
    if action not in legal:
        names = ", ".join(s.table.name(a) for a in legal)
        what = (
            s.table.name(action) if 0 <= action < s.table.size else f"id {clip(str(action))} (out of range)"
        )
        raise BadRequest(f"action {what} is not legal now; legal actions: {names}")
    return action


def new_rules(body: NewGame) -> TonkRules:
    """The rules of a new game, checked for its player count and seat (:class:`BadRequest` if bad)."""
    try:
        rules = make_rules(body.rules, **body.options)
        rules.check_players(body.players)
    except (ValueError, TypeError, OverflowError) as e:
        raise BadRequest(clip(str(e), 300)) from None
    if body.seat >= body.players:
        raise BadRequest(f"seat must be 0..{body.players - 1} for {body.players} players")
    return rules


def query_position(body: AgentQuery | dict[str, Any], seat: int | None = None) -> GameState:
    """The position a query's record reaches, checked to have ``seat`` to act (:class:`BadRequest`,
    :class:`NotNow` if not)."""
    record = body.record if isinstance(body, AgentQuery) else body
    seat = body.seat if isinstance(body, AgentQuery) else seat
    try:
        s = replay(record, check=False)
    except (ValueError, KeyError, TypeError, OverflowError) as e:
        what = f"missing field {e}" if isinstance(e, KeyError) else str(e)
        raise BadRequest(f"cannot replay the record: {clip(what, 300)}") from None
    if s.phase == OVER:
        raise NotNow("the hand in the record is over: no move to choose")
    if seat is not None and seat != s.cur:
        raise NotNow(f"seat {seat} is not to act: seat {s.cur} is")
    return s


@dataclass
class TableGame:
    """A live game at the desk: a table, the current hand and its public log."""

    gid: str
    table: Table
    seat: int
    state: GameState
    log: list[Move] = field(default_factory=list)
    last_moves: list[Move] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def answer(self) -> dict[str, Any]:
        """The committed game as plain data: the person's view (``out``) and the finished hand's record."""
        s = self.state
        t = self.table
        names = ["you" if p == self.seat else f"seat {p}" for p in range(s.n)]
        out = {
            "game_id": self.gid,
            "seat": self.seat,
            "hand_number": t.hands_dealt,
            "hands_played": t.hands_played,
            "scores": list(t.scores),
            "agents": {str(p): spec for p, spec in t.specs.items()},
            "over": s.phase == OVER,
            "summary": describe_result(s, names) if s.phase == OVER else None,
            "moves": [[m.seat, m.text] for m in self.last_moves],
            "log": [[m.seat, m.text] for m in self.log],
            "view": view(s, self.seat),
        }
        return {"out": out, "record": to_record(s) if s.phase == OVER else None}


def _advance(table: Table, s: GameState, work: Work) -> list[Move]:
    """The table's agents play on ``s`` within ``work`` (:class:`BadRequest` if the hand cannot be scored)."""
    try:
        with work.using(table.agents.values()):
            return table.advance(s, seconds=work.seconds_left())
    except ScoreError as e:
        raise BadRequest(clip(str(e), 330)) from None


class DeskLike(Protocol):
    """What the routes drive: a :class:`Desk` here, or a :class:`~.child.ChildDesk`."""

    def run(self, cmd: dict[str, Any], work: Work) -> dict[str, Any]:
        """Run one command within ``work``; its answer as plain data."""

    def drop(self, gid: str) -> None:
        """Forget game ``gid``."""

    def close(self) -> None:
        """Release what the desk holds."""


class Desk:
    """The live games' tables and the agents; runs the commands of the requests that make agents work."""

    def __init__(self, workers: int = 2) -> None:
        self.workers = workers
        self.games: dict[str, TableGame] = {}
        self.lock = threading.Lock()
        self._dropped: set[str] = set()  # games dropped before their ``new`` finished
        self._agents: OrderedDict[str, list[Any]] = OrderedDict()  # spec -> idle instances

    def run(self, cmd: dict[str, Any], work: Work) -> dict[str, Any]:
        """Run one command (``op``: new, move, next, ask) within ``work``; its answer as plain data."""
        op = cmd["op"]
        if op == "new":
            return self.new(
                cmd["gid"], cmd["rules"], cmd["players"], cmd["seat"], cmd["specs"], cmd["seed"], work
            )
        if op == "ask":
            s = query_position(cmd["record"])
            return {"action": self.ask(cmd["spec"], s, cmd["seed"], work)}
        with self.lock:
            game = self.games.get(cmd["gid"])
        if game is None:
            raise NoSuchGame(f"no live game {clip(cmd['gid'])!r} (it was deleted or evicted)")
        with game.lock:
            if op == "move":
                self.move(game, cmd["action"], cmd["seat"], work)
            elif op == "next":
                self.deal_next(game, work)
            else:
                raise ValueError(f"unknown desk command {op!r}")
            return game.answer()

    def drop(self, gid: str) -> None:
        """Forget game ``gid`` (also if its ``new`` is still running)."""
        with self.lock:
            if self.games.pop(gid, None) is None:
                self._dropped.add(gid)

    def close(self) -> None:
        """Nothing to release in this process."""

    def new(
        self,
        gid: str,
        rules: TonkRules,
        players: int,
        seat: int,
        specs: list[str],
        seed: int | None,
        work: Work,
    ) -> dict[str, Any]:
        """Seat a new game, deal its first hand and let the agents play until the person must act."""
        try:
            table = Table(rules, players, [seat], specs, seed=seed)
            s = table.deal()
            moves = _advance(table, s, work)
        except (ValueError, OverflowError) as e:
            raise BadRequest(clip(str(e), 300)) from None
        game = TableGame(gid, table, seat, s, list(moves), list(moves))
        with self.lock:
            if gid in self._dropped:  # the request gave up meanwhile
                self._dropped.discard(gid)
            else:
                self.games[gid] = game
        return game.answer()

    def move(self, game: TableGame, action: str | int, seat: int | None, work: Work) -> None:
        """Play the person's move in ``game``, then the agents' answers (:class:`NotNow` if it is not theirs
        to play)."""
        if seat is not None and seat != game.seat:
            raise NotNow(f"this game's person plays seat {game.seat}, not seat {seat}")
        if game.state.phase == OVER:
            raise NotNow("the hand is over; POST .../next deals the next one")
        game.table.check_turn(game.state, game.seat)
        s = game.state.copy()
        try:
            mine = game.table.play_person(s, game.seat, parse_action(s, action))
        except ScoreError as e:
            raise BadRequest(clip(str(e), 330)) from None
        moves = _advance(game.table, s, work)
        game.state = s
        game.log += [mine, *moves]
        game.last_moves = moves

    def deal_next(self, game: TableGame, work: Work) -> None:
        """Deal the next hand of ``game`` and let the agents play (:class:`NotNow` while the hand runs)."""
        if game.state.phase != OVER:
            raise NotNow("the hand is not over yet")
        table = game.table
        before = table.rng.getstate(), table.hands_dealt
        s = table.deal()
        try:
            moves = _advance(table, s, work)
        except DecisionTimeout:
            table.rng.setstate(before[0])  # undo the deal: the next request deals this hand again
            table.hands_dealt = before[1]
            raise
        game.state, game.log, game.last_moves = s, list(moves), list(moves)

    def ask(self, spec: str, s: GameState, seed: int | None, work: Work) -> int:
        """The action agent ``spec`` chooses as the seat to act in ``s`` (stateless queries).

        Each request gets an instance of its own (idle ones of the 16 most recent specs
        are kept for reuse); ``seed`` reseeds it first, so an answer depends only on the request.
        """
        with self.lock:
            idle = self._agents.pop(spec, [])
            agent = idle.pop() if idle else None
            self._agents[spec] = idle
            while len(self._agents) > CACHED_SPECS:
                self._agents.popitem(last=False)
        try:
            if agent is None:
                agent = make_agent(spec, seed=0)
            seat = s.cur
            with work.using([agent]):
                start_hand({seat: agent}, s.n, s.rules, {seat: 0 if seed is None else seed})
                deadline = work.deadline if work.deadline < math.inf else None
                return decide(agent, s, lambda _: f"agent {spec}", deadline)
        except IllegalActionError as e:
            raise AgentFailed(str(e)) from None
        except ValueError as e:
            raise BadRequest(clip(str(e), 300)) from None
        finally:
            if agent is not None:
                with self.lock:
                    pool = self._agents.setdefault(spec, [])
                    if len(pool) < self.workers:
                        pool.append(agent)
