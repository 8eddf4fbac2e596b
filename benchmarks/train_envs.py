"""Learner steps per CPU second of a config's training env alone (no PPO update): ``vec_env`` dummy vs core.

    python benchmarks/train_envs.py [CONFIG] [--rounds 100] [--vec-env core dummy]

Builds the training env of CONFIG (its pool, with ``zoo:2p``'s network pushed as
the latest copy and one snapshot, as after the first refresh), plays 20 rounds
of warm-up, then ``--rounds`` rounds of one uniformly random legal learner move
per env. CPU time comes from ``getrusage``, which another job on the machine
inflates far less than wall time.
"""

from __future__ import annotations

import argparse
import resource
from typing import Any

import numpy as np
from train.core_vec import make_core_vec_env
from train.vec import BatchedOpponentsVecEnv

from agents.mlp import MLPPolicy
from train.config import TrainConfig, load_config
from train.trainer import make_env_fn


def cpu_seconds() -> float:
    """User and system CPU seconds of this process so far."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def training_env(cfg: TrainConfig) -> Any:
    """The env ``tonk train`` builds for ``cfg`` (``vec_env`` core or dummy), seeded."""
    if cfg.vec_env == "core":
        vec: Any = make_core_vec_env(cfg)
    else:
        vec = BatchedOpponentsVecEnv([make_env_fn(cfg, i) for i in range(cfg.n_envs)])
    vec.seed(cfg.seed)
    return vec


def steps_per_cpu_second(config: str, vec_env: str, rounds: int, seed: int = 0) -> float:
    """Learner steps per CPU second of ``config``'s training env on ``vec_env``."""
    cfg = load_config(config, [f"vec_env={vec_env}", "pretrain.teacher=''"])
    vec = training_env(cfg)
    try:
        layers = MLPPolicy.load_npz("agents/zoo/2p.npz").layers_for_export()
        vec.reset()
        vec.env_method("update_pool", latest=layers, snapshot=layers, activation="tanh", step=1)
        rng = np.random.default_rng(seed)

        def play(k: int) -> None:
            for _ in range(k):
                masks = np.stack(vec.env_method("action_masks")).astype(bool)
                vec.step((rng.random(masks.shape) * masks).argmax(1))

        play(20)  # warm-up: caches, first batches
        start = cpu_seconds()
        play(rounds)
        return rounds * cfg.n_envs / (cpu_seconds() - start)
    finally:
        vec.close()


def main() -> None:
    """Print the steps per CPU second of each ``--vec-env``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("config", nargs="?", default="configs/quick.yaml")
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--vec-env", nargs="+", default=["core", "dummy"], choices=["core", "dummy"])
    args = parser.parse_args()
    for kind in args.vec_env:
        rate = steps_per_cpu_second(args.config, kind, args.rounds)
        print(f"{args.config} vec_env={kind}: {rate:,.0f} learner steps per CPU second")


if __name__ == "__main__":
    main()
