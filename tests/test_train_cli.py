"""Smoke runs of the real ``tonk train`` CLI with tiny budgets, and its errors."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest
from tiny import TINY

from tonk_cli.main import main


def _run(tmp_path: Path, *extra: str) -> Path:
    rc = main(["train", "configs/quick.yaml", *TINY, f"out_dir={tmp_path}", "--no-progress", *extra])
    assert rc == 0
    (run,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    return run


def test_train_writes_run_folder_and_resumes(tmp_path: Path) -> None:
    run = _run(tmp_path)
    assert run.name.startswith("quick__1__")
    for name in (
        "config.yaml",
        "run.json",
        "metrics.jsonl",
        "best.zip",
        "best.json",
        "summary.json",
        "learning_curve.png",
    ):
        assert (run / name).is_file(), name
    assert list((run / "tb").rglob("events.out.tfevents.*")), "no TensorBoard event file"
    ckpts = sorted((run / "checkpoints").glob("step_*.zip"))
    assert ckpts and all((c.with_suffix("") / "pool.json").is_file() for c in ckpts)
    rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    evals = [r for r in rows if r["type"] == "eval"]
    assert evals and {"mean_stakes", "ci95", "win_rate", "hands"} <= set(evals[-1]["results"]["random"])
    run_info = json.loads((run / "run.json").read_text())
    with zipfile.ZipFile(run / "best.zip") as z:
        meta = json.loads(z.read("tonk_meta.json"))
    assert meta["rules_hash"] == run_info["rules_hash"]
    summary = json.loads((run / "summary.json").read_text())
    steps = summary["steps"]
    assert steps >= 512
    # the wall time split between playing the envs and the PPO update
    assert summary["collect_seconds"] > 0 and summary["update_seconds"] > 0
    # each figure is rounded to the millisecond: allow the three roundings
    assert summary["collect_seconds"] + summary["update_seconds"] <= summary["wall_seconds"] + 0.0015
    rollouts = [r for r in rows if r["type"] == "rollout"]
    assert rollouts and all(r["collect_s"] > 0 for r in rollouts)

    # resume with a larger budget continues the step count
    rc = main(["train", "--resume", str(run), "total_steps=1024", "--no-progress"])
    assert rc == 0
    summary = json.loads((run / "summary.json").read_text())
    assert summary["steps"] >= 1024
    assert any(
        r["type"] == "resume" and r["step"] == steps
        for r in map(json.loads, (run / "metrics.jsonl").read_text().splitlines())
    )

    # a checkpoint is an agent wherever spec strings work
    from agents.registry import make_agent

    agent = make_agent(f"ppo:{run}")
    from tonk_env.engine import make_rules

    agent.reset_hand(0, 2, make_rules())
    with pytest.raises(ValueError, match="players"):
        agent.reset_hand(0, 3, make_rules())
    with pytest.raises(ValueError, match="rules hash"):
        agent.reset_hand(0, 2, make_rules("hit_penalty"))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["configs/quick.yaml", "ppo.lr=1"], "unknown config key 'ppo.lr'"),
        (["configs/quick.yaml", "vec_env=threads"], "vec_env"),
        (["configs/quick.yaml", "rule_options={hand_size: 6}"], "hand_size"),
        (["configs/nope.yaml"], "does not exist"),
        (["--resume", "/nonexistent/run"], "not a training run"),
    ],
)
def test_bad_configs_name_the_problem(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["train", *args, "--no-progress"]) == 2
    assert message in capsys.readouterr().err


def test_bad_checkpoints_are_refused(tmp_path: Path) -> None:
    from agents.ppo import load_policy

    with pytest.raises(ValueError, match="no such checkpoint"):
        load_policy(tmp_path / "missing.zip")
    junk = tmp_path / "junk.zip"
    junk.write_text("not a zip")
    with pytest.raises(ValueError, match="not a zip file"):
        load_policy(junk)
    other = tmp_path / "other.zip"
    with zipfile.ZipFile(other, "w") as z:
        z.writestr("hello.txt", "hi")
    with pytest.raises(ValueError, match="not a Tonk RL checkpoint"):
        load_policy(other)


def test_library_training_needs_an_evaluator(tmp_path: Path) -> None:
    """``train()`` without ``evaluate`` refuses to start (no run folder) and says what to pass."""
    from train.config import load_config
    from train.trainer import resume, train

    cfg = load_config("configs/quick.yaml", [*TINY, f"out_dir={tmp_path}"])
    with pytest.raises(ValueError, match=r"pass evaluate=eval\.duplicate\.evaluate"):
        train(cfg, progress=False)
    assert not list(tmp_path.iterdir())
    run = _run(tmp_path / "run")
    with pytest.raises(ValueError, match=r"pass evaluate=eval\.duplicate\.evaluate"):
        resume(run, progress=False, overrides={"total_steps": 1024})


def test_evaluation_during_training_uses_the_injected_evaluator() -> None:
    """The evaluator gets the policy (as an npz: spec) and each opponent, with the eval settings."""
    from collections.abc import Sequence
    from types import SimpleNamespace
    from typing import Any

    import numpy as np

    from tonk_env.engine import make_rules
    from train.config import load_config
    from train.evaluation import evaluate_layers

    cfg = load_config("configs/quick.yaml", ["eval.opponents=[random, heuristic:greedy]", "eval.hands=8"])
    calls = []

    def fake(specs: Sequence[str], **kw: Any) -> SimpleNamespace:
        """A stand-in for eval.duplicate.evaluate."""
        calls.append((list(specs), kw))
        me = SimpleNamespace(mean_stakes=0.5, ci95=(0.25, 0.75), win_rate=0.6, hands=kw["hands"])
        return SimpleNamespace(agents=[me])

    rng = np.random.default_rng(0)
    layers = [(rng.random((4, 3)).astype(np.float32), np.zeros(4, np.float32))]
    out = evaluate_layers(layers, cfg, seed=9, evaluate=fake)
    assert out == {
        spec: {"mean_stakes": 0.5, "ci95": [0.25, 0.75], "win_rate": 0.6, "hands": 8}
        for spec in ("random", "heuristic:greedy")
    }
    assert [c[0][1] for c in calls] == ["random", "heuristic:greedy"]
    assert all(c[0][0].startswith("npz:") for c in calls)
    kw = calls[0][1]
    assert kw.pop("rules").hash == make_rules(cfg.rules, **cfg.rule_options).hash
    assert kw == {"hands": 8, "players": cfg.players, "seed": 9, "workers": 1, "rules_name": cfg.rules}


def test_the_pipeline_runs_from_python_and_the_cli_prints_its_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``run_pipeline`` trains and evaluates when called from Python; ``tonk pipeline`` prints that report."""
    from tonk_cli.workflows import pipeline

    baselines = ("random", "heuristic:greedy")
    report = pipeline.run_pipeline(
        "configs/quick.yaml", [*TINY, f"out_dir={tmp_path}"], baselines, hands=8, progress=False
    )
    assert (report.run_dir / "best.zip").is_file() and report.agent == f"ppo:{report.run_dir / 'best.zip'}"
    assert [r.opponent for r in report.results][:2] == list(baselines)
    assert all(r.hands == 8 and r.ci95[0] <= r.mean_stakes <= r.ci95[1] for r in report.results)
    # the command parses and calls the same workflow: on the same run it prints the same table
    monkeypatch.setattr(pipeline, "train", lambda cfg, progress, evaluate: report.run_dir)
    args = ["pipeline", "configs/quick.yaml", *TINY, f"out_dir={tmp_path}", "--baselines", *baselines]
    assert main([*args, "--hands", "8", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert pipeline.format_pipeline(report) in out and "stakes/hand" in out and "95% CI" in out
    assert main([*args, "--hands", "8", "--no-progress", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == report.to_json()


@pytest.mark.slow
def test_a_short_run_beats_random(tmp_path: Path) -> None:
    """Learning claim: ~20k steps of quick.yaml beat random with the 95% interval above zero.

    One torch thread: beside another test (the suite runs on 2 workers) two would fight for the cores.
    """
    from eval.duplicate import evaluate

    rc = main(
        [
            "train",
            "configs/quick.yaml",
            "total_steps=20480",
            "n_envs=64",
            "ppo.batch_size=2048",
            "torch_threads=1",
            "eval.every=0",
            "eval.hands=8",
            "eval.opponents=[random]",
            "checkpoint_every=20480",
            f"out_dir={tmp_path}",
            "--no-progress",
        ]
    )
    assert rc == 0
    (run,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    res = evaluate([f"ppo:{run}", "random"], hands=600, players=2, rules="standard", seed=5)
    me = res.agents[0]
    assert me.ci95[0] > 0, (me.mean_stakes, me.ci95)


@pytest.mark.parametrize("path", sorted(p.name for p in Path("configs").glob("ppo_*.yaml")) + ["quick.yaml"])
def test_shipped_training_configs_are_valid(path: str) -> None:
    from train.config import load_config

    cfg = load_config(f"configs/{path}")
    assert cfg.total_steps > 0 and cfg.name


def test_ctrl_c_saves_a_checkpoint_and_the_summary(tmp_path: Path) -> None:
    """SIGINT mid-run: the run ends cleanly with a checkpoint at its last step and a summary."""
    import signal
    import subprocess
    import sys
    import time

    cmd = [sys.executable, "-m", "tonk_cli.main", "train", "configs/quick.yaml", *TINY]
    cmd += ["total_steps=100000000", "checkpoint_every=100000000", f"out_dir={tmp_path}", "--no-progress"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 120
        while (
            not list(tmp_path.glob("*/metrics.jsonl"))
            or '"rollout"' not in next(tmp_path.glob("*/metrics.jsonl")).read_text()
        ):
            assert proc.poll() is None, proc.communicate()[0]
            assert time.monotonic() < deadline, "no rollout within 120 s"
            time.sleep(0.2)
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == 0, out
    assert "stopped by SIGINT" in out
    (run,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    summary = json.loads((run / "summary.json").read_text())
    assert summary["stopped_by"] == "SIGINT" and 0 < summary["steps"] < 100000000
    assert (run / "checkpoints" / f"step_{summary['steps']}.zip").is_file()
    # the rollout the stop cut short counts as playing, not as an update
    assert summary["collect_seconds"] > 0
    # each figure is rounded to the millisecond: allow the three roundings
    assert summary["collect_seconds"] + summary["update_seconds"] <= summary["wall_seconds"] + 0.0015


def test_pipeline_evaluates_in_forked_workers_after_torch_ran_threads(tmp_path: Path) -> None:
    """`make run`'s shape: train, then evaluate the checkpoint with 2 worker processes, in one process.

    The workers are forked from a parent whose torch has run its OpenMP threads; a torch kernel in
    a forked worker then waits forever (libgomp is not fork-safe), so loading the agent there must
    not run one. The run is a subprocess with a time limit: a hang fails the test instead of the suite.
    """
    import subprocess
    import sys

    script = (
        "import sys, torch\n"
        "torch.set_num_threads(2)\n"
        "x = torch.randn(1500, 1500)\n"
        "float((x @ x).abs().sum())  # the OpenMP team now runs in this process\n"
        "from tonk_cli.main import main\n"
        # layers of quick.yaml's width: a tensor above torch's grain size runs in parallel
        f"sys.exit(main(['pipeline', 'configs/quick.yaml', *{TINY!r}, 'net.pi=[128]', 'torch_threads=2',\n"
        "    'total_steps=256', 'eval.every=0',\n"
        f"    'out_dir={tmp_path}',\n"
        "    '--baselines', 'random', '--hands', '64', '--workers', '2', '--no-progress']))\n"
    )
    import os
    import signal

    proc = subprocess.Popen(
        [sys.executable, "-c", script],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group: a hang is killed with its workers
    )
    try:
        out, err = proc.communicate(timeout=150)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail("tonk pipeline hung in its evaluation workers (a torch kernel after fork?)")
    assert proc.returncode == 0, err[-2000:]
    assert "stakes/hand" in out
