"""A fixed seed and thread count give the same agent: two short trainings, identical weights."""

from __future__ import annotations

import hashlib
import json
import zipfile
from pathlib import Path

from tiny import TINY

from tonk_cli.main import main

ROOT = Path(__file__).resolve().parents[1]


def _train(out: Path, seed: int) -> str:
    """Train the tiny budget with ``seed``; the sha256 of the final checkpoint's policy weights."""
    rc = main(
        ["train", str(ROOT / "configs/quick.yaml"), *TINY, f"seed={seed}", f"out_dir={out}", "--no-progress"]
    )
    assert rc == 0
    (run,) = out.iterdir()
    with zipfile.ZipFile(run / "checkpoints" / "step_512.zip") as z:
        weights = z.read("policy.pth")
    evals = [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines() if '"eval"' in x]
    scores = json.dumps([(e["step"], e["results"]) for e in evals], sort_keys=True)  # not the wall times
    return hashlib.sha256(weights + scores.encode()).hexdigest()


def test_same_seed_same_weights_other_seed_other_weights(tmp_path: Path) -> None:
    first = _train(tmp_path / "a", seed=5)
    assert _train(tmp_path / "b", seed=5) == first
    assert _train(tmp_path / "c", seed=6) != first
