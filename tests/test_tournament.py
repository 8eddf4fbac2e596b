"""Tournaments: schedules, reproducibility, resume (after SIGKILL too), no double counts, CLI, checkpoints."""

from __future__ import annotations

import itertools
import json
import math
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from tiny import TINY_NO_EVAL

from eval.tournament import (
    TournamentConfig,
    balanced_tables,
    expand_specs,
    load_saved,
    match_seed,
    read_results,
    repair_results,
    run_tournament,
    schedule,
)
from eval.tournament.store import FILES, HANDS
from tonk_cli.main import main

ROOT = Path(__file__).resolve().parents[1]
CHEAP = ["random", "heuristic:greedy", "heuristic:greedy?drop_at=3", "heuristic:greedy?drop_at=14"]


def _cfg(**kw) -> TournamentConfig:
    base = {"entrants": CHEAP, "hands": 24, "bootstrap": 100}
    base.update(kw)
    return TournamentConfig.from_dict(base)


def _ratings(folder: Path) -> list[dict]:
    return json.loads((folder / "ratings.json").read_text())


def _lines(folder: Path) -> list[str]:
    return (folder / "results.jsonl").read_text().splitlines()


# --- schedules ----------------------------------------------------------------------------------


def test_round_robin_and_gauntlet_schedules() -> None:
    ents = ["a", "b", "c", "d", "e"]
    pairs = schedule(ents, 2)
    assert len(pairs) == 10 and len(set(pairs)) == 10 and all(t == tuple(sorted(t)) for t in pairs)
    for k in (3, 4):
        tables = schedule(ents, k)
        counts = Counter(p for t in tables for p in itertools.combinations(t, 2))
        assert len(counts) == 10 and len(set(counts.values())) == 1  # every pair equally often
    g = schedule(["x", "y", "a", "b"], 2, "gauntlet", fixed=["a", "b"])
    assert sorted(g) == [("a", "x"), ("a", "y"), ("b", "x"), ("b", "y")]
    g3 = schedule(["x", "a", "b", "c"], 3, "gauntlet", fixed=["a", "b", "c"])
    assert sorted(g3) == [("a", "b", "x"), ("a", "c", "x"), ("b", "c", "x")]
    with pytest.raises(ValueError, match="fixed agents"):
        schedule(["x", "a"], 3, "gauntlet", fixed=["a"])


def test_balanced_design_when_subsets_are_too_many() -> None:
    ents = [f"e{i:02d}" for i in range(12)]
    tables = schedule(ents, 4, max_tables=60)
    assert len(set(tables)) == len(tables) and all(len(set(t)) == 4 for t in tables)
    counts = Counter(p for t in tables for p in itertools.combinations(t, 2))
    assert len(counts) == 66
    lam = math.ceil(60 * 6 / 66)
    assert min(counts.values()) >= lam and max(counts.values()) <= lam + 3
    # extending keeps the earlier tables (an added entrant does not reshuffle the design)
    more = balanced_tables([*ents, "e12"], 4, 60, previous=tables)
    assert more[: len(tables)] == tables and any("e12" in t for t in more[len(tables) :])


def test_match_seed_depends_on_the_table_not_its_order() -> None:
    assert match_seed(0, ["b", "a"], 2, "h") == match_seed(0, ["a", "b"], 2, "h")
    assert match_seed(0, ["a", "b"], 2, "h") != match_seed(1, ["a", "b"], 2, "h")
    assert match_seed(0, ["a", "b"], 2, "h") != match_seed(0, ["a", "c"], 2, "h")


# --- playing ------------------------------------------------------------------------------------


def test_workers_do_not_change_results_and_outputs_exist(tmp_path: Path) -> None:
    r1 = run_tournament(_cfg(workers=1), out=tmp_path / "w1")
    r2 = run_tournament(_cfg(workers=2), out=tmp_path / "w2")
    assert r1.matches_played == r2.matches_played == 6
    assert _ratings(tmp_path / "w1") == _ratings(tmp_path / "w2")
    for name in (
        "results.jsonl",
        "tournament.json",
        "ratings.json",
        "leaderboard.md",
        "leaderboard.csv",
        "crosstable.csv",
        "ratings_by_step.png",
        "crosstable.png",
    ):
        assert (tmp_path / "w1" / name).is_file(), name
    entries = _ratings(tmp_path / "w1")
    assert {"spec", "rating", "ci95", "mean_stakes", "matches"} <= set(entries[0])
    assert [e["rank"] for e in entries] == [1, 2, 3, 4]
    assert all(e["matches"] == 3 for e in entries)
    by = {e["spec"]: e for e in entries}
    assert by["random"]["rating"] == 1000.0 and by["random"]["rank"] == 4
    assert by["heuristic:greedy"]["rating"] > 1100
    lo, hi = by["heuristic:greedy"]["ci95"]
    assert lo < by["heuristic:greedy"]["rating"] < hi
    # the same match gives the same record whichever worker played it
    strip = ("elapsed_s", "host", "pid", "finished_at")
    recs1 = {json.loads(x)["key"]: json.loads(x) for x in _lines(tmp_path / "w1")}
    recs2 = {json.loads(x)["key"]: json.loads(x) for x in _lines(tmp_path / "w2")}
    assert {k: {a: b for a, b in v.items() if a not in strip} for k, v in recs1.items()} == {
        k: {a: b for a, b in v.items() if a not in strip} for k, v in recs2.items()
    }
    md = (tmp_path / "w1" / "leaderboard.md").read_text()
    assert "heuristic:greedy" in md and "Crosstable" in md


def test_interrupted_then_resumed_equals_uninterrupted(tmp_path: Path) -> None:
    full = run_tournament(_cfg(), out=tmp_path / "full", plots=False)
    part = run_tournament(_cfg(), out=tmp_path / "part", stop_after=2, plots=False)
    assert part.matches_played == 2 and not part.complete
    # a torn last line, as a kill in the middle of a write leaves it
    with open(tmp_path / "part" / "results.jsonl", "ab") as f:
        f.write(b'{"key": "heuristic:greedy|random#pla')
    again = run_tournament(_cfg(), out=tmp_path / "part", plots=False)
    assert again.matches_reused == 2 and again.matches_played == 4 and again.complete
    assert _ratings(tmp_path / "part") == _ratings(tmp_path / "full")
    lines = _lines(tmp_path / "part")
    assert len(lines) == 6 and len({json.loads(x)["key"] for x in lines}) == 6
    assert full.complete


def test_duplicate_lines_are_never_counted_twice(tmp_path: Path) -> None:
    folder = tmp_path / "t"
    run_tournament(_cfg(), out=folder, plots=False)
    before = _ratings(folder)
    lines = _lines(folder)
    # the same results appended again (e.g. two copies of a file merged) and a broken line in the middle
    with open(folder / "results.jsonl", "a") as f:
        f.write("\n".join([lines[0], "not json", *lines[:3]]) + "\n")
    recs, bad = read_results(folder / "results.jsonl")
    assert len(recs) == 6 and bad == 1
    res = run_tournament(_cfg(), out=folder, plots=False)
    assert res.matches_played == 0 and res.matches_reused == 6
    assert _ratings(folder) == before


def test_a_second_run_into_a_busy_folder_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "busy"
    folder.mkdir()
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from pathlib import Path; from eval.tournament import folder_lock\n"
            "with folder_lock(Path(sys.argv[1])):\n    print('locked', flush=True); time.sleep(30)",
            str(folder),
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        with pytest.raises(ValueError, match="another tournament run"):
            run_tournament(_cfg(), out=folder, plots=False)
    finally:
        holder.kill()
        holder.wait()
    assert run_tournament(_cfg(entrants=CHEAP[:2]), out=folder, plots=False).complete  # free again


def test_repair_cuts_only_a_torn_last_line(tmp_path: Path) -> None:
    p = tmp_path / "r.jsonl"
    p.write_bytes(b'{"key": "a"}\n{"key": "b"}\n{"key": "c"')
    assert repair_results(p) == len(b'{"key": "c"')
    assert p.read_bytes() == b'{"key": "a"}\n{"key": "b"}\n'
    assert repair_results(p) == 0
    p.write_bytes(b'{"key"')
    repair_results(p)
    assert p.read_bytes() == b""


def test_adding_an_entrant_plays_only_its_matches(tmp_path: Path) -> None:
    folder = tmp_path / "t"
    first = run_tournament(_cfg(entrants=CHEAP[:3]), out=folder, plots=False)
    assert first.matches_played == 3
    second = run_tournament(_cfg(entrants=CHEAP), out=folder, plots=False)
    assert second.matches_reused == 3 and second.matches_played == 3
    assert _ratings(folder) == _ratings(run_tournament(_cfg(), out=tmp_path / "fresh", plots=False).folder)
    # other settings may not change in the same folder
    with pytest.raises(ValueError, match="hands=24"):
        run_tournament(_cfg(hands=30), out=folder)


def test_three_player_tables(tmp_path: Path) -> None:
    res = run_tournament(_cfg(players=3, hands=12), out=tmp_path / "p3", plots=False)
    assert res.matches_total == 4 and res.complete
    entries = _ratings(tmp_path / "p3")
    assert all(e["matches"] == 3 and math.isfinite(e["rating"]) for e in entries)
    assert {e["spec"]: e for e in entries}["random"]["rank"] == 4
    rec = json.loads(_lines(tmp_path / "p3")[0])
    assert len(rec["table"]) == 3 and len(rec["group_payoffs"][0]) == 3


def test_gauntlet(tmp_path: Path) -> None:
    cfg = _cfg(entrants=CHEAP[2:], format="gauntlet", fixed=["random", "heuristic:greedy"])
    res = run_tournament(cfg, out=tmp_path / "g", plots=False)
    assert res.matches_total == 4
    assert sorted(res.names) == sorted(CHEAP)


def test_config_errors(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown key 'hand'"):
        TournamentConfig.from_dict({"entrants": ["random"], "hand": 3})
    with pytest.raises(ValueError, match=r"players=5 is invalid; allowed: 2, 3 or 4"):
        TournamentConfig.from_dict({"entrants": ["random"], "players": 5})
    with pytest.raises(ValueError, match="matches no file"):
        expand_specs([f"ppo:{tmp_path}/*.zip"])
    with pytest.raises(ValueError, match="unknown agent"):
        expand_specs(["heuristic:nonesuch"])
    cfgfile = tmp_path / "tournament_bad.yaml"
    cfgfile.write_text("entrants: [random, heuristic:greedy]\nworkres: 2\n")
    assert main(["tournament", str(cfgfile)]) == 2


def test_cli_config_then_resume(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfgfile = tmp_path / "tournament_small.yaml"
    out = tmp_path / "cli"
    cfgfile.write_text(
        f"entrants: [random, heuristic:greedy, 'heuristic:greedy?drop_at=3']\nhands: 16\n"
        f"bootstrap: 50\nseed: 3\nout: {out}\n"
    )
    assert main(["tournament", str(cfgfile), "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "heuristic:greedy" in text and "3 matches played" in text and "crosstable" in text
    assert load_saved(out).seed == 3
    assert main(["tournament", "--resume", str(out), "--quiet", "--workers", "2"]) == 0
    assert "0 matches played" in capsys.readouterr().out
    assert main(["tournament", "--resume", str(out), "--hands", "5"]) == 2


def test_sigkill_loses_only_matches_in_flight(tmp_path: Path) -> None:
    entrants = [*CHEAP, "heuristic:greedy?drop_at=6"]
    args = ["tournament", *entrants, "--hands", "60", "--bootstrap", "100", "--quiet"]
    out = tmp_path / "killed"
    proc = subprocess.Popen(
        [sys.executable, "-m", "tonk_cli.main", *args, "--out", str(out)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    results = out / "results.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        if results.is_file() and results.read_bytes().count(b"\n") >= 2:
            break
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    kept = len(read_results(results)[0])
    assert kept >= 2
    assert main([*args[:1], "--resume", str(out), "--quiet"]) == 0
    lines = _lines(out)
    assert len({json.loads(x)["key"] for x in lines}) == len(lines) == 10
    ref = run_tournament(
        TournamentConfig.from_dict({"entrants": entrants, "hands": 60, "bootstrap": 100}),
        out=tmp_path / "ref",
        plots=False,
    )
    assert ref.complete and _ratings(out) == _ratings(tmp_path / "ref")


# --- checkpoints --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("runs")
    # a subprocess: torch threads stay out of this process, which forks worker pools
    subprocess.run(
        [
            sys.executable,
            "-m",
            "tonk_cli.main",
            "train",
            "configs/quick.yaml",
            *TINY_NO_EVAL,
            f"out_dir={out}",
            "--no-progress",
        ],
        cwd=ROOT,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    (run,) = [p for p in out.iterdir() if p.is_dir()]
    return run


def test_checkpoint_globs_ratings_by_step(run_dir: Path, tmp_path: Path) -> None:
    pattern = f"ppo:{run_dir}/checkpoints/*.zip"
    specs = expand_specs([pattern])
    assert [Path(s.split(":", 1)[1]).name for s in specs] == ["step_256.zip", "step_512.zip"]
    cfg = TournamentConfig.from_dict(
        {"entrants": ["random", "heuristic:greedy", pattern], "hands": 16, "bootstrap": 50}
    )
    res = run_tournament(cfg, out=tmp_path / "ck")
    by = {e["spec"]: e for e in _ratings(tmp_path / "ck")}
    assert by[specs[0]]["step"] == 256 and by[specs[1]]["step"] == 512
    assert by[specs[0]]["run"] == run_dir.name and by[specs[0]]["checkpoint"] is True
    assert by["random"]["checkpoint"] is False and by["random"]["step"] is None
    assert (tmp_path / "ck" / "ratings_by_step.png").stat().st_size > 10_000
    assert res.matches_total == 6
    # the match key carries the file's fingerprint: a replaced checkpoint is played again
    recs = list(read_results(tmp_path / "ck" / "results.jsonl")[0].values())
    assert any(fp for r in recs for fp in r["fingerprints"])
    # a 2-player checkpoint cannot sit at a 3-player table
    with pytest.raises(ValueError, match="trained for 2 players"):
        run_tournament(
            TournamentConfig.from_dict({"entrants": ["random", "heuristic:greedy", pattern], "players": 3}),
            out=tmp_path / "bad",
        )


def test_ray_backend_without_ray_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # as if Ray were not installed
    with pytest.raises(ValueError, match=r"pip install 'tonk-rl\[ray\]'"):
        run_tournament(_cfg(entrants=CHEAP[:2], backend="ray"), out=tmp_path / "noray", plots=False)


def test_a_results_line_missing_fields_is_reported_and_its_match_replayed(tmp_path: Path) -> None:
    full = run_tournament(_cfg(), out=tmp_path / "full", plots=False)
    folder = tmp_path / "t"
    run_tournament(_cfg(), out=folder, plots=False)
    lines = _lines(folder)
    broken = json.loads(lines[1])
    del broken["table"]  # valid JSON with the right key, but not a whole record
    (folder / "results.jsonl").write_text("\n".join([lines[0], json.dumps(broken), *lines[2:]]) + "\n")
    said: list[str] = []
    recs, bad = read_results(folder / "results.jsonl", warn=said.append)
    assert bad == 1 and len(recs) == 5 and "results.jsonl:2: skipped (missing table)" in said[0]
    again = run_tournament(_cfg(), out=folder, plots=False, log=said.append)
    assert again.matches_played == 1 and again.complete
    assert _ratings(folder) == _ratings(full.folder)


def test_results_file_replaced_by_a_folder_is_refused_before_playing(tmp_path: Path) -> None:
    folder = tmp_path / "t"
    run_tournament(_cfg(), out=folder, plots=False, stop_after=1)
    (folder / "results.jsonl").unlink()
    (folder / "results.jsonl").mkdir()
    with pytest.raises(ValueError, match="results.jsonl: not a file"):
        run_tournament(_cfg(), out=folder, plots=False)


def test_the_store_lists_every_file_a_run_writes(tmp_path: Path) -> None:
    run_tournament(_cfg(entrants=CHEAP[:2]), out=tmp_path / "t")
    names = {p.name for p in (tmp_path / "t").iterdir()}
    assert names == {*FILES, HANDS}  # so check_folder checks them all


@pytest.mark.parametrize("in_the_way", ["folder_is_a_file", "leaderboard.md", "tournament.json.tmp", ".lock"])
def test_store_paths_in_the_way_are_refused_before_playing(tmp_path: Path, in_the_way: str) -> None:
    folder = tmp_path / "t"
    if in_the_way == "folder_is_a_file":
        folder.write_text("not a folder\n")
        where = "t: not a folder"
    else:
        (folder / in_the_way).mkdir(parents=True)
        where = f"{in_the_way}: not a file"
    with pytest.raises(ValueError, match=where):
        run_tournament(_cfg(entrants=CHEAP[:2]), out=folder, plots=False)
    assert not (folder / "results.jsonl").exists()  # nothing played, nothing written
    if in_the_way == "folder_is_a_file":
        with pytest.raises(ValueError, match="t/sub: cannot make the tournament folder"):
            run_tournament(_cfg(entrants=CHEAP[:2]), out=folder / "sub", plots=False)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("[1, 2]", "a JSON list, not an object"),
        ('{"config": 3}', "its config is not an object"),
        ('{"schedule": [["random", 3]]}', "its schedule is not a list of tables"),
        ('{"runs": {}}', "its runs are not a list"),
        ('{"rules_hash": 5}', "its rules_hash is not a string"),
        ('{"config": ', "not valid JSON"),
        ("\udcff", "not valid JSON"),
    ],
)
def test_a_damaged_tournament_json_is_named_and_nothing_played(
    tmp_path: Path, text: str, problem: str
) -> None:
    folder = tmp_path / "t"
    run_tournament(_cfg(entrants=CHEAP[:3]), out=folder, plots=False, stop_after=1)
    before = _lines(folder)
    (folder / "tournament.json").write_bytes(text.encode("utf-8", "surrogateescape"))
    with pytest.raises(ValueError, match=f"tournament.json: {problem}"):
        run_tournament(_cfg(entrants=CHEAP[:3]), out=folder, plots=False)
    with pytest.raises(ValueError, match=f"tournament.json: {problem}"):
        load_saved(folder)  # tonk tournament --resume
    assert _lines(folder) == before


def test_a_saved_tournament_without_config_cannot_be_resumed(tmp_path: Path) -> None:
    folder = tmp_path / "t"
    run_tournament(_cfg(entrants=CHEAP[:2]), out=folder, plots=False)
    (folder / "tournament.json").write_text('{"schedule": []}\n')
    with pytest.raises(ValueError, match="tournament.json: no config in it"):
        load_saved(folder)


def test_cli_workers_bounded_and_the_used_number_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = str(tmp_path / "t")
    assert main(["tournament", *CHEAP[:2], "--hands", "8", "--out", out, "--workers", "10000"]) == 2
    assert "--workers: '10000' is out of range; allowed: 1..256" in capsys.readouterr().err
    assert not (tmp_path / "t").exists()
    assert main(["tournament", *CHEAP[:3], "--hands", "8", "--out", out, "--workers", "200", "--quiet"]) == 0
    assert "3 matches played" in (text := capsys.readouterr().out) and "3 worker(s)" in text
    assert main(["tournament", "--resume", out, "--workers", "200", "--quiet"]) == 0
    assert "0 matches played" in (text := capsys.readouterr().out) and "1 worker(s)" in text


def test_a_one_group_tournament_prints_no_nan_interval(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = str(tmp_path / "t")
    assert main(["tournament", *CHEAP[:2], "--hands", "1", "--out", out, "--quiet"]) == 0
    board = capsys.readouterr().out
    assert "stakes/hand" in board and "n/a" in board and "nan" not in board
    md = (tmp_path / "t" / "leaderboard.md").read_text()
    assert "n/a" in md and "nan" not in md
