"""In-process vectorised envs for training: lighter info copies, batched network opponents.

:class:`ShallowInfoDummyVecEnv`
    :class:`stable_baselines3.common.vec_env.DummyVecEnv` returns
    ``deepcopy(self.buf_infos)`` after every step, which copies every info
    dict and the terminal observations inside them: about 3% of a training
    run's time at 128 envs. The Tonk envs (and the trainer's wrappers) return
    a fresh info dict and a fresh observation array on every step, so a
    shallow copy of each dict keeps the returned infos independent of the
    next step at a fraction of the cost.

:class:`BatchedOpponentsVecEnv`
    In self-play most opponent moves come from frozen copies of the
    learner's network. Evaluated one move at a time, each costs a few small
    matrix-vector products plus numpy's call overhead. This env first plays
    every env's step up to the first move of such an opponent
    (``TonkSingleAgentEnv.prepare_step``), computes the logits of all the
    pending moves that share a network in one matrix product, gives each
    env its move (``resume_step``) and repeats until every env's learner is
    to act again; then the wrappers' ``step`` returns the prepared results.
    A policy takes part when it has a ``batch_key`` that is not None (copies
    with equal keys must hold equal weights: the opponent pool pushes the
    same weights to every env at once), ``logits(batch)`` and
    ``pick(logits_row, mask)``; :class:`agents.mlp.MLPPolicy` has all three.
    Each row's action is picked by its own env's copy (its own random
    generator when opponents sample), so runs stay reproducible from the seed.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from stable_baselines3.common.vec_env import DummyVecEnv


class ShallowInfoDummyVecEnv(DummyVecEnv):
    """``DummyVecEnv`` whose ``step_wait`` copies each info dict instead of deep-copying them all."""

    def step_wait(self) -> Any:
        """Step every env in turn; reset the finished ones (their last observation in the info)."""
        infos = self.buf_infos
        for i, env in enumerate(self.envs):
            obs, reward, terminated, truncated, info = env.step(self.actions[i])
            done = terminated or truncated
            info["TimeLimit.truncated"] = truncated and not terminated
            if done:
                info["terminal_observation"] = obs
                obs, self.reset_infos[i] = env.reset()
            self.buf_rews[i] = reward
            self.buf_dones[i] = done
            infos[i] = info
            self._save_obs(i, obs)
        return (
            self._obs_from_buf(),
            np.copy(self.buf_rews),
            np.copy(self.buf_dones),
            [dict(info) for info in infos],
        )


class BatchedOpponentsVecEnv(ShallowInfoDummyVecEnv):
    """``ShallowInfoDummyVecEnv`` that evaluates the network opponents of all envs in batches."""

    def __init__(self, env_fns: list[Any]) -> None:
        super().__init__(env_fns)
        self.bases = [env.unwrapped for env in self.envs]
        missing = [type(b).__name__ for b in self.bases if not hasattr(b, "prepare_step")]
        if missing:
            raise TypeError(f"BatchedOpponentsVecEnv needs envs with prepare_step(); got {missing[0]}")
        #: opponent moves evaluated in batches, and the number of batches (for the logs)
        self.batched_moves = 0
        self.batches = 0

    def step_wait(self) -> Any:
        """Play all envs' opponents with batched network moves, then step through the wrappers."""
        bases = self.bases
        pending: dict[int, Any] = {}
        for i, base in enumerate(bases):
            policy = base.prepare_step(self.actions[i])
            if policy is not None:
                pending[i] = policy
        while pending:
            groups: dict[Any, list[int]] = {}
            for i, policy in pending.items():
                groups.setdefault(policy.batch_key, []).append(i)
            after: dict[int, Any] = {}
            for rows in groups.values():
                seen = [bases[i].pending_observation() for i in rows]
                logits = pending[rows[0]].logits(np.stack([o for o, _ in seen]))
                for k, i in enumerate(rows):
                    policy = bases[i].resume_step(pending[i].pick(logits[k], seen[k][1]))
                    if policy is not None:
                        after[i] = policy
                self.batched_moves += len(rows)
                self.batches += 1
            pending = after
        return super().step_wait()
