"""``vec_env: core``: the training envs as one :class:`~tonk_env.vector.TonkVectorEnv` under SB3's VecEnv.

:class:`CoreVecEnv` gives MaskablePPO what ``vec_env: dummy``
(:class:`train.sb3.dummy_vec.BatchedOpponentsVecEnv` over wrapped single-agent envs)
gives it, from ``n_envs`` games stepped at once on the compiled core:

- the learner at a random seat per hand, opponents drawn per game and hand
  from that game's own :class:`~train.pool.OpponentPool` (seeded as the dummy
  env's pools); frozen network copies are evaluated in one matrix product per
  pool member and round (the vector env batches agents by ``batch_key``),
  heuristics play through engine mirrors, and the ``random`` baseline plays
  inside the compiled step (uniform over the legal actions like
  :class:`agents.random_agent.RandomAgent`, from the game's generator);
- the count shaping of :class:`train.shaping.CountShaping` (``shaping_coef``),
  the oracle critic's privileged features (``net.critic: oracle``, computed by
  the core), and the per-episode ``episode`` info that SB3's ``Monitor`` adds
  (``r``, ``l``, ``t``, ``result_kind``);
- SB3's conventions: a finished hand's info holds ``terminal_observation``;
  ``env_method("action_masks")`` returns the batch's masks in one call (what
  sb3-contrib's ``get_action_masks`` stacks); ``env_method("update_pool", ...)``
  updates the pools (the training callback's pushes).

Same seed, same run; the random streams differ from ``dummy``'s (deals come
from :func:`tonk_env.core.seeding.seeded_deck`), so the two give different,
equally valid runs.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np
from stable_baselines3.common.vec_env import VecEnv

from tonk_env.engine import make_rules
from tonk_env.obs import obs_layout
from tonk_env.vector import TonkVectorEnv

from ..config import TrainConfig
from ..pool import OpponentPool, PoolSampler


class CoreVecEnv(VecEnv):
    """SB3 ``VecEnv`` over a :class:`TonkVectorEnv`, with pools, shaping and Monitor's episode info."""

    def __init__(
        self,
        env: TonkVectorEnv,
        pools: Sequence[OpponentPool] = (),
        shaping_coef: float = 0.0,
        gamma: float = 0.99,
        info_keywords: Sequence[str] = ("result_kind",),
    ) -> None:
        self.env = env
        self.pools = list(pools)
        self.shaping_coef = float(shaping_coef)
        self.gamma = float(gamma)
        self.info_keywords = tuple(info_keywords)
        self._count_at = obs_layout(env.num_players)["hand_count"].start
        n = env.num_envs
        self._phi = np.zeros(n, dtype=np.float64)
        self._returns = np.zeros(n, dtype=np.float64)
        self._lengths = np.zeros(n, dtype=np.int64)
        self._seed: int | None = None
        self._actions: np.ndarray | None = None
        self._t0 = time.time()
        super().__init__(n, env.single_observation_space, env.single_action_space)

    # -- VecEnv API ------------------------------------------------------------------------------

    def seed(self, seed: int | None = None) -> Sequence[int | None]:
        """The seed of the next reset (one for all games: game ``g`` draws its own streams from it)."""
        self._seed = seed
        return [seed] * self.num_envs

    def reset(self) -> np.ndarray:
        """Deal every game a hand (seeded by :meth:`seed` once)."""
        obs, _ = self.env.reset(seed=self._seed)
        self._seed = None
        self._phi = self._potential(obs)
        self._returns[:] = 0.0
        self._lengths[:] = 0
        self.reset_infos = [{} for _ in range(self.num_envs)]
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        """Keep the actions for :meth:`step_wait`."""
        self._actions = actions

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        """Step every game; finished hands' infos carry ``terminal_observation`` and ``episode``."""
        if self._actions is None:
            raise RuntimeError("step_wait() without step_async()")
        obs, rewards, terminated, finished = self.env.step_arrays(self._actions)
        self._actions = None
        obs = obs.copy()
        if self.shaping_coef:
            phi = self._potential(obs)
            rewards = rewards + self.gamma * np.where(terminated, 0.0, phi) - self._phi
            self._phi = phi
        self._returns += rewards
        self._lengths += 1
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        now = time.time()
        for g, final_obs, info in finished:
            info["terminal_observation"] = final_obs
            info["TimeLimit.truncated"] = False
            episode: dict[str, Any] = {
                "r": float(self._returns[g]),
                "l": int(self._lengths[g]),
                "t": round(now - self._t0, 6),
            }
            for key in self.info_keywords:
                episode[key] = info.get(key)
            info["episode"] = episode
            infos[g] = info
        self._returns[terminated] = 0.0
        self._lengths[terminated] = 0
        return obs, rewards.astype(np.float32), terminated.copy(), infos

    def close(self) -> None:
        """Close the vector env."""
        self.env.close()

    def has_attr(self, attr_name: str) -> bool:
        """Whether the games answer ``attr_name`` (``action_masks`` and the pool methods included)."""
        return attr_name in _METHODS or hasattr(self.env, attr_name)

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        """An attribute of the vector env, once per game of ``indices``."""
        value = getattr(self.env, attr_name)
        return [value for _ in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        """Attributes are the vector env's, shared by every game: setting one per game is refused."""
        raise AttributeError(
            f"set_attr({attr_name!r}): the games of vec_env core share one TonkVectorEnv; "
            "set it on CoreVecEnv.env instead"
        )

    def env_method(
        self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any
    ) -> list[Any]:
        """``action_masks`` (every game's mask, in one call), ``update_pool`` or ``pool_counts`` per game."""
        games = list(self._get_indices(indices))
        if method_name == "action_masks":
            masks = self.env.action_masks()
            return [masks[g] for g in games]
        if method_name == "update_pool":
            for g in games:
                _update_pool(self.pools[g], *method_args, **method_kwargs)
            return [None] * len(games)
        if method_name == "pool_counts":
            return [dict(self.pools[g].counts) for g in games]
        raise AttributeError(
            f"env_method({method_name!r}): vec_env core answers {', '.join(sorted(_METHODS))}"
        )

    def random_state(self) -> dict[str, Any]:
        """The games' deal counters and generators and every pool's streams, as JSON data."""
        return {"core": self.env.random_state(), "pools": [p.random_state() for p in self.pools]}

    def set_random_state(self, state: dict[str, Any]) -> None:
        """Restore :meth:`random_state`; the next ``reset`` deals what the saved env would have dealt."""
        pools = state.get("pools") if isinstance(state, dict) else None
        if not isinstance(pools, list) or len(pools) != len(self.pools):
            raise ValueError(f"vec_env core: the saved state is not for {len(self.pools)} games")
        self.env.set_random_state(state["core"])
        for pool, saved in zip(self.pools, pools, strict=True):
            pool.set_random_state(saved)

    def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
        """No game is a wrapped gymnasium env."""
        return [False for _ in self._get_indices(indices)]

    def action_masks(self) -> np.ndarray:
        """Every game's mask, int8 ``(n_envs, A)``."""
        return self.env.action_masks()

    # -- internals -------------------------------------------------------------------------------

    def _potential(self, obs: np.ndarray) -> np.ndarray:
        """``Φ = -coef * count`` of each game (the shaping's potential; 0 without shaping)."""
        if not self.shaping_coef:
            return np.zeros(self.num_envs, dtype=np.float64)
        return -self.shaping_coef * obs[:, self._count_at].astype(np.float64) * 50.0


_METHODS = frozenset({"action_masks", "update_pool", "pool_counts"})


def _update_pool(
    pool: OpponentPool, latest: Any = None, snapshot: Any = None, activation: str = "tanh", step: int = 0
) -> None:
    """What :meth:`train.pool.PoolWrapper.update_pool` does for one game's pool."""
    if latest is not None:
        pool.set_latest(latest, activation)
    if snapshot is not None:
        pool.add_snapshot(snapshot, activation, step)


def make_core_vec_env(cfg: TrainConfig) -> CoreVecEnv:
    """The ``vec_env: core`` training env of ``cfg`` (one pool per game, seeded as ``dummy``'s)."""
    pools = [OpponentPool(cfg.pool, seed=cfg.seed * 1000 + g) for g in range(cfg.n_envs)]
    env = TonkVectorEnv(
        num_envs=cfg.n_envs,
        num_players=cfg.players,
        rules=make_rules(cfg.rules, **cfg.rule_options),
        opponent_sampler=[PoolSampler(p) for p in pools],
        learner_seat="random",
        reward_scale=cfg.reward_scale,
        oracle=cfg.net.critic == "oracle",
    )
    return CoreVecEnv(env, pools, shaping_coef=cfg.shaping_coef, gamma=cfg.ppo.gamma)
