"""Checkpoints: saving them with Tonk metadata, warm starts and the ``.npz`` export.

A checkpoint is sb3-contrib's ``.zip`` (``MaskablePPO.save``) with one more
member, ``tonk_meta.json``: the rules (options and hash), the number of
players, the observation layout version and the action table size. Reading a
checkpoint (the ``ppo:PATH`` agent, :func:`resolve_checkpoint`,
:func:`read_meta`) is the agents' business: :mod:`agents.checkpoint`.

Security: nothing here unpickles. Resuming rebuilds the model from the run's
``config.yaml`` and reads the checkpoint with safe loaders only
(:func:`restore_checkpoint`): the policy and optimizer tensors with
``torch.load(weights_only=True)``, the step counters from SB3's ``data``
member as plain JSON (its pickled entries are never decoded), the opponent
pool from ``.npz`` files without pickle. A planted run folder cannot run
code. SB3's ``MaskablePPO.load``, which unpickles, is not used.
"""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path
from typing import Any

import torch

from agents.checkpoint import FORMAT, META_NAME, read_meta
from agents.ppo import load_policy, load_policy_state
from tonk_env.engine import TonkRules, action_table, make_rules
from tonk_env.obs import OBS_VERSION, obs_layout

from .config import TrainConfig


def checkpoint_meta(
    rules: TonkRules, num_players: int, activation: str, step: int, config_name: str
) -> dict[str, Any]:
    """The metadata stored in every checkpoint."""
    return {
        "format": FORMAT,
        "rules": rules.to_dict(),
        "rules_hash": rules.hash,
        "num_players": num_players,
        "obs_version": OBS_VERSION,
        "obs_size": obs_layout(num_players).size,
        "num_actions": action_table(rules.ace_high).size,
        "activation": activation,
        "step": step,
        "run": config_name,
    }


def save_checkpoint(model: Any, path: Path, meta: dict[str, Any]) -> Path:
    """``model.save`` to ``path`` and add ``tonk_meta.json`` to the zip (written atomically)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    model.save(tmp)
    written = tmp if tmp.exists() else tmp.with_name(tmp.name + ".zip")
    with zipfile.ZipFile(written, "a") as z:
        z.writestr(META_NAME, json.dumps(meta, indent=1))
    written.replace(path)
    return path


def save_run_checkpoint(cfg: TrainConfig, model: Any, run_dir: Path, path: Path | None = None) -> Path:
    """Save ``checkpoints/step_<N>.zip`` (or ``path``) of a run with Tonk metadata."""
    step = int(model.num_timesteps)
    meta = checkpoint_meta(
        make_rules(cfg.rules, **cfg.rule_options), cfg.players, cfg.net.activation, step, cfg.name
    )
    return save_checkpoint(model, path or run_dir / "checkpoints" / f"step_{step}.zip", meta)


def export_npz(path: str | Path, out: str | Path) -> Path:
    """Write a checkpoint's policy as ``.npz`` (weights + metadata), the safe exchange format."""
    pol = load_policy(path)
    out = Path(out)
    pol.save_npz(out)
    return out


#: The plain-number counters of SB3's ``data`` member that a resumed model takes over.
_COUNTERS = ("num_timesteps", "_n_updates", "_episode_num")


def restore_checkpoint(model: Any, path: Path) -> dict[str, Any]:
    """Load a run checkpoint's weights, optimizer state and step counters into ``model``, safely.

    ``model`` is built from the run's config (as a fresh run's is). Tensors are
    read with ``torch.load(weights_only=True)`` and the counters from the
    ``data`` member with ``json`` only, so nothing in the file can run.
    Returns the checkpoint's Tonk metadata; ``ValueError`` names the file and
    what is wrong.
    """
    meta = read_meta(path)
    try:
        with zipfile.ZipFile(path) as z:
            names = set(z.namelist())
            missing = {"policy.pth", "policy.optimizer.pth", "data"} - names
            if missing:
                raise ValueError(f"{path}: no {', '.join(sorted(missing))} inside; not a run checkpoint")
            policy = _tensors(z, "policy.pth", path)
            optimizer = _tensors(z, "policy.optimizer.pth", path)
            data = json.loads(z.read("data"))
    except (zipfile.BadZipFile, OSError, EOFError) as e:
        raise ValueError(f"{path}: unreadable ({type(e).__name__}: {e})") from None
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: its data member is not JSON ({e})") from None
    try:
        model.policy.load_state_dict(policy)
        model.policy.optimizer.load_state_dict(optimizer)
    except (RuntimeError, ValueError, KeyError) as e:
        raise ValueError(
            f"{path}: its network does not fit this run's config ({str(e).splitlines()[0]})"
        ) from None
    for key in _COUNTERS:
        value = data.get(key)
        if key == "num_timesteps" and not (isinstance(value, int) and value >= 0):
            raise ValueError(f"{path}: no step count (num_timesteps) in its data")
        if isinstance(value, int) and not isinstance(value, bool):
            setattr(model, key, value)
    return meta


def _tensors(z: zipfile.ZipFile, name: str, path: Path) -> Any:
    """A ``torch.save``d member read with ``weights_only=True`` (no pickled code runs)."""
    try:
        return torch.load(io.BytesIO(z.read(name)), map_location="cpu", weights_only=True)
    except Exception as e:  # a truncated or planted member fails in zipfile, zlib or torch's safe unpickler
        raise ValueError(f"{path}: cannot read {name} safely ({type(e).__name__}: {e})") from None


def init_from_checkpoint(model: Any, path: str | Path, rules: TonkRules, num_players: int) -> Path:
    """Copy a checkpoint's policy and value weights into ``model`` (a fresh run's warm start).

    The checkpoint must be for the same rules, player count and observation
    layout, with the same network sizes; otherwise ``ValueError`` names the
    file and the difference. Only weights are read (``weights_only``).
    """
    p, meta, state = load_policy_state(path)
    if meta.get("rules_hash") != rules.hash:
        raise ValueError(f"{p}: trained for rules {meta.get('rules_hash')}, this run uses {rules.hash}")
    if meta.get("num_players") != num_players:
        raise ValueError(f"{p}: trained for {meta.get('num_players')} players, this run has {num_players}")
    try:
        model.policy.load_state_dict(state)
    except RuntimeError as e:
        lines = str(e).strip().splitlines()
        why = lines[1].strip() if len(lines) > 1 else str(e)
        raise ValueError(f"{p}: its network does not fit this run's net sizes ({why})") from None
    return p
