"""The env benchmark runs and reports its keys (figures are measured, never asserted)."""

from __future__ import annotations

import json

import pytest

from tonk_cli.main import main
from tonk_env.bench import bench_env


def test_bench_env_reports_its_figures() -> None:
    res = bench_env("standard", 3, trials=1, seconds=0.05)
    for key in ("aec_steps_per_s", "single_agent_steps_per_s", "aec_raw_steps_per_s"):
        assert res[key] > 0
    assert res["wrapped_nop_steps_per_s"] > 0
    assert res["aec_decisions_per_s"] <= res["aec_steps_per_s"]


def test_tonk_bench_env_json(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["bench", "env", "--json", "--trials", "1", "--seconds", "0.05", "--rules", "seven_card"]
    assert main(argv) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["rules"] == "seven_card" and res["aec_steps_per_s"] > 0 and res["single_agent_steps_per_s"] > 0
