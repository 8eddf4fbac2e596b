"""The training callback: self-play pool updates, evaluation, checkpoints, logs, stop on signal.

The evaluation that picks ``best.zip`` is injected: :class:`TonkCallback`
receives an ``evaluate`` callable shaped like :func:`eval.duplicate.evaluate`
(:class:`~train.evaluation.Evaluator`), since training does not import ``eval``.
The run folder's files are written by :mod:`train.run_folder`, as the RLlib backend's.
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any, cast

import numpy as np
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback

from agents.mlp import layers_from_state_dict
from tonk_env.engine.state import RESULT_KINDS
from tonk_env.progress import progress_bar

from ..config import TrainConfig
from ..evaluation import Evaluator, evaluate_layers, require_evaluator
from ..plots import plot_learning_curve
from ..pool import Layers
from ..run_folder import (
    log_event,
    read_best_score,
    read_pool,
    speed_summary,
    write_best,
    write_pool,
    write_summary,
)
from .runstate import capture_state, redeal, restore_state, write_state
from .zip_checkpoint import save_run_checkpoint

__all__ = ["TonkCallback", "policy_layers"]


def policy_layers(model: Any) -> Layers:
    """The learner's policy network as numpy layers (copies: later updates leave them as they are)."""
    # layers_from_state_dict returns views of the torch tensors, which the next PPO update changes in
    # place; the pool's saved latest and snapshots must be the weights of the moment they were taken
    return [(w.copy(), b.copy()) for w, b in layers_from_state_dict(model.policy.state_dict())]


class TonkCallback(BaseCallback):
    """Runs everything around ``model.learn`` for one run folder.

    ``evaluate`` scores the policy against ``cfg.eval.opponents``
    (:func:`eval.duplicate.evaluate`); it may be None only when there are none.
    """

    def __init__(
        self,
        cfg: TrainConfig,
        run_dir: Path,
        resume_from: Path | None = None,
        progress: bool = True,
        evaluate: Evaluator | None = None,
        resume_state: dict[str, Any] | None = None,
    ) -> None:
        require_evaluator(cfg, evaluate)
        super().__init__(verbose=0)
        self.cfg = cfg
        self.evaluator = evaluate
        self.run_dir = run_dir
        self.resume_from = resume_from
        self.resume_state = resume_state
        self.progress = progress
        self.stop_reason: str | None = None
        self.snapshots: list[tuple[int, Layers]] = []
        self.latest: Layers | None = None
        self.kinds: Counter[str] = Counter()
        self.stakes: list[float] = []
        self.best_score = -np.inf
        self.last_eval_step = -1
        self.last_ckpt_step = -1
        self.bar: Any = None
        self.t_rollout = time.perf_counter()
        self.steps_rollout = 0
        self.t_start = time.perf_counter()
        self.steps_start = 0
        self.eval_seconds = 0.0
        # where the wall time goes: playing the envs ("collect") against the PPO update ("update")
        self.collect_seconds = 0.0
        self.update_seconds = 0.0
        self.phase: str | None = None
        self.t_phase = 0.0
        self.eval_at_phase = 0.0

    # -- lifecycle -----------------------------------------------------------------
    def request_stop(self, reason: str) -> None:
        """Ask training to stop at the next step (a checkpoint is saved)."""
        self.stop_reason = reason

    def _on_training_start(self) -> None:
        step = self.num_timesteps
        self.steps_start = step
        self.t_start = self.t_rollout = time.perf_counter()
        self.steps_rollout = step
        self.best_score = read_best_score(self.run_dir)
        if self.resume_from is not None:
            self._load_pool(self.resume_from.with_suffix(""))
            self.last_ckpt_step = step
            exact = self.resume_state is not None
            if self.resume_state is not None:  # the checkpoint's random streams: the same hands from here on
                try:
                    restore_state(self.training_env, self.resume_state)
                except ValueError as e:  # e.g. n_envs overridden on resume
                    exact = False
                    print(
                        f"tonk train: {e}; the run resumes, but not exactly as it would have gone on",
                        file=sys.stderr,
                    )
                redeal(self.model, self.training_env)
            self._log_event(
                {"type": "resume", "step": step, "checkpoint": self.resume_from.name, "exact": exact}
            )
        else:
            self.latest = policy_layers(self.model)
            self._push(latest=self.latest)
        cfg = self.cfg
        self.next_refresh = _next_multiple(step, cfg.pool.refresh_every)
        self.next_snapshot = _next_multiple(step, cfg.pool.snapshot_every)
        self.next_eval = _next_multiple(step, cfg.eval.every) if cfg.eval.every else None
        self.next_ckpt = _next_multiple(step, cfg.checkpoint_every)
        warm = bool(cfg.pretrain.teacher or cfg.init_from)
        if self.resume_from is None and step == 0 and cfg.eval.every and warm:
            self.evaluate()  # the warm start is scored too: best.zip may be it
        if self.progress:
            self.bar = progress_bar(
                total=cfg.total_steps,
                initial=step,
                unit="step",
                desc=f"train {cfg.name}",
                dynamic_ncols=True,
                smoothing=0.05,
            )

    def _on_step(self) -> bool:
        step = self.num_timesteps
        infos = self.locals.get("infos", ())
        dones = self.locals.get("dones", ())
        for done, info in zip(dones, infos, strict=True):
            if done and "result_kind" in info:
                self.kinds[info["result_kind"]] += 1
                seat = info.get("learner_seat")
                if seat is not None and "payoffs" in info:
                    self.stakes.append(float(info["payoffs"][seat]))
        if self.bar is not None:
            self.bar.update(self.training_env.num_envs)
        cfg = self.cfg
        if step >= self.next_refresh:
            self.latest = policy_layers(self.model)
            self._push(latest=self.latest)
            self.next_refresh = _next_multiple(step, cfg.pool.refresh_every)
        if step >= self.next_snapshot:
            layers = policy_layers(self.model)
            self.snapshots.append((step, layers))
            self.snapshots = self.snapshots[-cfg.pool.window :]
            self._push(snapshot=layers, step=step)
            self.next_snapshot = _next_multiple(step, cfg.pool.snapshot_every)
        if self.next_eval is not None and step >= self.next_eval:
            self.evaluate()
            self.next_eval = _next_multiple(step, cfg.eval.every)
        return self.stop_reason is None

    def may_play_ahead(self, step: int) -> bool:
        """Whether the rollout that starts at ``step`` may be played during the update before it
        (``ppo.overlap``): not when a checkpoint is due there, nor once a stop is asked for."""
        checkpoint_due = step >= self.next_ckpt and step != self.last_ckpt_step
        return self.stop_reason is None and not checkpoint_due

    def _begin_phase(self, phase: str) -> None:
        self.phase, self.t_phase, self.eval_at_phase = phase, time.perf_counter(), self.eval_seconds

    def _end_phase(self) -> float:
        """Close the running phase: add its seconds (evaluation excluded) to its total; return them."""
        if self.phase is None:
            return 0.0
        seconds = time.perf_counter() - self.t_phase - (self.eval_seconds - self.eval_at_phase)
        if self.phase == "collect":
            self.collect_seconds += seconds
        else:
            self.update_seconds += seconds
        self.phase = None
        return seconds

    def _on_rollout_start(self) -> None:
        self._end_phase()
        step = self.num_timesteps
        if step >= self.next_ckpt and step != self.last_ckpt_step:
            # at a rollout boundary, after the update: what a resume needs is the weights and the random
            # streams, and every env starts a new hand from the saved streams (train/sb3/runstate.py)
            self.checkpoint()
            redeal(self.model, self.training_env)
            self.next_ckpt = _next_multiple(step, self.cfg.checkpoint_every)
        self._begin_phase("collect")

    def _on_rollout_end(self) -> None:
        step = self.num_timesteps
        now = time.perf_counter()
        collect = self._end_phase()
        self._begin_phase("update")
        sps = (step - self.steps_rollout) / max(now - self.t_rollout, 1e-9)
        self.t_rollout, self.steps_rollout = now, step
        cfg = self.cfg
        model = cast(MaskablePPO, self.model)  # BaseCallback types it as any algorithm; this one trains PPO
        if cfg.ppo.ent_coef_end is not None:
            frac = min(1.0, step / cfg.total_steps)
            model.ent_coef = cfg.ppo.ent_coef + (cfg.ppo.ent_coef_end - cfg.ppo.ent_coef) * frac
        self.logger.record("tonk/steps_per_s", sps)
        self.logger.record("tonk/ent_coef", float(model.ent_coef))
        hands = sum(self.kinds.values())
        row: dict[str, Any] = {
            "type": "rollout",
            "step": step,
            "steps_per_s": round(sps, 1),
            "collect_s": round(collect, 3),
            "hands": hands,
        }
        if hands:
            for kind in RESULT_KINDS:
                self.logger.record(f"outcomes/{kind}", self.kinds[kind] / hands)
            mean = float(np.mean(self.stakes)) if self.stakes else 0.0
            self.logger.record("tonk/mean_stakes_per_hand", mean)
            row["mean_stakes"] = round(mean, 4)
            row["outcomes"] = {k: round(self.kinds[k] / hands, 4) for k in RESULT_KINDS}
        self._log_event(row)
        self.kinds.clear()
        self.stakes.clear()

    # -- pool ------------------------------------------------------------------------
    def _push(self, latest: Any = None, snapshot: Any = None, step: int = 0) -> None:
        self.training_env.env_method(
            "update_pool", latest=latest, snapshot=snapshot, activation=self.cfg.net.activation, step=step
        )

    def _load_pool(self, folder: Path) -> None:
        self.latest, snapshots = read_pool(folder)
        if self.latest is not None:
            self._push(latest=self.latest)
        for step, layers in snapshots:
            self.snapshots.append((step, layers))
            self._push(snapshot=layers, step=step)

    # -- checkpoints and evaluation ------------------------------------------------------
    def checkpoint(self) -> Path:
        """Save ``checkpoints/step_<N>.zip``, and beside it the pool and the random state (written first)."""
        step = int(self.num_timesteps)
        folder = self.run_dir / "checkpoints" / f"step_{step}"
        write_pool(folder, self.latest, self.snapshots, self.cfg.net.activation)
        write_state(folder, capture_state(self.training_env), self.run_dir)
        path = save_run_checkpoint(self.cfg, self.model, self.run_dir)
        self.last_ckpt_step = self.num_timesteps
        self._log_event(
            {"type": "checkpoint", "step": self.num_timesteps, "path": str(path.relative_to(self.run_dir))}
        )
        return path

    def evaluate(self) -> dict[str, Any]:
        """Duplicate-deal evaluation of the current policy against each configured opponent."""
        t0 = time.perf_counter()
        step = self.num_timesteps
        results = (
            evaluate_layers(policy_layers(self.model), self.cfg, self.cfg.eval.seed, self.evaluator)
            if self.evaluator is not None
            else {}  # no opponents to evaluate against (require_evaluator checked it)
        )
        self.eval_seconds += time.perf_counter() - t0
        for spec, r in results.items():
            self.logger.record(f"eval/{spec}/mean_stakes", r["mean_stakes"])
            self.logger.record(f"eval/{spec}/win_rate", r["win_rate"])
        score = float(np.mean([r["mean_stakes"] for r in results.values()]))
        self.logger.record("eval/score", score)
        self._log_event({"type": "eval", "step": step, "score": score, "results": results})
        self.last_eval_step = step
        if score > self.best_score:
            self.best_score = score
            save_run_checkpoint(self.cfg, self.model, self.run_dir, path=self.run_dir / "best.zip")
            write_best(self.run_dir, step, score, results)
        self.logger.dump(step)
        plot_learning_curve(self.run_dir)
        return results

    def finish(self, model: Any) -> None:
        """After ``learn``: last checkpoint, last evaluation, summary."""
        self.model = model
        step = int(model.num_timesteps)
        self._end_phase()  # the last update, or the rollout a stop request cut short
        if self.bar is not None:
            self.bar.close()
        if self.last_ckpt_step != step:
            self.checkpoint()
        if self.stop_reason is None and self.last_eval_step != step:
            self.evaluate()
        wall = time.perf_counter() - self.t_start
        train_steps = step - self.steps_start
        collect, update = self.collect_seconds, self.update_seconds
        timing = getattr(model, "overlap_timing", None)  # ppo.overlap: the thread's own seconds
        if timing is not None:
            collect, update = timing.collect, timing.update
        summary = {
            "steps": step,
            "stopped_by": self.stop_reason,
            **speed_summary(train_steps, wall, self.eval_seconds, collect, update),
            "best_score": None if self.best_score == -np.inf else self.best_score,
        }
        if timing is not None:
            summary["overlap"] = {
                "rollouts_played_ahead": timing.ahead,
                "wait_seconds": round(timing.wait, 3),
            }
        write_summary(self.run_dir, summary)

    def _log_event(self, row: dict[str, Any]) -> None:
        log_event(self.run_dir, row)


def _next_multiple(step: int, every: int) -> int:
    return (step // every + 1) * every
