"""The engine's command-line faces: ``tonk rules``, ``tonk bench engine``, ``tonk demo``."""

from __future__ import annotations

import json

import pytest

from tonk_cli.main import main
from tonk_env.engine import OPTION_NAMES, make_rules


def test_rules_prints_options_hash_and_actions(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules", "--actions"]) == 0
    out = capsys.readouterr().out
    assert make_rules().hash in out
    for name in OPTION_NAMES:
        assert name in out
    assert "action table: 540 actions" in out
    for block in ("drop", "draw", "take", "discard", "hit_book", "hit_run_high", "hit_run_low", "spread_book",
                  "spread_run"):  # fmt: skip
        assert block in out


def test_rules_preset_and_set(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules", "--preset", "seven_card", "--set", "ace_high=on", "--actions"]) == 0
    out = capsys.readouterr().out
    assert make_rules("seven_card", ace_high=True).hash in out
    assert "action table: 580 actions" in out


@pytest.mark.parametrize(
    "argv, names",
    [
        (["rules", "--set", "hand_size=6"], ["hand_size", "5 or 7"]),
        (["rules", "--set", "upcard=maybe"], ["upcard"]),
        (["rules", "--set", "hand_sise=5"], ["hand_sise"]),
        (["rules", "--set", "hand_size"], ["option=value"]),
        (["rules", "--preset", "nope"], ["nope", "standard"]),
    ],
)
def test_rules_errors_exit_2_and_name_the_option(
    argv: list[str], names: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("tonk rules: error: ")
    for word in names:
        assert word in err


def test_bench_engine_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "engine", "--trials", "1", "--seconds", "0.2", "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["benchmark"] == "engine" and res["trials"] == 1 and res["num_players"] == 2
    assert res["decisions_per_s"] > 0 and res["hands_per_s"] > 0  # measured, never asserted as a speed
    assert len(res["decisions_per_s_trials"]) == 1


def test_bench_engine_text_with_obs(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "engine", "--trials", "1", "--seconds", "0.05", "--with-obs", "--players", "3",
                 "--rules", "low_tonk"]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert "decisions/s" in out and "hands/s" in out and "with observations" in out


def test_demo_prints_a_finished_hand(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert "seed 3" in out
    assert "Hand over after" in out and "Payoffs (stakes): seat 0:" in out
    assert main(["demo", "--seed", "3"]) == 0
    assert capsys.readouterr().out == out  # the same seed, the same hand


def test_demo_other_rules(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(["demo", "--seed", "1", "--players", "4", "--rules", "full_waiting", "--set", "max_turns=10"])
        == 0
    )
    out = capsys.readouterr().out
    assert "Hand over after" in out and "seat 3:" in out
