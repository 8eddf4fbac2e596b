"""Rating fits on synthetic results: known strengths come back, intervals cover them, ties and crosstables."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from eval.ratings import ELO_SCALE, MatchData, crosstable, elo_expectation, fit_ratings, group_orders

TRUE = np.array([0.0, 0.6, 1.2, -0.8, 0.3])  # strengths (natural log odds); entrant 0 is the anchor
NAMES = ["random", "b", "c", "d", "e"]


def _synthetic(players: int, groups: int, seed: int) -> list[MatchData]:
    """Plackett–Luce data: a group's payoffs are strength + Gumbel noise (their order is PL-distributed)."""
    rng = np.random.default_rng(seed)
    matches = []
    for table in itertools.combinations(range(len(TRUE)), players):
        u = TRUE[list(table)][None, :] + rng.gumbel(size=(groups, players))
        matches.append(MatchData(list(table), u.tolist()))
    return matches


@pytest.mark.parametrize("players", [2, 3, 4])
def test_fit_recovers_known_strengths(players: int) -> None:
    res = fit_ratings(NAMES, _synthetic(players, 300, seed=players), samples=200, seed=1)
    assert res.anchor == "random" and res.rating[0] == pytest.approx(1000.0)
    expect = 1000.0 + ELO_SCALE * (TRUE - TRUE[0])
    got = np.array(res.rating)
    assert np.max(np.abs(got - expect)) < 45, (got.round(), expect.round())
    # the order is right and (almost) every interval covers the truth
    assert list(np.argsort(-got)) == list(np.argsort(-expect))
    covered = sum(lo - 1e-9 <= e <= hi + 1e-9 for (lo, hi), e in zip(res.ci95, expect, strict=True))
    assert covered >= len(NAMES) - 1
    assert all(hi - lo < 150 for lo, hi in res.ci95[1:])


def test_bradley_terry_two_agents_matches_the_closed_form() -> None:
    # 2 players, no ties: the MLE is the log odds of the win share (the prior adds one tied game)
    wins, losses = 75, 25
    m = MatchData([0, 1], [[1.0, -1.0]] * wins + [[-1.0, 1.0]] * losses)
    res = fit_ratings(["a", "b"], [m], samples=0, anchor="b", prior=0.0)
    assert res.rating[0] - res.rating[1] == pytest.approx(400 * math.log10(3), abs=1e-6)
    assert elo_expectation(res.rating[0] - res.rating[1]) == pytest.approx(0.75)
    # ties count half each way: 50 wins, 50 ties, 0 losses = 75% score
    m2 = MatchData([0, 1], [[1.0, -1.0]] * 50 + [[0.0, 0.0]] * 50)
    res2 = fit_ratings(["a", "b"], [m2], samples=0, anchor="b", prior=0.0)
    assert res2.rating[0] - res2.rating[1] == pytest.approx(400 * math.log10(3), abs=1e-6)


def test_perfect_record_stays_finite_and_mean_anchor() -> None:
    m = MatchData([0, 1], [[2.0, -2.0]] * 40)
    res = fit_ratings(["a", "b"], [m], samples=50, seed=0)
    assert res.anchor is None
    assert all(math.isfinite(r) for r in res.rating)
    assert (res.rating[0] + res.rating[1]) / 2 == pytest.approx(1500.0)
    assert res.rating[0] > res.rating[1] + 300


def test_all_ties_give_equal_ratings() -> None:
    matches = [MatchData(list(t), [[0.5, 0.5, 0.5]] * 10) for t in itertools.combinations(range(4), 3)]
    res = fit_ratings(list("abcd"), matches, samples=20, seed=0)
    assert np.allclose(res.rating, 1500.0)


def test_group_orders_split_ties_equally() -> None:
    orders = group_orders([1.0, 3.0, 1.0])
    assert sorted(orders) == [((1, 0, 2), 0.5), ((1, 2, 0), 0.5)]
    assert group_orders([2.0, 1.0]) == [((0, 1), 1.0)]


def test_bootstrap_is_seeded() -> None:
    data = _synthetic(2, 40, seed=5)
    a = fit_ratings(NAMES, data, samples=100, seed=3)
    b = fit_ratings(NAMES, data, samples=100, seed=3)
    c = fit_ratings(NAMES, data, samples=100, seed=4)
    assert a.ci95 == b.ci95 and a.rating == b.rating
    assert a.ci95 != c.ci95


def test_unplayed_entrant_is_nan() -> None:
    res = fit_ratings(["a", "b", "c"], [MatchData([0, 1], [[1.0, -1.0], [-1.0, 1.0]])], samples=10)
    assert math.isnan(res.rating[2]) and res.groups == [2, 2, 0]


def test_crosstable_two_players_is_eval_mean_stakes() -> None:
    from eval.duplicate import evaluate

    res = evaluate(["heuristic:greedy", "random"], hands=40, players=2, seed=7)
    cells = crosstable(2, [MatchData([0, 1], res.group_payoffs)])
    assert cells[0][0] is None
    assert cells[0][1].mean == pytest.approx(res.agents[0].mean_stakes)
    assert cells[0][1].ci95 == pytest.approx(res.agents[0].ci95)
    assert cells[1][0].mean == pytest.approx(res.agents[1].mean_stakes)
