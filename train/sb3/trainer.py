"""``backend: sb3``: fit sb3-contrib's MaskablePPO from a :class:`~train.config.TrainConfig`.

:func:`train_sb3` fills a new run folder (:mod:`train.run_folder`); its
checkpoints are ``checkpoints/step_<N>.zip`` every ``checkpoint_every`` steps,
at a rollout boundary, with ``step_<N>/`` beside each (the pool,
``train_state.json``, that moment's ``best.*``), and ``best.zip``.

:func:`resume_sb3` continues from the newest checkpoint that reads back
whole, with the same step count, optimizer state, opponent pool and random
streams, so it ends as the run it replaced would have (:mod:`train.sb3.runstate`); the
model is rebuilt from ``config.yaml`` and nothing in the folder is unpickled
(:mod:`train.sb3.zip_checkpoint`). The entry point of both backends is :mod:`train.trainer`.
"""

from __future__ import annotations

import platform
import random
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import sb3_contrib
import stable_baselines3
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.monitor import Monitor
from stable_baselines3.common.vec_env import SubprocVecEnv
from threadpoolctl import threadpool_limits

from agents.checkpoint import run_checkpoints
from tonk_env.engine import make_rules
from tonk_env.runtime import append_jsonl
from tonk_env.workers import WorkerDiedError

from ..config import TrainConfig, config_from_dict, is_network_warm_start
from ..evaluation import Evaluator, require_evaluator
from ..oracle import PrivilegedObs
from ..pool import OpponentPool, PoolWrapper
from ..pretrain import pretrain
from ..run_folder import make_run_dir, read_best_score, read_pool, write_run_files
from ..shaping import CountShaping
from .callback import TonkCallback
from .core_process import CoreVecEnvProcess
from .core_vec import make_core_vec_env
from .dummy_vec import BatchableSingleAgentEnv, BatchedOpponentsVecEnv
from .oracle_policy import OracleCriticPolicy, oracle_policy_kwargs
from .overlap import OverlappedMaskablePPO
from .policy import TonkMaskablePolicy
from .runstate import read_state, rewind_run
from .zip_checkpoint import (
    RunCheckpoint,
    init_from_checkpoint,
    init_from_network,
    read_run_checkpoint,
    restore_checkpoint,
)

__all__ = ["build_model", "make_env_fn", "resume_sb3", "seed_everything", "train_sb3"]


def seed_everything(seed: int) -> None:
    """One seed for python, numpy and torch."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def make_env_fn(cfg: TrainConfig, index: int) -> Callable[[], gym.Env]:
    """A picklable factory of one training env (for Dummy/SubprocVecEnv)."""
    return _EnvFactory(cfg.to_dict(), index)


class _EnvFactory:
    """Builds training env number ``index`` of a config (given as a dict, so that it pickles)."""

    def __init__(self, cfg_dict: dict[str, Any], index: int) -> None:
        self.cfg_dict = cfg_dict
        self.index = index

    def __call__(self) -> Monitor:
        cfg = config_from_dict(self.cfg_dict)
        pool = OpponentPool(cfg.pool, seed=cfg.seed * 1000 + self.index)
        env = BatchableSingleAgentEnv(
            num_players=cfg.players,
            rules=make_rules(cfg.rules, **cfg.rule_options),
            opponent_sampler=pool.sample,
            learner_seat="random",
            reward_scale=cfg.reward_scale,
        )
        wrapped: gym.Env = PoolWrapper(env, pool)
        if cfg.shaping_coef:
            wrapped = CountShaping(wrapped, cfg.players, cfg.shaping_coef, cfg.ppo.gamma)
        if cfg.net.critic == "oracle":
            wrapped = PrivilegedObs(wrapped)
        return Monitor(wrapped, info_keywords=("result_kind",))


def build_model(cfg: TrainConfig, vec_env: Any, run_dir: Path | None = None) -> Any:
    """A fresh MaskablePPO for ``cfg`` (logging to ``run_dir/tb`` when given)."""
    lr: Any = cfg.ppo.learning_rate
    if cfg.ppo.learning_rate_end is not None:
        start, end = cfg.ppo.learning_rate, cfg.ppo.learning_rate_end
        lr = _LinearSchedule(start, end)
    act = {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU}[cfg.net.activation]
    policy: Any = TonkMaskablePolicy
    policy_kwargs: dict[str, Any] = {
        "net_arch": {"pi": list(cfg.net.pi), "vf": list(cfg.net.vf)},
        "activation_fn": act,
    }
    if cfg.net.critic == "oracle":
        policy = OracleCriticPolicy
        policy_kwargs.update(oracle_policy_kwargs(cfg.players))
    algo = OverlappedMaskablePPO if cfg.ppo.overlap else MaskablePPO
    model = algo(
        policy,
        vec_env,
        learning_rate=lr,
        n_steps=cfg.ppo.n_steps,
        batch_size=cfg.ppo.batch_size,
        n_epochs=cfg.ppo.n_epochs,
        gamma=cfg.ppo.gamma,
        gae_lambda=cfg.ppo.gae_lambda,
        clip_range=cfg.ppo.clip_range,
        ent_coef=cfg.ppo.ent_coef,
        vf_coef=cfg.ppo.vf_coef,
        max_grad_norm=cfg.ppo.max_grad_norm,
        target_kl=cfg.ppo.target_kl,
        policy_kwargs=policy_kwargs,
        tensorboard_log=None if run_dir is None else str(run_dir / "tb"),
        seed=cfg.seed,
        device=cfg.device,
        verbose=0,
    )
    if cfg.ppo.update_dtype != "float32":
        model.policy.update_dtype = getattr(torch, cfg.ppo.update_dtype)
    return model


class _LinearSchedule:
    """Picklable linear schedule from ``start`` (progress 1) to ``end`` (progress 0)."""

    def __init__(self, start: float, end: float) -> None:
        self.start, self.end = start, end

    def __call__(self, progress_remaining: float) -> float:
        return self.end + (self.start - self.end) * progress_remaining


def _make_vec_env(cfg: TrainConfig) -> Any:
    if cfg.vec_env == "core":
        # with ppo.overlap the envs step in a worker process, beside the update (train/sb3/core_process.py)
        core = CoreVecEnvProcess(cfg) if cfg.ppo.overlap else make_core_vec_env(cfg)
        core.seed(cfg.seed)
        return core
    fns = [make_env_fn(cfg, i) for i in range(cfg.n_envs)]
    vec = (
        SubprocVecEnv(fns, start_method="spawn") if cfg.vec_env == "subproc" else BatchedOpponentsVecEnv(fns)
    )
    vec.seed(cfg.seed)
    return vec


def _versions() -> dict[str, str]:
    return {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "stable_baselines3": stable_baselines3.__version__,
        "sb3_contrib": sb3_contrib.__version__,
        "numpy": np.__version__,
    }


def train_sb3(
    cfg: TrainConfig,
    run_dir: Path | None = None,
    progress: bool = True,
    evaluate: Evaluator | None = None,
) -> Path:
    """Train from scratch into a new run folder, scoring with ``evaluate``; returns the folder."""
    require_evaluator(cfg, evaluate)
    return _fit(cfg, run_dir, resume_from=None, progress=progress, evaluate=evaluate)


def resume_sb3(
    cfg: TrainConfig,
    run_dir: Path,
    progress: bool = True,
    evaluate: Evaluator | None = None,
    log: Callable[[str], None] | None = None,
) -> Path:
    """Continue the run of ``cfg`` (its ``config.yaml``) in ``run_dir`` from its newest readable checkpoint.

    Nothing is unpickled (:func:`train.sb3.zip_checkpoint.read_run_checkpoint`).
    A finished run, a broken ``best.json`` or a run without a readable
    checkpoint is a ``ValueError`` before anything is written.
    """
    say = log or _stderr
    require_evaluator(cfg, evaluate)
    read_best_score(run_dir)  # a broken best.json is refused now, not after the first rollout
    ckpt = _resumable_checkpoint(run_dir, say)
    step = ckpt.step
    if step >= cfg.total_steps:
        raise ValueError(
            f"{run_dir}: the run is finished (step {step:,} of total_steps {cfg.total_steps:,}); to train "
            f"further, raise the total: tonk train --resume {run_dir} total_steps={2 * max(step, 1)}"
        )
    folder = ckpt.path.with_suffix("")
    state = read_state(folder)
    if state is None:
        say(
            f"{ckpt.path.name} has no {folder.name}/train_state.json (an older Tonk RL): the run resumes, "
            "but not exactly as it would have gone on"
        )
    return _fit(cfg, run_dir, resume_from=ckpt, progress=progress, evaluate=evaluate, resume_state=state)


def _stderr(text: str) -> None:
    print(f"tonk train: {text}", file=sys.stderr, flush=True)


def _resumable_checkpoint(run_dir: Path, say: Callable[[str], None]) -> RunCheckpoint:
    """The newest checkpoint that reads back whole, with its pool; the skipped ones are named."""
    found = run_checkpoints(run_dir)
    if not found:
        raise ValueError(f"{run_dir}: no checkpoints/step_*.zip to resume from")
    for step, path in found:
        try:
            ckpt = read_run_checkpoint(path)
            if ckpt.step != step:
                raise ValueError(f"{path}: it holds step {ckpt.step}, its name says {step}")
            read_pool(path.with_suffix(""))
            read_state(path.with_suffix(""))
        except ValueError as e:
            say(f"skipped {path.name} ({e}); trying an older checkpoint")
            continue
        return ckpt
    raise ValueError(f"{run_dir}: none of its {len(found)} checkpoint(s) can be read; nothing to resume from")


def _fit(
    cfg: TrainConfig,
    run_dir: Path | None,
    resume_from: RunCheckpoint | None,
    progress: bool,
    evaluate: Evaluator | None,
    resume_state: dict[str, Any] | None = None,
) -> Path:
    # numpy's BLAS evaluates the frozen opponents' batches (train/sb3/dummy_vec.py). Left at
    # its default it starts a thread per core whose spin-waiting takes the cores
    # from torch's threads, and on 2 cores the whole run slows down (docs/RESULTS.md).
    with threadpool_limits(limits=1, user_api="blas"):
        return _fit_run(cfg, run_dir, resume_from, progress, evaluate, resume_state)


def _fit_run(
    cfg: TrainConfig,
    run_dir: Path | None,
    resume_from: RunCheckpoint | None,
    progress: bool,
    evaluate: Evaluator | None,
    resume_state: dict[str, Any] | None = None,
) -> Path:
    torch.set_num_threads(cfg.torch_threads)
    seed_everything(cfg.seed)
    vec = _make_vec_env(cfg)
    try:
        model = build_model(cfg, vec, run_dir)
        if resume_from is None:
            run_dir = _start_run(cfg, model, run_dir, progress)
        else:
            assert run_dir is not None  # resume() passes its folder
            restore_checkpoint(model, resume_from)
            # only now that the checkpoint fits: metrics.jsonl and best.* back to the checkpoint's moment
            rewind_run(run_dir, resume_from.step, resume_from.path.with_suffix(""))
        cb = TonkCallback(
            cfg,
            run_dir,
            resume_from=None if resume_from is None else resume_from.path,
            progress=progress,
            evaluate=evaluate,
            resume_state=resume_state,
        )
        if isinstance(model, OverlappedMaskablePPO):
            model.may_play_ahead = cb.may_play_ahead
        remaining = cfg.total_steps - model.num_timesteps

        def handler(signum: int, frame: Any) -> None:
            cb.request_stop(signal.Signals(signum).name)

        old = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}
        try:
            if remaining > 0:
                model.learn(
                    total_timesteps=remaining,
                    callback=cb,
                    reset_num_timesteps=False,
                    tb_log_name="ppo",
                    progress_bar=False,
                )
        except WorkerDiedError as e:  # the envs' state went with it: the last checkpoint holds the run
            raise WorkerDiedError(
                f"{e}; tonk train --resume {run_dir} goes on from the last checkpoint"
            ) from None
        except _PIPE_GONE as e:
            if cfg.vec_env != "subproc":
                raise
            raise WorkerDiedError(
                f"an env process of vec_env: subproc died ({type(e).__name__}); "
                f"tonk train --resume {run_dir} goes on from the last checkpoint"
            ) from None
        finally:
            for s, h in old.items():
                signal.signal(s, h)
        cb.finish(model)
    finally:
        _close(vec)
    return run_dir


#: What ``SubprocVecEnv`` raises when its pipe leads to an env process that died.
_PIPE_GONE = (EOFError, ConnectionResetError, BrokenPipeError)


def _close(vec: Any) -> None:
    """Close the envs; a ``SubprocVecEnv`` with a dead env process cannot say close to it: the rest stop."""
    try:
        vec.close()
    except _PIPE_GONE:
        for proc in getattr(vec, "processes", ()):
            if proc.is_alive():
                proc.terminate()
                proc.join(5)


def _start_run(cfg: TrainConfig, model: Any, run_dir: Path | None, progress: bool) -> Path:
    """Warm-start a fresh model (``init_from`` is loaded before the run folder exists), make the folder."""
    src: Any = None
    rules = make_rules(cfg.rules, **cfg.rule_options)
    if cfg.init_from and is_network_warm_start(cfg.init_from):
        src = init_from_network(model, cfg.init_from, rules, cfg.players)
    elif cfg.init_from:
        src = init_from_checkpoint(model, cfg.init_from, rules, cfg.players)
    run_dir = run_dir or make_run_dir(cfg)
    write_run_files(cfg, run_dir, _versions())
    model.tensorboard_log = str(run_dir / "tb")
    if src is not None:
        append_jsonl(run_dir / "metrics.jsonl", {"type": "init_from", "step": 0, "checkpoint": str(src)})
    if cfg.pretrain.teacher:
        stats = pretrain(model, cfg, run_dir, progress=progress)
        append_jsonl(run_dir / "metrics.jsonl", {"type": "pretrain", "step": 0, **_flat(stats)})
    return run_dir


def _flat(stats: dict[str, Any]) -> dict[str, Any]:
    """The scalar entries of the pretraining stats (for metrics.jsonl)."""
    return {k: v for k, v in stats.items() if isinstance(v, (int, float, str))}
