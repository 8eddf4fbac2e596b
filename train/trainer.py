"""``train(cfg)`` and ``resume(run_dir)``: the entry point of training, for either backend.

``backend: sb3`` (the default) trains sb3-contrib's MaskablePPO
(:mod:`train.sb3.trainer`); ``backend: rllib`` trains RLlib's PPO on a local
Ray instance or a Ray cluster (:mod:`train.rllib.run`; Ray's RLlib is an
optional extra, imported only when chosen). Both write the same run folder
(:mod:`train.run_folder`). SIGINT and SIGTERM stop training at the next step
and save a checkpoint first; ``resume`` continues from the newest checkpoint
that reads back whole, and nothing in the folder is unpickled.

Both take ``evaluate``, the duplicate evaluation that scores the policy
against ``eval.opponents`` (pass :func:`eval.duplicate.evaluate`, as
``tonk train`` does; see :class:`~train.evaluation.Evaluator`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .config import TrainConfig
from .evaluation import Evaluator, require_evaluator
from .rllib.setup_ray import require_rllib
from .run_folder import read_run_config
from .sb3.trainer import resume_sb3, train_sb3

__all__ = ["resume", "train"]


def train(
    cfg: TrainConfig,
    run_dir: Path | None = None,
    progress: bool = True,
    evaluate: Evaluator | None = None,
) -> Path:
    """Train from scratch into a new run folder, scoring with ``evaluate``; returns the folder.

    The folder is made once the model is built and warm-started, so a bad
    ``init_from`` checkpoint is a ``ValueError`` that leaves no folder behind.
    """
    require_evaluator(cfg, evaluate)
    if cfg.backend == "rllib":  # imported here: Ray's RLlib is an optional extra
        require_rllib()  # before the modules that import RLlib
        from .rllib.run import train_rllib

        return train_rllib(cfg, run_dir, progress=progress, evaluate=evaluate)
    return train_sb3(cfg, run_dir, progress=progress, evaluate=evaluate)


def resume(
    run_dir: str | Path,
    progress: bool = True,
    overrides: dict[str, Any] | None = None,
    evaluate: Evaluator | None = None,
    log: Callable[[str], None] | None = None,
) -> Path:
    """Continue a run from its newest readable checkpoint (same steps, optimizer state, pool).

    Nothing is unpickled. A finished run, a broken ``config.yaml`` or
    ``best.json``, or a run without a readable checkpoint is a ``ValueError``
    before anything is written; unreadable newer checkpoints are skipped and
    named through ``log`` (stderr by default).
    """
    run_dir = Path(run_dir)
    say = log or _stderr
    cfg = read_run_config(run_dir, overrides)
    require_evaluator(cfg, evaluate)
    if cfg.backend == "rllib":
        require_rllib()
        from .rllib.run import resume_rllib

        return resume_rllib(cfg, run_dir, progress=progress, evaluate=evaluate, log=say)
    return resume_sb3(cfg, run_dir, progress=progress, evaluate=evaluate, log=say)


def _stderr(text: str) -> None:
    print(f"tonk train: {text}", file=sys.stderr, flush=True)
