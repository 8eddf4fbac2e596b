"""Tonk RL environments. The rules engine lives in :mod:`tonk_env.engine`.

Importing the package registers the Gymnasium id ``tonk_env/TonkSingle-v0``
(:data:`ENV_ID`): ``gymnasium.make(ENV_ID, ...)`` builds the single-agent env
(:class:`tonk_env.single.TonkSingleAgentEnv`) and ``gymnasium.make_vec(ENV_ID,
num_envs=N, vectorization_mode="vector_entry_point", ...)`` the batched one
(:class:`tonk_env.vector.TonkVectorEnv`), with the defaults :data:`MAKE_DEFAULTS`
(an illegal action is penalized, not raised). Through ``make``'s wrappers the
legal mask is ``env.get_wrapper_attr("action_masks")()`` (or
``env.unwrapped.action_masks()``); sb3-contrib's ``MaskablePPO`` finds it itself.
Importing the engine must not import
gymnasium, so the registration waits for gymnasium: it runs at once when
gymnasium is already imported, else right after gymnasium's own import.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import Any

__version__ = "0.1.0"

ENV_ID = "tonk_env/TonkSingle-v0"
"""The Gymnasium id of the single-agent env (and, with ``make_vec``, of the vector env)."""

MAKE_DEFAULTS = {"illegal_action": "penalize"}
"""The registered id's defaults, which differ from the classes': an illegal action ends the hand
with ``illegal_penalty`` (-1) for the learner instead of raising, so the unmasked random actions
of Gymnasium's and SB3's ``check_env`` (and of any library that samples ``action_space``) are a
documented outcome. Pass ``illegal_action="raise"`` to ``make`` for the strict behaviour."""


def __getattr__(name: str) -> Any:  # lazy: importing the engine must not pull in RL libraries
    if name in ("env", "raw_env"):
        from . import aec

        return getattr(aec, name)
    raise AttributeError(f"module 'tonk_env' has no attribute {name!r}")


def register_envs() -> None:
    """Register :data:`ENV_ID` with Gymnasium (once; the entry points are strings, imported on ``make``)."""
    from gymnasium.envs.registration import register, registry

    if ENV_ID not in registry:
        register(
            id=ENV_ID,
            entry_point="tonk_env.single:TonkSingleAgentEnv",
            vector_entry_point="tonk_env.vector:TonkVectorEnv",
            kwargs=dict(MAKE_DEFAULTS),
        )


class _RegisterAfterGymnasium(importlib.abc.MetaPathFinder):
    """Finds gymnasium with the other finders and registers the envs once its module has run."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != "gymnasium":
            return None
        sys.meta_path.remove(self)  # one time only; find_spec below asks the other finders
        spec = importlib.util.find_spec(fullname)
        loader = spec.loader if spec is not None else None
        run = getattr(loader, "exec_module", None)
        if spec is None or loader is None or run is None:
            return spec

        def exec_module(module: ModuleType) -> None:
            run(module)
            register_envs()

        loader.exec_module = exec_module  # type: ignore[method-assign]  # this spec's own loader
        return spec


if "gymnasium" in sys.modules:
    register_envs()
elif not any(isinstance(f, _RegisterAfterGymnasium) for f in sys.meta_path):
    sys.meta_path.insert(0, _RegisterAfterGymnasium())
