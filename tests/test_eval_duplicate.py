"""The duplicate evaluation harness: seatings, deals, interval arithmetic, determinism, the CLI."""

from __future__ import annotations

import json
import math
import statistics
from collections import Counter

import pytest

from agents import registry
from agents.random_agent import RandomAgent
from eval.duplicate import (
    AGENT_ENDS,
    arrangements,
    deal_deck,
    evaluate,
    hand_seed,
    mean_ci,
    t_quantile_975,
)
from eval.report import format_table, to_json
from tonk_cli.main import main
from tonk_env.engine import RESULT_KINDS, START

# --- seatings ----------------------------------------------------------------------------------


def test_two_agents_two_seats_play_both_seatings() -> None:
    assert arrangements(2, 2) == [(0, 1), (1, 0)]


def test_three_distinct_agents_play_every_permutation() -> None:
    arrs = arrangements(3, 3)
    assert len(arrs) == 6 and len(set(arrs)) == 6
    for seat in range(3):
        assert Counter(a[seat] for a in arrs) == {0: 2, 1: 2, 2: 2}


def test_fewer_agents_fill_seats_cyclically_and_rotate() -> None:
    arrs = arrangements(2, 3)
    assert arrs == [(0, 1, 0), (1, 0, 0), (0, 0, 1)]
    for seat in range(3):
        assert Counter(a[seat] for a in arrs) == {0: 2, 1: 1}
    assert arrangements(4, 4) == [(0, 1, 2, 3), (1, 2, 3, 0), (2, 3, 0, 1), (3, 0, 1, 2)]
    assert arrangements(2, 4) == [(0, 1, 0, 1), (1, 0, 1, 0)]  # repeated rotations are played once
    assert arrangements(1, 2) == [(0, 0)]


def test_more_agents_than_seats_is_an_error() -> None:
    with pytest.raises(ValueError, match="do not fit 2 seats"):
        arrangements(3, 2)


# --- interval arithmetic -----------------------------------------------------------------------


def test_t_quantiles() -> None:
    assert t_quantile_975(1) == pytest.approx(12.706, abs=1e-3)
    assert t_quantile_975(10) == pytest.approx(2.228, abs=1e-3)
    assert t_quantile_975(30) == pytest.approx(2.042, abs=1e-3)
    assert t_quantile_975(40) == pytest.approx(2.0211, abs=2e-4)
    assert t_quantile_975(120) == pytest.approx(1.9799, abs=2e-4)
    assert t_quantile_975(10**6) == pytest.approx(1.95997, abs=1e-4)
    assert math.isinf(t_quantile_975(0))


def test_mean_ci_matches_the_textbook_formula() -> None:
    xs = [1.0, 2.0, 3.0, 4.0]
    mean, (lo, hi) = mean_ci(xs)
    half = 3.182 * statistics.stdev(xs) / 2
    assert mean == 2.5
    assert lo == pytest.approx(2.5 - half, abs=1e-3) and hi == pytest.approx(2.5 + half, abs=1e-3)
    m1, ci1 = mean_ci([0.5])
    assert m1 == 0.5 and all(math.isnan(x) for x in ci1)
    assert mean_ci([2.0] * 10) == (2.0, (2.0, 2.0))


def test_the_interval_is_computed_over_deal_groups() -> None:
    res = evaluate(["heuristic:greedy", "random"], hands=200, seed=3)
    samples = [g[0] for g in res.group_payoffs]
    assert len(samples) == res.groups == 100
    mean, ci = mean_ci(samples)
    assert res.agents[0].mean_stakes == pytest.approx(mean)
    assert res.agents[0].ci95 == pytest.approx(ci)


# --- deals -------------------------------------------------------------------------------------


class _Recorder(RandomAgent):
    """Records the hand it is dealt, with its tag and seat; never drops."""

    log: list[tuple[str, int, int]] = []

    def __init__(self, seed: int | None = None, tag: str = "") -> None:
        super().__init__(seed)
        self.tag = tag

    def reset_hand(self, seat: int, num_players: int, rules: object) -> None:
        self.first = True

    def act(self, obs, info):
        if self.first:
            self.first = False
            _Recorder.log.append((self.tag, info.seat, info.hand))
        return 1 if 1 in info.legal else min(a for a in info.legal if 3 <= a < 55)  # draw, discard


def test_every_deal_is_replayed_in_every_seating(monkeypatch: pytest.MonkeyPatch) -> None:
    from tonk_env.engine import new_game

    monkeypatch.setattr(registry, "_AGENTS", dict(registry._AGENTS))
    tag = registry.Param("tag", str, "", "a tag")
    registry.register_agent("test", "rec", _Recorder, "records deals", (tag,))
    _Recorder.log = []
    evaluate(["test:rec?tag=a", "test:rec?tag=b"], hands=6, seed=11, workers=1)
    for g in range(3):
        s = new_game("standard", 2, deck=deal_deck(11, g), dealer=1)
        assert s.phase == START  # no instant win in these deals
        dealt = s.hands
        seen = _Recorder.log[4 * g : 4 * g + 4]  # two seatings of two hands each
        for tag in "ab":
            assert {(seat, hand) for t, seat, hand in seen if t == tag} == {(0, dealt[0]), (1, dealt[1])}


def test_deals_depend_only_on_seed_and_group() -> None:
    assert deal_deck(5, 0) == deal_deck(5, 0)
    assert deal_deck(5, 0) != deal_deck(5, 1) != deal_deck(6, 1)
    assert sorted(deal_deck(5, 3)) == list(range(52))
    assert hand_seed(1, 2, 3, 4) == hand_seed(1, 2, 3, 4) != hand_seed(1, 2, 3, 5)


def test_identical_deterministic_agents_cancel_exactly() -> None:
    res = evaluate(["heuristic:greedy", "heuristic:greedy"], hands=100, seed=2)
    assert all(g == [0.0, 0.0] for g in res.group_payoffs)
    assert res.agents[0].ci95 == (0.0, 0.0)


# --- results -----------------------------------------------------------------------------------


def test_random_against_random_is_centred_on_zero() -> None:
    res = evaluate(["random", "random"], hands=3000, seed=1)
    a, b = res.agents
    assert a.ci95[0] < 0 < a.ci95[1]
    assert a.mean_stakes == pytest.approx(-b.mean_stakes)
    assert a.hands == b.hands == 3000 and a.seat_hands == 3000
    assert 0.3 < a.win_rate < 0.7


def test_the_result_is_identical_for_any_number_of_workers() -> None:
    specs = ["search:ismcts?budget=4", "heuristic:expert?samples=16", "random"]
    one = evaluate(specs, hands=60, players=3, seed=9, workers=1)
    two = evaluate(specs, hands=60, players=3, seed=9, workers=2)
    again = evaluate(specs, hands=60, players=3, seed=9, workers=1)
    assert one.groups == 10 and two.workers == 2
    assert one.to_dict(timing=False) == two.to_dict(timing=False) == again.to_dict(timing=False)
    other = evaluate(specs, hands=60, players=3, seed=10, workers=1)
    assert other.to_dict(timing=False) != one.to_dict(timing=False)


def test_three_players_two_agents_is_zero_sum_per_seat() -> None:
    res = evaluate(["heuristic:greedy", "random"], hands=30, players=3, seed=4)
    g, r = res.agents
    assert g.seat_hands == 2 * 30 and r.seat_hands == 30 and g.hands == r.hands == 30
    assert 2 * g.mean_stakes + r.mean_stakes == pytest.approx(0.0, abs=1e-9)
    assert sum(res.ends.values()) == pytest.approx(1.0)
    assert set(res.ends) == set(RESULT_KINDS) and set(g.ends) == set(AGENT_ENDS)


def test_report_table_and_json() -> None:
    res = evaluate(["heuristic:greedy", "random"], hands=40, seed=0)
    table = format_table(res)
    assert "heuristic:greedy" in table and "95% CI" in table and "hands ended:" in table
    d = json.loads(to_json(res))
    for a in d["agents"]:
        assert {"spec", "mean_stakes", "ci95", "win_rate", "hands"} <= set(a)
        assert len(a["ci95"]) == 2
    assert d["hands"] == 40 and d["deal_groups"] == 20 and "timing" in d


def test_bad_arguments_are_value_errors() -> None:
    with pytest.raises(ValueError, match="unknown agent kind"):
        evaluate(["nosuch", "random"], hands=2)
    with pytest.raises(ValueError, match="hands"):
        evaluate(["random", "random"], hands=0)
    with pytest.raises(ValueError, match="num_players"):
        evaluate(["random", "random"], hands=2, players=9)


# --- the command line --------------------------------------------------------------------------


def test_cli_eval_json(capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(
        [
            "eval",
            "heuristic:greedy?drop_at=12",
            "random",
            "--hands",
            "20",
            "--seed",
            "3",
            "--json",
            "--rules",
            "hit_penalty",
            "--set",
            "max_turns=50",
        ]
    )
    assert rc == 0
    d = json.loads(capsys.readouterr().out)
    assert [a["spec"] for a in d["agents"]] == ["heuristic:greedy?drop_at=12", "random"]
    assert d["rules_options"]["hit_wait"] == 1 and d["rules_options"]["max_turns"] == 50


def test_cli_eval_table_defaults_to_random(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "heuristic:greedy", "--hands", "10", "--workers", "2"]) == 0
    out = capsys.readouterr().out
    assert "heuristic:greedy" in out and "random" in out and "stakes/hand" in out


@pytest.mark.parametrize(
    "argv,words",
    [
        (["eval", "nosuch"], ["tonk eval: error:", "unknown agent kind 'nosuch'", "heuristic:greedy"]),
        (["eval", "heuristic:greedy?x=1"], ["tonk eval: error:", "no parameter 'x'", "drop_at"]),
        (["eval", "random", "random", "random"], ["do not fit 2 seats"]),
        (["eval", "random", "--rules", "nosuch"], ["unknown rules preset"]),
    ],
)
def test_cli_eval_errors(argv: list[str], words: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*argv, "--hands", "2"]) == 2
    err = capsys.readouterr().err
    for w in words:
        assert w in err


def test_cli_agents_lists_one_line_each(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["agents"]) == 0
    out = capsys.readouterr().out.splitlines()
    for key in ["random", "heuristic:greedy", "heuristic:expert", "search:ismcts"]:
        assert any(line.startswith(key + " ") for line in out)
    assert main(["agents", "-v"]) == 0
    assert "drop_at=10" in capsys.readouterr().out


# --- strength (slow) ---------------------------------------------------------------------------


@pytest.mark.slow
def test_greedy_beats_random() -> None:
    res = evaluate(["heuristic:greedy", "random"], hands=1000, seed=123, workers=2)
    assert res.agents[0].ci95[0] > 0


@pytest.mark.slow
def test_expert_beats_greedy() -> None:
    res = evaluate(["heuristic:expert", "heuristic:greedy"], hands=1000, seed=123, workers=1)
    assert res.agents[0].ci95[0] > 0


def test_workers_are_bounded_and_the_processes_used_are_reported() -> None:
    with pytest.raises(ValueError, match="at most 256"):
        evaluate(["random", "random"], hands=4, workers=10_000)
    r = evaluate(["random", "heuristic:greedy"], hands=50, workers=200)
    assert r.workers == 4  # 25 deal groups in 4 chunks: a process per chunk at most
    assert evaluate(["random", "random"], hands=4, workers=3).workers == 1
