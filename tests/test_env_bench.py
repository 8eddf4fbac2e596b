"""The env benchmark runs and reports its keys (figures are measured, never asserted)."""

from __future__ import annotations

import json

import pytest

from tonk_cli.main import main
from tonk_env.bench import bench_env


def test_bench_env_reports_its_figures() -> None:
    res = bench_env("standard", 3, trials=1, seconds=0.05, vector_steps=5)
    for key in ("aec_steps_per_s", "single_agent_steps_per_s", "wrapped_nop_steps_per_s"):
        assert res[key] > 0
    assert res["aec_decisions_per_s"] <= res["aec_steps_per_s"]
    assert set(res["vector_decisions_per_s_by_players"]) == {"2", "3", "4", "6"}
    assert res["vector_decisions_per_s"] == res["vector_decisions_per_s_by_players"]["3"] > 0
    assert res["vector_cost_6p_vs_2p"] > 0
    pyspiel = pytest.importorskip("pyspiel")
    assert pyspiel is not None and res["openspiel_gin_decisions_per_s"] > 0
    assert res["aec_vs_openspiel"] == pytest.approx(
        res["aec_decisions_per_s"] / res["openspiel_gin_decisions_per_s"], rel=1e-9
    )  # one trial: the ratio of the medians is the median of the ratios


def test_tonk_bench_env_json(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["bench", "env", "--json", "--trials", "1", "--seconds", "0.05", "--rules", "seven_card"]
    assert main(argv) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["rules"] == "seven_card" and res["aec_steps_per_s"] > 0 and res["single_agent_steps_per_s"] > 0
