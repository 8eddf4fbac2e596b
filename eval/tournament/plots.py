"""Tournament plots: rating against training step per run, and the crosstable heatmap (matplotlib, Agg)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from .entrants import short_label
from .standings import Standing, TournamentResult


def _plt() -> Any:
    import matplotlib  # a heavy import, only when plotting

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_ratings_by_step(res: TournamentResult, path: str | Path) -> Path:
    """``ratings_by_step.png``: each run's checkpoints (rating, 95% interval) by step; baselines as lines."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(8, 4.8))
    runs: dict[str, list[Standing]] = {}
    others = []
    for s in res.standings:
        if s.checkpoint and s.step is not None and s.rating == s.rating:
            runs.setdefault(s.run or "?", []).append(s)
        elif s.rating == s.rating:
            others.append(s)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for k, (run, pts) in enumerate(sorted(runs.items())):
        pts.sort(key=lambda s: (s.step, s.spec))
        color = colors[k % len(colors)]
        line = [s for s in pts if "step_" in Path(s.spec.partition(":")[2].partition("?")[0]).name]
        marks = [s for s in pts if s not in line]  # best.zip, final.zip, run folders: marked, not joined
        if line:
            ax.errorbar(
                [s.step for s in line],
                [s.rating for s in line],
                yerr=_yerr(line),
                marker="o",
                capsize=3,
                color=color,
                label=run,
            )
        for s in marks:
            ax.errorbar(
                [s.step],
                [s.rating],
                yerr=_yerr([s]),
                marker="*",
                markersize=11,
                capsize=3,
                color=color,
                linestyle="none",
                label=f"{run}: {short_label(s.spec, 30).split('/')[-1]}",
            )
    styles = ["--", ":", "-.", (0, (5, 1)), (0, (3, 1, 1, 1))]
    for k, s in enumerate(others):
        color = "0.35" if s.checkpoint else colors[(len(runs) + k) % len(colors)]
        ax.axhline(
            s.rating,
            linestyle=styles[k % len(styles)],
            color=color,
            linewidth=1.2,
            label=short_label(s.spec, 30),
        )
        if s.ci95[0] == s.ci95[0] and s.ci95[1] > s.ci95[0]:
            ax.axhspan(s.ci95[0], s.ci95[1], color=color, alpha=0.08, linewidth=0)
    if not runs:
        ax.text(
            0.5,
            0.5,
            "no checkpoints with a training step in this tournament",
            transform=ax.transAxes,
            ha="center",
            va="center",
            color="0.4",
        )
    ax.set_xlabel("training step")
    ax.set_ylabel("rating (Elo scale)")
    ax.set_title(f"Ratings by training step ({res.config.players} players, {res.config.hands} hands a match)")
    ax.grid(alpha=0.3)
    if runs or others:
        ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    out = Path(path)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def _yerr(pts: list[Standing]) -> list[list[float]]:
    lo = [s.rating - s.ci95[0] if s.ci95[0] == s.ci95[0] else 0.0 for s in pts]
    hi = [s.ci95[1] - s.rating if s.ci95[1] == s.ci95[1] else 0.0 for s in pts]
    return [lo, hi]


def plot_crosstable(res: TournamentResult, path: str | Path) -> Path:
    """``crosstable.png``: mean stakes per hand of row vs column, agents in leaderboard order."""
    plt = _plt()
    order = [res.names.index(s.spec) for s in res.standings]
    n = len(order)
    data = np.full((n, n), np.nan)
    for a, i in enumerate(order):
        for b, j in enumerate(order):
            c = res.crosstable[i][j]
            if c is not None:
                data[a, b] = c.mean
    size = max(4.5, 0.6 * n + 2.5)
    fig, ax = plt.subplots(figsize=(size + 1.2, size))
    finite = data[np.isfinite(data)]
    vmax = float(np.max(np.abs(finite))) if finite.size else 1.0
    vmax = vmax if vmax > 0 else 1.0
    cmap = plt.get_cmap("RdBu").with_extremes(bad="0.92")
    im = ax.imshow(np.ma.masked_invalid(data), cmap=cmap, vmin=-vmax, vmax=vmax)
    labels = [f"{s.rank}. {short_label(s.spec, 28)}" for s in res.standings]
    ax.set_xticks(range(n), [str(s.rank) for s in res.standings])
    ax.set_yticks(range(n), labels, fontsize=8)
    ax.set_xlabel("opponent (rank)")
    if n <= 16:
        for a in range(n):
            for b in range(n):
                if not math.isnan(data[a, b]):
                    ax.text(
                        b,
                        a,
                        f"{data[a, b]:+.2f}",
                        ha="center",
                        va="center",
                        fontsize=7,
                        color="white" if abs(data[a, b]) > 0.6 * vmax else "black",
                    )
    fig.colorbar(im, ax=ax, label="mean stakes per hand (row vs column)", shrink=0.8)
    ax.set_title("Crosstable")
    fig.tight_layout()
    out = Path(path)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out
