"""The run folder, as both backends write and read it (``train.sb3``, ``train.rllib``).

``<out_dir>/<name>__<seed>__<time>/`` holds::

    config.yaml          the resolved config (what ``--resume`` reads back)
    run.json             rules and their hash, observation layout, versions, torch's CPU kernels
    tb/                  TensorBoard logs
    metrics.jsonl        one JSON line per event: rollout summaries, evaluations, checkpoints, the end
    checkpoints/         the backend's checkpoints, each with its opponent pool (``pool.json`` and ``.npz``)
    best.*               the checkpoint with the best evaluation score, and best.json (its step and score)
    learning_curve.png   stakes/hand against each evaluation opponent vs steps
    summary.json         final figures: steps, wall time, throughput, best score

The checkpoints' formats are the backends' (:mod:`train.sb3.zip_checkpoint`,
:mod:`train.rllib.folder_checkpoint`); the metadata they share
(:func:`policy_meta`) and the pool files are written here. Nothing here
unpickles: JSON, YAML and ``.npz`` files without pickle.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
import yaml

from agents.mlp import MLPPolicy
from tonk_env.engine import TonkRules, action_table, make_rules
from tonk_env.errors import read_yaml
from tonk_env.obs import OBS_VERSION, obs_layout
from tonk_env.runtime import append_jsonl, write_atomic, write_json

from .config import TrainConfig, config_from_dict, merge
from .pool import Layers

if TYPE_CHECKING:
    from .improve.config import ImproveConfig

__all__ = [
    "log_event",
    "make_run_dir",
    "policy_meta",
    "read_best_score",
    "read_pool",
    "read_run_config",
    "write_best",
    "write_pool",
    "write_run_files",
    "write_summary",
]

METRICS = "metrics.jsonl"


def make_run_dir(cfg: TrainConfig | ImproveConfig) -> Path:
    """A fresh ``<out_dir>/<name>__<seed>__<time>`` folder (of a training run or a ``tonk improve`` run)."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    base = Path(cfg.out_dir) / f"{cfg.name}__{cfg.seed}__{stamp}"
    run_dir, k = base, 1
    while run_dir.exists():
        k += 1
        run_dir = base.with_name(f"{base.name}-{k}")
    run_dir.mkdir(parents=True)
    return run_dir


def policy_meta(rules: TonkRules, num_players: int) -> dict[str, Any]:
    """What ``run.json`` and every checkpoint's metadata say of the game: rules, players, sizes."""
    return {
        "rules": rules.to_dict(),
        "rules_hash": rules.hash,
        "num_players": num_players,
        "obs_version": OBS_VERSION,
        "obs_size": obs_layout(num_players).size,
        "num_actions": action_table(rules.ace_high).size,
    }


def write_run_files(
    cfg: TrainConfig, run_dir: Path, versions: Mapping[str, str], backend: str | None = None
) -> None:
    """``config.yaml`` and ``run.json`` of a new run (``backend`` is named in it when given)."""
    rules = make_rules(cfg.rules, **cfg.rule_options)
    write_atomic(run_dir / "config.yaml", yaml.safe_dump(cfg.to_dict(), sort_keys=False))
    info: dict[str, Any] = {} if backend is None else {"backend": backend}
    info.update(policy_meta(rules, cfg.players))
    info["versions"] = dict(versions)
    # torch's kernels for this CPU (AVX512, AVX2, ...): the agent depends on it (README, Reproducibility)
    info["torch_cpu_capability"] = torch.backends.cpu.get_cpu_capability()
    write_json(run_dir / "run.json", info)


def read_run_config(run_dir: Path, overrides: dict[str, Any] | None = None) -> TrainConfig:
    """The config of a run folder (with overrides), or ``ValueError`` naming the file and the problem."""
    cfg_path = run_dir / "config.yaml"
    if not cfg_path.is_file():
        raise ValueError(f"{run_dir}: no config.yaml; not a training run folder")
    data = read_yaml(cfg_path)
    if not isinstance(data, dict) or not data:
        raise ValueError(
            f"{cfg_path}: expected the run's options (key: value lines), got {type(data).__name__} "
            f"{str(data)[:60]!r}; it is not the config this run was trained with"
        )
    if overrides:
        data = merge(data, overrides)
    try:
        return config_from_dict(data)
    except ValueError as e:
        raise ValueError(f"{cfg_path}: {e}") from None


# -- metrics.jsonl, best.json, summary.json ------------------------------------------------------


def log_event(run_dir: Path, row: dict[str, Any]) -> None:
    """Append one event to the run's ``metrics.jsonl``, stamped with the time."""
    append_jsonl(run_dir / METRICS, {"time": round(time.time(), 1), **row})


def read_best_score(run_dir: Path) -> float:
    """The score of a run's best checkpoint from ``best.json`` (-inf before the first evaluation)."""
    path = run_dir / "best.json"
    if not path.exists():
        return -np.inf
    try:
        score = json.loads(path.read_text(encoding="utf-8"))["score"]
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError) as e:
        raise ValueError(
            f"{path}: unreadable ({type(e).__name__}: {e}); restore it, or delete it and best.zip "
            "to choose the best checkpoint again from the next evaluations"
        ) from None
    if isinstance(score, bool) or not isinstance(score, (int, float)):
        raise ValueError(f"{path}: its score {score!r} is not a number")
    return float(score)


def write_best(run_dir: Path, step: int, score: float, results: dict[str, Any]) -> None:
    """``best.json``: the step, score and evaluation results of the run's best checkpoint."""
    write_json(run_dir / "best.json", {"step": step, "score": score, "results": results})


def speed_summary(
    steps: int, wall: float, eval_seconds: float, collect_seconds: float, update_seconds: float
) -> dict[str, Any]:
    """``summary.json``'s times (seconds, to the millisecond) and the rates of ``steps`` trained in them.

    ``collect``: playing the envs (opponents included; RLlib: sampling on the env runners with the
    weights' sync); ``update``: the PPO update; evaluation excluded from both.
    """

    def per_s(seconds: float) -> float:
        return round(steps / max(seconds, 1e-9), 1)

    return {
        "wall_seconds": round(wall, 3),
        "eval_seconds": round(eval_seconds, 3),
        "steps_per_s": per_s(wall),
        "steps_per_s_excluding_eval": per_s(wall - eval_seconds),
        "collect_seconds": round(collect_seconds, 3),
        "update_seconds": round(update_seconds, 3),
        "collect_steps_per_s": per_s(collect_seconds),
        "update_steps_per_s": per_s(update_seconds),
    }


def write_summary(run_dir: Path, summary: dict[str, Any]) -> None:
    """``summary.json`` and the ``end`` event of ``metrics.jsonl``."""
    write_json(run_dir / "summary.json", summary)
    log_event(run_dir, {"type": "end", **summary})


# -- the opponent pool of a checkpoint --------------------------------------------------------------


def write_pool(
    folder: Path, latest: Layers | None, snapshots: list[tuple[int, Layers]], activation: str
) -> None:
    """A checkpoint's opponent pool: ``latest.npz``, ``snapshot_<step>.npz`` and ``pool.json``."""
    folder.mkdir(parents=True, exist_ok=True)
    if latest is not None:
        MLPPolicy(latest, activation=activation).save_npz(folder / "latest.npz")
    for step, layers in snapshots:
        MLPPolicy(layers, activation=activation).save_npz(folder / f"snapshot_{step}.npz")
    pool = {"latest": latest is not None, "snapshots": [s for s, _ in snapshots]}
    write_json(folder / "pool.json", pool, indent=None)


def read_pool(folder: Path) -> tuple[Layers | None, list[tuple[int, Layers]]]:
    """A checkpoint's opponent pool (``pool.json`` and its ``.npz`` files): latest, snapshots.

    Read with ``json`` and numpy without pickle; ``ValueError`` names the file and the problem.
    """
    meta_path = folder / "pool.json"
    if not meta_path.is_file():
        raise ValueError(f"{folder}: no pool.json; the checkpoint's opponent pool is missing")
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"{meta_path}: unreadable ({e})") from None
    steps = meta.get("snapshots") if isinstance(meta, dict) else None
    if not isinstance(steps, list) or not all(isinstance(s, int) and not isinstance(s, bool) for s in steps):
        raise ValueError(f"{meta_path}: expected {{'latest': bool, 'snapshots': [step, ...]}}")
    latest = MLPPolicy.load_npz(folder / "latest.npz").layers_for_export() if meta.get("latest") else None
    snapshots = [
        (step, MLPPolicy.load_npz(folder / f"snapshot_{step}.npz").layers_for_export()) for step in steps
    ]
    return latest, snapshots
