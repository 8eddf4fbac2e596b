"""Ratings from tournament results: Plackett–Luce (Bradley–Terry for 2 players), bootstrap intervals.

The model
---------

Every deal group of a match is one *ranking* of the agents at the table:
the agents ordered by their mean payoff in the group (duplicate play, so
the luck of the deal cancels within the group). Agent ``i`` has a strength
``theta_i`` and the Plackett–Luce model gives a ranking the probability

    P(first, second, ...) = prod_r exp(theta_[r]) / sum_{s >= r} exp(theta_[s])

(the best of all, then the best of the rest, ...). With two players this is
the Bradley–Terry model, ``P(i beats j) = 1 / (1 + exp(theta_j - theta_i))``;
with any number of players the chance that ``i`` ranks above ``j`` is
that same expression, so the ratings read the same way for 2, 3 or 4
players. Ties (equal group payoffs) count every order of the tied agents
with an equal share: a tied pair is half a win each, as in chess.

Fit and scale
-------------

The maximum-likelihood strengths are found by Newton's method on the
(concave) log-likelihood, with a weak prior of ``prior`` tied games
between every two agents that met, so that an agent that won every group
still gets a finite rating. Ratings are reported on the Elo scale
(``400 * log10(e) * theta``: +191 is a 75% chance of ranking above),
shifted so that the ``anchor`` agent (``random`` when it plays) is at
1000, or else the mean of the field is 1500.

Intervals
---------

The 95% interval of each rating is a percentile bootstrap: every match's
deal groups are resampled with replacement (a match of ``n`` groups gets
``n`` groups drawn from its own), the model is refitted and re-anchored,
``samples`` times, with a seeded generator. Matches are handled in a fixed
order so the intervals do not depend on the order matches were played in.

The crosstable reports, for every pair ``(a, b)``, the mean over the deal
groups of the tables where both played of ``(payoff_a - payoff_b) / 2`` per
hand: with 2 players (zero-sum) this is exactly ``a``'s mean stakes per
hand against ``b`` as ``tonk eval`` reports it, with the same Student-t
interval over deal groups.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from .duplicate import mean_ci

#: Elo points per unit of theta (natural log odds).
ELO_SCALE = 400.0 / math.log(10.0)


@dataclass
class MatchData:
    """One match (table) as the rating needs it: who played and each deal group's payoffs."""

    players: list[int]  # entrant indices, in the order of the payoff columns
    group_payoffs: list[list[float]]  # per deal group, per player: mean payoff per seat-hand


@dataclass
class Ratings:
    """Fitted ratings of ``names`` with bootstrap intervals."""

    names: list[str]
    rating: list[float]
    ci95: list[tuple[float, float]]
    theta: list[float]
    anchor: str | None
    samples: int
    groups: list[int] = field(default_factory=list)  # deal groups each entrant played


# --- the data: stages of Plackett–Luce rankings --------------------------------------------------


def group_orders(payoffs: Sequence[float]) -> list[tuple[tuple[int, ...], float]]:
    """The strict orders (best first, as column positions) a group's payoffs stand for, with weights.

    Equal payoffs are ties: every order of the tied columns gets an equal share of the weight 1.
    """
    cols = sorted(range(len(payoffs)), key=lambda c: -payoffs[c])
    blocks: list[list[int]] = []
    for c in cols:
        if blocks and payoffs[blocks[-1][0]] == payoffs[c]:
            blocks[-1].append(c)
        else:
            blocks.append([c])
    choices = [list(itertools.permutations(b)) for b in blocks]
    n = math.prod(len(c) for c in choices)
    return [(tuple(x for part in combo for x in part), 1.0 / n) for combo in itertools.product(*choices)]


class StageIndex:
    """Distinct Plackett–Luce stages ``(set of agents still in, the one picked)``, numbered."""

    def __init__(self) -> None:
        self.index: dict[tuple[tuple[int, ...], int], int] = {}

    def add(self, members: Sequence[int], chosen: int) -> int:
        key = (tuple(sorted(members)), chosen)
        if key not in self.index:
            self.index[key] = len(self.index)
        return self.index[key]

    def matrices(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        """``M`` (stage x agent: in the set) and ``C`` (stage x agent: picked), as floats."""
        q = len(self.index)
        m = np.zeros((q, n))
        c = np.zeros((q, n))
        for (members, chosen), k in self.index.items():
            m[k, list(members)] = 1.0
            c[k, chosen] = 1.0
        return m, c


def _order_stages(order: Sequence[int]) -> list[tuple[tuple[int, ...], int]]:
    return [(tuple(order[r:]), order[r]) for r in range(len(order) - 1)]


@dataclass
class _MatchPatterns:
    """A match's deal groups reduced to distinct patterns, each a vector of stage weights."""

    counts: np.ndarray  # (P,) groups showing each pattern
    stage_ids: list[np.ndarray]  # per pattern: stage numbers
    stage_w: list[np.ndarray]  # per pattern: the weights of those stages


def _prepare(
    n: int, matches: Sequence[MatchData], prior: float
) -> tuple[StageIndex, list[_MatchPatterns], dict[int, float]]:
    stages = StageIndex()
    prepared = []
    for m in matches:
        if len(set(m.players)) != len(m.players):
            raise ValueError(f"a match lists an agent twice: {m.players}")
        patterns: dict[tuple[int, ...], int] = {}
        for g in m.group_payoffs:
            # the weak order, as a rank level per column (0 = best)
            values = sorted(set(g), reverse=True)
            key = tuple(values.index(x) for x in g)
            patterns[key] = patterns.get(key, 0) + 1
        counts, ids, ws = [], [], []
        for key, c in patterns.items():
            acc: dict[int, float] = {}
            for order, w in group_orders([-float(x) for x in key]):
                for members, chosen in _order_stages(order):
                    k = stages.add([m.players[i] for i in members], m.players[chosen])
                    acc[k] = acc.get(k, 0.0) + w
            counts.append(c)
            ids.append(np.array(list(acc), dtype=np.int64))
            ws.append(np.array(list(acc.values())))
        prepared.append(_MatchPatterns(np.array(counts, dtype=np.int64), ids, ws))
    # the prior: `prior` tied games between every two agents that met
    prior_w: dict[int, float] = {}
    if prior > 0:
        pairs = {tuple(sorted(p)) for m in matches for p in itertools.combinations(m.players, 2)}
        for a, b in sorted(pairs):
            for chosen in (a, b):
                k = stages.add([a, b], chosen)
                prior_w[k] = prior_w.get(k, 0.0) + prior / 2
    return stages, prepared, prior_w


def _weights(
    q: int,
    prepared: Sequence[_MatchPatterns],
    prior_w: dict[int, float],
    pattern_counts: Sequence[np.ndarray] | None = None,
) -> np.ndarray:
    w = np.zeros(q)
    for k, v in prior_w.items():
        w[k] += v
    for mi, mp in enumerate(prepared):
        counts = mp.counts if pattern_counts is None else pattern_counts[mi]
        for c, ids, ws in zip(counts, mp.stage_ids, mp.stage_w, strict=True):
            if c:
                np.add.at(w, ids, c * ws)
    return w


# --- the fit ------------------------------------------------------------------------------------


def fit_stages(
    m: np.ndarray, c: np.ndarray, w: np.ndarray, tol: float = 1e-10, max_iter: int = 200
) -> np.ndarray:
    """Maximum-likelihood Plackett–Luce strengths (mean 0) from weighted stages, by Newton's method."""
    q, n = m.shape
    theta = np.zeros(n)
    if n == 0:
        return theta
    keep = w > 0
    m, c, w = m[keep], c[keep], w[keep]
    chosen = w @ c  # weighted times each agent was picked

    def loglik(t: np.ndarray) -> float:
        z = np.where(m > 0, t[None, :], -np.inf)
        zmax = z.max(axis=1)
        lse = zmax + np.log(np.exp(z - zmax[:, None]).sum(axis=1))
        return float(chosen @ t - w @ lse)

    ones = np.ones((n, n)) / n
    ll = loglik(theta)
    for _ in range(max_iter):
        e = m * np.exp(theta - theta.max())[None, :]
        p = e / e.sum(axis=1, keepdims=True)
        grad = chosen - w @ p
        hess = np.diag(w @ p) - (p * w[:, None]).T @ p  # minus the Hessian: positive semi-definite
        # the strengths are defined up to a constant: fix the mean (and a tiny ridge for split fields)
        step = np.linalg.solve(hess + ones + 1e-9 * np.eye(n), grad)
        step -= step.mean()
        t = 1.0
        while True:
            cand = theta + t * step
            ll_new = loglik(cand)
            if ll_new >= ll - 1e-12 or t < 1e-6:
                break
            t /= 2
        theta, ll = cand, ll_new
        if np.max(np.abs(t * step)) < tol:
            break
    return theta - theta.mean()


def _to_elo(theta: np.ndarray, anchor_idx: int | None) -> np.ndarray:
    if anchor_idx is None:
        return 1500.0 + ELO_SCALE * (theta - theta.mean(axis=-1, keepdims=True))
    return 1000.0 + ELO_SCALE * (theta - theta[..., anchor_idx : anchor_idx + 1])


def fit_ratings(
    names: Sequence[str],
    matches: Sequence[MatchData],
    samples: int = 1000,
    seed: int = 0,
    prior: float = 1.0,
    anchor: str | None = "auto",
) -> Ratings:
    """Fit ratings of ``names`` from matches, with a seeded percentile bootstrap over deal groups.

    ``anchor``: ``"auto"`` puts ``random`` at 1000 when it plays (else the
    mean at 1500), ``None`` always anchors the mean at 1500, a name puts
    that entrant at 1000.
    """
    names = list(names)
    n = len(names)
    if anchor == "auto":
        anchor = "random" if "random" in names else None
    if anchor is not None and anchor not in names:
        raise ValueError(f"rating anchor {anchor!r} is not an entrant; entrants: {', '.join(names)}")
    anchor_idx = names.index(anchor) if anchor is not None else None
    stages, prepared, prior_w = _prepare(n, matches, prior)
    m, c = stages.matrices(n)
    groups = [0] * n
    for md in matches:
        for i in md.players:
            groups[i] += len(md.group_payoffs)
    theta = fit_stages(m, c, _weights(len(stages.index), prepared, prior_w)) if matches else np.zeros(n)
    rating = _to_elo(theta, anchor_idx)
    ci: list[tuple[float, float]] = [(math.nan, math.nan)] * n
    if samples > 0 and matches:
        rng = np.random.default_rng(seed)
        boot = np.empty((samples, n))
        for b in range(samples):
            counts = [rng.multinomial(int(mp.counts.sum()), mp.counts / mp.counts.sum()) for mp in prepared]
            boot[b] = fit_stages(m, c, _weights(len(stages.index), prepared, prior_w, counts))
        elo = _to_elo(boot, anchor_idx)
        lo, hi = np.percentile(elo, [2.5, 97.5], axis=0)
        ci = [(float(a), float(b)) for a, b in zip(lo, hi, strict=True)]
    for i in range(n):
        if groups[i] == 0:
            rating[i] = math.nan
            ci[i] = (math.nan, math.nan)
    return Ratings(names, [float(x) for x in rating], ci, [float(x) for x in theta], anchor, samples, groups)


# --- the crosstable -----------------------------------------------------------------------------


@dataclass
class Cell:
    """Row agent against column agent: mean of (row - column) / 2 payoff per hand over deal groups."""

    mean: float
    ci95: tuple[float, float]
    groups: int


def crosstable(n: int, matches: Sequence[MatchData]) -> list[list[Cell | None]]:
    """Every pair's mean stakes per hand with its 95% interval (``None`` where they never met)."""
    diffs: dict[tuple[int, int], list[float]] = {}
    for md in matches:
        for (ia, a), (ib, b) in itertools.permutations(enumerate(md.players), 2):
            diffs.setdefault((a, b), []).extend((g[ia] - g[ib]) / 2 for g in md.group_payoffs)
    table: list[list[Cell | None]] = [[None] * n for _ in range(n)]
    for (a, b), xs in diffs.items():
        mean, ci = mean_ci(xs)
        table[a][b] = Cell(mean, ci, len(xs))
    return table


def elo_expectation(diff: float) -> float:
    """Chance of ranking above an opponent rated ``diff`` points lower."""
    return 1.0 / (1.0 + 10.0 ** (-diff / 400.0))


__all__ = [
    "ELO_SCALE", "Cell", "MatchData", "Ratings", "crosstable", "elo_expectation", "fit_ratings",
    "fit_stages", "group_orders",
]  # fmt: skip
