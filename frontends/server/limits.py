"""The server's bounds: work per request, body size, time, capacity and the lobby's share per client.

Every figure a client can run into is a field of :class:`Limits` (a flag of
``tonk serve``), and :meth:`Limits.describe` puts them in words into
``/openapi.json``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from tonk_env.engine.numbers import MAX_SEED as ENGINE_MAX_SEED

#: Length of an action string at most (400 above).
MAX_TEXT = 100
#: Seeds are whole numbers 0..MAX_SEED: the one seed rule of every command and config
#: (:data:`tonk_env.engine.numbers.MAX_SEED`, 2**32-1), exact as a JSON number in JavaScript too.
MAX_SEED = ENGINE_MAX_SEED


def clip(text: str, limit: int = MAX_TEXT) -> str:
    """``text`` cut to ``limit`` characters (for echoing input back in an error)."""
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} characters)"


@dataclass(frozen=True)
class Limits:
    """The bounds on the server's work, time and size (``tonk serve --max-budget ...``; in /openapi.json)."""

    max_budget: int = 1000
    """``search:ismcts`` budget (sampled worlds per searched decision) at most."""
    max_samples: int = 2000
    """``search:ismcts`` drop_samples and ``heuristic:expert`` samples at most."""
    max_candidates: int = 3
    """``search:ismcts`` candidates (discards searched) at most."""
    max_body: int = 65536
    """Request body size in bytes at most (413 above)."""
    max_seconds: float = 10.0
    """Seconds one request may take from its arrival, waiting for a worker included; past it: 503."""
    workers: int = 2
    """Threads that run the agents' work (the rest of the server never waits for them)."""
    max_queue: int = 32
    """Requests waiting for an agent worker at most (503 with Retry-After above)."""
    max_client_work: int = 4
    """One client's requests queued or running at most (429 with Retry-After above)."""
    max_client_games: int = 20
    """One client's live games at most (429 above)."""
    header_seconds: float = 5.0
    """Seconds a connection may take to send a request's line and headers (closed past it)."""
    body_seconds: float = 10.0
    """Seconds a request may take to send its body once its headers arrived (408, closed, past it)."""

    def __post_init__(self) -> None:
        for flag, value, least in [
            ("--max-budget", self.max_budget, 0),
            ("--max-samples", self.max_samples, 0),
            ("--max-candidates", self.max_candidates, 0),
            ("--max-body", self.max_body, 1),
            ("--workers", self.workers, 1),
            ("--max-queue", self.max_queue, 0),
            ("--max-client-work", self.max_client_work, 1),
            ("--max-client-games", self.max_client_games, 1),
        ]:
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise ValueError(f"{flag} must be a whole number >= {least}, got {value!r}")
        for flag, seconds, positive in [
            ("--max-seconds", self.max_seconds, False),
            ("--header-seconds", self.header_seconds, True),
            ("--body-seconds", self.body_seconds, True),
        ]:
            ok = isinstance(seconds, int | float) and not isinstance(seconds, bool)
            if not (ok and (0 < seconds if positive else 0 <= seconds) and seconds < math.inf):
                bound = "> 0" if positive else ">= 0"
                raise ValueError(f"{flag} must be a finite number {bound}, got {seconds!r}")

    def caps(self) -> dict[tuple[str, str], int]:
        """``{(agent key, parameter): cap}``."""
        return {
            ("search:ismcts", "budget"): self.max_budget,
            ("search:ismcts", "drop_samples"): self.max_samples,
            ("search:ismcts", "candidates"): self.max_candidates,
            ("heuristic:expert", "samples"): self.max_samples,
        }

    def describe(self) -> str:
        """The limits in words, for the OpenAPI description and the docs."""
        caps = ", ".join(f"{key} {param} <= {cap}" for (key, param), cap in self.caps().items())
        return (
            f"Limits per request: {caps} (above: 400); a request that makes agents work is answered "
            f"within {self.max_seconds:g} s of its arrival, its wait for one of the {self.workers} agent "
            "workers included (past it, or when its client goes away, the work stops: 503, nothing "
            f"changed); at most {self.max_queue} requests wait for a worker (503 with Retry-After above) "
            f"and {self.max_client_work} of one client are queued or running (429 with Retry-After "
            f"above); one client holds at most {self.max_client_games} live games (429); request bodies "
            f"<= {self.max_body} bytes (413), sent within {self.body_seconds:g} s (408); action strings "
            f"<= {MAX_TEXT} characters; seeds 0..{MAX_SEED}."
        )
