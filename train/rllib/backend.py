"""``backend: rllib``: RLlib's PPO (new API stack) on a local Ray instance or a Ray cluster.

The env is :class:`train.rllib.env.TonkMultiAgentEnv` (the learner's seats are
agents, all mapped to one shared policy ``learner``; the pool's snapshots and
baselines play the other seats inside the env), the policy
:class:`train.rllib.module.MaskedTonkModule` (illegal actions masked in every
forward pass). Env runners are Ray actors (``rllib.env_runners``, each with
``rllib.envs_per_runner`` envs): Ray places them on any node with a free CPU,
so on a cluster they spread over the nodes. The PPO update runs in the driver
(``rllib.learners: 0``) or in learner actors.

The run folder is the SB3 backend's (:mod:`train.run_folder`): ``config.yaml``,
``run.json``, ``tb/`` (the same scalar names where they mean the same thing),
``metrics.jsonl``, ``checkpoints/step_<N>/`` and ``best/`` (folders:
:mod:`train.rllib.folder_checkpoint`, no pickle), ``best.json``,
``learning_curve.png``, ``summary.json``. Ray is started (or joined) and the
algorithm built before the folder is made, so an unreachable address or a bad
setting leaves nothing behind.

Per PPO iteration the rollout is ``ppo.n_steps`` decisions from each env
(``n_steps * max(env_runners, 1) * envs_per_runner`` in all), split into
minibatches of ``ppo.batch_size`` for ``ppo.n_epochs`` passes; ``ppo.gamma``,
``gae_lambda``, ``clip_range``, ``ent_coef``, ``vf_coef``,
``max_grad_norm`` and ``learning_rate`` map to RLlib's names (no value
clipping, no KL penalty: as SB3's PPO). A step is one learner decision.
"""

from __future__ import annotations

import platform
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import ray
import torch
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from ray.rllib.core.rl_module.rl_module import RLModuleSpec

from tonk_env.engine import make_rules

from ..config import TrainConfig, rollout_envs
from ..run_folder import policy_meta
from ..run_folder import write_run_files as _write_run_files
from .env import TonkMultiAgentEnv
from .module import MaskedTonkModule

__all__ = ["build_algorithm", "checkpoint_meta", "collect_stats", "push_snapshot", "write_run_files"]

POLICY = "learner"


def build_algorithm(cfg: TrainConfig) -> Any:
    """RLlib's PPO for ``cfg``: the Tonk env and masked module, one shared policy, cfg's PPO settings."""
    r = cfg.rllib
    ppo = cfg.ppo
    module = RLModuleSpec(
        module_class=MaskedTonkModule,
        model_config={"pi": list(cfg.net.pi), "vf": list(cfg.net.vf), "activation": cfg.net.activation},
    )
    config = (
        PPOConfig()
        .environment(
            TonkMultiAgentEnv,
            env_config={"train_config": cfg.to_dict()},
            # RLlib's checker steps the env with unmasked random actions, which the env refuses
            disable_env_checking=True,
        )
        .env_runners(
            num_env_runners=r.env_runners,
            num_envs_per_env_runner=r.envs_per_runner,
            rollout_fragment_length=ppo.n_steps,
            num_cpus_per_env_runner=r.cpus_per_runner,  # type: ignore[arg-type]  # Ray takes fractions
        )
        .learners(num_learners=r.learners)
        .multi_agent(
            policies={POLICY},
            policy_mapping_fn=_to_learner,
            policies_to_train=[POLICY],
        )
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={POLICY: module}))
        .training(
            train_batch_size_per_learner=ppo.n_steps * rollout_envs(cfg) // max(r.learners, 1),
            minibatch_size=ppo.batch_size,
            num_epochs=ppo.n_epochs,
            lr=ppo.learning_rate,
            gamma=ppo.gamma,
            lambda_=ppo.gae_lambda,
            clip_param=ppo.clip_range,
            entropy_coeff=ppo.ent_coef,
            vf_loss_coeff=ppo.vf_coef,
            grad_clip=ppo.max_grad_norm,
            grad_clip_by="global_norm",
            vf_clip_param=float("inf"),
            use_kl_loss=False,
        )
        .debugging(seed=cfg.seed, log_level="ERROR")
        .reporting(metrics_num_episodes_for_smoothing=100)
    )
    return config.build_algo()


def _to_learner(agent_id: Any, episode: Any, **kwargs: Any) -> str:
    """Every seat of the learner plays the one shared policy."""
    return POLICY


# -- talking to the env runners ---------------------------------------------------------------------


def _envs(runner: Any) -> list[Any]:
    env = getattr(runner, "env", None)
    return [] if env is None else [e.unwrapped for e in env.envs]


def push_snapshot(algo: Any, layers: Any, activation: str, step: int) -> None:
    """Add a frozen snapshot of the learner to every env's pool, on every env runner."""

    def add(runner: Any) -> int:
        envs = _envs(runner)
        for env in envs:
            env.update_pool(snapshot=layers, activation=activation, step=step)
        return len(envs)

    algo.env_runner_group.foreach_env_runner(add, local_env_runner=True)


def collect_stats(algo: Any) -> list[dict[str, Any]]:
    """Each env runner's counts since the last call (steps, outcomes, stakes) and its Ray node id."""

    def take(runner: Any) -> dict[str, Any]:
        out: dict[str, Any] = {"steps": 0, "kinds": Counter(), "stakes_sum": 0.0, "envs": 0}
        for env in _envs(runner):
            s = env.take_stats()
            out["steps"] += s["steps"]
            out["kinds"].update(s["kinds"])
            out["stakes_sum"] += s["stakes_sum"]
            out["envs"] += 1
        out["kinds"] = dict(out["kinds"])
        out["node"] = ray.get_runtime_context().get_node_id()
        return out

    return [s for s in algo.env_runner_group.foreach_env_runner(take, local_env_runner=True) if s["envs"]]


def learner_weights(algo: Any) -> dict[str, np.ndarray]:
    """The shared policy's module weights (a state dict of numpy arrays), from the learner."""
    state = algo.learner_group.get_state(components=f"learner/rl_module/{POLICY}")
    return dict(state["learner"]["rl_module"][POLICY])


def learner_state(algo: Any) -> dict[str, Any]:
    """The learner's module weights and optimizer state (what a checkpoint saves)."""
    state = algo.learner_group.get_state(components=["learner/rl_module", "learner/optimizer"])
    return {"rl_module": state["learner"]["rl_module"], "optimizer": state["learner"]["optimizer"]}


def restore_learner(algo: Any, state: dict[str, Any]) -> None:
    """Load a checkpoint's learner state and send the weights to the env runners."""
    algo.learner_group.set_state({"learner": state})
    algo.env_runner_group.sync_weights(from_worker_or_learner_group=algo.learner_group, inference_only=True)


# -- the run -----------------------------------------------------------------------------------


def _versions() -> dict[str, str]:
    return {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "ray": ray.__version__,
        "numpy": np.__version__,
    }


def write_run_files(cfg: TrainConfig, run_dir: Path) -> None:
    """``config.yaml`` and ``run.json`` of a new run (:func:`train.run_folder.write_run_files`)."""
    _write_run_files(cfg, run_dir, _versions(), backend="rllib")


def checkpoint_meta(cfg: TrainConfig, step: int) -> dict[str, Any]:
    """The metadata of an RLlib checkpoint folder (and of its policy.npz)."""
    rules = make_rules(cfg.rules, **cfg.rule_options)
    return {
        **policy_meta(rules, cfg.players),
        "activation": cfg.net.activation,
        "net": {"pi": list(cfg.net.pi), "vf": list(cfg.net.vf)},
        "step": step,
        "run": cfg.name,
        "backend": "rllib",
    }
