"""The end-of-hand info dicts both envs return: a played-out result, or an illegal action's penalty."""

from __future__ import annotations

from typing import Any

from .engine import GameState


def result_info(s: GameState) -> dict[str, Any]:
    """The end-of-hand info: result kind, payoffs (stakes), counts, the ending seat, detail, turns."""
    r = s.result
    if r is None:
        raise ValueError("the hand is not over")
    return {
        "result_kind": r.kind,
        "payoffs": list(r.payoffs),
        "counts": list(r.counts),
        "ended_by": r.seat,
        "detail": r.detail,
        "turns": s.turn,
    }


def illegal_info(offender: int, action: int, penalty: float, n: int) -> dict[str, Any]:
    """The end-of-hand info after an illegal action under ``illegal_action="penalize"``."""
    return {
        "result_kind": "illegal_action",
        "payoffs": [penalty if i == offender else 0.0 for i in range(n)],
        "ended_by": offender,
        "action": action,
    }


#: The keys of every step's info in both envs (the vector env keeps its own per-key arrays):
#: the end-of-hand keys, with the neutral values of :func:`neutral_info` until the hand ends.
STEP_INFO_KEYS = ("result_kind", "payoffs", "counts", "ended_by", "detail", "turns", "action")


def neutral_info(n: int) -> dict[str, Any]:
    """The end-of-hand keys with neutral values, as every step's info holds them before the hand ends.

    ``result_kind`` and ``detail`` are ``""``, ``payoffs`` ``0.0`` and ``counts``
    ``0`` per seat, ``ended_by`` and ``action`` ``-1``, ``turns`` ``0``: no key is
    missing or None, so libraries that stack infos into arrays (Tianshou's
    buffer) find the same keys and types on every step.
    """
    return {
        "result_kind": "",
        "payoffs": [0.0] * n,
        "counts": [0] * n,
        "ended_by": -1,
        "detail": "",
        "turns": 0,
        "action": -1,
    }


def step_info(n: int, end: dict[str, Any] | None = None) -> dict[str, Any]:
    """A step's info: :func:`neutral_info` overlaid with the end-of-hand info ``end`` (when the hand ended).

    At the end, ``payoffs`` are floats and an ``ended_by`` of None (``max_turns``,
    a void deal) is ``-1``; the keys absent from ``end`` keep their neutral values
    (an illegal action's ending has no ``counts``; a played-out one no ``action``).
    """
    info = neutral_info(n)
    if end:
        info.update({k: list(v) if isinstance(v, list) else v for k, v in end.items()})
        info["payoffs"] = [float(p) for p in info["payoffs"]]
        if info["ended_by"] is None:
            info["ended_by"] = -1
    return info
