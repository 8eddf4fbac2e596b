"""Every input is bounded: payouts and counts have ranges, numbers are ASCII digits, one seed rule,
overrides after flags, no echo of a huge line, and multi-line library errors become one line."""

from __future__ import annotations

import io
import json
import math
import zipfile
from pathlib import Path

import pytest
import torch

from agents.checkpoint import FORMAT, META_NAME
from agents.registry import make_agent
from frontends.table import Table
from frontends.terminal import play_terminal
from tonk_cli.main import _parse, build_parser, main
from tonk_env.engine import make_rules, parse_assignments
from tonk_env.engine.rules import MAX_PAY, MAX_TURNS
from tonk_env.errors import MAX_YAML_BYTES, read_yaml
from tonk_env.obs import OBS_VERSION
from train.config import load_config

ROOT = Path(__file__).resolve().parents[1]
ALL_TOTALS = ",".join(str(t) for t in range(1, 51))


@pytest.mark.parametrize(
    ("item", "option", "allowed"),
    [
        ("instant_win_pay=1e308", "instant_win_pay", f"0..{MAX_PAY}"),
        ("tonk_out_pay=1001", "tonk_out_pay", f"0..{MAX_PAY}"),
        ("run_out_pay=-1", "run_out_pay", f"0..{MAX_PAY}"),
        ("instant_win_pay=nan", "instant_win_pay", "a number"),
        ("max_turns=10001", "max_turns", f"1..{MAX_TURNS}"),
        ("hit_wait=\u0661", "hit_wait", "an int"),  # Arabic-Indic one
    ],
)
def test_numeric_rules_options_have_ranges(item: str, option: str, allowed: str) -> None:
    with pytest.raises(ValueError, match=rf"rules option {option}=.* allowed: .*{allowed}") as e:
        make_rules("standard", **parse_assignments([item]))
    assert "\n" not in str(e.value) and len(str(e.value)) < 200


def test_the_largest_payouts_keep_the_running_score_finite() -> None:
    rules = make_rules(
        "standard",
        instant_win_pay=MAX_PAY,
        instant_win_totals=tuple(range(20, 51)),
        instant_win_tie="rank",
        tonk_out_pay=MAX_PAY,
        run_out_pay=MAX_PAY,
    )
    for players in (2, 6):
        table = Table(rules, players, humans=(), specs=["random"], seed=1)
        for _ in range(100):
            s = table.deal()
            table.run_agents(s)
            table.score(s)
        assert all(math.isfinite(v) for v in table.scores)
        json.dumps(table.scores, allow_nan=False)  # the server's JSON: never null
        assert max(abs(v) for v in table.scores) >= MAX_PAY  # the largest payouts were paid


def test_eval_refuses_a_huge_payout_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["eval", "random", "random", "--hands", "4", "--set", "instant_win_pay=1e308"]
    assert main([*args, "--set", f"instant_win_totals={ALL_TOTALS}"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "instant_win_pay" in err and f"0..{MAX_PAY}" in err


def test_spec_parameters_take_only_ascii_digits() -> None:
    with pytest.raises(ValueError, match="samples='\u0661\u0660\u0660' is not an int"):
        make_agent("heuristic:expert?samples=\u0661\u0660\u0660")
    make_agent("heuristic:expert?samples=100")


@pytest.mark.parametrize(
    ("argv", "shown"),
    [
        (["eval", "random", "--hands", "99999999999999999999999"], "allowed: 1..10,000,000"),
        (["eval", "random", "--hands", "\u0661\u0660\u0660"], "not an integer"),
        (["eval", "random", "--seed", "-1"], "allowed: 0..4,294,967,295"),
        (["eval", "random", "--workers", "0"], "allowed: 1..256"),
        (["play", "--hands", "-1"], "allowed: 0..10,000,000"),
        (["tournament", "random", "heuristic:greedy", "--hands", "0"], "allowed: 1..10,000,000"),
    ],
)
def test_counts_and_seeds_have_ranges(
    argv: list[str], shown: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    assert shown in capsys.readouterr().err


def test_train_refuses_a_negative_seed_as_eval_does() -> None:
    with pytest.raises(ValueError, match=r"seed.*0, 4294967295"):
        load_config(str(ROOT / "configs/quick.yaml"), ["seed=-1"])


@pytest.mark.parametrize(
    "argv",
    [
        ["train", "configs/quick.yaml", "--no-progress", "total_steps=10", "n_envs=2"],
        ["train", "configs/quick.yaml", "total_steps=10", "--no-progress", "n_envs=2"],
        ["train", "--no-progress", "configs/quick.yaml", "total_steps=10", "n_envs=2"],
    ],
)
def test_overrides_and_flags_come_in_any_order(argv: list[str]) -> None:
    args = _parse(build_parser(), argv)
    assert args.config == "configs/quick.yaml" and args.no_progress
    assert args.overrides == ["total_steps=10", "n_envs=2"]


def test_other_commands_with_overrides_take_them_after_flags() -> None:
    args = _parse(build_parser(), ["exploit", "random", "--steps", "100", "n_envs=2"])
    assert args.overrides == ["n_envs=2"] and args.steps == 100
    with pytest.raises(SystemExit):
        _parse(build_parser(), ["train", "configs/quick.yaml", "--no-progress", "--bogus"])


def test_play_never_echoes_a_huge_line() -> None:
    out = io.StringIO()
    play_terminal(io.StringIO("x" * 100_000 + "\nquit\n"), out, make_rules("standard"), seed=3, width=80)
    text = out.getvalue()
    assert "100,000 characters" in text
    assert max(len(line) for line in text.splitlines()) < 300


class _Payload:
    def __reduce__(self) -> tuple[object, tuple[str, str]]:
        return (open, ("/nonexistent/pwned", "w"))


def test_torchs_refusal_is_one_line_without_its_advice(tmp_path: Path) -> None:
    ckpt = tmp_path / "run.zip"
    buf = io.BytesIO()
    torch.save({"w": _Payload()}, buf)
    meta = {"format": FORMAT, "obs_version": OBS_VERSION, "num_players": 2}
    with zipfile.ZipFile(ckpt, "w") as z:
        z.writestr(META_NAME, json.dumps(meta))
        z.writestr("policy.pth", buf.getvalue())
    with pytest.raises(ValueError) as e:
        make_agent(f"ppo:{ckpt}")
    text = str(e.value)
    assert "\n" not in text and "weights_only=False" not in text
    assert "pickled objects" in text and "nothing in it was run" in text


def test_a_yaml_error_is_one_line_naming_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("a: [1, 2\nb: 3\n")
    with pytest.raises(ValueError) as e:
        load_config(str(bad), [])
    text = str(e.value)
    assert "\n" not in text and str(bad) in text and "line 2" in text


def test_a_table_takes_the_one_seed_rule() -> None:
    with pytest.raises(ValueError, match=r"seed must be an integer 0\.\.4294967295"):
        Table(make_rules("standard"), 2, humans=(0,), specs=["random"], seed=-1)
    Table(make_rules("standard"), 2, humans=(0,), specs=["random"], seed=2**32 - 1)


def test_every_yaml_file_is_read_by_one_bounded_reader(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    big = tmp_path / "big.yaml"
    big.write_text("# " + "x" * MAX_YAML_BYTES + "\nseed: 1\n")
    with pytest.raises(ValueError, match=r"^config file \S*big.yaml is larger than the 1,048,576 bytes"):
        load_config(big)
    bad = tmp_path / "tournament.yaml"
    bad.write_text("entrants: [random,\n")
    assert main(["tournament", str(bad)]) == 2  # the tournament's config: the same reader, one line
    err = capsys.readouterr().err.strip()
    assert "tournament.yaml is not valid YAML" in err and "line 2" in err and "\n" not in err
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "config.yaml").write_text("!!python/object/apply:os.system ['echo ran']\n")
    with pytest.raises(ValueError, match=r"config.yaml is not valid YAML: could not determine a constructor"):
        read_yaml(folder / "config.yaml")  # the safe loader: no tag runs code
