"""Validation of the options both envs take (reward scale, illegal actions, early ends, render mode)."""

from __future__ import annotations

from typing import Any

import numpy as np

#: What the single-agent env does with a hand that ends before the learner acts.
EARLY_END_MODES = ("deliver", "redeal")


def check_reward_scale(reward_scale: Any) -> float:
    """Validate ``reward_scale`` (a finite number) and return it as a float."""
    if isinstance(reward_scale, bool) or not isinstance(reward_scale, (int, float, np.floating, np.integer)):
        raise ValueError(f"reward_scale must be a number, got {reward_scale!r}")
    v = float(reward_scale)
    if not np.isfinite(v):
        raise ValueError(f"reward_scale must be finite, got {reward_scale!r}")
    return v


def check_illegal_action(mode: str, penalty: Any) -> float:
    """Validate ``illegal_action`` (``raise``/``penalize``) and its penalty; return the penalty."""
    if mode not in ("raise", "penalize"):
        raise ValueError(f"illegal_action must be 'raise' or 'penalize', got {mode!r}")
    if isinstance(penalty, bool) or not isinstance(penalty, (int, float)) or not np.isfinite(penalty):
        raise ValueError(f"illegal_penalty must be a finite number, got {penalty!r}")
    return float(penalty)


def check_early_end(mode: Any) -> str:
    """Validate ``early_end`` (``deliver``/``redeal``) and return it."""
    if not isinstance(mode, str) or mode not in EARLY_END_MODES:
        raise ValueError(f"early_end must be 'deliver' or 'redeal', got {mode!r}")
    return mode


#: The render modes of both envs: text (returned or printed) and pictures (``tonk_env.frames``).
RENDER_MODES = ("ansi", "human", "rgb_array")
#: When the AEC env's infos hold the end-of-hand keys: only at the end, or on every step.
INFO_MODES = ("end", "every_step")


def check_infos(mode: Any) -> str:
    """Validate the AEC env's ``infos`` (``end``/``every_step``) and return it."""
    if not isinstance(mode, str) or mode not in INFO_MODES:
        raise ValueError(f"infos must be 'end' or 'every_step', got {mode!r}")
    return mode


def check_render_mode(render_mode: str | None) -> str | None:
    """Validate a render mode: None, ``"ansi"``, ``"human"`` or ``"rgb_array"``."""
    if render_mode is not None and render_mode not in RENDER_MODES:
        raise ValueError(f"render_mode must be None, 'ansi', 'human' or 'rgb_array', got {render_mode!r}")
    return render_mode
