"""In-process vectorised envs for training: lighter info copies, batched network opponents.

:class:`ShallowInfoDummyVecEnv`
    :class:`stable_baselines3.common.vec_env.DummyVecEnv` returns
    ``deepcopy(self.buf_infos)`` after every step, which copies every info
    dict and the terminal observations inside them: a measurable share of a
    training run's time at 128 envs (docs/RESULTS.md). The Tonk envs (and the trainer's wrappers) return
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
    Its envs are :class:`BatchableSingleAgentEnv`: the single-agent env whose
    opponents' hand loop (:func:`tonk_env.play.play`) also stops before a
    batched opponent's move.
    A policy takes part when it has a ``batch_key`` that is not None (copies
    with equal keys must hold equal weights: the opponent pool pushes the
    same weights to every env at once), ``logits(batch)`` and
    ``pick(logits_row, mask)``; :class:`agents.mlp.MLPPolicy` has all three.
    Each row's action is picked by its own env's copy (its own random
    generator when opponents sample), so runs stay reproducible from the seed.
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np
from stable_baselines3.common.vec_env import DummyVecEnv

from tonk_env.agent import action_id
from tonk_env.engine import GameState, IllegalActionError, legal_mask
from tonk_env.engine.state import OVER, is_legal
from tonk_env.obs import observation
from tonk_env.play import illegal_message
from tonk_env.single import TonkSingleAgentEnv

StepResult = tuple[np.ndarray, float, bool, bool, dict[str, Any]]


class BatchableSingleAgentEnv(TonkSingleAgentEnv):
    """The single-agent env with a step that can pause before each move of a batched network opponent.

    An opponent takes part when its ``batch_key`` is not None.
    :meth:`prepare_step` plays the learner's action and the opponents' moves
    until the learner acts again, the hand ends (then it returns None), or a
    batched opponent is to move; then it returns that opponent and waits.
    :meth:`pending_observation` gives the waiting seat's observation and mask,
    :meth:`resume_step` plays its move and goes on the same way. Once it
    returns None, ``step(action)`` (through any wrappers) returns the step's
    result without playing again.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._prepared: tuple[int, StepResult | None] | None = None  # (action, result) from prepare_step
        self._waiting: int | None = None  # the seat whose move prepare_step left pending

    def reset(self, **kwargs: Any) -> tuple[np.ndarray, dict[str, Any]]:
        """Deal a hand (see :meth:`TonkSingleAgentEnv.reset`), forgetting any prepared step."""
        self._prepared = None
        self._waiting = None
        return super().reset(**kwargs)

    def step(self, action: Any) -> StepResult:
        """The prepared step's result when :meth:`prepare_step` played it, else a plain step."""
        prepared = self._prepared
        if prepared is None:
            return super().step(action)
        self._prepared = None
        a, out = prepared
        if action_id(action) != a:
            raise RuntimeError(
                f"step({action!r}) after prepare_step({a}): the step was prepared for another action"
            )
        if self._waiting is not None:
            raise RuntimeError(
                f"seat {self._waiting}'s move is still pending; give it with resume_step() before step()"
            )
        return out if out is not None else self._finish_step()

    def prepare_step(self, action: Any) -> Any | None:
        """Play a step up to the first move of a batched opponent; return that opponent, or None."""
        a = action_id(action)
        out = self._play_learner(a)
        self._prepared = (a, out)
        if out is not None:
            return None
        return self._advance_to_batched()

    def pending_observation(self) -> tuple[np.ndarray, np.ndarray]:
        """``(observation, action mask)`` of the opponent whose move :meth:`prepare_step` left pending."""
        seat = self._waiting
        if seat is None or self.game is None:
            raise RuntimeError("no opponent move is pending (see prepare_step)")
        return observation(self.game, seat), legal_mask(self.game)

    def resume_step(self, action: Any) -> Any | None:
        """Play the pending opponent's ``action``; continue as :meth:`prepare_step` does."""
        seat = self._waiting
        s = self.game
        if seat is None or s is None:
            raise RuntimeError("no opponent move is pending (see prepare_step)")
        a = action_id(action)
        if not is_legal(s, a):
            raise IllegalActionError(illegal_message(s, self._opponent_name(seat), a))
        self._waiting = None
        s.play(a)
        return self._advance_to_batched()

    def _batched_or_learner(self, s: GameState) -> bool:
        return s.cur == self.learner_seat or getattr(self.policies[s.cur], "batch_key", None) is not None

    def _advance_to_batched(self) -> Any | None:
        self._advance(until=self._batched_or_learner)
        s = self.game
        assert s is not None
        if s.phase == OVER or s.cur == self.learner_seat:
            return None
        self._waiting = s.cur
        return self.policies[s.cur]


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
        bases = [env.unwrapped for env in self.envs]
        missing = [type(b).__name__ for b in bases if not isinstance(b, BatchableSingleAgentEnv)]
        if missing:
            raise TypeError(
                "BatchedOpponentsVecEnv needs BatchableSingleAgentEnv envs (with prepare_step()); "
                f"got {missing[0]}"
            )
        self.bases = cast(list[BatchableSingleAgentEnv], bases)
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
                first = pending[rows[0]]
                logits = first.logits(np.stack([o for o, _ in seen]))
                if hasattr(first, "pick_many"):  # every row as its own copy's pick would choose
                    picks = first.pick_many(
                        logits, np.stack([m for _, m in seen]), [pending[i] for i in rows]
                    )
                else:
                    picks = [pending[i].pick(logits[k], seen[k][1]) for k, i in enumerate(rows)]
                for k, i in enumerate(rows):
                    policy = bases[i].resume_step(picks[k])
                    if policy is not None:
                        after[i] = policy
                self.batched_moves += len(rows)
                self.batches += 1
            pending = after
        return super().step_wait()
