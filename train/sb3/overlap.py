"""``ppo.overlap: true``: MaskablePPO that plays the next rollout while it updates on this one.

SB3's PPO alternates: the envs wait while the network updates, and the update
waits while the envs play, so on 2 cores one is always idle.
:class:`OverlappedMaskablePPO` pipelines the two:

- during the update on rollout ``k`` a background thread plays rollout ``k + 1``
  with a copy of the weights from before that update (the *behaviour* copy), so
  each rollout is played by the weights one update behind the ones that learn
  from it; PPO's ratio is taken against the behaviour's own log-probabilities,
  which the buffer holds, so the clip range bounds the step as before;
- the training callback sees the thread's steps afterwards, in the main thread
  and in order (:meth:`collect_rollouts` replays them): pool refreshes and
  snapshots, evaluations and the stop request happen between updates, never
  beside one, and take effect from the next rollout played;
- no rollout is played ahead across a checkpoint, a stop or the end of the run
  (the callback's :meth:`~train.sb3.callback.TonkCallback.may_play_ahead`): the
  checkpoint then holds the envs exactly as they were after the last update, and
  a resumed run continues as the uninterrupted one.

The threads share one process: torch runs each thread's operations in that
thread (``torch_threads: 1`` gives each its core), the compiled core and torch's
kernels release the GIL, and the thread alone draws from torch's random stream
while the update draws only from numpy's, so a seed still gives one run. What
one gains and what it costs in learning per step: docs/RESULTS.md, "Overlapped
collection".
"""

from __future__ import annotations

import copy
import threading
import time
from typing import Any

import numpy as np
import torch
from gymnasium import spaces
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.buffers import MaskableRolloutBuffer
from sb3_contrib.common.maskable.utils import get_action_masks
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.utils import obs_as_tensor
from stable_baselines3.common.vec_env import VecEnv

__all__ = ["OverlappedMaskablePPO", "OverlapTiming"]

# One step of a rollout, as the callback sees it: the infos and dones that env.step returned.
_Step = tuple[list[dict[str, Any]], np.ndarray]


class OverlapTiming:
    """Seconds spent playing rollouts, updating, and waiting for the thread after an update."""

    def __init__(self) -> None:
        self.collect = 0.0
        self.update = 0.0
        self.wait = 0.0
        self.ahead = 0  # rollouts played during an update


class _Ahead:
    """A rollout being played in the background: its thread, its steps, its error."""

    def __init__(self) -> None:
        self.steps: list[_Step] = []
        self.error: BaseException | None = None
        self.thread: threading.Thread | None = None


class OverlappedMaskablePPO(MaskablePPO):
    """MaskablePPO whose next rollout is played in a thread during each update.

    ``may_play_ahead(step)`` (set by the trainer; default: always) says whether the rollout
    that starts at ``step`` may be played before the callback's rollout start has run there.
    """

    def _setup_model(self) -> None:
        super()._setup_model()
        buf = self.rollout_buffer
        self._spare_buffer = type(buf)(
            self.n_steps,
            self.observation_space,
            self.action_space,
            self.device,
            gamma=self.gamma,
            gae_lambda=self.gae_lambda,
            n_envs=self.n_envs,
            **self.rollout_buffer_kwargs,
        )
        self._ahead: _Ahead | None = None
        self._behaviour: Any = None
        self.overlap_timing = OverlapTiming()
        self.may_play_ahead: Any = lambda step: True

    def _excluded_save_params(self) -> list[str]:
        # the thread, its buffer and the behaviour copy are this process's, not the checkpoint's
        return [
            *super()._excluded_save_params(),
            "_spare_buffer", "_ahead", "_behaviour", "overlap_timing", "may_play_ahead",
        ]  # fmt: skip

    # -- the two halves ----------------------------------------------------------------------

    def collect_rollouts(  # type: ignore[override]
        self,
        env: VecEnv,
        callback: BaseCallback,
        rollout_buffer: MaskableRolloutBuffer,
        n_rollout_steps: int,
        use_masking: bool = True,
    ) -> bool:
        """The next rollout into ``self.rollout_buffer``: the one played ahead, or one played now.

        Either way the callback sees its rollout start, every step and its end, in order.
        """
        if not use_masking:
            raise ValueError("OverlappedMaskablePPO always masks the actions")
        ahead = self._ahead
        self._ahead = None
        if ahead is None:
            callback.on_rollout_start()  # may checkpoint and deal every game again
            self.policy.set_training_mode(False)
            t0 = time.perf_counter()
            steps = self._play(env, self.policy, rollout_buffer, n_rollout_steps)
            self.overlap_timing.collect += time.perf_counter() - t0
        else:
            t0 = time.perf_counter()
            assert ahead.thread is not None
            ahead.thread.join()
            self.overlap_timing.wait += time.perf_counter() - t0
            if ahead.error is not None:
                raise ahead.error
            self.rollout_buffer, self._spare_buffer = self._spare_buffer, self.rollout_buffer
            steps = ahead.steps
            callback.on_rollout_start()
        for infos, dones in steps:
            self.num_timesteps += env.num_envs
            callback.update_locals({"infos": infos, "dones": dones})
            if not callback.on_step():
                return False
            self._update_info_buffer(infos, dones)
        callback.on_rollout_end()
        return True

    def train(self) -> None:
        """Start playing the next rollout in the background (when allowed), then update."""
        if self.num_timesteps < self._total_timesteps and self.may_play_ahead(self.num_timesteps):
            self._start_ahead()
        t0 = time.perf_counter()
        super().train()
        self.overlap_timing.update += time.perf_counter() - t0

    # -- internals ---------------------------------------------------------------------------

    def _start_ahead(self) -> None:
        if self._behaviour is None:
            self._behaviour = copy.deepcopy(self.policy)
            self._behaviour.optimizer = None  # the copy only acts
        self._behaviour.load_state_dict(self.policy.state_dict())
        self._behaviour.set_training_mode(False)
        ahead = _Ahead()
        assert self.env is not None

        def play() -> None:
            try:
                t0 = time.perf_counter()
                ahead.steps = self._play(self.env, self._behaviour, self._spare_buffer, self.n_steps)
                self.overlap_timing.collect += time.perf_counter() - t0
                self.overlap_timing.ahead += 1
            except BaseException as e:  # raised again in the main thread by collect_rollouts
                ahead.error = e

        ahead.thread = threading.Thread(target=play, name="tonk-rollout-ahead", daemon=True)
        self._ahead = ahead
        ahead.thread.start()

    def _play(self, env: Any, policy: Any, buffer: MaskableRolloutBuffer, n_steps: int) -> list[_Step]:
        """Play ``n_steps`` steps of every env with ``policy`` into ``buffer``; the callback's view of each.

        Touches no callback and no counter of the model but its last observation and episode starts.
        """
        buffer.reset()
        steps: list[_Step] = []
        dones: np.ndarray = np.asarray(self._last_episode_starts)
        for _ in range(n_steps):
            with torch.no_grad():
                obs_tensor = obs_as_tensor(self._last_obs, self.device)  # type: ignore[arg-type]
                action_masks = _masks(env)
                actions, values, log_probs = policy(obs_tensor, action_masks=action_masks)
            actions = actions.cpu().numpy()
            new_obs, rewards, dones, infos = env.step(actions)
            steps.append((infos, dones))
            if isinstance(self.action_space, spaces.Discrete):
                actions = actions.reshape(-1, 1)
            for idx, done in enumerate(dones):
                # a hand cut by a time limit is worth its value (the game itself never truncates)
                if done and infos[idx].get("TimeLimit.truncated", False):
                    terminal = infos[idx].get("terminal_observation")
                    if terminal is not None:
                        with torch.no_grad():
                            value = policy.predict_values(policy.obs_to_tensor(terminal)[0])[0]
                        rewards[idx] += self.gamma * value
            buffer.add(
                self._last_obs,  # type: ignore[arg-type]
                actions,
                rewards,
                self._last_episode_starts,  # type: ignore[arg-type]
                values,
                log_probs,
                action_masks=action_masks,
            )
            self._last_obs = new_obs  # type: ignore[assignment]
            self._last_episode_starts = dones
        with torch.no_grad():
            values = policy.predict_values(obs_as_tensor(self._last_obs, self.device))  # type: ignore[arg-type]
        buffer.compute_returns_and_advantage(last_values=values, dones=dones)
        return steps


def _masks(env: Any) -> np.ndarray:
    """The envs' action masks as one array (a copy either way)."""
    if hasattr(env, "action_masks"):  # vec_env core, in this process or a worker: one call, one array
        return env.action_masks()
    return get_action_masks(env)
