"""An oracle critic: the value network sees the hidden cards, the policy does not.

With ``net.critic: oracle`` the training env's observation is the learner's
observation (``tonk_env.obs``) followed by privileged features that
only the trainer may see (:func:`privileged_features`): every opponent's
hand and count, and the next card of the stock. The SB3 backend's
:class:`~train.sb3.oracle_policy.OracleCriticPolicy` feeds the policy
network the first part only, so the trained policy is an ordinary agent
that reads the ordinary observation (``ppo:`` checkpoints, ``.npz`` exports
and the opponent pool are unchanged), while the value network reads all of it.

Why: the payoff of a Tonk hand is mostly decided by cards nobody at the table
can see, so a critic that sees only the learner's cards explains little of
the return (its advantages are mostly card luck). A value function of the
full state is still a valid baseline (it does not depend on the action), and
bootstrapping from it estimates the same policy gradient with less noise.
This is the "perfect-training-imperfect-execution" critic of PerfectDou
(Yang et al., NeurIPS 2022) and the asymmetric actor-critic of Pinto et al.
(2017); docs/RESULTS.md, "The oracle critic", reports what it changed here.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np

from tonk_env.engine import GameState, hand_value
from tonk_env.obs import unpack_masks
from tonk_env.single import TonkSingleAgentEnv

__all__ = ["PrivilegedObs", "privileged_features", "privileged_size"]


def privileged_size(num_players: int) -> int:
    """Floats :func:`privileged_features` appends for ``num_players``."""
    return 53 * (num_players - 1) + 52


def privileged_features(s: GameState, seat: int) -> np.ndarray:
    """What the learner at ``seat`` cannot see: opponents' hands (52 bits each, in
    seat order after ``seat``), their counts / 50, and the next stock card (one-hot,
    zeros when the stock is empty)."""
    n = s.n
    out = np.zeros(privileged_size(n), dtype=np.float32)
    hands = [s.hands[(seat + i) % n] for i in range(1, n)]
    nb = unpack_masks(hands, out)
    out[nb : nb + n - 1] = [hand_value(h) / 50 for h in hands]
    if s.stock:
        out[53 * (n - 1) + s.stock[-1]] = 1.0
    return out


class PrivilegedObs(gym.ObservationWrapper):
    """Appends :func:`privileged_features` to a ``TonkSingleAgentEnv``'s observation (training only)."""

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        core, base = env.unwrapped, env.observation_space
        if not isinstance(core, TonkSingleAgentEnv) or not isinstance(base, gym.spaces.Box):
            raise TypeError(f"PrivilegedObs wraps a TonkSingleAgentEnv, got {env}")
        self._core = core
        extra = privileged_size(core.num_players)
        self.observation_space = gym.spaces.Box(
            low=np.concatenate([base.low, np.zeros(extra, np.float32)]),
            high=np.concatenate([base.high, np.ones(extra, np.float32)]),
            dtype=np.float32,
        )

    def observation(self, observation: np.ndarray) -> np.ndarray:
        """The observation followed by what the learner cannot see."""
        game = self._core.game
        if game is None:
            raise RuntimeError("no hand dealt yet; call reset()")
        extra = privileged_features(game, self._core.learner_seat)
        return np.concatenate([observation, extra])

    def action_masks(self) -> np.ndarray:
        """Forward the mask (sb3-contrib reads it from the outermost env)."""
        return self.env.get_wrapper_attr("action_masks")()
