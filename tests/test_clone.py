"""``tonk clone``: a policy network fitted to another agent's decisions (train/clone.py)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from tiny import tiny_net

from agents.registry import make_agent
from tonk_cli.main import main
from tonk_env.engine import make_rules, new_game
from tonk_env.play import play, start_hand
from train.clone import CloneSettings, clone, start_spec

RULES = make_rules("standard")


def test_a_clone_learns_its_teachers_moves_the_same_way_every_time(tmp_path: Path) -> None:
    start = tiny_net(tmp_path / "start.npz")
    settings = CloneSettings(
        teacher="heuristic:greedy",
        start=start,
        hands=80,
        epochs=30,
        learning_rate=1e-2,
        workers=1,
        seed=3,
        opponents={"random": 1.0, "heuristic:greedy": 1.0},
    )
    report = clone(settings, tmp_path / "a.npz", progress=False)
    assert report["decisions"] > 150 and report["held_out"] > 15
    assert report["agreement"] > report["agreement_before"] + 0.2  # it learned the greedy's moves
    settings.workers = 2
    again = clone(settings, tmp_path / "b.npz", progress=False)  # more workers, the same data and fit
    digest = [hashlib.sha256((tmp_path / f).read_bytes()).hexdigest() for f in ("a.npz", "b.npz")]
    assert digest[0] == digest[1] and again["agreement"] == report["agreement"]
    agent = make_agent(f"npz:{tmp_path / 'a.npz'}", seed=0)
    assert agent.meta["clone_of"] == "heuristic:greedy"  # type: ignore[attr-defined]
    seats = [agent, make_agent("random", seed=1)]
    start_hand(seats, 2, RULES)
    play(new_game(RULES, 2, seed=1), seats)  # it plays legal moves at the table


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["nonsense:x"], "teacher 'nonsense:x': unknown agent kind"),
        (["random", "--opponents", "{bogus:1: 1}"], "--opponents 'bogus:1': unknown agent kind"),
        (["random", "--opponents", "{random: 0}"], "weights >= 0 with a positive sum"),
        (["random", "--opponents", "[1, 2]"], "a mapping of agent specs to weights is needed"),
        (["random", "--start", "heuristic:greedy"], "--start 'heuristic:greedy' is not a policy network"),
        (["random", "--rules", "hit_penalty", "--start", "zoo:2p"], "--start 'zoo:2p': .*rules hash"),
    ],
)
def test_bad_options_are_named_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    assert main(["clone", *argv, "--out", str(tmp_path / "c.npz"), "--hands", "4", "--no-progress"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 or "usage" in err[0]
    import re

    assert re.search(message, err[-1])
    assert not (tmp_path / "c.npz").exists()


def test_the_command_writes_the_clone_and_says_how_to_play_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "c.npz"
    assert (
        main(
            [
                "clone",
                "heuristic:greedy",
                "--out",
                str(out),
                "--hands",
                "20",
                "--epochs",
                "1",
                "--workers",
                "1",
                "--no-progress",
            ]
        )
        == 0
    )
    said = capsys.readouterr().out
    assert f"play it as npz:{out}" in said and out.exists() and out.with_suffix(".npz.sha256").exists()
    assert main(["clone", "random", "--out", str(tmp_path / "c.txt"), "--hands", "4"]) == 2
    assert "a .npz file name is needed" in capsys.readouterr().err


def test_the_default_start_is_the_zoos_agent_for_the_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for players, rules, entry in [
        (2, "standard", "zoo:2p"),
        (3, "standard", "zoo:3p"),
        (2, "hit_penalty", "zoo:hit_penalty"),
    ]:
        settings = CloneSettings(teacher="random", players=players, rules=rules)
        assert start_spec(settings, make_rules(rules)) == entry
    assert start_spec(CloneSettings(teacher="random", start="npz:x.npz"), RULES) == "npz:x.npz"
    monkeypatch.setenv("TONK_ZOO_DIR", str(tmp_path))  # an empty zoo: no agent for any table
    assert (
        main(["clone", "random", "--rules", "hit_penalty", "--out", str(tmp_path / "c.npz"), "--hands", "4"])
        == 2
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["tonk clone: error: --start: the zoo has no agent for 2 players and rules 'hit_penalty'; "
                   "name the network to start from, e.g. --start npz:FILE"]  # fmt: skip
