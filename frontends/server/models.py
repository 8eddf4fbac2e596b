"""The API's request bodies and error answers (pydantic models; they are the OpenAPI schema).

Numbers are strict (a boolean is not a seat or a seed) and bounded: seeds
0..2**32-1 (the one seed rule), players 2..6, seat 0..5; agent specs are non-empty strings of at
most 1000 characters, at most 5 of them.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StrictStr

from .limits import MAX_SEED


def _number(value: Any) -> Any:
    """Refuse booleans and strings where a JSON integer is expected (``4`` and ``4.0`` pass on)."""
    if isinstance(value, bool | str):
        raise ValueError("must be a JSON integer, not a boolean or a string")
    return value


#: A JSON integer (``4.0`` included, as JSON Schema has it; not ``true``, ``"4"`` or ``4.5``).
Whole = Annotated[int, BeforeValidator(_number)]
Seed = Annotated[int, Field(ge=0, le=MAX_SEED), BeforeValidator(_number)]
Seat = Annotated[int, Field(ge=0, le=5), BeforeValidator(_number)]
Spec = Annotated[StrictStr, Field(min_length=1, max_length=1000)]


class NewGame(BaseModel):
    """A new game: the table, the rules and who sits where."""

    model_config = ConfigDict(extra="forbid")

    players: Whole = Field(2, ge=2, le=6, description="seats at the table")
    rules: StrictStr = Field("standard", max_length=100, description="rules preset (see GET /api/rules)")
    options: dict[str, Any] = Field(default_factory=dict, description="rule options changed from the preset")
    seat: Whole = Field(0, ge=0, le=5, description="the person's seat (seat 0 plays first in the first hand)")
    agents: list[Spec] = Field(
        default_factory=list,
        max_length=5,
        description="agent specs for the other seats, cycled (default: the first offered)",
    )
    seed: Seed | None = Field(None, description="seed of the deals and the agents (default: random)")


class ActionIn(BaseModel):
    """A move of the person's seat."""

    model_config = ConfigDict(extra="forbid")

    action: StrictStr | Whole = Field(
        ..., description="an action string ('draw', 'discard 4S', 'hit 9H on 8H') or id (not a boolean)"
    )
    seat: Seat | None = Field(None, description="must be the game's seat if given")


class ReplayQuery(BaseModel):
    """A recorded hand to step through, and whose view to show."""

    model_config = ConfigDict(extra="forbid")

    record: dict[str, Any] = Field(..., description="a hand record (tonk-record/1), finished or not")
    seat: Seat | None = Field(0, description="the seat whose view is shown; null: every hand face up")


class AgentQuery(BaseModel):
    """Ask an agent for its move in the position a hand record reaches."""

    model_config = ConfigDict(extra="forbid")

    agent: Spec = Field(..., description="agent spec, e.g. heuristic:expert")
    record: dict[str, Any] = Field(..., description="a hand record (tonk-record/1) of an unfinished hand")
    seat: Seat | None = Field(None, description="the seat expected to act (checked if given)")
    seed: Seed | None = Field(None, description="seed of the agent's random choices (default 0)")


class ErrorOut(BaseModel):
    """Every error answer: one line saying what was wrong."""

    detail: str = Field(..., description="what was wrong, with the input quoted cut to about 100 characters")


class InvalidOut(BaseModel):
    """A 422: the request's fields did not match the schema (or its body was not plain JSON)."""

    detail: str = Field(..., description="one line naming every bad field")
    errors: list[dict[str, Any]] = Field(
        ..., description="pydantic's errors (loc, msg, type; an echoed input cut to about 100 characters)"
    )


#: When each error status is answered (the OpenAPI descriptions).
STATUS_WORDS: dict[int, str] = {
    400: "a bad value (an illegal action, bad rules, an unknown agent or parameter, a parameter above the "
    "server's cap, a record that does not replay), or a Host header not served (see --allowed-hosts)",
    403: "an agent loaded from a file whose path the server was not started with",
    404: "unknown, deleted, evicted or expired game",
    408: "the request body was not sent in time (the connection is closed)",
    409: "not your turn, or the hand is over / not over yet",
    413: "the request body is larger than the server's limit",
    422: "malformed JSON (a number that is not finite included), a missing or unknown field, a value out of "
    "range or of the wrong type",
    429: "this client's or this game's share is in use (its requests queued or running, its live games), or "
    "the lobby is full; retry after Retry-After seconds",
    503: "the agents are busy (the queue is full), or the request's work was stopped (past --max-seconds "
    "from its arrival, the client gone, the server shutting down); nothing was changed; retry after "
    "Retry-After seconds",
}
RETRY_AFTER = {
    "Retry-After": {"description": "seconds to wait before retrying", "schema": {"type": "integer"}}
}
#: Answers every route may give (the Host guard, the body guard).
COMMON = (400, 408, 413)


def responses(*codes: int) -> dict[int | str, dict[str, Any]]:
    """The OpenAPI ``responses`` of a route that answers ``codes`` (and the common ones)."""
    out: dict[int | str, dict[str, Any]] = {}
    for code in sorted({*codes, *COMMON}):
        entry: dict[str, Any] = {
            "model": InvalidOut if code == 422 else ErrorOut,
            "description": STATUS_WORDS[code],
        }
        if code in (429, 503):
            entry["headers"] = RETRY_AFTER
        out[code] = entry
    return out
