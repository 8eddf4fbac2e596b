"""Replays: a recorded hand as the list of positions the browser's replay viewer steps through.

A hand record (:mod:`tonk_env.engine.record`, ``tonk-record/1``) comes from
``tonk eval --record FILE.jsonl``, a tournament's ``hands/*.jsonl``, the
server's ``GET /api/games/{id}/record`` or an env's ``record()``.
:func:`replay_frames` replays it and returns one *frame* per position (the
deal, then after each action): the engine's JSON view of one seat, so the
other hands are face down until the hand is over, when the view's ``result``
shows every hand. ``seat=None`` ("open") adds every seat's hand to each frame
(``hands``), for watching a finished hand with all cards face up.

``POST /api/replay`` of ``tonk serve`` answers with this; the page at
``/replay`` (``frontends/static/replay.html``) draws it.
"""

from __future__ import annotations

import json
from typing import Any

from tonk_env.engine import GameState, deal_order, mask_to_strings, replay, view

#: Actions in a record the viewer replays at most (a hand of the default 200 turns has far fewer).
MAX_REPLAY_ACTIONS = 5000
#: Characters of an agent's name in ``seats`` kept at most.
MAX_NAME = 100
#: The parts of a view a frame leaves out (the same in every frame, or in ``actions``).
_DROPPED = ("rules", "rules_hash", "history", "legal_actions", "known_cards")


def _frame(s: GameState, seat: int | None) -> dict[str, Any]:
    """One position as the viewer draws it: ``seat``'s view, plus every hand when ``seat`` is None."""
    v = view(s, 0 if seat is None else seat)
    frame = {k: x for k, x in v.items() if k not in _DROPPED}
    frame["known_cards"] = v["known_cards"]
    if seat is None:
        frame["seat"] = None
        frame["hands"] = [mask_to_strings(h) for h in s.hands]
    return frame


def replay_frames(record: dict[str, Any] | str, seat: int | None = 0) -> dict[str, Any]:
    """Replay a hand record: every position from ``seat``'s view (None: every hand face up).

    Returns ``{"num_players", "dealer", "seats", "actions", "frames", "result"}``:
    ``actions`` lists ``[seat, action string]`` in order, ``frames[i]`` is the
    position after the first ``i`` actions, ``seats`` the record's agent names
    (if it has them). A record that does not replay is a ``ValueError`` saying why.
    """
    rec = json.loads(record) if isinstance(record, str) else record
    actions = rec.get("actions") if isinstance(rec, dict) else None
    if isinstance(actions, list) and len(actions) > MAX_REPLAY_ACTIONS:
        raise ValueError(
            f"the record has {len(actions)} actions; the viewer replays at most {MAX_REPLAY_ACTIONS}"
        )
    s = replay(rec, check=True)  # checks the format, every action and the stored result
    if seat is not None and (isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < s.n):
        raise ValueError(f"seat must be a seat 0..{s.n - 1} or null (every hand face up), got {seat!r}")
    g = deal_order(s.rules, s.n, list(s.deck), s.dealer)
    frames = [_frame(g, seat)]
    for _, a in s.history:
        g.play(a)
        frames.append(_frame(g, seat))
    seats = rec.get("seats")
    if isinstance(seats, list) and len(seats) == s.n and all(isinstance(x, str) for x in seats):
        seats = [x[:MAX_NAME] for x in seats]
    else:
        seats = None
    return {
        "num_players": s.n,
        "dealer": s.dealer,
        "seat": seat,
        "seats": seats,
        "actions": [[p, s.table.name(a)] for p, a in s.history],
        "frames": frames,
        "result": s.result.to_dict() if s.result is not None else None,
    }
