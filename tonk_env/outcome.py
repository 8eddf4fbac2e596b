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
