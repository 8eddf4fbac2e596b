"""The end-of-hand info dicts the envs return: a played-out result, or an illegal action's penalty.

:func:`batch_infos` stacks per-game infos into Gymnasium's vector info dict
(the vector env's ``infos``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

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


#: Info keys whose values are not one kind of number in every hand (a seat or None, lists).
OBJECT_KEYS = frozenset({"ended_by", "payoffs", "counts", "detail", "result_kind", "action"})


def batch_infos(entries: Sequence[tuple[int, dict[str, Any]]], num_envs: int) -> dict[str, Any]:
    """Gymnasium's vector info dict of per-game infos: ``key`` an array over the games, ``_key`` its mask.

    Like ``VectorEnv._add_info``, except that a key whose values are not all
    numbers of one kind (a seat or None, a list) gets an object array, whatever
    the values of this step are: ``ended_by``, ``payoffs`` and ``counts`` are
    always object arrays, ``turns`` int64, ``skipped_payoff`` float64.
    """
    values: dict[str, list[tuple[int, Any]]] = {}
    for g, info in entries:
        for key, v in info.items():
            values.setdefault(key, []).append((g, v))
    out: dict[str, Any] = {}
    for key, items in values.items():
        kinds = {type(v) for _, v in items}
        dtype: Any = object
        if key not in OBJECT_KEYS and len(kinds) == 1:
            dtype = {bool: np.bool_, int: np.int64, float: np.float64}.get(kinds.pop(), object)
        array = (
            np.zeros(num_envs, dtype=dtype) if dtype is not object else np.full(num_envs, None, dtype=object)
        )
        mask = np.zeros(num_envs, dtype=np.bool_)
        for g, v in items:
            array[g] = v
            mask[g] = True
        out[key], out[f"_{key}"] = array, mask
    return out
