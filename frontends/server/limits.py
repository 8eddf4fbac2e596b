"""The server's bounds: work per request, body size, time, capacity and the lobby's share per client.

Every figure a client can run into is a field of :class:`Limits` (a flag of
``tonk serve``), and :meth:`Limits.describe` puts them in words into
``/openapi.json``.
"""

from __future__ import annotations

from dataclasses import dataclass

from tonk_env.engine.numbers import MAX_SEED as ENGINE_MAX_SEED
from tonk_env.engine.schema import check, setting

#: Length of an action string at most (400 above).
MAX_TEXT = 100
#: Seeds are whole numbers 0..MAX_SEED: the one seed rule of every command and config
#: (:data:`tonk_env.engine.numbers.MAX_SEED`, 2**32-1), exact as a JSON number in JavaScript too.
MAX_SEED = ENGINE_MAX_SEED
_WHOLE_0 = "a whole number >= 0"
_WHOLE_1 = "a whole number >= 1"


def clip(text: str, limit: int = MAX_TEXT) -> str:
    """``text`` cut to ``limit`` characters (for echoing input back in an error)."""
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} characters)"


@dataclass(frozen=True)
class Limits:
    """The bounds on the server's work, time and size (``tonk serve --max-budget ...``; in /openapi.json)."""

    max_budget: int = setting(1000, _WHOLE_0, low=0)
    """``search:ismcts`` budget (sampled worlds per searched decision) at most."""
    max_samples: int = setting(2000, _WHOLE_0, low=0)
    """``search:ismcts`` drop_samples and ``heuristic:expert`` samples at most."""
    max_candidates: int = setting(3, _WHOLE_0, low=0)
    """``search:ismcts`` candidates (discards searched) at most."""
    max_body: int = setting(65536, _WHOLE_1, low=1)
    """Request body size in bytes at most (413 above)."""
    max_seconds: float = setting(10.0, "a finite number >= 0", low=0)
    """Seconds one request may take from its arrival, waiting for a worker included; past it: 503."""
    workers: int = setting(2, _WHOLE_1, low=1)
    """Threads that run the agents' work (the rest of the server never waits for them)."""
    max_queue: int = setting(32, _WHOLE_0, low=0)
    """Requests waiting for an agent worker at most (503 with Retry-After above)."""
    max_client_work: int = setting(4, _WHOLE_1, low=1)
    """One client's requests queued or running at most (429 with Retry-After above)."""
    max_client_games: int = setting(20, _WHOLE_1, low=1)
    """One client's live games at most (429 above)."""
    header_seconds: float = setting(5.0, "a finite number > 0", low=0, low_open=True)
    """Seconds a connection may take to send a request's line and headers (closed past it)."""
    body_seconds: float = setting(10.0, "a finite number > 0", low=0, low_open=True)
    """Seconds a request may take to send its body once its headers arrived (408, closed, past it)."""

    def __post_init__(self) -> None:
        check(self, flag=True)  # a message names the flag: --max-budget=-1 is invalid; allowed: ...

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
