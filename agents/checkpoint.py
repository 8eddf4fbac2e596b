"""Checkpoints as agents: finding, checking and reading a training checkpoint, and the ``ppo:PATH`` agent.

A checkpoint is sb3-contrib's ``.zip`` (``MaskablePPO.save``) with one more
member, ``tonk_meta.json`` (:data:`META_NAME`): the rules (options and hash),
the number of players, the observation layout version and the action table
size. The ``ppo:PATH`` agent reads that metadata and the policy weights
(``policy.pth``, loaded with ``torch.load(weights_only=True)``, which runs
no pickled code) and plays with a numpy copy of the network.

Writing checkpoints (and resuming from them, which unpickles and so may run
code from the file) is training's business: :mod:`train.checkpoint`.
"""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path
from typing import Any

import torch

from tonk_env.obs import OBS_VERSION

from .mlp import MLPPolicy, layers_from_state_dict, parse_bool_param

__all__ = [
    "FORMAT", "META_NAME", "latest_checkpoint", "load_policy", "load_policy_state", "load_ppo_agent",
    "read_meta", "resolve_checkpoint",
]  # fmt: skip

META_NAME = "tonk_meta.json"
FORMAT = "tonk-ppo-checkpoint/1"


def resolve_checkpoint(path: str | Path) -> Path:
    """A run folder means its ``best.zip`` (else its newest checkpoint); a file is itself."""
    p = Path(path)
    if p.is_dir():
        if (p / "best.zip").is_file():
            return p / "best.zip"
        latest = latest_checkpoint(p)
        if latest is None:
            raise ValueError(f"{p}: a folder without best.zip or checkpoints/*.zip; not a training run")
        return latest
    if not p.exists():
        raise ValueError(f"{p}: no such checkpoint file")
    return p


def latest_checkpoint(run_dir: Path) -> Path | None:
    """The checkpoint with the highest step in ``run_dir/checkpoints``."""
    files = sorted((run_dir / "checkpoints").glob("step_*.zip"), key=lambda f: int(f.stem.split("_")[1]))
    return files[-1] if files else None


def read_meta(path: Path) -> dict[str, Any]:
    """Read and check ``tonk_meta.json``; raise ``ValueError`` naming the file and the problem."""
    try:
        with zipfile.ZipFile(path) as z:
            names = set(z.namelist())
            if META_NAME not in names:
                raise ValueError(f"{path}: a zip without {META_NAME}; not a Tonk RL checkpoint")
            meta = json.loads(z.read(META_NAME))
    except zipfile.BadZipFile:
        raise ValueError(f"{path}: not a zip file; not a Tonk RL checkpoint") from None
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: {META_NAME} is not valid JSON ({e})") from None
    if meta.get("format") != FORMAT:
        raise ValueError(f"{path}: checkpoint format {meta.get('format')!r}, expected {FORMAT!r}")
    if meta.get("obs_version") != OBS_VERSION:
        raise ValueError(
            f"{path}: trained with observation layout version {meta.get('obs_version')}, "
            f"this Tonk RL uses version {OBS_VERSION}; retrain or use a matching release"
        )
    return meta


def load_policy_state(path: str | Path) -> tuple[Path, dict[str, Any], dict[str, Any]]:
    """``(file, metadata, policy state dict)`` of a checkpoint; ``weights_only``: no pickled code runs."""
    p = resolve_checkpoint(path)
    meta = read_meta(p)
    try:
        with zipfile.ZipFile(p) as z:
            blob = z.read("policy.pth")
    except KeyError:
        raise ValueError(f"{p}: no policy.pth inside; not a MaskablePPO checkpoint") from None
    try:
        state = torch.load(io.BytesIO(blob), map_location="cpu", weights_only=True)
    except Exception as e:  # noqa: BLE001 - any failure here means a broken file
        raise ValueError(f"{p}: cannot read the policy weights ({e})") from None
    return p, meta, state


def load_policy(path: str | Path, deterministic: bool = True, seed: int | None = None) -> MLPPolicy:
    """Load a checkpoint's policy network as a numpy :class:`MLPPolicy` (no pickled code runs)."""
    p, meta, state = load_policy_state(path)
    try:
        layers = layers_from_state_dict(state)
    except Exception as e:  # noqa: BLE001 - any failure here means a broken file
        raise ValueError(f"{p}: cannot read the policy weights ({e})") from None
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
