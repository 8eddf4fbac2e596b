"""The run folder's name: ``<out_dir>/<name>__<seed>__<time>`` (both backends make it here)."""

from __future__ import annotations

import time
from pathlib import Path

from .config import TrainConfig

__all__ = ["make_run_dir"]


def make_run_dir(cfg: TrainConfig) -> Path:
    """A fresh ``<out_dir>/<name>__<seed>__<time>`` folder."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    base = Path(cfg.out_dir) / f"{cfg.name}__{cfg.seed}__{stamp}"
    run_dir, k = base, 1
    while run_dir.exists():
        k += 1
        run_dir = base.with_name(f"{base.name}-{k}")
    run_dir.mkdir(parents=True)
    return run_dir
