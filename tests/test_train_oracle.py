"""The oracle critic (``net.critic: oracle``): privileged features, the split policy, a run end to end."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from tiny import TINY

from tonk_cli.main import main
from tonk_env.engine import hand_value, make_rules, new_game
from tonk_env.obs import obs_layout
from tonk_env.single import TonkSingleAgentEnv
from train.config import load_config
from train.oracle import PrivilegedObs, privileged_features, privileged_size
from train.sb3.oracle_policy import OracleCriticPolicy


def _bits(mask: int) -> np.ndarray:
    return np.array([(mask >> c) & 1 for c in range(52)], dtype=np.float32)


@pytest.mark.parametrize("n", [2, 3, 4])
def test_privileged_features_are_the_hidden_cards(n: int) -> None:
    s = new_game(make_rules(), num_players=n, seed=11)
    for seat in range(n):
        f = privileged_features(s, seat)
        assert f.shape == (privileged_size(n),) == (53 * (n - 1) + 52,)
        for i in range(1, n):
            o = (seat + i) % n
            assert np.array_equal(f[52 * (i - 1) : 52 * i], _bits(s.hands[o]))
            assert f[52 * (n - 1) + i - 1] == pytest.approx(hand_value(s.hands[o]) / 50)
        nxt = f[53 * (n - 1) :]
        assert nxt.sum() == 1 and nxt[s.stock[-1]] == 1  # the card the next draw takes
    s.stock.clear()
    assert privileged_features(s, 0)[53 * (n - 1) :].sum() == 0


def test_privileged_obs_wrapper_appends_them() -> None:
    from agents.registry import make_agent

    env = PrivilegedObs(
        TonkSingleAgentEnv(num_players=2, opponents=make_agent("random", seed=1), learner_seat="random")
    )
    size = obs_layout(2).size
    assert env.observation_space.shape == (size + privileged_size(2),)
    obs, _ = env.reset(seed=3)
    core = env.unwrapped
    assert env.observation_space.contains(obs)
    assert np.array_equal(obs[size:], privileged_features(core.game, core.learner_seat))
    mask = env.action_masks()
    obs, *_ = env.step(int(np.flatnonzero(mask)[0]))
    assert np.array_equal(obs[size:], privileged_features(core.game, core.learner_seat))


def test_policy_reads_the_observation_and_critic_everything() -> None:
    from gymnasium import spaces

    size = obs_layout(2).size
    full = size + privileged_size(2)
    pol = OracleCriticPolicy(
        spaces.Box(0, 2, (full,), np.float32),
        spaces.Discrete(540),
        lambda _: 1e-3,
        net_arch={"pi": [32], "vf": [32]},
        actor_dim=size,
    )
    rng = np.random.default_rng(0)
    a = torch.as_tensor(rng.random((4, full), dtype=np.float32))
    b = a.clone()
    b[:, size:] = torch.as_tensor(rng.random((4, full - size), dtype=np.float32))
    with torch.no_grad():
        assert torch.equal(
            pol.get_distribution(a).distribution.logits, pol.get_distribution(b).distribution.logits
        )
        assert not torch.equal(pol.predict_values(a), pol.predict_values(b))
        values, _, _ = pol.evaluate_actions(a, torch.zeros(4, dtype=torch.long))
        assert torch.allclose(values, pol.predict_values(a))
    # the actor keeps SB3's weight names and input size: it exports as an ordinary policy
    state = pol.state_dict()
    assert state["mlp_extractor.policy_net.0.weight"].shape == (32, size)
    assert state["mlp_extractor.value_net.0.weight"].shape == (32, full)
    with pytest.raises(ValueError, match="actor_dim"):
        OracleCriticPolicy(spaces.Box(0, 2, (full,), np.float32), spaces.Discrete(540), lambda _: 1e-3)


def test_oracle_run_trains_resumes_and_plays_as_an_agent(tmp_path: Path) -> None:
    args = ["train", "configs/quick.yaml", *TINY, f"out_dir={tmp_path}", "net.critic=oracle"]
    teacher = ["pretrain.teacher=heuristic:greedy", "pretrain.hands=30", "pretrain.epochs=1"]
    assert main([*args, *teacher, "--no-progress"]) == 0
    (run,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    steps = json.loads((run / "summary.json").read_text())["steps"]
    assert main(["train", "--resume", str(run), "total_steps=1024", "--no-progress"]) == 0
    assert json.loads((run / "summary.json").read_text())["steps"] > steps

    from agents.registry import make_agent
    from eval.duplicate import evaluate

    agent = make_agent(f"ppo:{run}")
    assert agent.obs_size == obs_layout(2).size
    res = evaluate([f"ppo:{run}", "random"], hands=4, seed=1)
    assert res.hands >= 4 and len(res.agents) == 2


def test_bad_critic_names_the_choices() -> None:
    with pytest.raises(ValueError, match=r"net\.critic='seer'.*public or oracle"):
        load_config("configs/quick.yaml", ["net.critic=seer"])
