"""SIGTERM stops a ``tonk`` command cleanly: its worker processes go with it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads child processes from /proc")


def _children(pid: int) -> set[int]:
    """The live child processes of ``pid`` (from /proc)."""
    kids = set()
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            fields = (d / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            kids.add(int(d.name))
    return kids


def _alive(pid: int) -> bool:
    try:
        state = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_sigterm_in_the_data_phase_takes_the_workers_down(tmp_path: Path) -> None:
    """A training terminated while its pretraining workers play exits 143 and leaves no worker behind."""
    cmd = [
        sys.executable, "-m", "tonk_cli.main", "train", str(ROOT / "configs" / "quick.yaml"),
        f"out_dir={tmp_path}", "pretrain.teacher=heuristic:fast", "pretrain.hands=2000000",
        "pretrain.workers=2", "--no-progress",
    ]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    try:
        workers: set[int] = set()
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            # the spawn pool: two workers (and the resource tracker) under the training process
            workers = _children(proc.pid)
            if len(workers) >= 2:
                break
            time.sleep(0.5)
        assert proc.poll() is None, proc.communicate()
        assert len(workers) >= 2, "the data phase did not start its workers"
        time.sleep(2.0)  # the workers are playing
        os.kill(proc.pid, signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 143, err
        assert "terminated" in err
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and any(_alive(w) for w in workers):
            time.sleep(0.2)
        assert not [w for w in workers if _alive(w)], "workers outlived the terminated training"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


def test_forked_workers_shut_down_quietly() -> None:
    """Fork pool workers inherit the SIGTERM handler; the pool's shutdown ends them without tracebacks."""
    cmd = [sys.executable, "-m", "tonk_cli.main", "eval", "random", "heuristic:greedy", "--hands", "400",
           "--workers", "2", "--seed", "3"]  # fmt: skip
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert res.returncode == 0, res.stderr
    assert "Traceback" not in res.stderr and "Terminated" not in res.stderr, res.stderr
