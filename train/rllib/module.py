"""The RLlib policy of ``backend: rllib``: an actor-critic MLP that masks illegal actions.

:class:`MaskedTonkModule` is a torch ``RLModule`` for RLlib's PPO and APPO on
the new API stack. Its input is the env's observation followed by the action
mask (:mod:`train.rllib.vector`; ``mask_in_obs``), or a dict
``{"observations", "action_mask"}``; the policy network reads the observation, and every
action whose mask entry is 0 gets the logit :data:`MASKED_LOGIT` in all three
forward passes (exploration, inference and training), so its probability is
exactly 0: no illegal action is ever sampled and the PPO loss sees the same
distribution the env runners sampled from. The value network reads the
observation too (``compute_values``). For APPO the learner keeps a target
copy of the policy network (``_old_pi``, RLlib's ``TargetNetworkAPI``) that
env runners never load.

The two networks are separate MLPs, ``net.pi`` and ``net.vf`` hidden sizes
with ``net.activation``, initialised as SB3 does (orthogonal; gain √2 for
hidden layers, 0.01 for the logits, 1 for the value). The policy network's
layers are ``pi.0, pi.2, ...`` (Linear, activation, Linear, ...), which is
what :func:`policy_layers` turns into the numpy :class:`agents.mlp.MLPPolicy`
layout for evaluation, self-play snapshots and the ``.npz`` export.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.learner.utils import make_target_network
from ray.rllib.core.rl_module.apis import (
    TARGET_NETWORK_ACTION_DIST_INPUTS,
    InferenceOnlyAPI,
    TargetNetworkAPI,
)
from ray.rllib.core.rl_module.apis.value_function_api import ValueFunctionAPI
from ray.rllib.core.rl_module.torch import TorchRLModule
from torch import nn

__all__ = ["MASKED_LOGIT", "MaskedTonkModule", "policy_layers"]

#: The logit of a masked action: finite (no NaN in the softmax, the entropy or the KL), and
#: its probability underflows to exactly 0 in float32.
MASKED_LOGIT = -1e8

_ACTIVATIONS: dict[str, type[nn.Module]] = {"tanh": nn.Tanh, "relu": nn.ReLU}


def _mlp(
    n_in: int, hidden: Sequence[int], n_out: int, act: type[nn.Module], out_gain: float
) -> nn.Sequential:
    """Linear/activation layers, orthogonally initialised (SB3's gains)."""
    layers: list[nn.Module] = []
    size = n_in
    for width in hidden:
        lin = nn.Linear(size, width)
        nn.init.orthogonal_(lin.weight, gain=math.sqrt(2))
        nn.init.zeros_(lin.bias)
        layers += [lin, act()]
        size = width
    head = nn.Linear(size, n_out)
    nn.init.orthogonal_(head.weight, gain=out_gain)
    nn.init.zeros_(head.bias)
    layers.append(head)
    return nn.Sequential(*layers)


def _split(obs: Any, mask_size: int) -> tuple[torch.Tensor, torch.Tensor | None]:
    """The observation tensor and the action mask of a batch's ``obs`` column.

    ``mask_size`` > 0: the obs is one flat tensor whose last ``mask_size``
    columns are the mask (the vector env's layout, :mod:`train.rllib.vector`).
    """
    if isinstance(obs, Mapping):
        return obs["observations"], obs["action_mask"]
    if mask_size:
        return obs[..., :-mask_size], obs[..., -mask_size:]
    return obs, None


class MaskedTonkModule(TorchRLModule, ValueFunctionAPI, TargetNetworkAPI, InferenceOnlyAPI):
    """Actor-critic MLP over Tonk's observation; illegal actions masked in every forward pass.

    ``model_config``: ``pi`` and ``vf`` (hidden sizes), ``activation``
    (``tanh`` or ``relu``), ``mask_in_obs`` (the mask is the observation's last
    columns, not a dict entry).
    """

    def setup(self) -> None:
        """Build the policy and value networks from ``model_config``."""
        space = self.observation_space
        obs_space = space["observations"] if isinstance(space, gym.spaces.Dict) else space
        assert obs_space is not None and obs_space.shape is not None
        n_out = int(self.action_space.n)  # type: ignore[union-attr]  # a Discrete space
        mc = self.model_config if isinstance(self.model_config, Mapping) else {}
        self.mask_size = n_out if mc.get("mask_in_obs") else 0
        n_in = int(obs_space.shape[0]) - self.mask_size
        act = _ACTIVATIONS[mc.get("activation", "tanh")]
        self.pi = _mlp(n_in, list(mc.get("pi", [256, 256])), n_out, act, 0.01)
        self.vf = _mlp(n_in, list(mc.get("vf", [256, 256])), 1, act, 1.0)

    def _logits(self, batch: Mapping[str, Any]) -> dict[str, Any]:
        obs, mask = _split(batch[Columns.OBS], self.mask_size)
        logits = self.pi(obs)
        if mask is not None:
            logits = logits.masked_fill(mask <= 0, MASKED_LOGIT)
        return {Columns.ACTION_DIST_INPUTS: logits}

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        """Masked action logits."""
        return self._logits(batch)

    def _forward_inference(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        """Masked action logits (greedy play takes their argmax)."""
        with torch.no_grad():
            return self._logits(batch)

    def _forward_exploration(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        """Masked action logits (sampling never draws a masked action)."""
        with torch.no_grad():
            return self._logits(batch)

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        """Masked action logits, with gradients."""
        return self._logits(batch)

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> torch.Tensor:
        """The value of each observation in the batch."""
        obs, _ = _split(batch[Columns.OBS], self.mask_size)
        return self.vf(obs).squeeze(-1)

    def make_target_networks(self) -> None:
        """APPO's frozen copy of the policy network (``_old_pi``), made on the learner."""
        self._old_pi = make_target_network(self.pi)

    def get_target_network_pairs(self) -> list[tuple[nn.Module, nn.Module]]:
        """The policy network and its APPO target copy."""
        return [(self.pi, self._old_pi)]

    def forward_target(self, batch: dict[str, Any]) -> dict[str, Any]:
        """The target copy's masked logits (APPO's KL term against the old policy)."""
        obs, mask = _split(batch[Columns.OBS], self.mask_size)
        logits = self._old_pi(obs)
        if mask is not None:
            logits = logits.masked_fill(mask <= 0, MASKED_LOGIT)
        return {TARGET_NETWORK_ACTION_DIST_INPUTS: logits}

    def get_non_inference_attributes(self) -> list[str]:
        """The target copy stays on the learner: env runners never load it."""
        return ["_old_pi"]


def policy_layers(state: Mapping[str, Any]) -> list[tuple[np.ndarray, np.ndarray]]:
    """The policy network of a :class:`MaskedTonkModule` state dict as ``(W, b)`` numpy layers."""
    layers = []
    i = 0
    while f"pi.{i}.weight" in state:
        w, b = state[f"pi.{i}.weight"], state[f"pi.{i}.bias"]
        layers.append((_np(w), _np(b)))
        i += 2
    if not layers:
        raise ValueError("not a Tonk RLlib module: no pi.0.weight in its weights")
    return layers


def _np(t: Any) -> np.ndarray:
    return t.detach().cpu().numpy().copy() if hasattr(t, "detach") else np.array(t)
