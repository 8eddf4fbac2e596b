"""The commands agree: ``--no-progress`` on every long command, distinct labels for repeated agents,
recorded hands from ``tonk eval --record`` and tournaments' sample hands."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from eval.duplicate import distinct_labels, evaluate
from eval.report import format_table
from eval.tournament import TournamentConfig, run_tournament
from tonk_cli.main import build_parser, main
from tonk_env.engine import replay

#: every command that can run for minutes, with the arguments it needs to parse
LONG_COMMANDS = {
    "eval": ["eval", "random"],
    "tournament": ["tournament", "random", "heuristic:greedy"],
    "train": ["train", "configs/quick.yaml"],
    "pipeline": ["pipeline"],
    "exploit": ["exploit", "random"],
    "zoo add": ["zoo", "add", "runs/x", "--name", "x"],
    "bench exact": ["bench", "exact"],
}


@pytest.mark.parametrize("name", sorted(LONG_COMMANDS))
def test_every_long_command_takes_no_progress(name: str) -> None:
    args = build_parser().parse_args([*LONG_COMMANDS[name], "--no-progress"])
    assert args.no_progress is True


def _pretend_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make stderr look like a terminal, where the commands would draw their bars."""
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)


def test_eval_draws_a_bar_on_a_terminal_and_none_with_no_progress(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _pretend_terminal(monkeypatch)
    assert main(["eval", "random", "--hands", "40"]) == 0
    assert "tonk eval" in capsys.readouterr().err  # the bar's description
    assert main(["eval", "random", "--hands", "40", "--no-progress"]) == 0
    assert "tonk eval" not in capsys.readouterr().err


def test_tournament_no_progress_keeps_the_log_but_no_bar(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _pretend_terminal(monkeypatch)
    argv = ["tournament", "random", "heuristic:greedy", "--hands", "8", "--bootstrap", "10"]
    assert main([*argv, "--out", str(tmp_path / "a"), "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert "tournament " in err and "to play" in err  # the plan line stays
    assert "tonk tournament" not in err  # the bar's description
    assert main([*argv, "--out", str(tmp_path / "b")]) == 0
    assert "tonk tournament" in capsys.readouterr().err


def test_repeated_agents_get_distinct_labels(capsys: pytest.CaptureFixture[str]) -> None:
    assert distinct_labels(["a", "b", "a", "a"]) == ["a#1", "b", "a#2", "a#3"]
    assert distinct_labels(["a", "b"]) == ["a", "b"]
    res = evaluate(["heuristic:greedy", "heuristic:greedy", "random"], hands=6, players=3, seed=1)
    table = format_table(res)
    rows = [line.split()[0] for line in table.splitlines()[4:7]]
    assert rows == ["heuristic:greedy#1", "heuristic:greedy#2", "random"]
    assert (
        main(
            [
                "eval",
                "heuristic:greedy",
                "heuristic:greedy",
                "random",
                "--players",
                "3",
                "--hands",
                "6",
                "--json",
            ]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert [a["label"] for a in out["agents"]] == ["heuristic:greedy#1", "heuristic:greedy#2", "random"]
    assert [a["spec"] for a in out["agents"]] == ["heuristic:greedy", "heuristic:greedy", "random"]


def test_eval_records_hands_that_replay_to_their_payoffs(tmp_path: Path) -> None:
    one = evaluate(["heuristic:greedy", "random"], hands=20, seed=3, record=5)
    assert len(one.records) == 5
    for rec in one.records:
        s = replay(rec)  # checks the stored result too
        assert s.result is not None and list(s.result.payoffs) == rec["result"]["payoffs"]
        assert sorted(rec["seats"]) == ["heuristic:greedy", "random"]
    # the deals of one group, both seatings: the same deck, the agents swapped
    assert one.records[0]["deck"] == one.records[1]["deck"]
    assert one.records[0]["seats"] == one.records[1]["seats"][::-1]
    # the same hands with other workers, and the results do not change by recording
    two = evaluate(["heuristic:greedy", "random"], hands=20, seed=3, record=5, workers=2)
    plain = evaluate(["heuristic:greedy", "random"], hands=20, seed=3)
    assert two.records == one.records and plain.records == []
    assert plain.group_payoffs == one.group_payoffs
    with pytest.raises(ValueError, match="record must be an int >= 0"):
        evaluate(["random"], hands=2, record=-1)


def test_eval_record_cli_writes_json_lines(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "sub" / "hands.jsonl"
    assert main(["eval", "random", "--hands", "10", "--record", str(out), "--record-hands", "3"]) == 0
    lines = out.read_text().splitlines()
    assert len(lines) == 3 and all(replay(json.loads(x)).result for x in lines)
    assert "recorded 3 hand(s)" in capsys.readouterr().err
    assert (
        main(["eval", "random", "--record", str(tmp_path), "--hands", "2"]) == 2
    )  # a folder: refused at once
    assert f"cannot write the hand records to {tmp_path}" in capsys.readouterr().err
    assert main(["eval", "random", "--record", str(out), "--record-hands", "-1"]) == 2
    assert "argument --record-hands: '-1' is out of range; allowed: 0..10,000,000" in capsys.readouterr().err


def test_tournament_writes_sample_hands_per_match(tmp_path: Path) -> None:
    cfg = TournamentConfig.from_dict(
        {
            "entrants": ["random", "heuristic:greedy", "heuristic:greedy?drop_at=3"],
            "hands": 8,
            "bootstrap": 10,
            "sample_hands": 3,
        }  # fmt: skip
    )
    res = run_tournament(cfg, out=tmp_path / "t", plots=False)
    files = sorted((res.folder / "hands").glob("*.jsonl"))
    assert len(files) == 3  # one per match
    for f in files:
        recs = [json.loads(x) for x in f.read_text().splitlines()]
        assert len(recs) == 3 and all(replay(r).result for r in recs)
    board = (res.folder / "leaderboard.md").read_text()
    assert "## Sample hands" in board and f"hands/{files[0].name}" in board
    results = (res.folder / "results.jsonl").read_text()
    assert "sample_hands" not in results and '"deck"' not in results  # the hands stay out of the results
    with pytest.raises(ValueError, match=r"sample_hands=-1 is invalid; allowed: an int 0\.\.1000"):
        TournamentConfig.from_dict({"entrants": ["random"], "sample_hands": -1})


@pytest.mark.parametrize(
    ("argv", "status", "why"),
    [
        (["clone", "heuristic:greedy", "--out", "{bad}/c.npz", "--hands", "10"], 2, "cannot make the folder"),
        (["belief", "data", "--out", "{bad}/d.npz", "--hands", "10"], 2, "cannot make the folder"),
        (["luck", "fit", "{bad}/v.npz", "--hands", "10", "--no-progress"], 2, "cannot make the folder"),
        (["export", "zoo:2p", "--out", "{bad}/a.onnx"], 1, "Not a directory"),
    ],
    ids=["clone", "belief", "luck", "export"],
)
def test_a_folder_that_cannot_be_made_is_one_line(
    argv: list[str], status: int, why: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a file where the output folder would go: these commands said so with a traceback, clone, belief
    # data and luck fit after their work (now before it); tonk train's config check refuses it first
    (tmp_path / "a_file").write_text("")
    bad = str(tmp_path / "a_file" / "out")
    assert main([a.replace("{bad}", bad) for a in argv]) == status
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"tonk {argv[0]}: error: ") and why in err, err


def test_a_reader_that_stops_early_ends_tonk_quietly(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``tonk rules | head -1``: no error line once the reader has gone; another broken pipe is one line."""
    import os
    import subprocess

    read, write = os.pipe()
    os.close(read)  # the reader has gone before tonk writes its first line
    proc = subprocess.run(
        [sys.executable, "-m", "tonk_cli.main", "rules"], stdout=write, stderr=subprocess.PIPE, text=True
    )
    os.close(write)
    assert (proc.returncode, proc.stderr) == (141, "")  # 128 + SIGPIPE, as a shell pipeline's writer ends

    def broken(args: object) -> int:  # a worker's pipe, say: stdout is fine
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr("tonk_cli.main.cmd_rules", broken)
    assert main(["rules"]) == 1
    assert capsys.readouterr().err == "tonk rules: error: Broken pipe\n"
