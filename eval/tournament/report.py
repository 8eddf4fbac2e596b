"""Tournament reports: the terminal leaderboard, ``leaderboard.md``, the ``.csv`` files, ``ratings.json``."""

from __future__ import annotations

import csv
import sys

from ..stats import format_ci
from .entrants import short_label
from .standings import TournamentResult
from .store import write_json_atomic


def _f(x: float, fmt: str) -> str:
    return "nan" if x is None or x != x else format(x, fmt)


def _span(lo: float, hi: float, fmt: str) -> str:
    """An interval as ``lo – hi`` for markdown, or ``n/a`` where it is undefined (one deal group)."""
    if lo is None or hi is None or lo != lo or hi != hi:
        return "n/a"
    return f"{lo:{fmt}} – {hi:{fmt}}"


def _header(res: TournamentResult) -> str:
    cfg = res.config
    anchor = f"{res.anchor} = 1000" if res.anchor else "mean = 1500"
    return (
        f"{cfg.players}-player {cfg.format}, {len(res.names)} agents, "
        f"{res.matches_total} matches x {cfg.hands} "
        f"hands (duplicate deals), rules {cfg.rules_name} ({res.rules_hash}), seed {cfg.seed}; "
        f"ratings: Elo scale, {anchor}, 95% bootstrap interval ({cfg.bootstrap} resamples)"
    )


def format_leaderboard(res: TournamentResult, crosstable: bool = True) -> str:
    """The standings (and the crosstable) as plain text for the terminal."""
    labels = {s.spec: short_label(s.spec) for s in res.standings}
    w = max(len("agent"), *(len(v) for v in labels.values()))
    cols = (
        f"{'#':>3s}  {'agent':{w}s}  {'rating':>6s}  {'95% CI':>13s}  {'stakes/hand':>11s}  {'95% CI':>17s}  "
        f"{'win%':>5s}  {'matches':>7s}"
    )
    lines = [_header(res), "", cols, "-" * len(cols)]
    for s in res.standings:
        ci = f"[{_f(s.ci95[0], '.0f')}, {_f(s.ci95[1], '.0f')}]"
        sci = format_ci(s.stakes_ci95)
        lines.append(
            f"{s.rank:3d}  {labels[s.spec]:{w}s}  {_f(s.rating, '6.0f')}  {ci:>13s}  "
            f"{_f(s.mean_stakes, '+.3f'):>11s}  {sci:>17s}  {_f(100 * s.win_rate, '5.1f')}  {s.matches:7d}"
        )
    if crosstable and len(res.standings) <= 12:
        lines += ["", "crosstable: mean stakes per hand of the row agent against the column agent"]
        order = [res.names.index(s.spec) for s in res.standings]
        head = f"{'':>3s}  {'':{w}s}  " + "  ".join(f"{s.rank:>6d}" for s in res.standings)
        lines.append(head)
        for s, i in zip(res.standings, order, strict=True):
            cells = []
            for j in order:
                c = res.crosstable[i][j]
                cells.append(f"{'':>6s}" if c is None else f"{_f(c.mean, '+6.2f')}")
            lines.append(f"{s.rank:3d}  {labels[s.spec]:{w}s}  " + "  ".join(cells))
    if not res.complete:
        lines.append(
            f"\n(incomplete: {res.matches_done} of {res.matches_total} matches played; "
            f"run again or --resume to finish)"
        )
    return "\n".join(lines)


def write_reports(res: TournamentResult) -> None:
    """``ratings.json``, ``leaderboard.md``, ``leaderboard.csv``, ``crosstable.csv``."""
    folder = res.folder
    write_json_atomic(folder / "ratings.json", res.ratings_json())
    with open(folder / "leaderboard.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(
            [
                "rank",
                "spec",
                "rating",
                "ci95_low",
                "ci95_high",
                "mean_stakes",
                "stakes_ci95_low",
                "stakes_ci95_high",
                "win_rate",
                "matches",
                "hands",
                "run",
                "step",
            ]
        )
        for s in res.standings:
            w.writerow(
                [
                    s.rank,
                    s.spec,
                    _num(s.rating),
                    _num(s.ci95[0]),
                    _num(s.ci95[1]),
                    _num(s.mean_stakes),
                    _num(s.stakes_ci95[0]),
                    _num(s.stakes_ci95[1]),
                    _num(s.win_rate),
                    s.matches,
                    s.hands,
                    s.run or "",
                    "" if s.step is None else s.step,
                ]
            )
    with open(folder / "crosstable.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["row", "column", "mean_stakes", "ci95_low", "ci95_high", "deal_groups"])
        for i, a in enumerate(res.names):
            for j, b in enumerate(res.names):
                c = res.crosstable[i][j]
                if c is not None:
                    w.writerow([a, b, _num(c.mean), _num(c.ci95[0]), _num(c.ci95[1]), c.groups])
    (folder / "leaderboard.md").write_text(format_markdown(res))


def _num(x: float | None) -> str:
    return "" if x is None or x != x else repr(float(x))


def format_markdown(res: TournamentResult) -> str:
    """``leaderboard.md``: the standings, then the crosstable."""
    lines = [
        f"# Tournament `{res.folder.name}`",
        "",
        _header(res) + ".",
        "",
        "| # | agent | rating | 95% CI | stakes/hand | 95% CI | win % | matches | hands |",
        "|--:|:--|--:|:--:|--:|:--:|--:|--:|--:|",
    ]
    for s in res.standings:
        lines.append(
            f"| {s.rank} | `{s.spec}` | {_f(s.rating, '.0f')} | {_span(*s.ci95, '.0f')} | "
            f"{_f(s.mean_stakes, '+.3f')} | {_span(*s.stakes_ci95, '+.3f')} | "
            f"{_f(100 * s.win_rate, '.1f')} | {s.matches} | {s.hands} |"
        )
    order = [res.names.index(s.spec) for s in res.standings]
    lines += [
        "",
        "## Crosstable",
        "",
        "Mean stakes per hand of the row agent against the column agent (95% interval over deal groups; "
        "with more than 2 players: half the payoff difference, over the tables where both sat).",
        "",
        "| | " + " | ".join(f"{s.rank}" for s in res.standings) + " |",
        "|:--|" + "--:|" * len(order),
    ]
    for s, i in zip(res.standings, order, strict=True):
        cells = []
        for j in order:
            c = res.crosstable[i][j]
            cells.append("" if c is None else f"{_f(c.mean, '+.3f')} {format_ci(c.ci95, '+.2f')}")
        lines.append(f"| {s.rank}. `{short_label(s.spec)}` | " + " | ".join(cells) + " |")
    hands = sorted(p.name for p in (res.folder / "hands").glob("*.jsonl"))
    if hands:
        lines += [
            "",
            "## Sample hands",
            "",
            "The first hands of each match, as JSON lines of hand records: open one in the replay viewer "
            "(`tonk serve`, then http://127.0.0.1:8000/replay, *Open a file*).",
            "",
            *(f"- [hands/{h}](hands/{h})" for h in hands),
        ]
    if not res.complete:
        lines += ["", "**Incomplete**: not every scheduled match has been played yet."]
    return "\n".join(lines) + "\n"


def print_err(msg: str) -> None:
    """Log lines on stderr (the leaderboard goes to stdout)."""
    print(msg, file=sys.stderr, flush=True)
