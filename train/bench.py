"""``tonk bench train``: the training backends' steps/s side by side, one short run of each.

Each mode trains a real run (the trainer a user gets, in a temporary folder,
without evaluation) and reads its ``summary.json``:

=====================  ===================================================================
mode                   what trains
=====================  ===================================================================
``sb3-core``           the SB3 config (``configs/quick.yaml``) with ``vec_env: core``:
                       MaskablePPO in this process, collection and update alternating
``sb3-core-overlap``   the same with ``ppo.overlap: true`` (:mod:`train.sb3.overlap`): a
                       thread plays the next rollout while the update runs
``rllib-ppo-core``     the RLlib config (``configs/rllib_2p.yaml``) with ``rllib.algo: ppo``:
                       the env runner samples on the core, then the driver updates
``rllib-appo-core``    the same with ``rllib.algo: appo``: the runner samples while the
                       driver updates
=====================  ===================================================================

Per mode: ``steps``, ``wall_seconds`` (the training loop, without Ray's
start-up), ``steps_per_s``, ``collect_steps_per_s`` and ``update_steps_per_s``
(the steps over the seconds spent outside / inside the update, in the process
that trains; with ``sb3-core-overlap`` the thread's seconds, which overlap the
update's), ``overlap`` (its rollouts played ahead and the seconds the update
waited for them), and for RLlib ``collect_steps_per_s_per_runner`` (the steps
over the runners' own seconds inside ``sample()``: what one runner collects, which
with APPO overlaps the update). The result holds the machine's load average
before and after: on a shared machine the modes' ratios, measured in one run,
mean more than any one figure.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from .config import load_config
from .rllib.setup_ray import init_ray, require_rllib
from .trainer import train

__all__ = ["MODES", "bench_train"]

#: The modes of ``tonk bench train``, in the order they run.
MODES = ("sb3-core", "sb3-core-overlap", "rllib-ppo-core", "rllib-appo-core")

_KEYS = ("steps", "wall_seconds", "steps_per_s", "collect_steps_per_s", "update_steps_per_s", "overlap")
_RLLIB_KEYS = ("collect_steps_per_s_per_runner", "runner_sample_seconds", "env_runners", "envs_per_runner")


def _mode_overrides(mode: str, steps: int, out_dir: Path) -> list[str]:
    """The config overrides of one mode: its budget, no evaluation, its backend's settings."""
    common = [
        f"total_steps={steps}",
        f"checkpoint_every={steps}",
        "eval.every=0",
        "eval.opponents=[]",
        f"out_dir={json.dumps(str(out_dir))}",
        f"name=bench_{mode}",
    ]
    if mode.startswith("sb3-"):
        return [*common, "vec_env=core", f"ppo.overlap={str(mode == 'sb3-core-overlap').lower()}"]
    return [*common, f"rllib.algo={mode.split('-')[1]}"]


def bench_train(
    sb3_config: str | Path,
    rllib_config: str | Path,
    steps: int = 16_384,
    modes: Sequence[str] = MODES,
    overrides: Sequence[str] = (),
    log: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Train each mode for ``steps`` steps (one Ray instance for the RLlib modes); their speeds.

    ``overrides`` (``key=value``) apply to every mode's config (``torch_threads=1``).
    """
    bad = [m for m in modes if m not in MODES]
    if bad or not modes:
        raise ValueError(f"bench train: unknown mode(s) {bad or modes}; allowed: {', '.join(MODES)}")
    if steps < 1:
        raise ValueError(f"bench train: --steps must be >= 1, got {steps}")
    say = log or (lambda text: None)
    out: dict[str, Any] = {"benchmark": "train", "steps": steps, "load_average_before": os.getloadavg()}
    results: dict[str, Any] = {}
    ray_started = False
    with tempfile.TemporaryDirectory(prefix="tonk_bench_train_") as tmp:
        try:
            for mode in modes:
                path = sb3_config if mode.startswith("sb3-") else rllib_config
                cfg = load_config(Path(path), [*_mode_overrides(mode, steps, Path(tmp)), *overrides])
                if cfg.backend == "rllib" and not ray_started:
                    require_rllib()
                    ray_started = init_ray(cfg)  # one instance for every RLlib mode
                say(f"bench train: {mode} ({cfg.name}, {steps:,} steps)")
                run_dir = train(cfg, progress=False)
                summary = json.loads((run_dir / "summary.json").read_text())
                keys = _KEYS + (_RLLIB_KEYS if cfg.backend == "rllib" else ())
                results[mode] = {k: summary[k] for k in keys if k in summary}
                results[mode]["config"] = str(path)
        finally:
            if ray_started:
                import ray

                ray.shutdown()
    out["modes"] = results
    out["load_average_after"] = os.getloadavg()
    return out
