"""The env of ``backend: rllib``: an env runner's games as one :class:`~tonk_env.vector.TonkVectorEnv`.

RLlib's single-agent env runner builds its envs with ``gym.make_vec(...,
vectorization_mode="vector_entry_point")``, which calls
:class:`RllibVectorEnv` once with ``num_envs`` = ``rllib.envs_per_runner``:
every game of the runner is stepped at once on the compiled core, as
``vec_env: core`` does for SB3 (:mod:`train.sb3.core_vec`).

- The learner sits at a random seat per hand; the other seats are drawn per
  game and hand from that game's own :class:`~train.pool.OpponentPool`:
  frozen network copies (``latest``, refreshed every ``pool.refresh_every``
  steps, and the snapshots) are evaluated in one matrix product per pool
  member and round, heuristics play through engine mirrors, and the
  ``random`` baseline plays inside the compiled step.
- An observation is one float32 vector: the learner's observation
  (:mod:`tonk_env.obs`) followed by the action mask as 0/1 (what
  :class:`train.rllib.module.MaskedTonkModule` reads with ``mask_in_obs``;
  one flat array is cheaper to batch and slice than a dict). A
  hand that ends before the learner acts is delivered as one step whose only
  legal action is :data:`~tonk_env.single.ACKNOWLEDGE`, with the payoff as its
  reward. The reward is the learner's payoff × ``reward_scale`` at the hand's
  end.
- Autoreset is Gymnasium's *next-step* mode, which RLlib's runner expects: a
  step that ends a hand returns the hand's last observation (its mask: only
  ``ACKNOWLEDGE``) with ``terminated``; the game's next step ignores its
  action and returns the new hand's first observation (reward 0). Infos are
  empty: the env counts decisions, outcomes and stakes itself
  (:meth:`RllibVectorEnv.take_stats`), and the trainer collects them.
- :meth:`RllibVectorEnv.step_same` is the same step in the core's *same-step*
  mode, as arrays: what the batched env runner (:mod:`train.rllib.runner`)
  calls instead of ``step``.

Streams: RLlib resets each runner's env once with ``seed = cfg.seed +
worker index``; the deals, seats and pools' draws follow from that seed alone.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from tonk_env.engine import make_rules
from tonk_env.single import ACKNOWLEDGE
from tonk_env.spaces import action_space
from tonk_env.vector import TonkVectorEnv

from ..config import TrainConfig, config_from_dict
from ..pool import Layers, OpponentPool, PoolSampler

__all__ = ["RllibVectorEnv", "vector_seed"]


def vector_seed(seed: int) -> int:
    """The core's deal seed (0..2**63-1) of a runner's reset seed."""
    return int(np.random.SeedSequence([seed, 0x70_6B]).generate_state(1, np.uint64)[0] >> np.uint64(1))


class RllibVectorEnv(gym.vector.VectorEnv):
    """``num_envs`` learner-seat games on the compiled core, in RLlib's next-step autoreset (see the module).

    ``config`` holds ``train_config`` (a :class:`~train.config.TrainConfig` as
    a dict) and ``num_envs`` (RLlib adds it).
    """

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}

    def __init__(self, config: Mapping[str, Any]) -> None:
        cfg = config_from_dict(dict(config["train_config"]))
        self.cfg: TrainConfig = cfg
        self.num_envs = int(config.get("num_envs", cfg.rllib.envs_per_runner))
        self.rules = make_rules(cfg.rules, **cfg.rule_options)
        self._latest: tuple[Layers, str] | None = None
        self._snapshots: list[tuple[Layers, str, int]] = []
        self.pools = self._new_pools(cfg.seed)
        self._samplers = [PoolSampler(p) for p in self.pools]
        self.env = TonkVectorEnv(
            num_envs=self.num_envs,
            num_players=cfg.players,
            rules=self.rules,
            opponent_sampler=self._samplers,
            learner_seat="random",
            reward_scale=cfg.reward_scale,
        )
        n_actions = int(action_space(self.rules).n)
        box = self.env.single_observation_space
        assert isinstance(box, gym.spaces.Box)
        self.obs_size = int(box.shape[0])
        self.single_observation_space = gym.spaces.Box(
            low=np.concatenate([box.low, np.zeros(n_actions, np.float32)]),
            high=np.concatenate([box.high, np.ones(n_actions, np.float32)]),
            dtype=np.float32,
        )
        self.single_action_space = self.env.single_action_space
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._ended_mask = np.zeros(n_actions, dtype=np.float32)
        self._ended_mask[ACKNOWLEDGE] = 1.0
        self._autoreset = np.zeros(self.num_envs, dtype=np.bool_)
        self._seeded = False
        self._clear_stats()

    # -- the pools, updated by the trainer ---------------------------------------------------------

    def _new_pools(self, seed: int) -> list[OpponentPool]:
        """One pool per game, seeded from ``seed``, holding the latest copy and snapshots pushed so far."""
        pools = [OpponentPool(self.cfg.pool, seed=(seed << 32) + (g << 16)) for g in range(self.num_envs)]
        for pool in pools:
            if self._latest is not None:
                pool.set_latest(*self._latest)
            for layers, activation, step in self._snapshots:
                pool.add_snapshot(layers, activation, step)
        return pools

    def update_pool(
        self,
        latest: Layers | None = None,
        snapshot: Layers | None = None,
        activation: str = "tanh",
        step: int = 0,
    ) -> None:
        """Set the latest frozen copy of the learner and/or add a snapshot, in every game's pool."""
        if latest is not None:
            self._latest = (latest, activation)
        if snapshot is not None:
            self._snapshots = [*self._snapshots, (snapshot, activation, step)][-self.cfg.pool.window :]
        for pool in self.pools:
            if latest is not None:
                pool.set_latest(latest, activation)
            if snapshot is not None:
                pool.add_snapshot(snapshot, activation, step)

    def pool_counts(self) -> dict[str, int]:
        """How often each pool member has been drawn, over all games."""
        out: Counter[str] = Counter()
        for pool in self.pools:
            out.update(pool.counts)
        return dict(out)

    def take_stats(self) -> dict[str, Any]:
        """Decisions, outcomes and the learner's stakes since the last call; resets them."""
        out = {"steps": self._steps, "kinds": dict(self._kinds), "stakes_sum": self._stakes}
        self._clear_stats()
        return out

    def _clear_stats(self) -> None:
        self._steps = 0
        self._kinds: Counter[str] = Counter()
        self._stakes = 0.0

    # -- gymnasium's VectorEnv ---------------------------------------------------------------------

    def reset(
        self, *, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Deal every game a hand; ``seed`` (one int) restarts the deals, seats and pools' draws."""
        if isinstance(seed, list):
            seed = seed[0]
        if seed is not None or not self._seeded:
            s = self.cfg.seed if seed is None else int(seed)
            self.pools = self._new_pools(s)
            for sampler, pool in zip(self._samplers, self.pools, strict=True):
                sampler.pool = pool
            obs, _ = self.env.reset(seed=vector_seed(s))
            self._seeded = True
        else:
            obs, _ = self.env.reset()
        self._autoreset[:] = False
        return self._observe(obs), {}

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Play every game's action in next-step autoreset (the games dealt again ignore theirs)."""
        skip = self._autoreset
        obs, rewards, terminated, finals = self.step_same(actions, ~skip if skip.any() else None)
        for g, final in finals:
            obs[g] = final
        self._autoreset = terminated.copy()
        return obs, rewards, terminated, np.zeros(self.num_envs, dtype=np.bool_), {}

    def step_same(
        self, actions: Any, active: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[tuple[int, np.ndarray]]]:
        """Play the ``active`` games' actions (default all) in same-step autoreset.

        Returns ``(obs, rewards, terminated, finals)``: the games' observations
        (a new array; a finished game's is its next hand's first), float32 rewards,
        where a hand ended, and ``(game, last observation)`` of each finished hand.
        """
        obs, rewards, terminated, finished = self.env.step_arrays(np.asarray(actions), active)
        out = self._observe(obs)
        self._steps += self.num_envs if active is None else int(active.sum())
        finals: list[tuple[int, np.ndarray]] = []
        for g, final_obs, info in finished:
            last = np.empty(out.shape[1], dtype=np.float32)
            last[: self.obs_size] = final_obs
            last[self.obs_size :] = self._ended_mask
            finals.append((g, last))
            self._kinds[info["result_kind"]] += 1
            self._stakes += float(info["payoffs"][info["learner_seat"]])
        return out, rewards.astype(np.float32), terminated.copy(), finals

    def _observe(self, obs: np.ndarray) -> np.ndarray:
        """The learner observations followed by the masks, float32 ``(num_envs, obs + actions)``."""
        out = np.empty((self.num_envs, self.obs_size + self._ended_mask.size), dtype=np.float32)
        out[:, : self.obs_size] = obs
        out[:, self.obs_size :] = self.env.action_masks()
        return out

    def action_masks(self) -> np.ndarray:
        """Every game's legal actions, int8 ``(num_envs, A)``."""
        return self.env.action_masks()

    def close_extras(self, **kwargs: Any) -> None:
        """Close the core's games."""
        self.env.close()
