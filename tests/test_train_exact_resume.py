"""A run killed with ``kill -9`` and resumed from its checkpoint ends as the uninterrupted run ends."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from typing import Any

from tiny import TINY

from tonk_cli.main import main

ROOT = Path(__file__).resolve().parents[1]
#: 1,024 steps in rollouts of 256, a checkpoint and an evaluation every 256 (best.zip moves)
ARGS = [str(ROOT / "configs/quick.yaml"), *TINY, "total_steps=1024", "name=k9", "--no-progress"]
KILL_AFTER = 512
#: the fields that hold wall-clock times, not what the run computed
_CLOCK = {"time", "steps_per_s", "collect_s"}


def _policy_hash(zip_path: Path) -> str:
    with zipfile.ZipFile(zip_path) as z:
        return hashlib.sha256(z.read("policy.pth")).hexdigest()


def _metrics(run: Path) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    return [
        {k: v for k, v in r.items() if k not in _CLOCK} for r in rows if r["type"] not in ("resume", "end")
    ]


def _train_cmd(out: Path) -> list[str]:
    return [sys.executable, "-m", "tonk_cli.main", "train", *ARGS, f"out_dir={out}"]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def _kill_after_checkpoint(out: Path, step: int) -> Path:
    """Start a run in a subprocess; ``kill -9`` it once its step-``step`` checkpoint is logged."""
    proc = subprocess.Popen(_train_cmd(out), cwd=ROOT, env=_env(), stdout=subprocess.DEVNULL)
    want = f'"type": "checkpoint", "step": {step},'
    deadline = time.monotonic() + 300
    try:
        while time.monotonic() < deadline:
            logs = list(out.glob("*/metrics.jsonl"))
            if logs and want in logs[0].read_text():
                proc.send_signal(signal.SIGKILL)
                break
            assert proc.poll() is None, "the run ended before it could be killed"
            time.sleep(0.01)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    (run,) = out.iterdir()
    return run


def test_a_run_killed_at_a_checkpoint_and_resumed_ends_as_the_uninterrupted_run(tmp_path: Path) -> None:
    subprocess.run(_train_cmd(tmp_path / "full"), cwd=ROOT, env=_env(), check=True, stdout=subprocess.DEVNULL)
    (full,) = (tmp_path / "full").iterdir()
    killed = _kill_after_checkpoint(tmp_path / "killed", KILL_AFTER)
    assert main(["train", "--resume", str(killed), "--no-progress"]) == 0

    last = "checkpoints/step_1024.zip"
    assert _policy_hash(killed / last) == _policy_hash(full / last)
    assert _policy_hash(killed / "best.zip") == _policy_hash(full / "best.zip")
    assert json.loads((killed / "best.json").read_text()) == json.loads((full / "best.json").read_text())
    assert _metrics(killed) == _metrics(full)  # nothing doubled, nothing missing, the same evaluations
    resumed = [json.loads(x) for x in (killed / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in resumed if r["type"] == "resume"] == [KILL_AFTER]
    assert all(r["exact"] for r in resumed if r["type"] == "resume")


def test_vec_env_dummy_resumes_exactly_too(tmp_path: Path) -> None:
    """The Python envs' deal generators come back: a resumed copy ends as the original.

    quick.yaml (the test above) trains on the default ``vec_env: core``; this keeps ``dummy`` covered.
    """
    argv = ["train", *ARGS, "total_steps=768", "vec_env=dummy", f"out_dir={tmp_path / 'full'}"]
    assert main(argv) == 0
    (full,) = (tmp_path / "full").iterdir()
    cut = tmp_path / "cut" / full.name
    shutil.copytree(full, cut)
    for p in (cut / "checkpoints").glob("step_*"):  # as if killed right after the step-512 checkpoint
        if int(p.name.removeprefix("step_").removesuffix(".zip")) > KILL_AFTER:
            shutil.rmtree(p) if p.is_dir() else p.unlink()
    assert main(["train", "--resume", str(cut), "--no-progress"]) == 0
    last = "checkpoints/step_768.zip"
    assert _policy_hash(cut / last) == _policy_hash(full / last)
    assert _policy_hash(cut / "best.zip") == _policy_hash(full / "best.zip")
    assert _metrics(cut) == _metrics(full)
