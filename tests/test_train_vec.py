"""train.sb3.dummy_vec: batched network opponents play exactly the game the one-at-a-time loop plays."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tonk_env.obs import obs_layout
from train.config import config_from_dict
from train.sb3.dummy_vec import BatchableSingleAgentEnv, BatchedOpponentsVecEnv, ShallowInfoDummyVecEnv
from train.sb3.trainer import make_env_fn


def _layers(players: int, seed: int = 0) -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(seed)
    sizes = [obs_layout(players).size, 32, 540]
    return [
        (rng.standard_normal((o, i)).astype(np.float32), rng.standard_normal(o).astype(np.float32))
        for i, o in zip(sizes[:-1], sizes[1:], strict=True)
    ]


def _vec(kind: Any, players: int, sample: bool, n_envs: int = 6) -> Any:
    cfg = config_from_dict(
        {
            "players": players,
            "n_envs": n_envs,
            "seed": 3,
            "pool": {
                "latest": 0.5,
                "snapshots": 0.3,
                "baselines": {"heuristic:greedy": 0.2},
                "sample_opponents": sample,
            },
        }
    )
    vec = kind([make_env_fn(cfg, i) for i in range(n_envs)])
    vec.env_method("update_pool", latest=_layers(players, 1))
    for step in (100, 200):
        vec.env_method("update_pool", snapshot=_layers(players, step), step=step)
    vec.seed(11)
    return vec


@pytest.mark.parametrize(("players", "sample"), [(2, False), (2, True), (3, True), (4, False)])
def test_batched_opponents_play_the_same_games(players: int, sample: bool) -> None:
    plain = _vec(ShallowInfoDummyVecEnv, players, sample)
    batched = _vec(BatchedOpponentsVecEnv, players, sample)
    obs_a, obs_b = plain.reset(), batched.reset()
    rng = np.random.default_rng(0)
    dones = 0
    for _ in range(300):
        np.testing.assert_array_equal(obs_a, obs_b)
        masks = np.stack(plain.env_method("action_masks"))
        np.testing.assert_array_equal(masks, np.stack(batched.env_method("action_masks")))
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        obs_a, rew_a, done_a, info_a = plain.step(actions)
        obs_b, rew_b, done_b, info_b = batched.step(actions)
        np.testing.assert_array_equal(rew_a, rew_b)
        np.testing.assert_array_equal(done_a, done_b)
        assert [i.get("result_kind") for i in info_a] == [i.get("result_kind") for i in info_b]
        dones += int(done_a.sum())
    assert dones > 20
    # the network seats were played in batches of several envs
    assert batched.batched_moves > batched.batches > 0


def test_step_infos_are_independent_copies() -> None:
    vec = _vec(ShallowInfoDummyVecEnv, 2, False, n_envs=2)
    vec.reset()
    _, _, _, infos = vec.step(np.array([m.argmax() for m in vec.env_method("action_masks")]))
    infos[0]["mine"] = 1
    assert "mine" not in vec.buf_infos[0]


def test_prepare_step_misuse_is_an_error() -> None:
    env = BatchableSingleAgentEnv(num_players=2)  # random opponents
    env.reset(seed=0)
    legal = np.flatnonzero(env.action_masks())
    with pytest.raises(RuntimeError, match="no opponent move is pending"):
        env.pending_observation()
    assert env.prepare_step(int(legal[0])) is None  # random opponents are never batched
    other = int(legal[1]) if len(legal) > 1 else int(legal[0]) + 1
    with pytest.raises(RuntimeError, match="prepared for another action"):
        env.step(other)


def test_needs_envs_with_prepare_step() -> None:
    import gymnasium as gym

    with pytest.raises(TypeError, match="prepare_step"):
        BatchedOpponentsVecEnv([lambda: gym.make("CartPole-v1")])


@pytest.mark.parametrize("deterministic", [False, True])
def test_pick_many_chooses_as_each_copys_pick(deterministic: bool) -> None:
    """``MLPPolicy.pick_many`` (the batched opponents' rows at once) equals row-by-row ``pick``."""
    from agents.mlp import MLPPolicy

    rng = np.random.default_rng(0)
    layers = [(rng.standard_normal((540, 338)).astype(np.float32) * 0.1, np.zeros(540, np.float32))]
    one = [MLPPolicy(layers, deterministic=deterministic, seed=k) for k in range(40)]
    many = [MLPPolicy(layers, deterministic=deterministic, seed=k) for k in range(40)]
    for _ in range(10):
        obs = rng.random((40, 338)).astype(np.float32)
        masks = (rng.random((40, 540)) < 0.02).astype(np.int8)
        masks[:, 1] = 1
        z = one[0].logits(obs)
        want = [p.pick(z[k], masks[k]) for k, p in enumerate(one)]
        assert MLPPolicy.pick_many(z, masks, many) == want
    assert [p.rng.random() for p in one] == [p.rng.random() for p in many]  # the generators moved alike
