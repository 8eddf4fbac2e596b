"""What the requests that make agents work do: start a game, play a move, deal, ask an agent.

These functions run in an agent worker thread (:mod:`.work`); each builds its
result on a copy and commits it (``Game.publish``) only when every agent has
answered, so a refused or stopped request changes nothing.
"""

from __future__ import annotations

import secrets

from fastapi import HTTPException

from tonk_env.agent import DecisionTimeout
from tonk_env.engine import (
    OVER,
    GameState,
    IllegalActionError,
    TonkRules,
    action_from_string,
    make_rules,
    replay,
)

from ..table import Move, Table, move_text
from .limits import MAX_TEXT, clip
from .lobby import Game, Lobby
from .models import ActionIn, AgentQuery, NewGame
from .work import Work


def parse_action(s: GameState, action: str | int, max_text: int = MAX_TEXT) -> int:
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
    """Add the hand's payoffs to the table's score once it is over (400 if the rules' payouts overflow)."""
    if s.phase == OVER:
        try:
            table.score(s)
        except (ValueError, OverflowError) as e:
            raise HTTPException(400, f"cannot score the hand: {clip(str(e), 300)}") from None


def new_rules(body: NewGame) -> TonkRules:
    """The rules of a new game, checked for its player count and seat (400 if bad)."""
    try:
        rules = make_rules(body.rules, **body.options)
        rules.check_players(body.players)
    except (ValueError, TypeError, OverflowError) as e:
        raise HTTPException(400, clip(str(e), 300)) from None
    if body.seat >= body.players:
        raise HTTPException(400, f"seat must be 0..{body.players - 1} for {body.players} players")
    return rules


def check_new_game(lobby: Lobby, body: NewGame, client: str) -> TonkRules:
    """Everything about a new game that can be checked without the agents (4xx if bad)."""
    lobby.make_room(client)
    rules = new_rules(body)
    for spec in body.agents or [lobby.offered[0]]:
        lobby.check_agent(spec)
    return rules


def start_game(lobby: Lobby, body: NewGame, work: Work | None = None, client: str = "") -> Game:
    """Seat a new game, deal its first hand and let the agents play until the person must act."""
    work = work or Work()
    rules = check_new_game(lobby, body, client)
    specs = body.agents or [lobby.offered[0]]
    try:
        table = Table(rules, body.players, [body.seat], specs, seed=body.seed)
        s = table.deal()
        with work.using(table.agents.values()):
            moves = table.run_agents(s, seconds=work.seconds_left())
    except (ValueError, OverflowError) as e:
        raise HTTPException(400, clip(str(e), 300)) from None
    _score_if_over(table, s)
    game = Game(secrets.token_urlsafe(12), table, body.seat, s, list(moves), list(moves), client=client)
    game.publish()
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
    a = parse_action(s, body.action)
    mine = Move(game.seat, a, move_text(s, a))
    s.play(a)
    with work.using(game.table.agents.values()):
        moves = game.table.run_agents(s, seconds=work.seconds_left())
    _score_if_over(game.table, s)
    game.state = s
    game.log += [mine, *moves]
    game.last_moves = moves
    game.played = True
    game.publish()


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
            moves = table.run_agents(s, seconds=work.seconds_left())
    except DecisionTimeout:
        table.rng.setstate(before[0])  # undo the deal: the next request deals this hand again
        table.hands_dealt = before[1]
        raise
    _score_if_over(game.table, s)
    game.state, game.log, game.last_moves = s, list(moves), list(moves)
    game.played = True
    game.publish()


def query_position(body: AgentQuery) -> GameState:
    """The position a query's record reaches, checked to have ``body.seat`` to act (400/409 if not)."""
    try:
        s = replay(body.record, check=False)
    except (ValueError, KeyError, TypeError, OverflowError) as e:
        what = f"missing field {e}" if isinstance(e, KeyError) else str(e)
        raise HTTPException(400, f"cannot replay the record: {clip(what, 300)}") from None
    if s.phase == OVER:
        raise HTTPException(409, "the hand in the record is over: no move to choose")
    if body.seat is not None and body.seat != s.cur:
        raise HTTPException(409, f"seat {body.seat} is not to act: seat {s.cur} is")
    return s
