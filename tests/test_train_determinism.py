"""A fixed seed and thread count give the same agent: two short trainings, identical weights.

One of the two trainings runs in a fresh process with another ``PYTHONHASHSEED``, as two
``make run``s do: an ordering that follows string hashes or state left by an earlier run
in the same process would make them differ.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

from tiny import TINY

from tonk_cli.main import main

ROOT = Path(__file__).resolve().parents[1]


def _args(out: Path, seed: int, progress: bool = False) -> list[str]:
    """The ``tonk`` arguments of a tiny training of quick.yaml with ``seed`` into ``out``."""
    args = ["train", str(ROOT / "configs/quick.yaml"), *TINY, f"seed={seed}", f"out_dir={out}"]
    return args if progress else [*args, "--no-progress"]


def _fingerprint(out: Path) -> str:
    """The sha256 of the run's final policy weights and its evaluation scores (not the wall times)."""
    (run,) = out.iterdir()
    with zipfile.ZipFile(run / "checkpoints" / "step_512.zip") as z:
        weights = z.read("policy.pth")
    evals = [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines() if '"eval"' in x]
    assert evals, "the tiny budget evaluates during training"
    scores = json.dumps([(e["step"], e["results"]) for e in evals], sort_keys=True)
    return hashlib.sha256(weights + scores.encode()).hexdigest()


def _train_here(out: Path, seed: int) -> str:
    """Train in this process; the run's fingerprint."""
    assert main(_args(out, seed)) == 0
    return _fingerprint(out)


def _train_apart(out: Path, seed: int) -> str:
    """Train in a new process whose string hashes differ from this one's; the run's fingerprint.

    Its progress goes to a pipe, as to a log file: whole lines, never a bar's carriage returns,
    and the same weights as without it.
    """
    hash_seed = "1" if os.environ.get("PYTHONHASHSEED") != "1" else "2"
    proc = subprocess.run(
        [sys.executable, "-m", "tonk_cli.main", *_args(out, seed, progress=True)],
        cwd=ROOT,
        env={**os.environ, "PYTHONHASHSEED": hash_seed},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "\r" not in proc.stderr and "train quick: 100% 512/512 step [" in proc.stderr, proc.stderr
    return _fingerprint(out)


def test_same_seed_same_weights_other_seed_other_weights(tmp_path: Path) -> None:
    first = _train_here(tmp_path / "a", seed=5)
    (run,) = (tmp_path / "a").iterdir()
    info = json.loads((run / "run.json").read_text())  # what else the agent depends on is recorded
    assert {"torch", "numpy", "stable_baselines3", "sb3_contrib"} <= set(info["versions"])
    assert info["torch_cpu_capability"]
    assert _train_apart(tmp_path / "b", seed=5) == first
    assert _train_here(tmp_path / "c", seed=6) != first
