"""Tonk RL environments. The rules engine lives in :mod:`tonk_env.engine`."""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"


def __getattr__(name: str) -> Any:  # lazy: importing the engine must not pull in RL libraries
    if name in ("env", "raw_env"):
        from . import aec

        return getattr(aec, name)
    raise AttributeError(f"module 'tonk_env' has no attribute {name!r}")
