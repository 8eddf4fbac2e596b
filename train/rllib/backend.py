"""``backend: rllib``: RLlib's PPO or APPO (new API stack) on a local Ray instance or a Ray cluster.

Each env runner (:class:`train.rllib.runner.TonkEnvRunner`, RLlib's
single-agent runner with a batched sampling loop) steps its
``rllib.envs_per_runner`` games as one :class:`train.rllib.vector.RllibVectorEnv`
on the compiled core, built by RLlib's ``gym.make_vec(...,
vectorization_mode="vector_entry_point")``; the pool's snapshots, the
learner's latest frozen copy and the baselines play the other seats inside
it. The policy is :class:`train.rllib.module.MaskedTonkModule` (illegal
actions masked in every forward pass; the mask is the observation's last
columns). Env runners are Ray actors: Ray places them on any node with a free
CPU, so on a cluster they spread over the nodes. The update runs in the driver
(``rllib.learners: 0``) or in learner actors.

``rllib.algo``: ``ppo`` samples, then updates (``ppo.n_steps`` decisions from
each env, ``n_steps * max(env_runners, 1) * envs_per_runner`` in all, split
into minibatches of ``ppo.batch_size`` for ``ppo.n_epochs`` passes);
``appo`` lets the runners sample the next batch while the learner updates on
the last (RLlib's APPO: one pass per batch, each batch replayed twice from a
small circular buffer, v-trace for the weights' lag, a target copy of the
policy for the clipped ratio). ``ppo.gamma``, ``gae_lambda``, ``clip_range``,
``ent_coef``, ``vf_coef``, ``max_grad_norm`` and ``learning_rate`` map to
RLlib's names (no value clipping, no KL penalty: as SB3's PPO). A step is one
learner decision.

The run folder is the SB3 backend's (:mod:`train.run_folder`): ``config.yaml``,
``run.json``, ``tb/`` (the same scalar names where they mean the same thing),
``metrics.jsonl``, ``checkpoints/step_<N>/`` and ``best/`` (folders:
:mod:`train.rllib.folder_checkpoint`, no pickle), ``best.json``,
``learning_curve.png``, ``summary.json``. Ray is started (or joined) and the
algorithm built before the folder is made, so an unreachable address or a bad
setting leaves nothing behind.
"""

from __future__ import annotations

import platform
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import ray
import torch
from ray.rllib.algorithms.appo import APPOConfig
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.core.rl_module.rl_module import RLModuleSpec

from tonk_env.engine import make_rules

from ..config import TrainConfig, rollout_envs
from ..run_folder import policy_meta
from ..run_folder import write_run_files as _write_run_files
from .module import MaskedTonkModule
from .runner import STATS, TonkEnvRunner
from .vector import RllibVectorEnv

__all__ = ["POLICY", "build_algorithm", "checkpoint_meta", "push_pool", "read_stats", "write_run_files"]

#: The module id of RLlib's single-agent runs.
POLICY = "default_policy"
_POOL_TAG = "tonk_pool"


def build_algorithm(cfg: TrainConfig) -> Any:
    """RLlib's PPO or APPO for ``cfg``: the Tonk vector env, the batched runner, the masked module."""
    r = cfg.rllib
    ppo = cfg.ppo
    module = RLModuleSpec(
        module_class=MaskedTonkModule,
        model_config={
            "pi": list(cfg.net.pi),
            "vf": list(cfg.net.vf),
            "activation": cfg.net.activation,
            "mask_in_obs": True,
        },
    )
    batch = ppo.n_steps * rollout_envs(cfg) // max(r.learners, 1)
    config: Any = (APPOConfig() if r.algo == "appo" else PPOConfig()).environment(
        RllibVectorEnv,
        env_config={"train_config": cfg.to_dict()},
        # RLlib's checker steps the env with unmasked random actions, which the env refuses
        disable_env_checking=True,
    )
    config = (
        config.env_runners(
            env_runner_cls=TonkEnvRunner,
            num_env_runners=r.env_runners,
            num_envs_per_env_runner=r.envs_per_runner,
            rollout_fragment_length=ppo.n_steps,
            num_cpus_per_env_runner=r.cpus_per_runner,
            gym_env_vectorize_mode="vector_entry_point",
        )
        .learners(num_learners=r.learners)
        .rl_module(rl_module_spec=module)
        .debugging(seed=cfg.seed, log_level="ERROR")
        .reporting(metrics_num_episodes_for_smoothing=100, min_time_s_per_iteration=0)
    )
    common: dict[str, Any] = {
        "train_batch_size_per_learner": batch,
        "lr": ppo.learning_rate,
        "gamma": ppo.gamma,
        "lambda_": ppo.gae_lambda,
        "clip_param": ppo.clip_range,
        "entropy_coeff": ppo.ent_coef,
        "vf_loss_coeff": ppo.vf_coef,
        "grad_clip": ppo.max_grad_norm,
        "grad_clip_by": "global_norm",
        "use_kl_loss": False,
    }
    if r.algo == "appo":
        # two samples queued per runner: it starts the next batch the moment it hands one over; the
        # driver waits up to 0.1 s for a sample instead of polling in a busy loop (a core of 2), and
        # one train() call returns after about one batch
        config = (
            config.env_runners(max_requests_in_flight_per_env_runner=2)
            .reporting(min_sample_timesteps_per_iteration=batch)
            .training(**common, timeout_s_sampler_manager=0.1)
        )
    else:
        config = config.training(
            **common,
            minibatch_size=ppo.batch_size,
            num_epochs=ppo.n_epochs,
            vf_clip_param=float("inf"),
        )
    return config.build_algo()


# -- talking to the env runners ---------------------------------------------------------------------


def push_pool(
    algo: Any, latest: Any = None, snapshot: Any = None, activation: str = "tanh", step: int = 0
) -> None:
    """Set the latest frozen copy and/or add a snapshot in every runner's pools, without waiting.

    The remote runners get the call queued behind their running sample (APPO's
    runners never stop sampling; the driver does not wait for them).
    """

    def update(runner: Any) -> None:
        if runner.env is not None:
            runner.env.unwrapped.update_pool(
                latest=latest, snapshot=snapshot, activation=activation, step=step
            )

    group = algo.env_runner_group
    group.fetch_ready_async_reqs(tags=_POOL_TAG, timeout_seconds=0)  # drop the answers of earlier pushes
    if group.num_remote_env_runners():
        group.foreach_env_runner_async(update, tag=_POOL_TAG)
    if group.local_env_runner is not None:
        update(group.local_env_runner)


def read_stats(result: dict[str, Any]) -> dict[str, Any]:
    """The env runners' lifetime counts in a ``train()`` result (steps, outcomes, stakes, steps by node)."""
    tonk = result.get("env_runners", {}).get(STATS, {})
    kinds = {k: int(_num(v)) for k, v in tonk.get("kinds", {}).items()}
    nodes = {k: int(_num(v)) for k, v in tonk.get("node_steps", {}).items()}
    return {
        "kinds": Counter(kinds),
        "stakes_sum": _num(tonk.get("stakes_sum", 0.0)),
        "nodes": Counter(nodes),
        "sample_s": _num(tonk.get("sample_s", 0.0)),
    }


def _num(x: Any) -> float:
    """A metric value (a Python, numpy or torch scalar) as a float."""
    return float(x.item() if hasattr(x, "item") else x)


def learner_weights(algo: Any) -> dict[str, np.ndarray]:
    """The policy's module weights (a state dict of numpy arrays), from the learner."""
    state = algo.learner_group.get_state(components=f"learner/rl_module/{POLICY}")
    return dict(state["learner"]["rl_module"][POLICY])


def learner_state(algo: Any) -> dict[str, Any]:
    """The learner's module weights and optimizer state (what a checkpoint saves)."""
    state = algo.learner_group.get_state(components=["learner/rl_module", "learner/optimizer"])
    return {"rl_module": state["learner"]["rl_module"], "optimizer": state["learner"]["optimizer"]}


def restore_learner(algo: Any, state: dict[str, Any]) -> None:
    """Load a checkpoint's learner state and send the weights to the env runners."""
    if POLICY not in state.get("rl_module", {}):
        raise ValueError(
            f"the checkpoint's learner state has no module {POLICY!r} "
            f"(it has {sorted(state.get('rl_module', {}))}): "
            "it was written by the multi-agent RLlib backend before the vector env; its policy.npz still "
            "plays (rllib:PATH), but a resumed run has to start anew"
        )
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
