"""The oracle critic's MaskablePPO policy: the actor reads the learner's observation, the critic all of it.

The observation is the learner's followed by the privileged features of
:mod:`train.oracle` (the hidden cards); the reasons and the results are there
and in docs/RESULTS.md, "The oracle critic".
"""

from __future__ import annotations

from typing import Any, cast

import gymnasium as gym
import numpy as np
import torch
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor, MlpExtractor
from torch import nn

from tonk_env.obs import obs_layout

from .policy import TonkMaskablePolicy

__all__ = ["OracleCriticPolicy", "PublicSlice", "oracle_policy_kwargs"]


class PublicSlice(BaseFeaturesExtractor):
    """The first ``size`` floats of the observation (the learner's own view)."""

    def __init__(self, observation_space: gym.spaces.Box, size: int) -> None:
        super().__init__(observation_space, size)
        self.size = size

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        return observations[:, : self.size].float()


class _SplitMlp(nn.Module):
    """SB3's ``MlpExtractor`` with different input sizes for the policy and value networks."""

    def __init__(
        self, actor_dim: int, critic_dim: int, net_arch: dict[str, list[int]], activation_fn: Any
    ) -> None:
        super().__init__()
        self.policy_net = _mlp(actor_dim, net_arch.get("pi", []), activation_fn)
        self.value_net = _mlp(critic_dim, net_arch.get("vf", []), activation_fn)
        self.latent_dim_pi = net_arch["pi"][-1] if net_arch.get("pi") else actor_dim
        self.latent_dim_vf = net_arch["vf"][-1] if net_arch.get("vf") else critic_dim

    def forward(self, features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        raise RuntimeError("the oracle critic's policy and value networks read different features")

    def forward_actor(self, features: torch.Tensor) -> torch.Tensor:
        return self.policy_net(features)

    def forward_critic(self, features: torch.Tensor) -> torch.Tensor:
        return self.value_net(features)


def _mlp(dim: int, sizes: list[int], activation_fn: Any) -> nn.Sequential:
    layers: list[nn.Module] = []
    for size in sizes:
        layers += [nn.Linear(dim, size), activation_fn()]
        dim = size
    return nn.Sequential(*layers)


class OracleCriticPolicy(TonkMaskablePolicy):
    """MaskablePPO policy whose actor reads the first ``actor_dim`` floats and whose critic reads all.

    The weights keep SB3's names (``mlp_extractor.policy_net.*``, ``action_net``),
    so the actor loads as an ordinary ``ppo:`` agent."""

    def __init__(self, *args: Any, actor_dim: int = 0, **kwargs: Any) -> None:
        if actor_dim < 1:
            raise ValueError("OracleCriticPolicy needs actor_dim (the public observation size)")
        self.actor_dim = actor_dim
        kwargs["share_features_extractor"] = False
        super().__init__(*args, **kwargs)

    def _build_mlp_extractor(self) -> None:
        # Called by _build(), after both feature extractors exist (two flatten
        # layers without weights): the policy's becomes the public slice.
        space = self.observation_space
        if not isinstance(space, gym.spaces.Box):
            raise TypeError(f"OracleCriticPolicy needs a Box observation space, got {space}")
        self.features_extractor = self.pi_features_extractor = PublicSlice(space, self.actor_dim)
        critic_dim = int(np.prod(space.shape))
        if critic_dim <= self.actor_dim:
            raise ValueError(
                f"OracleCriticPolicy: the observation ({critic_dim} floats) has no privileged part "
                f"after the first {self.actor_dim}; wrap the env in train.oracle.PrivilegedObs"
            )
        if not isinstance(self.net_arch, dict):
            raise ValueError(f"OracleCriticPolicy needs net_arch=dict(pi=..., vf=...), got {self.net_arch!r}")
        split = _SplitMlp(self.actor_dim, critic_dim, self.net_arch, self.activation_fn)
        # SB3 declares mlp_extractor an MlpExtractor; _SplitMlp has its interface (latent sizes, forward_*)
        self.mlp_extractor = cast(MlpExtractor, split)
        self.mlp_extractor.to(self.device)

    def _get_constructor_parameters(self) -> dict[str, Any]:
        data = super()._get_constructor_parameters()
        data["actor_dim"] = self.actor_dim
        return data


def oracle_policy_kwargs(num_players: int) -> dict[str, Any]:
    """The extra ``policy_kwargs`` of an oracle-critic MaskablePPO for ``num_players``."""
    return {"actor_dim": obs_layout(num_players).size}
