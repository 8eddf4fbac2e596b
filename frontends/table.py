"""A table: people and agents in seats, hand after hand, with a running score.

The terminal game and the server both drive hands through a :class:`Table`:

- seats ``humans`` are played by people (moves come from outside), every
  other seat by an agent built from its spec string
  (:func:`agents.registry.make_agent`);
- :meth:`Table.deal` deals the next hand: the first hand's dealer is the last
  seat (seat 0 plays first), then the deal passes to the left (RULES §2.5);
  decks come from the table's seeded generator, so a seed replays a session;
- :meth:`Table.play_person` plays a person's move (refusing one out of turn
  with :class:`NotNow`) and :meth:`Table.advance` lets the agents play until a
  person must act or the hand is over; each returns the moves as
  :class:`Move` and scores the hand once it is over. They are the one place
  where the terminal game and the server play a person's move and score a
  hand;
- :meth:`Table.run_agents` is :meth:`Table.advance` without the scoring, and
  :meth:`Table.score` adds a finished hand's payoffs to the running totals.

Agents play through the one hand loop (:mod:`tonk_env.play`): ``reseed``
and ``reset_hand`` before every hand, :func:`~tonk_env.play.decide` at every
decision (an illegal answer is an ``IllegalActionError`` naming the agent),
and :func:`~tonk_env.play.play` stopping at a person's turn.
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from agents.registry import make_agent
from tonk_env.agent import Agent
from tonk_env.engine import OVER, GameState, TonkRules, card_to_string, new_game, shuffled_deck
from tonk_env.engine.actions import TAKE
from tonk_env.engine.numbers import check_seed
from tonk_env.play import play, start_hand

#: Words for how a hand ended (``Result.kind``).
RESULT_WORDS = {
    "instant_win": "was dealt an instant win",
    "void": "void hand: nobody pays",
    "tonk_out": "tonked out",
    "run_out": "ran out",
    "drop_won": "dropped with the lowest count and won",
    "caught": "dropped and was caught",
    "stock_out": "lowest count when the stock ran out",
}


class NotNow(Exception):
    """A move or deal the game's state does not allow now: not this seat's turn, the hand over or not."""


class ScoreError(ValueError):
    """A finished hand whose payoffs cannot be added to the running score (the rules' payouts overflow)."""


@dataclass(frozen=True)
class Move:
    """One move as people see it: the seat and the action string (a take names its card)."""

    seat: int
    action: int
    text: str


def move_text(s: GameState, action: int) -> str:
    """The public text of ``action`` about to be played in ``s`` (``take 5D``, ``hit 9H on 8H``)."""
    text = s.table.name(action)
    if action == TAKE and s.pile:
        text += " " + card_to_string(s.pile[-1])
    return text


def fill_seats(num_players: int, humans: Iterable[int], specs: Sequence[str]) -> dict[int, str]:
    """Give the seats that are not ``humans`` an agent spec each, cycling through ``specs``."""
    hs = set(humans)
    for h in hs:
        if isinstance(h, bool) or not isinstance(h, int) or not 0 <= h < num_players:
            raise ValueError(f"seat must be 0..{num_players - 1}, got {h!r}")
    free = [p for p in range(num_players) if p not in hs]
    if not free:
        return {}
    if not specs:
        raise ValueError("no agent specs for the other seats")
    if len(specs) > len(free):
        raise ValueError(
            f"{len(specs)} agents do not fit the {len(free)} free seat(s) of a {num_players}-player table"
        )
    return {p: specs[i % len(specs)] for i, p in enumerate(free)}


class Table:
    """Seats, agents, the running score and the deal order of a session of hands."""

    def __init__(
        self,
        rules: TonkRules,
        num_players: int,
        humans: Iterable[int],
        specs: Sequence[str],
        seed: int | None = None,
    ) -> None:
        rules.check_players(num_players)
        if seed is not None:
            check_seed(seed)  # the one seed rule of every command: 0..2**32 - 1
        self.rules = rules
        self.n = num_players
        self.humans = frozenset(humans)
        self.specs = fill_seats(num_players, self.humans, specs)
        self.rng = random.Random(seed)
        self.agents: dict[int, Agent] = {
            p: make_agent(spec, seed=self.rng.getrandbits(63)) for p, spec in self.specs.items()
        }
        self.scores = [0.0] * num_players
        self.hands_played = 0
        self.hands_dealt = 0

    def name(self, seat: int) -> str:
        """``you``-neutral label of a seat: ``seat 1 (heuristic:expert)`` or ``seat 0``."""
        spec = self.specs.get(seat)
        return f"seat {seat}" + (f" ({spec})" if spec else "")

    def next_dealer(self) -> int:
        """The dealer of the next hand: the last seat first, then passing to the left."""
        return (self.n - 1 + self.hands_dealt) % self.n

    def deal(self) -> GameState:
        """Deal the next hand and get every agent ready for it."""
        dealer = self.next_dealer()
        deck = shuffled_deck(random.Random(self.rng.getrandbits(63)))
        s = new_game(self.rules, self.n, deck=deck, dealer=dealer)
        seeds = {p: self.rng.getrandbits(63) for p in self.agents}
        start_hand(self.agents, self.n, self.rules, seeds)
        self.hands_dealt += 1
        return s

    def agent_name(self, seat: int) -> str:
        """How errors name the agent of a seat: ``agent heuristic:expert``."""
        return f"agent {self.specs[seat]}"

    def run_agents(self, s: GameState, limit: int | None = None, seconds: float | None = None) -> list[Move]:
        """Play agents' moves on ``s`` in place until a person must act or the hand is over.

        ``seconds`` bounds each decision (an agent past it raises ``DecisionTimeout``).
        """
        moves: list[Move] = []

        def person_or_limit(state: GameState) -> bool:
            return state.cur in self.humans or (limit is not None and len(moves) >= limit)

        def record(state: GameState, action: int) -> None:
            moves.append(Move(state.cur, action, move_text(state, action)))

        deadline = None if seconds is None else time.monotonic() + seconds
        play(s, self.agents, until=person_or_limit, on_move=record, who=self.agent_name, deadline=deadline)
        return moves

    def check_turn(self, s: GameState, seat: int) -> None:
        """Raise :class:`NotNow` unless person ``seat`` is to act in ``s``."""
        if s.phase == OVER:
            raise NotNow("the hand is over; the next one must be dealt first")
        if s.cur != seat:
            raise NotNow(f"not your turn: seat {s.cur} is to act")

    def play_person(self, s: GameState, seat: int, action: int) -> Move:
        """Play person ``seat``'s legal ``action`` on ``s`` in place; score the hand if it ends.

        :class:`NotNow` if it is not their turn; ``IllegalActionError`` if the action is not legal.
        """
        if seat not in self.humans:
            raise ValueError(f"seat {seat} is played by {self.agent_name(seat)}, not by a person")
        self.check_turn(s, seat)
        move = Move(seat, action, move_text(s, action))
        s.play(action)
        self.score_if_over(s)
        return move

    def advance(self, s: GameState, seconds: float | None = None) -> list[Move]:
        """Let the agents play on ``s`` until a person must act or the hand is over; score it if over."""
        moves = self.run_agents(s, seconds=seconds)
        self.score_if_over(s)
        return moves

    def score_if_over(self, s: GameState) -> bool:
        """Score the hand ``s`` (the last dealt) once it is over, and only once; whether it is over.

        :class:`ScoreError` if its payoffs cannot be added (the running score stays as it was).
        """
        if s.phase != OVER:
            return False
        if self.hands_played < self.hands_dealt:
            try:
                self.score(s)
            except (ValueError, OverflowError) as e:
                raise ScoreError(f"cannot score the hand: {e}") from None
        return True

    def score(self, s: GameState) -> None:
        """Add a finished hand's payoffs to the running score."""
        if s.result is None:
            raise ValueError("the hand is not over")
        new = [total + v for total, v in zip(self.scores, s.result.payoffs, strict=True)]
        self.scores = new
        self.hands_played += 1


def describe_result(s: GameState, names: Sequence[str] | None = None) -> str:
    """One line saying how a finished hand ended, e.g. ``seat 1 tonked out``."""
    r = s.result
    if r is None:
        return "the hand is not over"
    label = names or [f"seat {p}" for p in range(s.n)]
    if r.kind == "void":
        why = {"instant_win_tie": " (several instant wins were dealt)"}.get(r.detail, "")
        if r.detail in ("empty_stock", "max_turns"):
            why = (
                " (stock ran out with a tie for the lowest count)"
                if r.detail == "empty_stock"
                else (" (turn limit reached with a tie for the lowest count)")
            )
        return RESULT_WORDS["void"] + why
    if r.kind == "stock_out":
        low = min(r.counts)
        winners = [label[p] for p in range(s.n) if r.counts[p] == low and r.payoffs[p] > 0]
        how = "the stock ran out" if r.detail == "empty_stock" else "the turn limit was reached"
        return f"{how}: {' and '.join(winners) or 'nobody'} had the lowest count ({low})"
    who = label[r.seat] if r.seat is not None else "nobody"
    text = f"{who} {RESULT_WORDS.get(r.kind, r.kind)}"
    if who == "you":
        text = text.replace(" was ", " were ")
    if r.kind in ("drop_won", "caught") and r.seat is not None:
        text += f" (count {r.counts[r.seat]})"
    if r.kind == "instant_win" and r.seat is not None:
        text += f" (count {r.counts[r.seat]})"
    return text
