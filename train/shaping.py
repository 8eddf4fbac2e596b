"""Potential-based reward shaping for the learner (Ng, Harada & Russell, 1999).

With potential ``Φ(s) = -coef * count(s)`` (the learner's hand count) and
``Φ = 0`` at the end of the hand, each step adds ``γ·Φ(s') − Φ(s)`` to the
reward. Lowering the count (discarding a high card, spreading, hitting) is
rewarded at once instead of only through the final payoff, yet the shaping
terms of a hand telescope to ``−Φ(s₀)``, which no action changes, so the
optimal policy is the same as without shaping. ``coef = 0`` turns it off.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from tonk_env.obs import obs_layout


class CountShaping(gym.Wrapper):
    """Adds ``γ·Φ(s') − Φ(s)`` with ``Φ = −coef·count`` (0 at the end of the hand)."""

    def __init__(self, env: gym.Env, num_players: int, coef: float, gamma: float) -> None:
        super().__init__(env)
        self.coef = coef
        self.gamma = gamma
        self._idx = obs_layout(num_players)["hand_count"].start
        self._phi = 0.0

    def _potential(self, obs: np.ndarray) -> float:
        return -self.coef * float(obs[self._idx]) * 50.0

    def reset(self, **kwargs: Any) -> Any:
        obs, info = self.env.reset(**kwargs)
        self._phi = self._potential(obs)
        return obs, info

    def step(self, action: Any) -> Any:
        obs, reward, terminated, truncated, info = self.env.step(action)
        phi = 0.0 if terminated or truncated else self._potential(obs)
        shaped = float(reward) + self.gamma * phi - self._phi
        self._phi = phi
        return obs, shaped, terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        """Forward the mask."""
        return self.env.get_wrapper_attr("action_masks")()

    def update_pool(self, *args: Any, **kwargs: Any) -> None:
        """Forward pool updates to the pool wrapper inside."""
        self.env.get_wrapper_attr("update_pool")(*args, **kwargs)
