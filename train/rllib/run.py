"""One run of the RLlib backend: the training loop around ``Algorithm.train()`` and its run folder.

:class:`RllibRun` does for RLlib what :class:`train.sb3.callback.TonkCallback`
does for SB3: after each iteration of ``Algorithm.train()`` it reads the
envs' outcome and stake counts (the env runners' metrics), logs a ``rollout``
line to ``metrics.jsonl`` and TensorBoard scalars under the SB3 backend's
names, refreshes the latest frozen copy and adds snapshots to the envs' pools,
evaluates (``best/``), checkpoints, and stops on SIGINT/SIGTERM after the
running iteration with a checkpoint.
"""

from __future__ import annotations

import random
import signal
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch.utils.tensorboard import SummaryWriter

from tonk_env.engine import make_rules
from tonk_env.engine.state import RESULT_KINDS
from tonk_env.progress import progress_bar

from ..config import TrainConfig
from ..evaluation import Evaluator, evaluate_layers, require_evaluator
from ..plots import plot_learning_curve
from ..pool import Layers
from ..run_folder import log_event, make_run_dir, read_best_score, speed_summary, write_best, write_summary
from .backend import (
    POLICY,
    build_algorithm,
    checkpoint_meta,
    learner_state,
    learner_weights,
    push_pool,
    read_stats,
    restore_learner,
    write_run_files,
)
from .folder_checkpoint import (
    RllibCheckpoint,
    read_rllib_checkpoint,
    rllib_checkpoints,
    write_rllib_checkpoint,
)
from .module import policy_layers
from .setup_ray import init_ray

__all__ = ["RllibRun", "resume_rllib", "train_rllib"]

#: SB3's scalar names for RLlib's learner figures (``entropy`` is logged negated, as SB3's entropy loss).
_TB_NAMES = {
    "policy_loss": "train/policy_gradient_loss",
    "vf_loss_unclipped": "train/value_loss",
    "total_loss": "train/loss",
    "vf_explained_var": "train/explained_variance",
    "default_optimizer_learning_rate": "train/learning_rate",
}


def _num(x: Any) -> float:
    """A metric value (a Python, numpy or torch scalar) as a float."""
    return float(x.item() if hasattr(x, "item") else x)


def _next_multiple(step: int, every: int) -> int:
    return (step // every + 1) * every


class RllibRun:
    """Trains ``cfg`` with RLlib into ``run_dir`` (a new folder, or the run that ``ckpt`` resumes)."""

    def __init__(
        self,
        cfg: TrainConfig,
        run_dir: Path | None,
        ckpt: RllibCheckpoint | None,
        progress: bool,
        evaluate: Evaluator | None,
    ) -> None:
        self.cfg = cfg
        self.run_dir = run_dir
        self.ckpt = ckpt
        self.progress = progress
        self.evaluator = evaluate
        self.stop_reason: str | None = None
        self.step = ckpt.step if ckpt else 0
        self.iterations = ckpt.counters["iterations"] if ckpt else 0
        self.snapshots: list[tuple[int, Layers]] = list(ckpt.snapshots) if ckpt else []
        self.best_score = -np.inf
        self.last_eval_step = -1
        self.last_ckpt_step = self.step if ckpt else -1
        self.eval_seconds = self.collect_seconds = self.update_seconds = 0.0
        self.node_steps: Counter[str] = Counter()
        self._seen = {"kinds": Counter(), "stakes_sum": 0.0, "nodes": Counter(), "sample_s": 0.0}
        self.sample_seconds = 0.0  # the runners' own seconds inside sample(), added over the runners
        self.writer: Any = None
        self.algo: Any = None
        self._update_clock = 0.0  # seconds inside the learner group's update (the PPO update)

    # -- the whole run ------------------------------------------------------------------------
    def run(self) -> Path:
        """Start (or join) Ray, build the algorithm, make the folder, train; returns the run folder."""
        import ray

        cfg = self.cfg
        torch.set_num_threads(cfg.torch_threads)
        random.seed(cfg.seed)
        np.random.seed(cfg.seed)
        torch.manual_seed(cfg.seed)
        started = init_ray(cfg)
        try:
            self.algo = build_algorithm(cfg)
            self._time_updates()
            try:
                if self.ckpt is not None:
                    restore_learner(self.algo, self.ckpt.learner_state)
                    for step, layers in self.snapshots:
                        push_pool(self.algo, snapshot=layers, activation=cfg.net.activation, step=step)
                push_pool(self.algo, latest=self.policy(), activation=cfg.net.activation)
                if self.ckpt is None:
                    self.run_dir = self.run_dir or make_run_dir(cfg)
                    write_run_files(cfg, self.run_dir)
                assert self.run_dir is not None
                self._train()
            finally:
                if self.writer is not None:
                    self.writer.close()
                self.algo.stop()
        finally:
            if started:
                ray.shutdown()
        return self.run_dir

    def _time_updates(self) -> None:
        """Time the PPO update: RLlib's own timers are smoothed averages, not per-iteration figures."""
        group = self.algo.learner_group
        update = group.update

        def timed(*args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return update(*args, **kwargs)
            finally:
                self._update_clock += time.perf_counter() - t0

        group.update = timed

    def _train(self) -> None:
        cfg = self.cfg
        run_dir = self.run_dir
        assert run_dir is not None
        self.best_score = read_best_score(run_dir)
        self.writer = SummaryWriter(str(run_dir / "tb" / f"rllib_{cfg.rllib.algo}"))
        if self.ckpt is not None:
            self._log({"type": "resume", "step": self.step, "checkpoint": self.ckpt.path.name})
        start_step = self.step
        next_snapshot = _next_multiple(self.step, cfg.pool.snapshot_every)
        next_refresh = _next_multiple(self.step, cfg.pool.refresh_every)
        next_eval = _next_multiple(self.step, cfg.eval.every) if cfg.eval.every else None
        next_ckpt = _next_multiple(self.step, cfg.checkpoint_every)
        bar = (
            progress_bar(
                total=cfg.total_steps,
                initial=self.step,
                unit="step",
                desc=f"train {cfg.name}",
                smoothing=0.05,
            )
            if self.progress
            else None
        )
        t_start = time.perf_counter()

        def handler(signum: int, frame: Any) -> None:
            self.stop_reason = signal.Signals(signum).name

        old = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}
        try:
            while self.step < cfg.total_steps and self.stop_reason is None:
                before = self.step
                self._iteration(start_step)
                if bar is not None:
                    bar.update(self.step - before)
                if self.step >= next_refresh:
                    push_pool(self.algo, latest=self.policy(), activation=cfg.net.activation)
                    next_refresh = _next_multiple(self.step, cfg.pool.refresh_every)
                if self.step >= next_snapshot:
                    layers = self.policy()
                    self.snapshots = [*self.snapshots, (self.step, layers)][-cfg.pool.window :]
                    push_pool(self.algo, snapshot=layers, activation=cfg.net.activation, step=self.step)
                    next_snapshot = _next_multiple(self.step, cfg.pool.snapshot_every)
                if next_eval is not None and self.step >= next_eval and cfg.eval.opponents:
                    self.evaluate()
                    next_eval = _next_multiple(self.step, cfg.eval.every)
                if self.step >= next_ckpt:
                    self.checkpoint()
                    next_ckpt = _next_multiple(self.step, cfg.checkpoint_every)
        finally:
            for s, h in old.items():
                signal.signal(s, h)
            if bar is not None:
                bar.close()
        self._finish(time.perf_counter() - t_start, start_step)

    # -- one PPO iteration ----------------------------------------------------------------------
    def _iteration(self, start_step: int) -> None:
        t0 = time.perf_counter()
        clock = self._update_clock
        # the learner shuffles its batch with numpy's global generator, which Ray and the evaluation
        # in this process draw from too: seeded per iteration, the shuffles follow the seed alone
        np.random.seed((self.cfg.seed * 1_000_003 + self.iterations) % 2**32)
        result = self.algo.train()
        wall = time.perf_counter() - t0
        update = self._update_clock - clock
        collect = wall - update  # sampling on the env runners, and the weights sent to them
        self.iterations += 1
        self.collect_seconds += collect
        self.update_seconds += update
        sampled = result.get("env_runners", {}).get("num_env_steps_sampled_lifetime")
        if sampled is None:  # APPO: no sample has arrived yet
            return
        new_step = start_step + int(_num(sampled))
        steps = new_step - self.step
        self.step = new_step
        now = read_stats(result)
        kinds = now["kinds"] - self._seen["kinds"]
        nodes = now["nodes"] - self._seen["nodes"]
        stakes = now["stakes_sum"] - self._seen["stakes_sum"]
        self.sample_seconds += now["sample_s"] - self._seen["sample_s"]
        self._seen = now
        self.node_steps.update(nodes)
        if steps == 0:  # APPO: no sample arrived in this call
            return
        hands = sum(kinds.values())
        sps = steps / max(wall, 1e-9)
        w = self.writer
        w.add_scalar("tonk/steps_per_s", sps, self.step)
        w.add_scalar("tonk/ent_coef", self.cfg.ppo.ent_coef, self.step)
        w.add_scalar("time/fps", sps, self.step)
        learner = result.get("learners", {}).get(POLICY, {})
        if "entropy" in learner:
            w.add_scalar("train/entropy_loss", -_num(learner["entropy"]), self.step)
        for key, tag in _TB_NAMES.items():
            if key in learner:
                w.add_scalar(tag, _num(learner[key]), self.step)
        row: dict[str, Any] = {
            "type": "rollout",
            "step": self.step,
            "steps_per_s": round(sps, 1),
            "collect_s": round(collect, 3),
            "update_s": round(update, 3),
            "hands": hands,
            "nodes": dict(nodes),
        }
        if hands:
            for kind in RESULT_KINDS:
                w.add_scalar(f"outcomes/{kind}", kinds[kind] / hands, self.step)
            mean = stakes / hands
            w.add_scalar("tonk/mean_stakes_per_hand", mean, self.step)
            w.add_scalar("rollout/ep_rew_mean", mean * self.cfg.reward_scale, self.step)
            row["mean_stakes"] = round(mean, 4)
            row["outcomes"] = {k: round(kinds[k] / hands, 4) for k in RESULT_KINDS}
        self._log(row)

    # -- policy, evaluation, checkpoints ----------------------------------------------------------
    def policy(self) -> Layers:
        """The shared policy network as numpy layers (from the learner)."""
        return policy_layers(learner_weights(self.algo))

    def evaluate(self) -> dict[str, Any]:
        """Duplicate-deal evaluation of the policy against ``eval.opponents``; ``best/`` on a new best."""
        assert self.run_dir is not None
        t0 = time.perf_counter()
        layers = self.policy()
        results = (
            evaluate_layers(layers, self.cfg, self.cfg.eval.seed, self.evaluator)
            if self.evaluator is not None
            else {}
        )
        self.eval_seconds += time.perf_counter() - t0
        for spec, r in results.items():
            self.writer.add_scalar(f"eval/{spec}/mean_stakes", r["mean_stakes"], self.step)
            self.writer.add_scalar(f"eval/{spec}/win_rate", r["win_rate"], self.step)
        score = float(np.mean([r["mean_stakes"] for r in results.values()])) if results else 0.0
        self.writer.add_scalar("eval/score", score, self.step)
        self._log({"type": "eval", "step": self.step, "score": score, "results": results})
        self.last_eval_step = self.step
        if score > self.best_score:
            self.best_score = score
            counters = {"step": self.step, "iterations": self.iterations}
            write_rllib_checkpoint(
                self.run_dir / "best", checkpoint_meta(self.cfg, self.step), layers, None, counters, []
            )
            write_best(self.run_dir, self.step, score, results)
        plot_learning_curve(self.run_dir)
        return results

    def checkpoint(self) -> Path:
        """Write ``checkpoints/step_<N>/`` (learner state, policy, pool)."""
        assert self.run_dir is not None
        path = write_rllib_checkpoint(
            self.run_dir / "checkpoints" / f"step_{self.step}",
            checkpoint_meta(self.cfg, self.step),
            self.policy(),
            learner_state(self.algo),
            {"step": self.step, "iterations": self.iterations},
            self.snapshots,
        )
        self.last_ckpt_step = self.step
        self._log({"type": "checkpoint", "step": self.step, "path": str(path.relative_to(self.run_dir))})
        return path

    def _finish(self, wall: float, start_step: int) -> None:
        assert self.run_dir is not None
        if self.last_ckpt_step != self.step:
            self.checkpoint()
        if self.stop_reason is None and self.last_eval_step != self.step and self.cfg.eval.opponents:
            self.evaluate()
        trained = self.step - start_step

        def per_s(seconds: float) -> float:
            return round(trained / max(seconds, 1e-9), 1)

        r = self.cfg.rllib
        summary = {
            "steps": self.step,
            "stopped_by": self.stop_reason,
            "backend": "rllib",
            "algo": r.algo,
            "env_runners": r.env_runners,
            "envs_per_runner": r.envs_per_runner,
            "learners": r.learners,
            **speed_summary(trained, wall, self.eval_seconds, self.collect_seconds, self.update_seconds),
            # the runners' own time inside sample() (with APPO it overlaps the update): one runner's rate
            "runner_sample_seconds": round(self.sample_seconds, 3),
            "collect_steps_per_s_per_runner": per_s(self.sample_seconds),
            "steps_by_node": dict(self.node_steps),
            "best_score": None if self.best_score == -np.inf else self.best_score,
        }
        write_summary(self.run_dir, summary)
        self.writer.flush()

    def _log(self, row: dict[str, Any]) -> None:
        assert self.run_dir is not None
        log_event(self.run_dir, row)


def train_rllib(
    cfg: TrainConfig, run_dir: Path | None = None, progress: bool = True, evaluate: Evaluator | None = None
) -> Path:
    """Train with RLlib into a new run folder (made once Ray runs and the algorithm is built)."""
    require_evaluator(cfg, evaluate)
    return RllibRun(cfg, run_dir, None, progress, evaluate).run()


def resume_rllib(
    cfg: TrainConfig,
    run_dir: Path,
    progress: bool = True,
    evaluate: Evaluator | None = None,
    log: Callable[[str], None] | None = None,
) -> Path:
    """Continue an RLlib run from its newest checkpoint that reads back whole (nothing unpickled)."""
    require_evaluator(cfg, evaluate)
    say = log or (lambda text: print(f"tonk train: {text}", file=sys.stderr, flush=True))
    read_best_score(run_dir)
    found = rllib_checkpoints(run_dir)
    if not found:
        raise ValueError(f"{run_dir}: no checkpoints/step_*/ to resume from")
    rules = make_rules(cfg.rules, **cfg.rule_options)
    for step, path in found:
        try:
            ckpt = read_rllib_checkpoint(path, rules, cfg.players)
            if ckpt.step != step:
                raise ValueError(f"{path}: it holds step {ckpt.step}, its name says {step}")
        except ValueError as e:
            say(f"skipped {path.name} ({e}); trying an older checkpoint")
            continue
        if ckpt.step >= cfg.total_steps:
            raise ValueError(
                f"{run_dir}: the run is finished (step {ckpt.step:,} of total_steps {cfg.total_steps:,}); "
                f"to train further, raise the total: tonk train --resume {run_dir} "
                f"total_steps={2 * max(step, 1)}"
            )
        return RllibRun(cfg, run_dir, ckpt, progress, evaluate).run()
    raise ValueError(f"{run_dir}: none of its {len(found)} checkpoint(s) can be read; nothing to resume from")
