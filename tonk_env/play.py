"""The hand loop: agents in seats play a hand. Every consumer of agents plays through it.

Evaluation, tournaments, the single-agent env's opponents, the terminal
game, the server and the OpenSpiel bot all drive agents with these three
pieces (the contract is :mod:`tonk_env.agent`):

- :func:`start_hand` tells the agents a hand begins: ``reseed`` (when the
  consumer gives seeds) then ``reset_hand``, seat by seat;
- :func:`decide` asks the agent in the seat to act for its move, with the
  seat's lazy observation and (unless the agent's ``reads_info`` is false)
  its ``SeatInfo``, and checks that the move is legal;
- :func:`play` repeats :func:`decide` and applies the move until the hand is
  over. What consumers need differently is a parameter: ``until`` stops
  before a decision (a person's turn, the learner's turn, a network seat
  whose moves are batched), ``on_move`` sees each move before it is played
  (recording, text for people), ``timer`` receives each decision's seconds.

An illegal answer raises :class:`~tonk_env.engine.IllegalActionError`
naming the agent, the action and the legal actions.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .agent import Agent, PeekNotAllowed, action_id, peek_refusal
from .engine import GameState, IllegalActionError, TonkRules, action_to_string, legal_actions, seat_info
from .engine.state import OVER, PHASE_NAMES, is_legal
from .obs import LazyObs

Seats = Sequence[Agent] | Mapping[int, Agent]
"""The agents of a table by seat (a list, or a dict when some seats are not agents')."""


def agent_label(agent: Any) -> str:
    """How messages name an agent: its spec string when it has one, else its repr."""
    spec = getattr(agent, "spec", None)
    return f"agent {spec}" if isinstance(spec, str) and spec != "?" else f"agent {agent!r}"


def illegal_message(s: GameState, who: str, action: Any) -> str:
    """Why ``action`` is illegal for ``who`` in ``s``, naming it and the legal actions."""
    try:
        name = repr(action_to_string(s, action))
    except (ValueError, TypeError, IndexError):
        name = "out of the action table"
    if s.phase == OVER:
        return f"{who} played action {action} ({name}), but the hand is over; call reset()"
    legal = ", ".join(action_to_string(s, a) for a in legal_actions(s))
    return (
        f"illegal action {action} ({name}) for {who} (seat {s.cur}) in phase "
        f"{PHASE_NAMES[s.phase]}; legal actions: {legal}"
    )


def start_hand(
    seats: Seats, num_players: int, rules: TonkRules, seeds: Mapping[int, int] | Sequence[int] | None = None
) -> None:
    """Tell each seated agent a hand begins: ``reseed(seeds[seat])`` (with seeds), then ``reset_hand``."""
    items = seats.items() if isinstance(seats, Mapping) else enumerate(seats)
    for seat, agent in items:
        if seeds is not None:
            reseed = getattr(agent, "reseed", None)
            if reseed is not None:
                reseed(seeds[seat])
        reset = getattr(agent, "reset_hand", None)
        if reset is not None:
            reset(seat, num_players, rules)


def decide(
    agent: Agent,
    s: GameState,
    who: Callable[[int], str] | None = None,
    deadline: float | None = None,
    allow_peek: bool = False,
) -> int:
    """The legal move ``agent`` chooses for the seat to act in ``s`` (``who(seat)`` names it in errors).

    With ``deadline`` (a ``time.monotonic()`` instant), an agent that has a
    ``deadline`` attribute gets it for this decision and may raise
    :class:`~tonk_env.agent.DecisionTimeout`. A peek agent (``peeks`` true)
    is refused with :class:`~tonk_env.agent.PeekNotAllowed` unless
    ``allow_peek``; allowed, it gets ``s`` as its ``true_state``.
    """
    seat = s.cur
    if getattr(agent, "peeks", False):
        if not allow_peek:
            raise PeekNotAllowed(peek_refusal(who(seat) if who else agent_label(agent), "this table"))
        agent.true_state = s  # type: ignore[attr-defined]  # the peek contract (tonk_env.agent)
        try:
            return _decide(agent, s, who, deadline)
        finally:
            agent.true_state = None  # type: ignore[attr-defined]
    return _decide(agent, s, who, deadline)


def _decide(agent: Agent, s: GameState, who: Callable[[int], str] | None, deadline: float | None) -> int:
    """:func:`decide` once the peek check is done."""
    seat = s.cur
    info = seat_info(s, seat) if getattr(agent, "reads_info", True) else None
    if deadline is not None and hasattr(agent, "deadline"):
        agent.deadline = deadline
        try:
            raw = agent.act(LazyObs(s, seat), info)
        finally:
            agent.deadline = None
    else:
        raw = agent.act(LazyObs(s, seat), info)
    try:
        a = action_id(raw)
    except IllegalActionError:
        raise IllegalActionError(
            f"{who(seat) if who else agent_label(agent)} (seat {seat}) answered {raw!r}, not an action id"
        ) from None
    if not is_legal(s, a):
        raise IllegalActionError(illegal_message(s, who(seat) if who else agent_label(agent), a))
    return a


def play(
    s: GameState,
    seats: Seats,
    *,
    until: Callable[[GameState], bool] | None = None,
    on_move: Callable[[GameState, int], None] | None = None,
    timer: Callable[[int, float], None] | None = None,
    who: Callable[[int], str] | None = None,
    deadline: float | None = None,
    allow_peek: bool = False,
) -> GameState:
    """Play ``s`` in place with ``seats[seat]`` deciding for each seat, until the hand is over.

    ``until(s)`` true stops before the next decision; ``on_move(s, action)``
    is called before each move is played (``s.cur`` is the mover);
    ``timer(seat, seconds)`` gets the time of each decision; ``who(seat)``
    names the agent of a seat in errors; ``deadline`` bounds every decision
    (see :func:`decide`); ``allow_peek`` seats peek agents (cheats, see
    :mod:`tonk_env.agent`). Returns ``s``.
    """
    clock = time.perf_counter
    while s.phase != OVER:
        if until is not None and until(s):
            break
        seat = s.cur
        agent = seats[seat]
        if timer is None:
            a = decide(agent, s, who, deadline, allow_peek)
        else:
            t0 = clock()
            a = decide(agent, s, who, deadline, allow_peek)
            timer(seat, clock() - t0)
        if on_move is not None:
            on_move(s, a)
        s.play(a)
    return s
