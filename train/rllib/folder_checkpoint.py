"""Checkpoints of the RLlib backend: a folder per checkpoint, written and read without pickle.

``checkpoints/step_<N>/`` (and ``best/``) holds::

    tonk_meta.json   format, rules and hash, players, observation layout, net sizes, step
    policy.npz       the policy network as a safe agent file (agents.mlp.MLPPolicy; rllib:PATH loads it)
    learner.pt       the learner's module weights and optimizer state, tensors only
                     (read with torch.load(weights_only=True): no pickled code runs)
    state.json       step and iteration counters
    pool/            the opponent pool's snapshots (:func:`train.run_folder.write_pool`, as the SB3 backend's)

RLlib's own ``Algorithm.save_to_path`` is not used: its state files are
pickled, so a downloaded run folder could run code on ``--resume``. Here
``--resume`` rebuilds the algorithm from the run's ``config.yaml`` and loads
the learner state from ``learner.pt``; the env runners receive the weights
from the learner. A folder is written under a temporary name and renamed, so
a kill leaves no half checkpoint under a ``step_<N>`` name.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from agents.mlp import MLPPolicy
from agents.ppo import check_finite_state
from agents.rllib_agent import FORMAT, META_NAME, read_rllib_meta
from tonk_env.engine import TonkRules
from tonk_env.errors import torch_load_message
from tonk_env.safe_arrays import check_torch_file

from ..pool import Layers
from ..run_folder import read_pool, write_pool

__all__ = ["RllibCheckpoint", "read_rllib_checkpoint", "rllib_checkpoints", "write_rllib_checkpoint"]

#: The name of a run's RLlib checkpoints: ``checkpoints/step_<N>`` folders.
_STEP_DIR = re.compile(r"step_(\d+)")


def _to_tensors(x: Any) -> Any:
    """Numpy arrays of a nested state as torch tensors (what ``weights_only`` loading accepts)."""
    if isinstance(x, np.ndarray):
        return torch.from_numpy(np.ascontiguousarray(x))
    if isinstance(x, Mapping):
        return {k: _to_tensors(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return type(x)(_to_tensors(v) for v in x)
    if isinstance(x, np.generic):
        return x.item()
    return x


def _to_numpy(x: Any) -> Any:
    """The inverse of :func:`_to_tensors`: tensors back to numpy arrays, as RLlib's states hold them."""
    if isinstance(x, torch.Tensor):
        return x.numpy()
    if isinstance(x, Mapping):
        return {k: _to_numpy(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return type(x)(_to_numpy(v) for v in x)
    return x


def write_rllib_checkpoint(
    folder: Path,
    meta: dict[str, Any],
    layers: Layers,
    learner_state: Mapping[str, Any] | None,
    counters: dict[str, int],
    snapshots: list[tuple[int, Layers]],
) -> Path:
    """Write a checkpoint folder (atomically: a temporary name, then renamed over ``folder``)."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = folder.with_name(folder.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    (tmp / META_NAME).write_text(json.dumps({"format": FORMAT, **meta}, indent=1))
    MLPPolicy(layers, activation=meta["activation"], meta=meta).save_npz(tmp / "policy.npz")
    if learner_state is not None:
        torch.save(_to_tensors(learner_state), tmp / "learner.pt")
    (tmp / "state.json").write_text(json.dumps(counters))
    write_pool(tmp / "pool", None, snapshots, meta["activation"])
    old = folder.with_name(folder.name + ".old")
    if folder.exists():
        shutil.rmtree(old, ignore_errors=True)
        folder.rename(old)
    tmp.rename(folder)
    shutil.rmtree(old, ignore_errors=True)
    return folder


@dataclass(frozen=True)
class RllibCheckpoint:
    """A checkpoint folder read safely: metadata, learner state (numpy), counters, pool snapshots."""

    path: Path
    meta: dict[str, Any]
    learner_state: dict[str, Any]
    counters: dict[str, int]
    snapshots: list[tuple[int, Layers]]

    @property
    def step(self) -> int:
        """The number of steps trained when it was saved."""
        return self.counters["step"]


def rllib_checkpoints(run_dir: Path) -> list[tuple[int, Path]]:
    """``(step, folder)`` of every ``checkpoints/step_<N>`` folder of a run, newest first."""
    found = []
    for f in (run_dir / "checkpoints").glob("step_*"):
        m = _STEP_DIR.fullmatch(f.name)
        if m and f.is_dir():
            found.append((int(m.group(1)), f))
    return sorted(found, reverse=True)


def read_rllib_checkpoint(path: Path, rules: TonkRules, num_players: int) -> RllibCheckpoint:
    """Read a checkpoint folder whole, safely; ``ValueError`` names the file and the problem.

    Other rules or another player count than the run's is refused, as are NaN
    weights, a missing member and counters that disagree with the metadata.
    """
    meta = read_rllib_meta(path)
    if meta.get("rules_hash") != rules.hash:
        raise ValueError(f"{path}: trained for rules {meta.get('rules_hash')}, this run uses {rules.hash}")
    if meta.get("num_players") != num_players:
        raise ValueError(f"{path}: trained for {meta.get('num_players')} players, this run has {num_players}")
    try:
        check_torch_file(path / "learner.pt")  # its sizes, before torch decompresses anything
        state = torch.load(path / "learner.pt", map_location="cpu", weights_only=True)
    except FileNotFoundError:
        raise ValueError(f"{path}: no learner.pt inside; not a resumable RLlib checkpoint") from None
    except Exception as e:  # a truncated or planted file fails in torch's safe unpickler
        raise ValueError(f"{path}: cannot read learner.pt safely ({torch_load_message(e)})") from None
    if not isinstance(state, dict):
        raise ValueError(f"{path}: learner.pt holds a {type(state).__name__}, not a state dict")
    check_finite_state(state.get("rl_module", {}), f"{path}: learner.pt")
    try:
        counters = json.loads((path / "state.json").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"{path}: state.json unreadable ({e})") from None
    if not isinstance(counters, dict) or not all(
        isinstance(counters.get(k), int) and not isinstance(counters.get(k), bool) and counters[k] >= 0
        for k in ("step", "iterations")
    ):
        raise ValueError(f"{path}: state.json must hold step and iterations counts")
    if counters["step"] != meta.get("step"):
        raise ValueError(
            f"{path}: its metadata says step {meta.get('step')}, its state.json {counters['step']}"
        )
    _, snapshots = read_pool(path / "pool")
    return RllibCheckpoint(path, meta, _to_numpy(state), counters, snapshots)
