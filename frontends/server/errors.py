"""The games' refusals: what the lobby and the desk raise, in the games' words, with no HTTP in them.

The routes give each its status (:data:`.routes.STATUS`); the desk in a child
process sends them back by name (:mod:`.child`).

================  ======  ================================================================
refusal           status  when
================  ======  ================================================================
``BadRequest``    400     an illegal or unreadable move, rules, agent spec or hand record
``NotAllowed``    403     an agent that loads a file the server was not started with
``NoSuchGame``    404     a game id that is unknown, deleted, evicted or expired
``NotNow``        409     not the person's turn, the hand over (or not yet), the wrong seat
``AgentFailed``   500     an agent answered a query with an illegal move
================  ======  ================================================================
"""

from __future__ import annotations

from ..table import NotNow

__all__ = ["REFUSALS", "AgentFailed", "BadRequest", "NoSuchGame", "NotAllowed", "NotNow"]


class BadRequest(Exception):
    """A move, rules, agent spec or record that is illegal or cannot be read."""


class NotAllowed(Exception):
    """Something this server does not allow (an agent that loads a file not on its allow-list)."""


class NoSuchGame(LookupError):
    """A game id that names no live game."""


class AgentFailed(RuntimeError):
    """An agent that broke its contract (an illegal move)."""


#: Every refusal, by class name (how the child process sends one back).
REFUSALS: dict[str, type[Exception]] = {
    cls.__name__: cls for cls in (BadRequest, NotAllowed, NoSuchGame, NotNow, AgentFailed)
}
