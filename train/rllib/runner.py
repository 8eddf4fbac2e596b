"""The env runner of ``backend: rllib``: RLlib's single-agent runner with a batched sampling loop.

:class:`TonkEnvRunner` is RLlib's ``SingleAgentEnvRunner`` (it builds its env
the same way, ``gym.make_vec(..., vectorization_mode="vector_entry_point")``,
an :class:`~train.rllib.vector.RllibVectorEnv`; it syncs weights, counts
steps and reports metrics as RLlib's does) whose ``_sample`` works on whole
batches instead of one game at a time:

- each step is one forward pass of the masked module over every game's
  observation, one categorical draw per game over its legal actions
  (:func:`draw_legal`: the Gumbel-max trick from the runner's own generator,
  seeded by the config's seed and the runner's index; ``argmax`` without
  exploration), and one
  :meth:`~train.rllib.vector.RllibVectorEnv.step_same` of the compiled core;
- the steps go into ``(T, num_envs)`` arrays, cut at the end of the sample into
  one :class:`SingleAgentEpisode` per hand (or per unfinished part of a hand)
  whose buffers are numpy slices of those arrays.

The stock runner spends most of its time per game and step in Python (its
connector pipelines, unbatching, one episode call per game); this loop spends
it per batch. What it leaves out: user connectors on the env-to-module and
module-to-env paths (the Tonk config adds none), per-episode callbacks and
RLlib's episode-return metrics (the trainer counts outcomes and stakes from
the env, :meth:`~train.rllib.vector.RllibVectorEnv.take_stats`).
"""

from __future__ import annotations

import gc
import math
import time
import uuid
from typing import Any

import numpy as np
import ray
import torch
from ray.rllib.core.columns import Columns
from ray.rllib.env.single_agent_env_runner import SingleAgentEnvRunner
from ray.rllib.env.single_agent_episode import SingleAgentEpisode

from agents.mlp import LegalColumns

from .episodes import EpisodeMaker

__all__ = ["STATS", "TonkEnvRunner", "draw_legal"]

#: The runner metrics' key of the env's counts (lifetime sums, added up over the runners by RLlib):
#: ``steps``, ``stakes_sum``, ``kinds/<result kind>``, ``node_steps/<Ray node id>``, ``sample_s``
#: (seconds inside ``sample``; steps / sample_s is the collection rate of one runner).
STATS = "tonk"


def draw_legal(
    logits: np.ndarray, legal: np.ndarray, gen: np.random.Generator | None
) -> tuple[np.ndarray, np.ndarray]:
    """Each row's action among its legal columns, and its log-probability (softmax over them).

    With ``gen``, a categorical draw by the Gumbel-max trick on the legal columns
    only (a dozen a row instead of the table's 540); without, the most likely
    legal action (the first of equal ones).
    """
    cols = LegalColumns(legal)
    v = logits[cols.rows, cols.cols].astype(np.float64)
    top = np.maximum.reduceat(v, cols.starts)
    log_total = top + np.log(np.add.reduceat(np.exp(v - np.repeat(top, cols.counts)), cols.starts))
    score = v if gen is None else v + gen.gumbel(size=v.size)
    chosen = cols.starts + cols.pack(score, -np.inf).argmax(axis=1)
    return cols.cols[chosen], (v[chosen] - log_total).astype(np.float32)


class TonkEnvRunner(SingleAgentEnvRunner):
    """RLlib's single-agent env runner, sampling the Tonk vector env a batch at a time (see the module)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._obs: np.ndarray | None = None
        self._hand_ids: list[str] = []
        self._hand_t = np.zeros(0, dtype=np.int64)
        self._make_episode = EpisodeMaker()
        seed, index = self.config.seed, int(self.worker_index or 0)
        self._draws = np.random.default_rng(None if seed is None else [int(seed), index])

    def sample(self, **kwargs: Any) -> Any:
        """RLlib's ``sample``, on an env made now if this runner has none.

        The local runner (in the driver) has none; RLlib samples with it when no remote runner is
        healthy, as while Ray restarts one whose process died.
        """
        if self.env is None:
            self.make_env()
        return super().sample(**kwargs)

    def _sample(
        self,
        *,
        num_timesteps: int | None = None,
        num_episodes: int | None = None,
        explore: bool,
        random_actions: bool = False,
        force_reset: bool = False,
    ) -> list[SingleAgentEpisode]:
        """At least ``num_timesteps`` steps of every game at once, as episodes (one per hand or part)."""
        if num_timesteps is None or random_actions:
            raise ValueError(
                "the Tonk env runner samples timesteps with the module (batch_mode truncate_episodes)"
            )
        # The episodes are many small objects without cycles (freed by their counts); with the
        # collector on, its passes over a process that holds Ray and torch took most of the cut.
        collecting = gc.isenabled()
        gc.disable()
        try:
            return self._sample_batch(num_timesteps, explore, force_reset)
        finally:
            if collecting:
                gc.enable()

    def _sample_batch(self, num_timesteps: int, explore: bool, force_reset: bool) -> list[SingleAgentEpisode]:
        """:meth:`_sample` with the collector paused."""
        t_start = time.perf_counter()
        assert self.env is not None
        env = self.env.unwrapped
        B = self.num_envs
        if force_reset or self._needs_initial_reset or self._obs is None:
            self._obs, _ = env.reset(seed=self._seed if self._needs_initial_reset else None)
            self._needs_initial_reset = False
            self._hand_ids = [uuid.uuid4().hex for _ in range(B)]
            self._hand_t = np.zeros(B, dtype=np.int64)
        T = max(1, math.ceil(num_timesteps / B))
        obs = np.empty((T + 1, B, self._obs.shape[1]), dtype=np.float32)
        obs[0] = self._obs
        actions = np.empty((T, B), dtype=np.int64)
        logp = np.empty((T, B), dtype=np.float32)
        rewards = np.empty((T, B), dtype=np.float32)
        ended = np.zeros((T, B), dtype=np.bool_)
        logits_all: np.ndarray | None = None
        finals: dict[tuple[int, int], np.ndarray] = {}
        module = self.module
        assert module is not None
        for t in range(T):
            batch = {Columns.OBS: torch.from_numpy(obs[t])}
            with torch.no_grad():
                # the module's own hooks: RLlib's public wrappers switch every layer to eval mode and
                # back around each call, which this module (no dropout, no normalisation) does not need
                out = module._forward_exploration(batch) if explore else module._forward_inference(batch)
            logits = out[Columns.ACTION_DIST_INPUTS].numpy()
            if logits_all is None:
                logits_all = np.empty((T, B, logits.shape[1]), dtype=np.float32)
            logits_all[t] = logits
            legal = obs[t, :, -logits.shape[1] :] > 0.5
            actions[t], logp[t] = draw_legal(logits, legal, self._draws if explore else None)
            nxt, r, done, last = env.step_same(actions[t])
            obs[t + 1] = nxt
            rewards[t] = r
            ended[t] = done
            for g, o in last:
                finals[(t, g)] = o
        assert logits_all is not None
        self._obs = obs[T].copy()
        episodes = self._episodes(obs, actions, logp, logits_all, rewards, ended, finals)
        steps = T * B
        done_hands = int(ended.sum())
        self._log_env_steps(metric=self._metrics_num_env_steps_sampled, num_steps=steps)
        self._increase_sampled_metrics(steps, done_hands)
        self._log_stats(env.take_stats(), time.perf_counter() - t_start)
        return episodes

    def _log_stats(self, stats: dict[str, Any], seconds: float) -> None:
        """Add the env's counts and the sampling time to the runner's metrics (under :data:`STATS`)."""
        log = self.metrics.log_value
        log((STATS, "steps"), stats["steps"], reduce="lifetime_sum")
        log((STATS, "stakes_sum"), stats["stakes_sum"], reduce="lifetime_sum")
        log((STATS, "sample_s"), seconds, reduce="lifetime_sum")
        node = ray.get_runtime_context().get_node_id() if ray.is_initialized() else "local"
        log((STATS, "node_steps", node), stats["steps"], reduce="lifetime_sum")
        for kind, n in stats["kinds"].items():
            log((STATS, "kinds", kind), n, reduce="lifetime_sum")

    def _episodes(
        self,
        obs: np.ndarray,
        actions: np.ndarray,
        logp: np.ndarray,
        logits: np.ndarray,
        rewards: np.ndarray,
        ended: np.ndarray,
        finals: dict[tuple[int, int], np.ndarray],
    ) -> list[SingleAgentEpisode]:
        """Cut the ``(T, B)`` arrays into one episode per hand (and per hand still going at the end).

        The episodes carry no spaces (their buffers are numpy already) and are
        built by :class:`~train.rllib.episodes.EpisodeMaker`, equal to RLlib's
        constructor's at a fraction of its cost.
        """
        T, B = actions.shape
        out: list[SingleAgentEpisode] = []
        make = self._make_episode.make
        for g in range(B):
            start = 0
            for t in [*np.flatnonzero(ended[:, g]).tolist(), T - 1]:
                if t < start:
                    continue  # the last hand ended on the last step
                terminated = bool(ended[t, g])
                if terminated:
                    seen = np.concatenate([obs[start : t + 1, g], finals[(t, g)][None]])
                else:
                    seen = obs[start : t + 2, g]
                n = t + 1 - start
                sl = slice(start, t + 1)
                out.append(
                    make(
                        self._hand_ids[g],
                        seen,
                        actions[sl, g],
                        rewards[sl, g],
                        {Columns.ACTION_LOGP: logp[sl, g], Columns.ACTION_DIST_INPUTS: logits[sl, g]},
                        terminated,
                        int(self._hand_t[g]),
                    )
                )
                if terminated:
                    self._hand_ids[g] = uuid.uuid4().hex
                    self._hand_t[g] = 0
                else:
                    self._hand_t[g] += n
                start = t + 1
        return out
