"""``random``: uniform over the legal actions.

The bottom rung of the ladder and a sanity check for the harness: two
random agents must come out even. Note that uniform play drops often (the
drop is one of two or three start-of-turn choices), so random hands are short.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tonk_env.engine import SeatInfo

from .base import BaseAgent


class RandomAgent(BaseAgent):
    """Picks one of ``info.legal`` uniformly with its own seeded generator."""

    def act(self, obs: Mapping[str, Any], info: SeatInfo) -> int:
        """A uniformly random legal action."""
        legal = info.legal
        return legal[int(self.rng.random() * len(legal))]
