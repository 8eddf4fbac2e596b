"""The learning curve of a run, drawn from its ``metrics.jsonl``."""

from __future__ import annotations

import json
from pathlib import Path


def read_metrics(run_dir: Path) -> list[dict]:
    """All rows of ``metrics.jsonl`` (a partly written last line is skipped)."""
    path = Path(run_dir) / "metrics.jsonl"
    rows = []
    if path.is_file():
        for line in path.read_text().splitlines():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    return rows


def plot_learning_curve(run_dir: Path) -> Path | None:
    """Write ``learning_curve.png``: mean stakes/hand (95% CI) against each opponent vs steps."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    evals = [r for r in read_metrics(run_dir) if r.get("type") == "eval"]
    if not evals:
        return None
    specs = sorted({s for r in evals for s in r["results"]})
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for spec in specs:
        pts = [(r["step"], r["results"][spec]) for r in evals if spec in r["results"]]
        steps = [p[0] for p in pts]
        mean = [p[1]["mean_stakes"] for p in pts]
        lo = [p[1]["ci95"][0] for p in pts]
        hi = [p[1]["ci95"][1] for p in pts]
        ax.plot(steps, mean, marker="o", label=f"vs {spec}")
        ax.fill_between(steps, lo, hi, alpha=0.2)
    ax.axhline(0, color="grey", lw=0.8)
    ax.set_xlabel("learner steps")
    ax.set_ylabel("mean stakes per hand (95% CI)")
    ax.set_title(Path(run_dir).name, fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    out = Path(run_dir) / "learning_curve.png"
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out
