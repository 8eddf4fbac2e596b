"""Checkpoints: saving them with Tonk metadata, warm starts and the ``.npz`` export.

A checkpoint is sb3-contrib's ``.zip`` (``MaskablePPO.save``) with one more
member, ``tonk_meta.json``: the rules (options and hash), the number of
players, the observation layout version and the action table size. Reading a
checkpoint (the ``ppo:PATH`` agent, :func:`resolve_checkpoint`,
:func:`read_meta`) is the agents' business: :mod:`agents.checkpoint`.

Security: *resuming* a run calls ``MaskablePPO.load``, which unpickles parts
of the zip (cloudpickle) and so can run code from the file. Only resume runs
you made. To share an agent, export its weights to ``.npz``
(:func:`export_npz`, or ``tonk export``), a format that runs no code.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

from agents.checkpoint import FORMAT, META_NAME
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
