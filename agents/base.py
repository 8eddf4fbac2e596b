""":class:`BaseAgent`: a convenient base class for agents of the one contract.

The contract itself (``act(obs, info) -> action id`` and its optional parts)
is defined once, in :mod:`tonk_env.agent`; every consumer drives agents
through the one hand loop, :mod:`tonk_env.play`. This base class gives an
agent a seeded ``random.Random`` (``self.rng``), ``reseed``, a no-op
``reset_hand`` and its canonical spec string.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from tonk_env.engine.rules import TonkRules


class BaseAgent:
    """Base class for our agents: a seeded ``random.Random``, ``reseed`` and a no-op ``reset_hand``."""

    #: The canonical spec string (set by :func:`agents.registry.make_agent`).
    spec: str = "?"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def reseed(self, seed: int) -> None:
        """Reset the random generator (consumers do this before every hand)."""
        self.rng.seed(seed)

    def reset_hand(self, seat: int, num_players: int, rules: TonkRules) -> None:
        """Forget everything about the previous hand (nothing to forget by default)."""

    def act(self, obs: Mapping[str, Any], info: Any) -> int:
        """Return a legal action id (``info`` is the seat's ``SeatInfo``: our agents read it)."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.spec}>"
