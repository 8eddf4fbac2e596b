"""ONNX export (``tonk export --format onnx``) and the ``onnx:DIR`` agent (onnxruntime, no torch)."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from agents.mlp import MLPPolicy
from agents.onnx_agent import OnnxPolicy
from agents.registry import make_agent
from frontends.table import Table
from tonk_cli.main import main
from tonk_env.engine import (
    OVER,
    action_table,
    legal_mask,
    make_rules,
    new_game,
    seat_info,
)
from tonk_env.obs import OBS_VERSION, LazyObs, obs_layout, observation

ROOT = Path(__file__).resolve().parents[1]
TINY = ["total_steps=512", "n_envs=2", "ppo.n_steps=128", "ppo.batch_size=128", "ppo.n_epochs=1",
        "net.pi=[16]", "net.vf=[16]", "checkpoint_every=256", "eval.every=0", "eval.hands=8",
        "eval.opponents=[random]"]  # fmt: skip


@pytest.fixture(scope="session")
def checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny trained run (``ppo:`` agent), trained once per test session, shared by xdist workers."""
    if os.environ.get("PYTEST_XDIST_WORKER") is None:
        return _train(tmp_path_factory.mktemp("ppo"))
    from filelock import FileLock

    root = tmp_path_factory.getbasetemp().parent / "frontend_ppo"
    root.mkdir(exist_ok=True)
    with FileLock(str(root) + ".lock"):
        runs = [p for p in root.iterdir() if (p / "best.zip").is_file()]
        return runs[0] if runs else _train(root)


def _train(out: Path) -> Path:
    assert main(["train", "configs/quick.yaml", *TINY, f"out_dir={out}", "--no-progress"]) == 0
    (run,) = [p for p in out.iterdir() if (p / "best.zip").is_file()]
    return run


def positions(count: int, players: int = 2, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Observations and masks of ``count`` decisions from random playouts."""
    rng = random.Random(seed)
    obs, masks = [], []
    while len(obs) < count:
        s = new_game(make_rules(), players, seed=rng.getrandbits(32))
        while s.phase != OVER and len(obs) < count:
            obs.append(observation(s, s.cur))
            masks.append(legal_mask(s))
            legal = s.legal_actions()
            s.play(rng.choice([a for a in legal if a != 0] or legal) if rng.random() > 0.02 else legal[0])
    return np.stack(obs), np.stack(masks)


def random_npz(path: Path, activation: str = "relu", players: int = 2) -> Path:
    rng = np.random.default_rng(3)
    sizes = [obs_layout(players).size, 24, 12, action_table(False).size]
    shapes = zip(sizes[1:], sizes[:-1], strict=True)
    layers = [(rng.normal(0, 0.4, (o, i)), rng.normal(0, 0.1, o)) for o, i in shapes]
    rules = make_rules()
    MLPPolicy(
        layers,
        activation=activation,
        meta={"num_players": players, "rules_hash": rules.hash, "obs_version": OBS_VERSION},
    ).save_npz(path)
    return path


def _same_choices(source: MLPPolicy, exported: OnnxPolicy, obs: np.ndarray, masks: np.ndarray) -> None:
    want = source.act_batch({"observation": obs, "action_mask": masks})
    z = exported.masked_logits(obs, masks)
    assert z.shape == masks.shape
    legal = masks == 1
    np.testing.assert_allclose(z[legal], source.logits(obs)[legal], rtol=1e-4, atol=1e-4)
    assert (z[~legal] <= -1e8).all()
    got = exported.act_batch({"observation": obs, "action_mask": masks})
    assert got == [int(a) for a in want]
    # one row at a time, as an agent in a game
    for i in range(0, len(obs), 97):
        assert exported.act({"observation": obs[i], "action_mask": masks[i]}) == want[i]


def test_exported_ppo_checkpoint_chooses_as_the_source_on_1000_positions(
    checkpoint: Path, tmp_path: Path
) -> None:
    out = tmp_path / "onnx"
    assert main(["export", f"ppo:{checkpoint}", "--format", "onnx", "--out", str(out)]) == 0
    meta = json.loads((out / "meta.json").read_text())
    source = make_agent(f"ppo:{checkpoint}")
    for key in ("rules_hash", "num_players", "obs_version", "obs_size", "num_actions"):
        assert meta[key] == source.meta[key], key
    assert meta["format"] == "tonk-onnx-policy/1" and meta["obs_version"] == OBS_VERSION
    assert meta["observation_slices"][0] == ["hand", 0, 52]
    agent = make_agent(f"onnx:{out}")
    assert isinstance(agent, OnnxPolicy) and agent.spec == f"onnx:{out}"
    obs, masks = positions(1000)
    _same_choices(source, agent, obs, masks)


def test_exported_npz_relu_network_and_npz_format(tmp_path: Path) -> None:
    npz = random_npz(tmp_path / "net.npz")
    out = tmp_path / "onnx"
    assert main(["export", f"npz:{npz}", "--out", str(out)]) == 0
    obs, masks = positions(400, seed=1)
    _same_choices(MLPPolicy.load_npz(npz), make_agent(f"onnx:{out}"), obs, masks)
    assert main(["export", f"npz:{npz}", "--format", "npz", "--out", str(tmp_path / "again")]) == 0
    again = MLPPolicy.load_npz(tmp_path / "again" / "model.npz")
    np.testing.assert_array_equal(again.logits(obs[:5]), MLPPolicy.load_npz(npz).logits(obs[:5]))


def test_onnx_agent_plays_at_a_table_and_refuses_other_tables(tmp_path: Path) -> None:
    out = tmp_path / "onnx"
    assert (
        main(["export", f"npz:{random_npz(tmp_path / 'net.npz', activation='tanh')}", "--out", str(out)]) == 0
    )
    table = Table(make_rules(), 2, [], [f"onnx:{out}", f"onnx:{out}?deterministic=false"], seed=1)
    for _ in range(3):
        s = table.deal()
        table.run_agents(s, limit=400)
        if s.phase == OVER:
            table.score(s)
    assert sum(table.scores) == 0
    agent = make_agent(f"onnx:{out}")
    with pytest.raises(ValueError, match="trained for 2 players"):
        agent.reset_hand(0, 3, make_rules())
    with pytest.raises(ValueError, match="rules hash"):
        agent.reset_hand(0, 2, make_rules("seven_card"))
    sampler = make_agent(f"onnx:{out}?deterministic=false", seed=4)
    s = new_game(make_rules(), 2, seed=2)
    info = seat_info(s, 0)
    assert all(sampler.act(LazyObs(s, 0), info) in info.legal for _ in range(20))


def test_export_and_agent_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export", "heuristic:greedy", "--out", str(tmp_path / "x")]) == 2
    assert "only policy networks" in capsys.readouterr().err
    assert main(["export", f"npz:{tmp_path / 'missing.npz'}", "--out", str(tmp_path / "x")]) == 2
    assert "no such file" in capsys.readouterr().err
    with pytest.raises(ValueError, match="not an exported ONNX policy"):
        make_agent(f"onnx:{tmp_path}")
    out = tmp_path / "onnx"
    assert main(["export", f"npz:{random_npz(tmp_path / 'net.npz')}", "--out", str(out)]) == 0
    with pytest.raises(ValueError, match="unknown parameters"):
        make_agent(f"onnx:{out}?temperature=2")
    meta = json.loads((out / "meta.json").read_text())
    (out / "meta.json").write_text(json.dumps({**meta, "obs_version": OBS_VERSION - 1}))
    with pytest.raises(ValueError, match="observation layout version"):
        make_agent(f"onnx:{out}")


def test_onnx_agent_runs_without_torch(tmp_path: Path) -> None:
    out = tmp_path / "onnx"
    assert main(["export", f"npz:{random_npz(tmp_path / 'net.npz')}", "--out", str(out)]) == 0
    code = f"""
import sys
sys.modules["torch"] = None  # any import of torch now fails
from agents.onnx_agent import load_onnx_agent
from tonk_env.obs import LazyObs
from tonk_env.engine import new_game, seat_info
agent = load_onnx_agent({str(out)!r})
s = new_game("standard", 2, seed=0)
legal = agent.act(LazyObs(s, 0), seat_info(s, 0)) in s.legal_actions()
print(legal, sys.modules.get("torch") is not None)
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["True", "False"]
