"""The settings both envs take (reward scale, illegal actions, early ends, render mode, infos, redeals).

Declared once in :class:`EnvSettings` (:mod:`tonk_env.engine.schema`); the
envs' constructors keep their keyword arguments and check each through the
``check_*`` functions here, so a bad one reads like every other setting:
``early_end='skip' is invalid; allowed: 'deliver' or 'redeal'``.
"""

from __future__ import annotations

import typing
from dataclasses import dataclass
from typing import Any

from .engine.schema import check_value, field_allowed, setting

#: What the single-agent env does with a hand that ends before the learner acts.
EARLY_END_MODES = ("deliver", "redeal")
#: What an env does with an illegal action: raise, or end the hand with a penalty.
ILLEGAL_ACTION_MODES = ("raise", "penalize")
#: The render modes of both envs: text (returned or printed) and pictures (``tonk_env.frames``).
RENDER_MODES = ("ansi", "human", "rgb_array")
#: When the AEC env's infos hold the end-of-hand keys: only at the end, or on every step.
INFO_MODES = ("end", "every_step")


def _either(modes: tuple[str, ...]) -> str:
    return ", ".join(map(repr, modes[:-1])) + f" or {modes[-1]!r}"


@dataclass(frozen=True)
class EnvSettings:
    """The keyword settings of the envs besides the rules and the table, with their allowed values."""

    reward_scale: float = setting(1.0, "a finite number")
    """Rewards are stakes times this."""
    illegal_action: str = setting("raise", _either(ILLEGAL_ACTION_MODES), choices=ILLEGAL_ACTION_MODES)
    """``raise`` an :class:`~tonk_env.engine.IllegalActionError`, or ``penalize`` (the hand ends)."""
    illegal_penalty: float = setting(-1.0, "a finite number")
    """The reward of an illegal action under ``penalize``."""
    early_end: str = setting("deliver", _either(EARLY_END_MODES), choices=EARLY_END_MODES)
    """A hand that ends before the learner acts: ``deliver`` it, or ``redeal``."""
    render_mode: str | None = setting(None, "None, " + _either(RENDER_MODES), choices=RENDER_MODES)
    """None, ``ansi`` (text), ``human`` (printed) or ``rgb_array`` (pictures)."""
    infos: str = setting("end", _either(INFO_MODES), choices=INFO_MODES)
    """The AEC env's end-of-hand infos: only at the end, or on every step."""
    max_redeals: int = setting(100, "an int >= 0", low=0)
    """Hands dealt again at most by one ``reset()`` (``early_end="redeal"``; the AEC env's default, the
    single-agent env's is 1000)."""


@dataclass(frozen=True)
class VectorSettings:
    """The settings only the vector env (``tonk_env.vector.TonkVectorEnv``) takes, with what each allows."""

    num_envs: int = setting(1, "an int >= 1", low=1)
    """Games stepped at once."""
    oracle: bool = setting(False, "True or False")
    """Append the oracle critic's privileged features to the observation."""
    check: bool = setting(False, "True or False")
    """Compare every step with engine mirrors (slow; for tests)."""


_HINTS = {**typing.get_type_hints(EnvSettings), **typing.get_type_hints(VectorSettings)}


def _check(name: str, value: Any) -> Any:
    """``value`` of the setting ``name`` of :class:`EnvSettings` or :class:`VectorSettings`, checked."""
    cls = VectorSettings if name in VectorSettings.__dataclass_fields__ else EnvSettings
    return check_value("", name, value, _HINTS[name], field_allowed(cls, name))


def check_vector(num_envs: Any, oracle: Any, check: Any) -> tuple[int, bool, bool]:
    """Validate the vector env's ``num_envs`` (an int >= 1), ``oracle`` and ``check`` (booleans)."""
    return int(_check("num_envs", num_envs)), bool(_check("oracle", oracle)), bool(_check("check", check))


def check_reward_scale(reward_scale: Any) -> float:
    """Validate ``reward_scale`` (a finite number) and return it as a float."""
    return float(_check("reward_scale", reward_scale))


def check_illegal_action(mode: str, penalty: Any) -> float:
    """Validate ``illegal_action`` (``raise``/``penalize``) and its penalty; return the penalty."""
    _check("illegal_action", mode)
    return float(_check("illegal_penalty", penalty))


def check_early_end(mode: Any) -> str:
    """Validate ``early_end`` (``deliver``/``redeal``) and return it."""
    return str(_check("early_end", mode))


def check_infos(mode: Any) -> str:
    """Validate the AEC env's ``infos`` (``end``/``every_step``) and return it."""
    return str(_check("infos", mode))


def check_render_mode(render_mode: str | None) -> str | None:
    """Validate a render mode: None, ``"ansi"``, ``"human"`` or ``"rgb_array"``."""
    checked: str | None = _check("render_mode", render_mode)
    return checked


def check_max_redeals(max_redeals: Any) -> int:
    """Validate ``max_redeals`` (an int >= 0) and return it."""
    return int(_check("max_redeals", max_redeals))


def check_seats(learner_seat: Any, dealer: Any, n: int) -> None:
    """Check ``learner_seat`` (a seat or ``"random"``) and ``dealer`` (None, a seat or ``"random"``)."""
    if learner_seat != "random" and not (
        isinstance(learner_seat, int) and not isinstance(learner_seat, bool) and 0 <= learner_seat < n
    ):
        raise ValueError(f"learner_seat must be a seat 0..{n - 1} or 'random', got {learner_seat!r}")
    if (
        dealer is not None
        and dealer != "random"
        and not (isinstance(dealer, int) and not isinstance(dealer, bool) and 0 <= dealer < n)
    ):
        raise ValueError(f"dealer must be None, a seat 0..{n - 1} or 'random', got {dealer!r}")
