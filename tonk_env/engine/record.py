"""Hand records: JSON that replays a hand to the same final state and payoffs.

A record is::

    {"format": "tonk-record/1", "rules": {...options...}, "rules_hash": "...",
     "num_players": 2, "dealer": 1, "deck": ["KS", ...],       # top first
     "actions": ["draw", "discard 9C", ...],                   # long-form strings
     "result": {"kind": ..., "payoffs": [...], ...} or null}
"""

from __future__ import annotations

import json
from typing import Any

from .cards import card_to_string
from .rules import TonkRules
from .state import GameState, new_game
from .strings import action_from_string

RECORD_FORMAT = "tonk-record/1"


def to_record(s: GameState) -> dict[str, Any]:
    """The JSON record of a hand (finished or not)."""
    return {
        "format": RECORD_FORMAT,
        "rules": s.rules.to_dict(),
        "rules_hash": s.rules.hash,
        "num_players": s.n,
        "dealer": s.dealer,
        "deck": [card_to_string(c) for c in s.deck],
        "actions": [s.table.name(a) for _, a in s.history],
        "result": s.result.to_dict() if s.result is not None else None,
    }


def replay(record: dict[str, Any] | str, check: bool = True) -> GameState:
    """Replay a record (dict or JSON text); with ``check``, verify its stored result."""
    rec = json.loads(record) if isinstance(record, str) else record
    if not isinstance(rec, dict):
        raise ValueError(f"a hand record is a JSON object, got {type(rec).__name__}")
    if rec.get("format") != RECORD_FORMAT:
        raise ValueError(f"not a Tonk hand record (format {rec.get('format')!r}, expected {RECORD_FORMAT!r})")
    rules = TonkRules.from_dict(rec["rules"])
    if check and rec.get("rules_hash") not in (None, rules.hash):
        raise ValueError(f"record rules_hash {rec['rules_hash']} does not match its rules ({rules.hash})")
    s = new_game(rules, rec["num_players"], deck=rec["deck"], dealer=rec["dealer"])
    actions = rec["actions"]
    if not isinstance(actions, list):
        raise ValueError(f"record actions must be a list of action strings, got {type(actions).__name__}")
    for i, text in enumerate(actions):
        if not isinstance(text, str):
            raise ValueError(f"record action {i} is {text!r}, not an action string ('draw', 'discard 4S')")
        try:
            s.play(action_from_string(s, text))
        except ValueError as e:
            raise ValueError(f"record action {i} {text!r} cannot be replayed: {e}") from None
    if check and rec.get("result") is not None:
        got = s.result.to_dict() if s.result is not None else None
        if got != rec["result"]:
            raise ValueError(f"replayed result {got} differs from the recorded {rec['result']}")
    return s
