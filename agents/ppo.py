"""The ``ppo:PATH`` agent: a training checkpoint's policy network, played with numpy.

It reads the checkpoint's metadata (:mod:`agents.checkpoint`) and the policy
weights (``policy.pth``, loaded with ``torch.load(weights_only=True)``, which
runs no pickled code) and plays with a numpy copy of the network
(:class:`agents.mlp.MLPPolicy`). Weights with a NaN or an infinity (a
diverged training) are refused at load, with the tensor named.
"""

from __future__ import annotations

import io
import math
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import torch

from tonk_env.errors import torch_load_message
from tonk_env.safe_arrays import check_zip_sizes, read_member

from .checkpoint import read_meta, resolve_checkpoint
from .mlp import MLPPolicy, layers_from_state_dict, parse_bool_param, upgrade_layout

__all__ = ["check_finite_state", "load_policy", "load_policy_state", "load_ppo_agent"]


def load_policy_state(path: str | Path) -> tuple[Path, dict[str, Any], dict[str, Any]]:
    """``(file, metadata, policy state dict)`` of a checkpoint; ``weights_only``: no pickled code runs."""
    p = resolve_checkpoint(path)
    meta = read_meta(p, older=True)
    try:
        with zipfile.ZipFile(p) as z:
            check_zip_sizes(z, str(p))
            blob = read_member(z, "policy.pth", str(p))
    except KeyError:
        raise ValueError(f"{p}: no policy.pth inside; not a MaskablePPO checkpoint") from None
    try:
        state = torch.load(io.BytesIO(blob), map_location="cpu", weights_only=True)
    except Exception as e:  # any failure here means a broken file
        raise ValueError(f"{p}: cannot read the policy weights ({torch_load_message(e)})") from None
    if not isinstance(state, dict):
        raise ValueError(f"{p}: policy.pth holds a {type(state).__name__}, not a state dict of tensors")
    check_finite_state(state, f"{p}: policy.pth")
    return p, meta, state


def check_finite_state(state: Any, where: str, key: str = "") -> None:
    """Raise ``ValueError`` naming the entry if a (nested) state dict holds a NaN or an infinity."""
    if isinstance(state, torch.Tensor):
        # numpy, not torch.isfinite: this runs in forked evaluation workers, where a torch kernel
        # deadlocks in OpenMP once the parent process has trained (libgomp is not fork-safe)
        if state.is_floating_point() and not _finite(state):
            raise ValueError(
                f"{where}: {key or 'a tensor'} holds NaN or infinite values (a diverged training); "
                "use an earlier checkpoint"
            )
    elif isinstance(state, float):
        if not math.isfinite(state):
            raise ValueError(f"{where}: {key or 'a value'} is {state}, not a finite number")
    elif isinstance(state, dict):
        for k, v in state.items():
            check_finite_state(v, where, f"{key}.{k}" if key else str(k))
    elif isinstance(state, (list, tuple)):
        for i, v in enumerate(state):
            check_finite_state(v, where, f"{key}[{i}]")


def _finite(t: torch.Tensor) -> bool:
    """Whether a floating tensor holds only finite values, checked with numpy where it can."""
    if t.dtype in (torch.float16, torch.float32, torch.float64):
        return bool(np.isfinite(t.detach().numpy()).all())
    return bool(torch.isfinite(t).all())  # bfloat16 and the like: numpy has no such type


def load_policy(path: str | Path, deterministic: bool = True, seed: int | None = None) -> MLPPolicy:
    """Load a checkpoint's policy network as a numpy :class:`MLPPolicy` (no pickled code runs)."""
    p, meta, state = load_policy_state(path)
    try:
        layers = layers_from_state_dict(state)
    except Exception as e:  # any failure here means a broken file
        raise ValueError(f"{p}: cannot read the policy weights ({e})") from None
    layers = upgrade_layout(p, meta, layers)
    pol = MLPPolicy(
        layers,
        activation=meta.get("activation", "tanh"),
        deterministic=deterministic,
        seed=seed,
        name=f"ppo:{path}",
        meta=meta,
    )
    if pol.obs_size != meta["obs_size"] or pol.num_actions != meta["num_actions"]:
        raise ValueError(f"{p}: network shape {pol.obs_size}->{pol.num_actions} does not match its metadata")
    return pol


def load_ppo_agent(path: str, seed: int | None = None, deterministic: Any = True, **params: Any) -> MLPPolicy:
    """The ``ppo:PATH`` agent: a run folder (its best.zip) or a checkpoint zip.

    It plays the masked argmax of the policy (``deterministic=false``: samples).
    """
    if params:
        raise ValueError(f"agent ppo:{path}: unknown parameters {sorted(params)}; known: deterministic")
    det = parse_bool_param(deterministic, "deterministic", f"ppo:{path}")
    return load_policy(path, deterministic=det, seed=seed)
