"""Standings: ratings, per-agent totals and the crosstable of a tournament, from its match records.

Ratings are fitted by :func:`eval.ratings.fit_ratings` (Bradley-Terry for 2
players, Plackett-Luce for more) over every match's deal groups; the mean
stakes per hand carry a Student-t interval over the agent's deal groups.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from eval.duplicate import mean_ci
from eval.ratings import Cell, MatchData, crosstable, fit_ratings
from eval.report import _clean

from .config import TournamentConfig
from .entrants import EntrantInfo


@dataclass
class Standing:
    """One leaderboard line (``ratings.json`` entry)."""

    rank: int
    spec: str
    rating: float
    ci95: tuple[float, float]
    mean_stakes: float
    stakes_ci95: tuple[float, float]
    win_rate: float
    matches: int
    hands: int
    checkpoint: bool
    run: str | None
    step: int | None

    def to_dict(self) -> dict[str, Any]:
        """The ``ratings.json`` entry (intervals as lists, NaN as null)."""
        d = asdict(self)
        d["ci95"] = list(self.ci95)
        d["stakes_ci95"] = list(self.stakes_ci95)
        return _clean(d)


@dataclass
class TournamentResult:
    """The standings, the crosstable and what this run did."""

    folder: Path
    config: TournamentConfig
    names: list[str]
    standings: list[Standing]
    crosstable: list[list[Cell | None]]  # names x names
    matches_total: int
    matches_played: int
    matches_reused: int
    wall_s: float
    skipped_lines: int = 0
    matches_done: int = 0
    rules_hash: str = ""
    anchor: str | None = None

    @property
    def complete(self) -> bool:
        """Every scheduled match has been played."""
        return self.matches_done == self.matches_total

    def ratings_json(self) -> list[dict[str, Any]]:
        """The ``ratings.json`` list."""
        return [s.to_dict() for s in self.standings]


def compute_standings(
    names: Sequence[str],
    infos: dict[str, EntrantInfo],
    records: Sequence[dict[str, Any]],
    samples: int,
    seed: int,
    anchor: str | None,
) -> tuple[list[Standing], list[list[Cell | None]], str | None]:
    """Ratings, per-entrant totals and the crosstable from match records (in schedule order)."""
    idx = {n: i for i, n in enumerate(names)}
    matches = [MatchData([idx[s] for s in r["table"]], r["group_payoffs"]) for r in records]
    rat = fit_ratings(list(names), matches, samples=samples, seed=seed, anchor=anchor)
    samples_by: list[list[float]] = [[] for _ in names]
    wins = [0.0] * len(names)
    seat_hands = [0] * len(names)
    hands = [0] * len(names)
    nmatch = [0] * len(names)
    for r in records:
        for col, a in enumerate(r["agents"]):
            i = idx[a["spec"]]
            samples_by[i].extend(g[col] for g in r["group_payoffs"])
            wins[i] += a["win_rate"] * a["seat_hands"]
            seat_hands[i] += a["seat_hands"]
            hands[i] += a["hands"]
            nmatch[i] += 1
    rows = []
    for i, name in enumerate(names):
        mean, ci = mean_ci(samples_by[i])
        info = infos[name]
        rows.append(
            Standing(
                0,
                name,
                rat.rating[i],
                rat.ci95[i],
                mean,
                ci,
                wins[i] / seat_hands[i] if seat_hands[i] else math.nan,
                nmatch[i],
                hands[i],
                info.checkpoint,
                info.run,
                info.step,
            )
        )
    order = sorted(
        range(len(names)),
        key=lambda i: (-(rows[i].rating if rows[i].rating == rows[i].rating else -math.inf), names[i]),
    )
    standings = []
    for rank, i in enumerate(order, 1):
        rows[i].rank = rank
        standings.append(rows[i])
    return standings, crosstable(len(names), matches), rat.anchor
