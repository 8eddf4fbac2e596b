"""Two agents compared on the same deals: ``eval.paired`` and ``tonk eval --compare``."""

from __future__ import annotations

import json
import math

import pytest

from eval.duplicate import evaluate
from eval.paired import check_comparable, compare
from eval.report import format_table, to_json
from tonk_cli.main import main


def test_the_difference_is_paired_by_deal_group() -> None:
    a = evaluate(["heuristic:greedy", "random"], hands=200, seed=1)
    b = evaluate(["heuristic:expert", "random"], hands=200, seed=1)
    rep = compare(a, b)
    diffs = [x[0] - y[0] for x, y in zip(a.group_payoffs, b.group_payoffs, strict=True)]
    assert rep.plain.mean == pytest.approx(a.agents[0].mean_stakes - b.agents[0].mean_stakes)
    assert rep.plain.mean == pytest.approx(math.fsum(diffs) / len(diffs))
    assert rep.differ == sum(d != 0 for d in diffs) / len(diffs)
    assert 0 < rep.differ < 1  # the two decide alike in some whole groups, not in all
    # the deal's luck is common to both: pairing narrows the interval
    assert rep.plain.factor > 1
    half = (rep.plain.ci95[1] - rep.plain.ci95[0]) / 2
    assert half < rep.plain.unpaired_half
    assert rep.corrected is None and (rep.agent, rep.other) == ("heuristic:greedy", "heuristic:expert")


def test_an_agent_compared_with_itself_differs_by_exactly_zero() -> None:
    a = evaluate(["heuristic:expert?samples=8", "random"], hands=40, seed=5)
    b = evaluate(["heuristic:expert?samples=8", "random"], hands=40, seed=5)
    rep = compare(a, b)  # the same random streams: every group is replayed alike
    assert rep.differ == 0 and rep.plain.mean == 0 and rep.plain.ci95 == (0.0, 0.0)


@pytest.mark.parametrize(
    "kwargs,what",
    [({"seed": 2}, "seed"), ({"hands": 20}, "deal groups"), ({"players": 3}, "players")],
)
def test_evaluations_on_other_deals_are_refused(kwargs: dict[str, int], what: str) -> None:
    a = evaluate(["heuristic:greedy", "random"], hands=40, seed=1)
    b = evaluate(["heuristic:expert", "random"], **{"hands": 40, "seed": 1, **kwargs})
    with pytest.raises(ValueError, match=f"differ in their {what}"):
        check_comparable(a, b)
    other = evaluate(["heuristic:expert", "heuristic:greedy"], hands=40, seed=1)
    with pytest.raises(ValueError, match="differ in their opponents"):
        compare(a, other)


def test_the_luck_corrected_difference_is_reported_with_a_value() -> None:
    a = evaluate(["heuristic:greedy", "random"], hands=40, seed=3, luck="2p")
    b = evaluate(["heuristic:expert", "random"], hands=40, seed=3, luck="2p")
    assert a.group_corrected is not None and len(a.group_corrected) == a.groups
    rep = compare(a, b)
    assert rep.corrected is not None
    assert rep.corrected.mean == pytest.approx(a.luck.agents[0].mean_stakes - b.luck.agents[0].mean_stakes)
    table = format_table(a, rep)
    assert "paired by deal group" in table and "corrected " in table
    d = json.loads(to_json(a, compare=rep))["compare"]
    assert {"difference", "corrected_difference", "groups_that_differ", "other"} <= set(d)


def test_cli_compare_json(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["eval", "heuristic:greedy", "random", "--compare", "heuristic:expert", "--hands", "40"]
    assert main([*argv, "--seed", "4", "--json", "--workers", "2"]) == 0
    d = json.loads(capsys.readouterr().out)
    c = d["compare"]
    assert (
        c["agent"] == "heuristic:greedy" and c["other"] == "heuristic:expert" and c["opponents"] == ["random"]
    )
    assert c["deal_groups"] == d["deal_groups"] == 20
    lo, hi = c["difference"]["ci95"]
    assert lo <= c["difference"]["mean_stakes"] <= hi
    assert c["difference"]["mean_stakes"] == pytest.approx(c["agent_mean_stakes"] - c["other_mean_stakes"])


@pytest.mark.parametrize(
    "extra,words",
    [
        (["--compare", "heuristic:greedy"], ["--compare heuristic:greedy", "AGENT itself"]),
        (["--compare", "nosuch"], ["tonk eval: error:", "unknown agent kind 'nosuch'"]),
    ],
)
def test_cli_compare_errors(extra: list[str], words: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "heuristic:greedy", "random", "--hands", "2", *extra]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""  # refused before anything is played
    for w in words:
        assert w in captured.err


def test_one_deal_group_prints_no_interval_and_says_how_many_hands_give_one() -> None:
    a = evaluate(["random", "heuristic:greedy"], hands=2, seed=3)
    b = evaluate(["heuristic:greedy", "heuristic:greedy"], hands=2, seed=3)
    assert a.groups == 1 and math.isnan(a.agents[0].ci95[0])
    table = format_table(a, compare=compare(a, b))
    assert "nan" not in table
    assert "2 hands = 1 deal x 2 seatings" in table
    assert "--hands 3 or more plays two" in table  # and 3 hands do give two groups, with an interval
    assert "the same 1 deal group again" in table and "n/a" in table
    three = evaluate(["random", "heuristic:greedy"], hands=3, seed=3)
    assert three.groups == 2 and not math.isnan(three.agents[0].ci95[0])
    assert "n/a" not in format_table(three)
