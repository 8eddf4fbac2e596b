"""The Ray backend plays the same matches as the local one (skipped when Ray is not installed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")

from eval.tournament import TournamentConfig, run_tournament  # noqa: E402 - must follow importorskip

STRIP = ("elapsed_s", "host", "pid", "finished_at", "backend")


def _records(folder: Path) -> dict[str, dict]:
    out = {}
    for line in (folder / "results.jsonl").read_text().splitlines():
        rec = json.loads(line)
        out[rec["key"]] = {k: v for k, v in rec.items() if k not in STRIP}
    return out


def test_ray_and_local_backends_agree(tmp_path: Path) -> None:
    base = {
        "entrants": ["random", "heuristic:greedy", "heuristic:greedy?drop_at=3"],
        "hands": 16,
        "bootstrap": 100,
        "seed": 11,
    }
    local = run_tournament(TournamentConfig.from_dict(base), out=tmp_path / "local", plots=False)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        # half the matches, then the rest: resuming on Ray mixes with results already there
        cfg = TournamentConfig.from_dict({**base, "backend": "ray"})
        first = run_tournament(cfg, out=tmp_path / "ray", stop_after=1, plots=False)
        rest = run_tournament(cfg, out=tmp_path / "ray", plots=False)
    finally:
        ray.shutdown()
    assert first.matches_played == 1 and rest.matches_played == 2 and rest.complete
    assert _records(tmp_path / "local") == _records(tmp_path / "ray")
    assert json.loads((tmp_path / "local" / "ratings.json").read_text()) == json.loads(
        (tmp_path / "ray" / "ratings.json").read_text()
    )
    assert all(
        json.loads(x)["backend"] == "ray"
        for x in (tmp_path / "ray" / "results.jsonl").read_text().splitlines()
    )
    assert local.complete
