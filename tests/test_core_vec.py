"""``vec_env: core``: the SB3 ``VecEnv`` over ``TonkVectorEnv``, its config choice and a tiny training run."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported

from agents.random_agent import RandomAgent
from tonk_env.obs import obs_layout
from tonk_env.vector import TonkVectorEnv
from train.config import config_from_dict, load_config
from train.pool import OpponentPool
from train.sb3.core_vec import CoreVecEnv, PoolSampler, make_core_vec_env
from train.trainer import train

QUICK = Path(__file__).resolve().parents[1] / "configs" / "quick.yaml"


def test_core_is_the_default_and_the_config_names_the_choices_in_errors() -> None:
    assert config_from_dict({}).vec_env == "core" and load_config(QUICK).vec_env == "core"
    assert load_config(QUICK, ["vec_env=dummy"]).vec_env == "dummy"
    with pytest.raises(ValueError, match="vec_env='fast' is invalid; allowed: dummy, subproc or core"):
        load_config(QUICK, ["vec_env=fast"])


def test_masks_infos_and_shaping() -> None:
    cfg = config_from_dict(
        {"n_envs": 6, "shaping_coef": 0.1, "ppo": {"gamma": 0.9}, "net": {"critic": "oracle"}}
    )
    vec = make_core_vec_env(cfg)
    assert is_masking_supported(vec)
    vec.seed(3)
    obs = vec.reset()
    assert obs.shape == (6, vec.observation_space.shape[0]) and obs.shape[1] > obs_layout(2).size
    rng = np.random.default_rng(0)
    count_at = obs_layout(2)["hand_count"].start
    ended = 0
    for _ in range(60):
        masks = get_action_masks(vec)
        assert np.array_equal(masks, vec.env.action_masks())
        acts = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        before = obs[:, count_at].astype(np.float64) * 50
        obs2, rewards, dones, infos = vec.step(acts)
        for g in range(6):
            phi_before = -0.1 * before[g]
            if dones[g]:
                ended += 1
                info = infos[g]
                assert info["terminal_observation"].shape == obs2[g].shape
                stakes = info["payoffs"][info["learner_seat"]] if "payoffs" in info else 0.0
                assert rewards[g] == pytest.approx(stakes - phi_before, abs=1e-5)
                assert info["episode"]["result_kind"] == info["result_kind"] and info["episode"]["l"] >= 1
            else:
                assert infos[g] == {}
                phi_after = -0.1 * float(obs2[g, count_at]) * 50
                assert rewards[g] == pytest.approx(0.9 * phi_after - phi_before, abs=1e-5)
        obs = obs2
    assert ended > 5


def test_update_pool_reaches_every_game_and_random_plays_in_the_kernel() -> None:
    cfg = config_from_dict(
        {"n_envs": 3, "pool": {"baselines": {"random": 1.0}, "latest": 0.0, "snapshots": 0.0}}
    )
    vec = make_core_vec_env(cfg)
    sampler = PoolSampler(vec.pools[0])
    assert isinstance(vec.pools[0].baselines[0][2], RandomAgent)
    assert all(not isinstance(a, RandomAgent) for a in sampler(np.random.default_rng(0), 3, 0))
    layers = [(np.zeros((540, obs_layout(2).size), np.float32), np.zeros(540, np.float32))]
    vec.env_method("update_pool", latest=layers, activation="tanh")
    assert all(p.latest is not None for p in vec.pools)
    vec.env_method("update_pool", snapshot=layers, activation="tanh", step=5, indices=[1])
    assert [len(p.snapshots) for p in vec.pools] == [0, 1, 0]
    with pytest.raises(AttributeError, match="answers action_masks, pool_counts, update_pool"):
        vec.env_method("render")


def test_core_vec_env_wraps_any_vector_env() -> None:
    env = TonkVectorEnv(num_envs=2, num_players=3)
    vec = CoreVecEnv(env, pools=[OpponentPool(config_from_dict({}).pool) for _ in range(2)])
    vec.seed(0)
    assert vec.reset().shape == (2, obs_layout(3).size)
    assert vec.get_attr("num_players") == [3, 3] and vec.env_is_wrapped(object) == [False, False]


@pytest.mark.parametrize("extra", [[], ["net.critic=oracle", "shaping_coef=0.05", "players=3"]])
def test_maskable_ppo_trains_on_the_core(tmp_path: Path, extra: list[str]) -> None:
    """A tiny run of ``tonk train``'s function with ``vec_env: core``, self-play pool and a heuristic."""
    cfg = load_config(
        QUICK,
        [
            "vec_env=core",
            "total_steps=384",
            "n_envs=4",
            "ppo.n_steps=32",
            "ppo.batch_size=64",
            "ppo.n_epochs=1",
            "net.pi=[16]",
            "net.vf=[16]",
            "checkpoint_every=384",
            "pool.refresh_every=64",
            "pool.snapshot_every=128",
            "eval.opponents=[]",
            f"out_dir={tmp_path}",
            *extra,
        ],
    )
    run = train(cfg, progress=False)
    summary = json.loads((run / "summary.json").read_text())
    assert summary["steps"] >= 384
    rows = [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()]
    rollouts = [r for r in rows if r.get("type") == "rollout"]
    assert rollouts and sum(r["hands"] for r in rollouts) > 0
