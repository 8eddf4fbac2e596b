"""The env benchmark runs and reports its keys (figures are measured, never asserted)."""

from __future__ import annotations

import json

import pytest

from tonk_cli.main import main
from tonk_env.bench import bench_env, vector_env_decisions_per_s


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


@pytest.mark.parametrize("api", ["gym", "arrays"])
def test_vector_env_benchmark_runs(api: str) -> None:
    assert vector_env_decisions_per_s(games=4, steps=3, players=2, api=api) > 0


def test_tonk_bench_env_json(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["bench", "env", "--json", "--trials", "1", "--seconds", "0.05", "--rules", "seven_card"]
    assert main(argv) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["rules"] == "seven_card" and res["aec_steps_per_s"] > 0 and res["single_agent_steps_per_s"] > 0


def test_tonk_bench_exact(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "exact", "--hands", "61", "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["hands"] == 61 and res["mismatches"] == 0 and res["players"] == [2, 3, 4, 5, 6]
    assert res["configurations"] == 30 and len(res["presets"]) == 6
    assert main(["bench", "exact", "--hands", "20", "--only-rules", "--rules", "low_tonk"]) == 0
    assert "core == engine on 20 hands" in capsys.readouterr().out
    assert main(["bench", "exact", "--hands", "0"]) == 2
    assert "argument --hands: '0' is out of range; allowed: 1..10,000,000" in capsys.readouterr().err


def test_tonk_bench_exact_reports_a_mismatch(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import tonk_env.core as core

    def broken(*args: object, **kwargs: object) -> dict[str, object]:
        raise core.CoreMismatchError("legal sets differ: core [1], engine [0, 1]")

    monkeypatch.setattr(core, "exact_check", broken)
    assert main(["bench", "exact", "--hands", "5"]) == 1
    out = capsys.readouterr().out
    assert "MISMATCH in standard, 2 players (seed 0)" in out and "legal sets differ" in out


def test_vector_env_benchmark_takes_an_opponent() -> None:
    assert (
        vector_env_decisions_per_s(games=4, steps=3, players=2, api="arrays", opponents="heuristic:greedy")
        > 0
    )
