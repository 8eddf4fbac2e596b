"""The zoo: shipped agents load, fit their cards and play legal moves; ``tonk zoo``; ``zoo:NAME`` specs.

The mechanism is tested on a tiny agent trained here and added to a temporary
zoo (``TONK_ZOO_DIR``); the shipped entries of ``agents/zoo/`` (however many
there are) are checked as they are.
"""

from __future__ import annotations

import json
import math
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from tiny import TINY_NO_EVAL

import agents.zoo
from agents.registry import check_spec, make_agent
from agents.zoo import ZOO_ENV, file_sha256, load_zoo_agent, read_card, zoo_names
from agents.zoo.card import headline, headline_row, render_markdown
from tonk_cli.main import main
from tonk_cli.workflows import pipeline
from tonk_cli.workflows.common import evaluate_one_seat
from tonk_cli.workflows.zoo import add_entry, min_card_hands
from tonk_env.engine import is_over, make_rules, new_game
from tonk_env.obs import OBS_VERSION, OLDEST_LOADABLE
from tonk_env.play import play, start_hand
from train.config import config_from_dict

#: The zoo shipped with the package, and its entries now.
SHIPPED_ZOO = Path(agents.zoo.__file__).resolve().parent
SHIPPED = zoo_names(SHIPPED_ZOO)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    """``(run folder, zoo folder)``: a tiny training run added to a temporary zoo as ``zoo:tiny``."""
    root = tmp_path_factory.mktemp("zoo")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(ZOO_ENV, str(root / "zoo"))
        rc = main(["train", "configs/quick.yaml", *TINY_NO_EVAL, f"out_dir={root / 'runs'}", "--no-progress"])
        assert rc == 0
        (run,) = (root / "runs").iterdir()
        # the workflow called from Python (tests/test_exploit.py runs `tonk zoo add` itself)
        entry = add_entry(run, "tiny", baselines=["random", "heuristic:greedy"], hands=4, progress=False)
        assert entry.card_file == root / "zoo" / "tiny.json" and entry.page_file.is_file()
        assert [r.opponent for r in entry.results] == ["random", "heuristic:greedy"]
        yield run, root / "zoo"


def test_zoo_add_writes_the_network_and_its_card(tiny: tuple[Path, Path]) -> None:
    run, zoo = tiny
    assert sorted(p.name for p in zoo.iterdir()) == ["tiny.json", "tiny.md", "tiny.npz"]
    card = read_card("tiny")
    run_info = json.loads((run / "run.json").read_text())
    assert card["rules_hash"] == run_info["rules_hash"] and card["num_players"] == 2
    assert card["obs_version"] == OBS_VERSION
    assert card["sha256"] == file_sha256(zoo / "tiny.npz")
    assert card["source"]["checkpoint"] == "best.zip" and card["config"]["name"] == "quick"
    assert card["training"]["steps"] >= 512 and card["training"]["versions"]["torch"]
    assert [r["opponent"] for r in card["evaluation"]["results"]] == ["random", "heuristic:greedy"]
    assert card["headline"] == "heuristic:greedy" and card["best_response"] is None
    # the card's numbers are those of a duplicate evaluation: the same one gives them again
    row = card["evaluation"]["results"][0]
    res = evaluate_one_seat(
        [f"npz:{zoo / 'tiny.npz'}", "random"], 4, 2, make_rules(), card["evaluation"]["seed"]
    )
    assert (res.agents[0].mean_stakes, list(res.agents[0].ci95)) == (row["mean_stakes"], row["ci95"])
    page = (zoo / "tiny.md").read_text()
    assert page.startswith("# zoo:tiny") and headline(card) in page and "heuristic:greedy" in page
    # trained from scratch: no start; a warm start (`init_from`) is named on the "trained" row
    assert "start" not in card["training"] and "PPO steps in" in page
    warm = {**card, "training": {**card["training"], "start": "zoo:2p"}}
    (row,) = [line for line in render_markdown(warm).splitlines() if line.startswith("| trained |")]
    assert row.endswith(" from zoo:2p |"), row


def test_an_averaged_or_widened_network_names_its_making_on_its_card(
    tiny: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ``tonk average`` network's card lists the averaged networks (its training row counts one
    run); a ``tonk widen`` network's names the network it grew from; neither shows an unknown step."""
    run, zoo = tiny
    monkeypatch.setenv(ZOO_ENV, str(tmp_path / "zoo"))
    spec = f"npz:{zoo / 'tiny.npz'}"
    assert main(["average", spec, spec, "--out", str(tmp_path / "avg.npz")]) == 0
    assert (
        main(["widen", f"npz:{tmp_path / 'avg.npz'}", "--width", "64", "--out", str(tmp_path / "w.npz")]) == 0
    )
    add_entry(run, "soup", checkpoint=str(tmp_path / "w.npz"), baselines=["random"], hands=4, progress=False)
    card = read_card("soup")
    assert card["source"]["averaged"] == [spec, spec] and card["source"]["step"] is None
    assert card["source"]["widened"] == f"npz:{tmp_path / 'avg.npz'}"
    (row,) = [
        line for line in (tmp_path / "zoo" / "soup.md").read_text().splitlines() if "| source |" in line
    ]
    assert "the average of 2 networks (`tonk average`)" in row and "step" not in row.split(";")[0], row
    assert "widened (`tonk widen`) from" in row, row
    # a plain run's card has neither, and its row gives the step
    (row,) = [line for line in (zoo / "tiny.md").read_text().splitlines() if "| source |" in line]
    assert ", step " in row and "average" not in row and "widened" not in row, row


def test_zoo_add_refuses_too_few_hands_for_an_interval(
    tiny: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One deal group has no spread: ``--hands`` below two groups is refused before anything is
    evaluated or written."""
    run, _ = tiny
    monkeypatch.setenv(ZOO_ENV, str(tmp_path / "zoo"))
    with pytest.raises(ValueError, match="--hands 2: .*two deal groups of 2 hands, so 3 hands at least"):
        add_entry(run, "few", baselines=["random"], hands=2, progress=False)
    assert not (tmp_path / "zoo" / "few.json").exists()
    # 3 hands round up to two whole groups (4 hands), which is enough for an interval
    entry = add_entry(run, "few", baselines=["random"], hands=3, progress=False)
    (row,) = entry.results
    assert row.hands == 4 and row.ci95[0] < row.ci95[1], row


@pytest.mark.parametrize("players", [2, 3, 4])
def test_the_fewest_card_hands_give_two_deal_groups(players: int) -> None:
    """The bound of ``tonk zoo add --hands`` is where the card's evaluation first has two groups."""
    least = min_card_hands(players)
    groups = [
        evaluate_one_seat(["random", "random"], hands=h, players=players).groups for h in (least - 1, least)
    ]
    assert groups == [1, 2], (players, least, groups)


def test_a_zoo_spec_works_wherever_specs_work(
    tiny: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert check_spec("zoo:tiny?deterministic=false") == "zoo:tiny?deterministic=false"
    agent = make_agent("zoo:tiny", seed=1)
    assert agent.batch_key is not None  # copies in a training pool share one batch of logits
    # evaluation (the hand loop refuses an illegal move), a training pool, the agent list
    assert main(["eval", "zoo:tiny", "heuristic:greedy", "--hands", "4", "--quiet"]) == 0
    config_from_dict({"pool": {"baselines": {"zoo:tiny": 1.0}}, "eval": {"opponents": ["zoo:tiny"]}})
    capsys.readouterr()
    assert main(["agents"]) == 0
    out = capsys.readouterr().out
    assert "zoo:tiny" in out and headline(read_card("tiny")) in out
    assert main(["zoo", "list"]) == 0
    assert "zoo:tiny" in capsys.readouterr().out


def test_an_unknown_zoo_name_lists_the_available_ones(
    tiny: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(ValueError, match=r"unknown agent 'zoo:nope'; available zoo agents: zoo:tiny"):
        make_agent("zoo:nope")
    with pytest.raises(ValueError, match="zoo needs a name"):
        check_spec("zoo")
    monkeypatch.setenv(ZOO_ENV, str(tmp_path / "empty"))
    with pytest.raises(ValueError, match="no zoo agents are installed"):
        check_spec("zoo:tiny")


def test_a_zoo_agent_refuses_another_table(tiny: tuple[Path, Path]) -> None:
    with pytest.raises(ValueError, match="trained for 2 players"):
        start_hand([make_agent("zoo:tiny")] * 3, 3, make_rules())
    with pytest.raises(ValueError, match="rules hash"):
        start_hand([make_agent("zoo:tiny")] * 2, 2, make_rules("hit_penalty"))


def _copy(zoo: Path, dest: Path) -> Path:
    shutil.copytree(zoo, dest)
    return dest


def test_changed_files_are_refused(tiny: tuple[Path, Path], tmp_path: Path) -> None:
    _, zoo = tiny
    changed = _copy(zoo, tmp_path / "changed")
    data = bytearray((changed / "tiny.npz").read_bytes())
    data[-30] ^= 0xFF
    (changed / "tiny.npz").write_bytes(bytes(data))
    with pytest.raises(ValueError, match="the file was changed after the card was written"):
        load_zoo_agent("tiny", folder=changed)

    wrong = _copy(zoo, tmp_path / "wrong")
    card = json.loads((wrong / "tiny.json").read_text())
    (wrong / "tiny.json").write_text(json.dumps({**card, "num_players": 3}))
    with pytest.raises(ValueError, match="the network's num_players is 2, its card says 3"):
        load_zoo_agent("tiny", folder=wrong)
    del card["rules_hash"]
    (wrong / "tiny.json").write_text(json.dumps(card))
    with pytest.raises(ValueError, match="missing the field 'rules_hash'"):
        load_zoo_agent("tiny", folder=wrong)
    (wrong / "tiny.json").write_text("{not json")
    with pytest.raises(ValueError, match="not a readable JSON card"):
        load_zoo_agent("tiny", folder=wrong)


def test_a_card_is_measured_again_and_keeps_the_rest(
    tiny: tuple[Path, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``tonk zoo card NAME --evaluate``: new deals and hands, the same opponents, the rest kept."""
    _, zoo = tiny
    again = _copy(zoo, tmp_path / "again")
    monkeypatch.setenv(ZOO_ENV, str(again))
    before = read_card("tiny")
    assert main(["zoo", "card", "tiny", "--evaluate", "--hands", "2"]) == 2  # one deal group: no interval
    assert "--hands 2: a card's 95% intervals need two deal groups" in capsys.readouterr().err
    assert main(["zoo", "card", "tiny", "--hands", "8"]) == 2  # not without --evaluate
    assert "--hands, --seed and --workers go with --evaluate" in capsys.readouterr().err
    assert read_card("tiny") == before
    assert main(["zoo", "card", "tiny", "--evaluate", "--hands", "8", "--seed", "5", "--no-progress"]) == 0
    after = read_card("tiny")
    ev = after["evaluation"]
    assert (ev["hands"], ev["seed"]) == (8, 5) and ev["evaluated"] and "commit" in ev
    assert [r["opponent"] for r in ev["results"]] == ["random", "heuristic:greedy"]
    res = evaluate_one_seat([f"npz:{again / 'tiny.npz'}", "heuristic:greedy"], 8, 2, make_rules(), 5)
    assert (ev["results"][1]["mean_stakes"], ev["results"][1]["ci95"]) == (
        res.agents[0].mean_stakes,
        list(res.agents[0].ci95),
    )
    assert {k: v for k, v in after.items() if k != "evaluation"} == {
        k: v for k, v in before.items() if k != "evaluation"
    }
    page = (again / "tiny.md").read_text()
    assert "## Evaluation (8 duplicate hands per opponent, seed 5)" in page
    assert "`tonk zoo card tiny --evaluate --hands 8 --seed 5`" in page
    # a network that is not the card's is refused before anything is played
    data = bytearray((again / "tiny.npz").read_bytes())
    data[-30] ^= 0xFF
    (again / "tiny.npz").write_bytes(bytes(data))
    capsys.readouterr()
    assert main(["zoo", "card", "tiny", "--evaluate", "--hands", "8"]) == 2
    assert "the file was changed after the card was written" in capsys.readouterr().err


@pytest.mark.parametrize("bad", ["../tiny", "a b", "", "-x", "x" * 65])
def test_zoo_names_are_checked(bad: str) -> None:
    with pytest.raises(ValueError, match="zoo name"):
        agents.zoo.check_name(bad)


@pytest.mark.parametrize("with_entry", [True, False])
def test_make_run_adds_the_zoo_agent_of_its_table(
    tiny: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, with_entry: bool
) -> None:
    run, _ = tiny
    monkeypatch.setattr(pipeline, "train", lambda cfg, progress, evaluate: run)  # the tiny run, trained once
    if not with_entry:
        monkeypatch.setenv(ZOO_ENV, str(tmp_path / "empty"))
    report = pipeline.run_pipeline("configs/quick.yaml", TINY_NO_EVAL, ("random",), hands=4, progress=False)
    table = pipeline.format_pipeline(report)
    opponents = [r.opponent for r in report.results]
    if with_entry:
        assert opponents == ["random", "zoo:tiny"] and "zoo:tiny" in table and report.note is None
    else:
        assert opponents == ["random"]
        assert table.splitlines()[-1].startswith("the zoo has no agent for 2 players, rules standard")


def test_zoo_files_are_package_data() -> None:
    """``pip install .`` (not only editable) installs the zoo's files with the package."""
    tomllib = pytest.importorskip("tomllib")

    project = tomllib.loads(Path("pyproject.toml").read_text())
    patterns = project["tool"]["setuptools"]["package-data"]["agents.zoo"]
    assert {"*.npz", "*.json", "*.md"} <= set(patterns)
    assert "agents.zoo" in project["tool"]["setuptools"]["packages"]  # listed (tests/test_packaging.py)


# -- the shipped zoo ------------------------------------------------------------------------------------


def test_every_shipped_network_has_a_card_and_every_card_a_network() -> None:
    nets = sorted(p.stem for p in SHIPPED_ZOO.glob("*.npz"))
    assert nets == SHIPPED
    assert sorted(p.stem for p in SHIPPED_ZOO.glob("*.md")) == SHIPPED


@pytest.mark.parametrize("name", SHIPPED)
def test_a_shipped_agent_loads_fits_its_card_and_plays_legal_moves(name: str) -> None:
    card = read_card(name, SHIPPED_ZOO)
    agent = load_zoo_agent(name, seed=0, folder=SHIPPED_ZOO)
    rules = make_rules(card["rules"], **card["rule_options"])
    assert rules.hash == card["rules_hash"] == agent.meta["rules_hash"]
    assert card["num_players"] == agent.meta["num_players"] and agent.meta["obs_version"] == OBS_VERSION
    assert OLDEST_LOADABLE <= card["obs_version"] <= OBS_VERSION  # an older card's network is upgraded
    n = card["num_players"]
    for deal in range(5):
        seats = [agent, *(make_agent("heuristic:greedy", seed=s) for s in range(n - 1))]
        s = new_game(rules, n, seed=deal)
        start_hand(seats, n, rules)
        play(s, seats)  # refuses an illegal move
        assert is_over(s)


@pytest.mark.slow
@pytest.mark.parametrize("name", SHIPPED)
def test_a_shipped_cards_headline_holds_on_fresh_deals(name: str) -> None:
    """The headline margin, re-measured on other deals, lies in the card's interval widened for the sample."""
    card = read_card(name, SHIPPED_ZOO)
    row = headline_row(card)
    hands = 200  # a cheap second look: the card's interval, widened by this sample's, must hold it
    rules = make_rules(card["rules"], **card["rule_options"])
    res = evaluate_one_seat(
        [f"npz:{SHIPPED_ZOO / card['file']}", row["opponent"]],
        hands,
        card["num_players"],
        rules,
        card["evaluation"]["seed"] + 1,
        workers=2,
    )
    me = res.agents[0]
    half_card = (row["ci95"][1] - row["ci95"][0]) / 2
    half_new = (me.ci95[1] - me.ci95[0]) / 2
    assert math.isfinite(me.mean_stakes)
    assert abs(me.mean_stakes - row["mean_stakes"]) <= half_card + half_new, (me.mean_stakes, me.ci95, row)
