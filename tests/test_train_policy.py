"""train.sb3.policy: the fast masked distribution equals sb3-contrib's and samples by its probabilities."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from sb3_contrib.common.maskable.distributions import MaskableCategorical

from train.sb3.policy import FastMaskableCategorical, TonkMaskablePolicy


def _batch(rows: int = 64, n: int = 540, seed: int = 0) -> tuple[torch.Tensor, np.ndarray]:
    g = torch.Generator().manual_seed(seed)
    logits = torch.randn(rows, n, generator=g) * 3
    rng = np.random.default_rng(seed)
    masks = rng.random((rows, n)) < 0.02
    masks[np.arange(rows), rng.integers(0, n, rows)] = True  # at least one legal action a row
    return logits, masks


def test_same_distribution_as_sb3_contrib() -> None:
    logits, masks = _batch()
    ref = MaskableCategorical(logits=logits)
    ref.apply_masking(masks)
    fast = FastMaskableCategorical(logits)
    fast.apply_masking(masks)
    torch.testing.assert_close(fast.probs, ref.probs, atol=1e-6, rtol=1e-5)
    actions = torch.as_tensor(np.argmax(masks, axis=1))
    torch.testing.assert_close(fast.log_prob(actions), ref.log_prob(actions), atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(fast.entropy(), ref.entropy(), atol=1e-5, rtol=1e-5)
    assert torch.equal(fast.mode, ref.mode)
    # removing the mask restores the unmasked distribution
    fast.apply_masking(None)
    torch.testing.assert_close(fast.probs, torch.softmax(logits, -1))


def test_samples_follow_the_probabilities_and_never_a_masked_action() -> None:
    torch.manual_seed(3)
    logits = torch.tensor([[0.0, 1.0, 2.0, -1.0, 5.0, 0.5]]).repeat(20000, 1)
    masks = np.array([[True, True, True, True, False, True]]).repeat(20000, 0)
    d = FastMaskableCategorical(logits, masks)
    x = d.sample()
    assert x.shape == (20000,)
    counts = np.bincount(x.numpy(), minlength=6)
    assert counts[4] == 0  # the masked action (the largest logit) is never drawn
    p = d.probs[0].numpy()
    expected = p * 20000
    # each count within 5 standard deviations of its expectation
    assert np.all(np.abs(counts - expected) <= 5 * np.sqrt(expected * (1 - p)) + 1)


def test_sample_is_reproducible_from_the_torch_seed() -> None:
    logits, masks = _batch(rows=32, seed=1)
    torch.manual_seed(7)
    a = FastMaskableCategorical(logits, masks).sample()
    torch.manual_seed(7)
    b = FastMaskableCategorical(logits, masks).sample()
    assert torch.equal(a, b)
    assert np.all(masks[np.arange(32), a.numpy()])


@pytest.mark.parametrize("shape", [(3,), (2, 2)])
def test_other_sample_shapes_fall_back_to_multinomial(shape: tuple[int, ...]) -> None:
    logits, masks = _batch(rows=8, seed=2)
    x = FastMaskableCategorical(logits, masks).sample(torch.Size(shape))
    assert x.shape == (*shape, 8)
    assert np.all(np.take_along_axis(masks, x.reshape(-1, 8).T.numpy(), axis=1))


def test_the_policy_uses_it_and_keeps_sb3_weight_names() -> None:
    from tonk_env.single import TonkSingleAgentEnv

    env = TonkSingleAgentEnv()
    policy = TonkMaskablePolicy(env.observation_space, env.action_space, lambda _: 1e-3, net_arch=[32])
    obs, _ = env.reset(seed=0)
    masks = env.action_masks()
    dist = policy.get_distribution(policy.obs_to_tensor(obs)[0], action_masks=masks)
    assert isinstance(dist.distribution, FastMaskableCategorical)
    actions, _ = policy.predict(obs, action_masks=masks)
    assert masks[int(actions)]
    names = set(policy.state_dict())
    assert {"action_net.weight", "value_net.weight", "mlp_extractor.policy_net.0.weight"} <= names
