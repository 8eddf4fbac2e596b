"""The MaskablePPO policy of ``tonk train``: sb3-contrib's, with a faster masked distribution.

Tonk has 540 action ids and a handful legal at a time, so every policy call
masks ~530 logits to sb3-contrib's ``-1e8``. Torch's ``Categorical`` then
normalises with ``logsumexp``, whose CPU kernel is much slower on such
logits than on ordinary ones, the constructor runs three times per call (raw
logits, "no mask", masked) with argument validation each time, and
``sample()`` draws with ``torch.multinomial``, slow on such batches too.
Removing these made training markedly faster (the timings and steps/s before
and after: docs/RESULTS.md, "The masked distribution").

:class:`FastMaskableCategorical` is the same distribution with

- ``log_softmax`` for the normalisation (same values, vectorised kernel),
  done once per masking, without argument validation;
- ``sample()`` by inverse CDF: one uniform per row against the cumulative
  probabilities (``searchsorted``), which draws each action with its
  probability; masked actions have probability exactly 0 and are never drawn.

:class:`TonkMaskablePolicy` also evaluates the update's actions over the legal
ones only (:func:`legal_log_prob_entropy`): at most a dozen of the 540 are
legal, so the log-softmax, the entropy and their gradients run on a few
columns instead of all of them. The values are the masked distribution's (a
masked action's probability is exactly 0 either way), to float rounding.

:class:`TonkMaskablePolicy` is ``MaskableActorCriticPolicy`` with that
distribution; its weights, their names and its checkpoints are unchanged, so
``ppo:`` loading, export and ``--resume`` of older runs work as before.
"""

from __future__ import annotations

from typing import Any

import torch
from gymnasium import spaces
from sb3_contrib.common.maskable.distributions import (
    MaskableCategorical,
    MaskableCategoricalDistribution,
    MaybeMasks,
)
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from torch.distributions import Distribution

__all__ = [
    "MASKED_LOGIT", "FastMaskableCategorical", "FastMaskableCategoricalDistribution", "TonkMaskablePolicy",
    "legal_log_prob_entropy",
]  # fmt: skip

#: The logit of a masked action (sb3-contrib's value): its probability underflows to exactly 0.
MASKED_LOGIT = -1e8


class FastMaskableCategorical(MaskableCategorical):
    """sb3-contrib's ``MaskableCategorical`` with vectorised normalisation and sampling.

    Takes ``logits`` of shape ``(batch, actions)``; arguments are not validated
    (the policy network produces them)."""

    def __init__(self, logits: torch.Tensor, masks: MaybeMasks = None) -> None:
        self.masks: torch.Tensor | None = None
        self._original_logits = logits
        self.apply_masking(masks)

    def apply_masking(self, masks: MaybeMasks) -> None:
        """Keep the logits of the actions where ``masks`` is true; the others get probability 0."""
        logits = self._original_logits
        if masks is None:
            self.masks = None
        else:
            self.masks = torch.as_tensor(masks, dtype=torch.bool, device=logits.device).reshape(logits.shape)
            logits = logits.masked_fill(~self.masks, MASKED_LOGIT)
        self.__dict__.pop("probs", None)  # a cached lazy property of the previous logits
        self.logits = torch.log_softmax(logits, dim=-1)
        self._param = self.logits
        self._num_events = logits.shape[-1]
        Distribution.__init__(self, logits.shape[:-1], validate_args=False)

    def sample(self, sample_shape: torch.Size | list[int] | tuple[int, ...] = ()) -> torch.Tensor:
        """One action per row by inverse CDF (``torch.multinomial`` for other sample shapes)."""
        if torch.Size(sample_shape).numel() != 1 or self.logits.dim() != 2:
            return super().sample(torch.Size(sample_shape))
        cdf = self.probs.cumsum(-1)
        total = cdf[:, -1:]
        # u < total, so the first index whose cumulative probability exceeds u
        # is an action of positive probability (the CDF is flat over masked ones).
        u = torch.rand(total.shape, dtype=cdf.dtype, device=cdf.device) * (total * (1.0 - 1e-6))
        idx = torch.searchsorted(cdf, u, right=True).clamp_(max=self._num_events - 1)
        out = idx.squeeze(-1)
        return out.reshape(torch.Size(sample_shape) + out.shape) if len(sample_shape) else out


class FastMaskableCategoricalDistribution(MaskableCategoricalDistribution):
    """SB3's masked categorical action distribution, built on :class:`FastMaskableCategorical`."""

    def proba_distribution(self, action_logits: torch.Tensor) -> FastMaskableCategoricalDistribution:
        """The distribution of these logits (masks are applied by the policy afterwards)."""
        self.distribution = FastMaskableCategorical(action_logits.view(-1, self.action_dim))
        return self


def legal_log_prob_entropy(
    logits: torch.Tensor, masks: torch.Tensor, actions: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """The log-probability of ``actions`` and the entropy of the masked distribution of ``logits``.

    ``logits`` ``(B, A)``; ``masks`` ``(B, A)``, bool or numbers (0: illegal), at least one legal
    action a row; ``actions`` ``(B,)``, legal ones. The legal logits are gathered into ``(B, K)``
    (``K`` the most legal actions of a row), so everything after the gather, and its gradient, is
    ``K`` wide.
    """
    counts = masks.sum(dim=1).long()
    width = int(counts.max())
    rows, cols = masks.nonzero(as_tuple=True)  # row by row, each row's legal actions in order
    first = torch.cumsum(counts, dim=0) - counts  # where each row's legal actions start in ``cols``
    slot = torch.arange(rows.numel(), device=logits.device) - first[rows]
    index = torch.zeros((masks.shape[0], width), dtype=torch.long, device=logits.device)
    index[rows, slot] = cols
    valid = torch.arange(width, device=logits.device)[None, :] < counts[:, None]
    log_p = torch.log_softmax(logits.gather(1, index).masked_fill(~valid, MASKED_LOGIT), dim=-1)
    entropy = -(log_p.exp() * log_p).masked_fill(~valid, 0.0).sum(dim=-1)
    chosen = (index == actions.long().reshape(-1, 1)) & valid
    return log_p.masked_fill(~chosen, 0.0).sum(dim=-1), entropy


class TonkMaskablePolicy(MaskableActorCriticPolicy):
    """``MaskableActorCriticPolicy`` whose action distribution is :class:`FastMaskableCategorical`,
    evaluating the update's actions over the legal ones (:func:`legal_log_prob_entropy`).

    ``update_dtype`` (None: float32) runs that evaluation under torch's autocast at that
    precision (``ppo.update_dtype``); acting is float32 always."""

    update_dtype: torch.dtype | None = None

    def _build(self, lr_schedule: Any) -> None:
        if not isinstance(self.action_space, spaces.Discrete):
            raise TypeError(f"TonkMaskablePolicy needs a Discrete action space, got {self.action_space}")
        self.action_dist = FastMaskableCategoricalDistribution(int(self.action_space.n))
        super()._build(lr_schedule)

    def evaluate_actions(
        self, obs: torch.Tensor, actions: torch.Tensor, action_masks: MaybeMasks = None
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """Values, log-probabilities of ``actions`` and entropies, over the legal actions only."""
        if action_masks is None:
            return super().evaluate_actions(obs, actions, action_masks)
        if self.update_dtype is None:
            return self._evaluate_legal(obs, actions, action_masks)
        with torch.autocast(device_type=self.device.type, dtype=self.update_dtype):
            values, log_prob, entropy = self._evaluate_legal(obs, actions, action_masks)
        return values.float(), log_prob.float(), entropy.float()

    def _evaluate_legal(
        self, obs: torch.Tensor, actions: torch.Tensor, action_masks: MaybeMasks
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        features = self.extract_features(obs)
        if self.share_features_extractor:
            latent_pi, latent_vf = self.mlp_extractor(features)
        else:
            pi_features, vf_features = features
            latent_pi = self.mlp_extractor.forward_actor(pi_features)
            latent_vf = self.mlp_extractor.forward_critic(vf_features)
        logits = self.action_net(latent_pi)
        masks = torch.as_tensor(action_masks, device=logits.device).reshape(logits.shape)
        log_prob, entropy = legal_log_prob_entropy(logits, masks, actions)
        return self.value_net(latent_vf), log_prob, entropy
