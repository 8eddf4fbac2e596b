"""``peek:ismcts``: the search with sight of the hidden cards. A cheat, kept as a diagnostic.

A peek agent measures *headroom*: how much an agent could gain by reading
the hidden cards perfectly. :class:`PeekSearchAgent` plays exactly as
``search:ismcts`` (:class:`agents.search.SearchAgent`, the same candidates,
playouts and parameters) except for the worlds it searches:

- ``peek:ismcts``: every sampled world holds the opponents' *true* hands; the
  stock is the true stock's cards in a random order (each world its own);
- ``peek:ismcts?stock=true``: every world is the true state, stock order
  included, so the search sees the future draws too.

The true state is outside the agent contract (:mod:`tonk_env.agent`): the
agent declares ``peeks = True`` and the hand loop (:mod:`tonk_env.play`) sets
its ``true_state`` for each decision only when its consumer allows cheats
(``allow_peek``); otherwise the loop refuses it with
:class:`~tonk_env.agent.PeekNotAllowed`. Consumers that are not meant for
cheats refuse a peek spec up front (:func:`refuse_peek`): the server, the zoo,
``tonk exploit``; ``tonk eval`` and tournaments accept one only when asked
(``--allow-peek``, ``allow_peek: true``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from tonk_env.agent import PeekNotAllowed, peek_refusal
from tonk_env.engine import GameState, SeatInfo

from .registry import parse_spec
from .search import SearchAgent, World

__all__ = ["PEEK_KIND", "PeekSearchAgent", "is_peek_spec", "refuse_peek"]

#: The spec kind of every peek agent (``peek:NAME``).
PEEK_KIND = "peek"


def is_peek_spec(spec: str) -> bool:
    """True when ``spec`` names a peek agent (a malformed spec is not one: its own check names it)."""
    try:
        return parse_spec(spec).kind == PEEK_KIND
    except ValueError:
        return False


def refuse_peek(specs: Iterable[str], where: str, flag: str | None = None) -> None:
    """Raise :class:`PeekNotAllowed` (one line) for the first peek spec among ``specs``."""
    for spec in specs:
        if is_peek_spec(spec):
            raise PeekNotAllowed(peek_refusal(f"agent {spec}", where, flag))


class PeekSearchAgent(SearchAgent):
    """``search:ismcts`` whose worlds are the true deal (module docstring); a cheat."""

    #: Asks the hand loop for the true state (granted only where cheats are allowed).
    peeks = True

    def __init__(self, seed: int | None = None, stock: bool = False, **params: Any) -> None:
        super().__init__(seed, **params)
        self.stock = stock
        #: The live game state, set by the hand loop around each decision (never changed here).
        self.true_state: GameState | None = None

    def worlds(self, info: SeatInfo, count: int) -> tuple[list[World], list[float]]:
        """``count`` worlds with the opponents' true hands (one world, the true state, with ``stock``)."""
        s = self.true_state
        if s is None:
            raise PeekNotAllowed(
                "peek:ismcts was asked to act without the true state: only a hand loop that allows "
                "peek agents (allow_peek) gives it"
            )
        if s.cur != info.seat or s.hands[info.seat] != info.hand:
            raise PeekNotAllowed("peek:ismcts: the true state given does not match the seat's view")
        hands = list(s.hands)
        if self.stock:
            # every world is the same: with the fast policy's deterministic playouts one suffices
            n = 1 if self.rollout_net is None else count
            return [(hands, list(s.stock)) for _ in range(n)], [1.0] * n
        out: list[World] = []
        shuffle = self.rng.shuffle
        for _ in range(count):
            stock = list(s.stock)
            shuffle(stock)
            out.append((hands, stock))
        return out, [1.0] * count
