"""``ppo.overlap``, ``ppo.update_dtype`` and the update's legal-action evaluation (train/sb3/overlap.py)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import zipfile
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
import torch
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from tiny import TINY

from tonk_cli.main import main
from train.config import load_config
from train.sb3.core_process import CoreVecEnvProcess, EnvWorkerError
from train.sb3.policy import TonkMaskablePolicy, legal_log_prob_entropy

ROOT = Path(__file__).resolve().parents[1]
#: 1,024 steps in rollouts of 256 (2 envs x 128), a checkpoint every 512: rollouts are played ahead
#: between the checkpoints and not across them
ARGS = [
    str(ROOT / "configs/quick.yaml"),
    *TINY,
    "total_steps=1024",
    "checkpoint_every=512",
    "ppo.overlap=true",
    "torch_threads=1",
    "--no-progress",
]


def _policy_hash(zip_path: Path) -> str:
    with zipfile.ZipFile(zip_path) as z:
        return hashlib.sha256(z.read("policy.pth")).hexdigest()


def _train(out: Path, *extra: str) -> Path:
    assert main(["train", *ARGS, f"out_dir={out}", *extra]) == 0
    (run,) = out.iterdir()
    return run


def test_the_legal_evaluation_is_the_masked_distributions() -> None:
    """Log-probabilities, entropies and their gradients equal sb3-contrib's masked distribution's."""
    torch.manual_seed(0)
    space = gym.spaces.Box(-1, 1, (40,), np.float32)
    policy = TonkMaskablePolicy(
        space, gym.spaces.Discrete(540), lambda _: 1e-3, net_arch={"pi": [16], "vf": [16]}
    )
    masks = torch.rand(64, 540) < 0.02
    masks[:, 7] = True
    masks[0] = False
    masks[0, 539] = True  # one legal action only, the last id
    actions = torch.multinomial(masks.float(), 1).squeeze(1)
    obs = torch.randn(64, 40)
    ours = policy.evaluate_actions(obs, actions, masks.numpy().astype(np.float32))
    theirs = MaskableActorCriticPolicy.evaluate_actions(policy, obs, actions, masks.numpy())
    for a, b in zip(ours, theirs, strict=True):
        assert b is not None
        torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-5)
    weight = policy.action_net.weight
    g_ours = torch.autograd.grad(ours[1].sum() + ours[2].sum(), weight)[0]
    g_theirs = torch.autograd.grad(theirs[1].sum() + theirs[2].sum(), weight)[0]  # type: ignore[operator]
    torch.testing.assert_close(g_ours, g_theirs, atol=1e-5, rtol=1e-5)
    log_p, entropy = legal_log_prob_entropy(
        torch.zeros(2, 5), torch.tensor([[1, 1, 0, 0, 1], [0, 0, 1, 0, 0]]), torch.tensor([4, 2])
    )
    torch.testing.assert_close(log_p, torch.tensor([np.log(1 / 3), 0.0], dtype=torch.float32))
    torch.testing.assert_close(entropy, torch.tensor([np.log(3), 0.0], dtype=torch.float32))


def test_an_overlapped_run_plays_ahead_and_resumes_exactly(tmp_path: Path) -> None:
    """Same seed, same run; a copy cut at the step-512 checkpoint and resumed ends as the original."""
    full = _train(tmp_path / "full")
    again = _train(tmp_path / "again")
    last = "checkpoints/step_1024.zip"
    assert _policy_hash(full / last) == _policy_hash(again / last)
    summary = json.loads((full / "summary.json").read_text())
    assert (
        summary["overlap"]["rollouts_played_ahead"] == 2
    )  # 4 rollouts: the first and each after a checkpoint are not
    cut = tmp_path / "cut" / full.name
    shutil.copytree(full, cut)
    for p in (cut / "checkpoints").glob("step_1024*"):
        shutil.rmtree(p) if p.is_dir() else p.unlink()
    assert main(["train", "--resume", str(cut), "--no-progress"]) == 0
    assert _policy_hash(cut / last) == _policy_hash(full / last)
    assert _policy_hash(cut / "best.zip") == _policy_hash(full / "best.zip")
    resumed = [json.loads(x) for x in (cut / "metrics.jsonl").read_text().splitlines()]
    assert [r["exact"] for r in resumed if r["type"] == "resume"] == [True]


def test_bfloat16_updates_train_and_differ_from_float32(tmp_path: Path) -> None:
    """``ppo.update_dtype=bfloat16`` trains (its own run: the products are rounded differently)."""
    fp32 = _train(tmp_path / "fp32", "total_steps=512", "ppo.overlap=false")
    bf16 = _train(tmp_path / "bf16", "total_steps=512", "ppo.overlap=false", "ppo.update_dtype=bfloat16")
    last = "checkpoints/step_512.zip"
    assert _policy_hash(fp32 / last) != _policy_hash(bf16 / last)


def test_the_settings_are_checked(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(
        ValueError, match=r"ppo.update_dtype='float16' is invalid; allowed: float32 or bfloat16"
    ):
        load_config(ROOT / "configs/quick.yaml", ["ppo.update_dtype=float16"])
    with pytest.raises(ValueError, match="ppo.overlap"):
        load_config(ROOT / "configs/rllib_2p.yaml", ["ppo.overlap=true"])


def test_the_env_worker_reports_errors_and_its_death_in_one_line() -> None:
    cfg = load_config(ROOT / "configs/quick.yaml", [*TINY[:4], "pool.baselines={random: 1.0}"])
    env = CoreVecEnvProcess(cfg)
    try:
        env.seed(1)
        env.reset()
        masks = env.action_masks()
        assert (
            masks.shape == (2, 540)
            and env.env_method("action_masks", indices=[1])[0].tolist() == masks[1].tolist()
        )
        illegal = np.array([int(np.flatnonzero(m == 0)[0]) for m in masks])
        with pytest.raises(Exception, match="illegal|not legal"):
            env.step(illegal)  # the worker's IllegalActionError, raised here
        with pytest.raises(AttributeError, match="set_attr"):
            env.set_attr("x", 1)
        os.kill(env._proc.pid, signal.SIGKILL)
        with pytest.raises(EnvWorkerError, match=r"worker process was killed by SIGKILL \(out of memory"):
            env.reset()
    finally:
        env.close()
