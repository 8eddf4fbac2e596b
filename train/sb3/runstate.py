"""What a checkpoint keeps beside the weights, so that a resumed run is the run it replaced.

A checkpoint ``checkpoints/step_<N>.zip`` is written at a rollout boundary
(after the PPO update). Its folder ``checkpoints/step_<N>/`` holds the
opponent pool and ``train_state.json``: the global python, numpy and torch
generators, and for every training env its deal generator (or the compiled
core's deal counters and generators) and its pool's streams (the baselines',
the uniform fallback's, the sampling frozen copies'). It also keeps a copy of
``best.zip`` and ``best.json`` as they were then.

Right after saving, every env deals a new hand (the hands in play end there,
their last step bootstrapped by the value function as a time limit is). A
resumed run restores the states and deals the same hands, so from the
checkpoint on it draws exactly what the uninterrupted run drew: the same
weights, evaluations and ``best.zip`` on the same machine
(:func:`rewind_run` first cuts ``metrics.jsonl`` back to the checkpoint and
puts back the ``best.zip`` of that moment). JSON only: nothing is unpickled.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np

from ..rngstate import global_states, set_global_states

STATE_NAME = "train_state.json"
STATE_VERSION = 1
#: The largest ``train_state.json`` read back (a few MB for thousands of envs).
MAX_STATE_BYTES = 256 * 2**20
_BEST = ("best.zip", "best.json")


def env_states(vec: Any) -> Any:
    """The random state of every training env (``vec_env`` dummy, subproc or core)."""
    if hasattr(vec, "random_state"):
        return vec.random_state()
    return vec.env_method("random_state")


def capture_state(vec: Any) -> dict[str, Any]:
    """The global generators and the envs' random states, as JSON data."""
    return {"version": STATE_VERSION, "globals": global_states(), "envs": env_states(vec)}


def restore_state(vec: Any, state: dict[str, Any]) -> None:
    """Put :func:`capture_state`'s states back (the pool's copies must have been pushed again first)."""
    set_global_states(state["globals"])
    envs = state["envs"]
    if hasattr(vec, "set_random_state"):
        vec.set_random_state(envs)
        return
    if not isinstance(envs, list) or len(envs) != vec.num_envs:
        raise ValueError(f"the saved state is for {len(envs)} envs, this run has {vec.num_envs} (n_envs)")
    for i, saved in enumerate(envs):
        vec.env_method("set_random_state", saved, indices=[i])


def redeal(model: Any, vec: Any) -> None:
    """Deal every env a new hand and make it the model's next observation."""
    model._last_obs = vec.reset()
    model._last_episode_starts = np.ones((vec.num_envs,), dtype=bool)


def write_state(folder: Path, state: dict[str, Any], run_dir: Path) -> None:
    """Write ``train_state.json`` and copy the run's ``best.zip`` and ``best.json`` into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in _BEST:
        src, dst = run_dir / name, folder / name
        if src.is_file():
            shutil.copyfile(src, dst)
        elif dst.exists():
            dst.unlink()
    tmp = folder / (STATE_NAME + ".tmp")
    tmp.write_text(json.dumps(state, separators=(",", ":")))
    tmp.replace(folder / STATE_NAME)


def read_state(folder: Path) -> dict[str, Any] | None:
    """A checkpoint's ``train_state.json`` (None when it has none); ``ValueError`` if it is broken."""
    path = folder / STATE_NAME
    if not path.is_file():
        return None
    size = path.stat().st_size
    if size > MAX_STATE_BYTES:
        raise ValueError(
            f"{path}: {size:,} bytes, over the limit of {MAX_STATE_BYTES:,} for a training state"
        )
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as e:
        raise ValueError(f"{path}: unreadable ({type(e).__name__}: {e})") from None
    if (
        not isinstance(state, dict)
        or state.get("version") != STATE_VERSION
        or not {"globals", "envs"} <= set(state)
    ):
        raise ValueError(f"{path}: not a version-{STATE_VERSION} training state")
    return state


def rewind_run(run_dir: Path, step: int, folder: Path) -> None:
    """Cut ``metrics.jsonl`` back to the step-``step`` checkpoint and restore that moment's ``best.*``.

    Lines the stopped run wrote after its checkpoint are dropped (the resumed
    run writes them again); ``best.zip`` and ``best.json`` become the copies
    kept with the checkpoint (or are removed if it kept none). A checkpoint
    without ``train_state.json`` (an older Tonk RL) leaves both as they are.
    """
    if not (folder / STATE_NAME).is_file():
        return
    for name in _BEST:
        kept, live = folder / name, run_dir / name
        if kept.is_file():
            if not live.is_file() or live.read_bytes() != kept.read_bytes():
                shutil.copyfile(kept, live)
        elif live.exists():
            live.unlink()
    metrics = run_dir / "metrics.jsonl"
    if not metrics.is_file():
        return
    lines = metrics.read_text(encoding="utf-8").splitlines(keepends=True)
    cut = None
    for i, line in enumerate(lines):
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if isinstance(row, dict) and row.get("type") == "checkpoint" and row.get("step") == step:
            cut = i + 1
    if cut is not None and cut < len(lines):
        tmp = metrics.with_name(metrics.name + ".tmp")
        tmp.write_text("".join(lines[:cut]), encoding="utf-8")
        tmp.replace(metrics)
