"""The job behind ``make run`` (``tonk pipeline``): train a quick agent, evaluate it against the baselines.

It sits above both ``train`` and ``eval`` (which do not import each other):
training scores its checkpoints with :func:`eval.duplicate.evaluate`, passed
in, and the finished run's ``best.zip`` is then evaluated against each
baseline the same way, and against the zoo's agent for its table (players
and rules) when the zoo has one (:mod:`agents.zoo`), so the table shows how
far the quick agent is from the best shipped one.

Example::

    from tonk_cli.workflows.pipeline import format_pipeline, run_pipeline

    print(format_pipeline(run_pipeline("quick", hands=500, progress=False)))
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agents.zoo import find_entry
from eval.duplicate import evaluate
from eval.stats import format_ci
from tonk_env.engine import make_rules
from train.config import load_config
from train.trainer import train

from ..recipes import find_config
from .common import ScoreRow, score_row

__all__ = ["DEFAULT_BASELINES", "PipelineReport", "format_pipeline", "run_pipeline"]

DEFAULT_BASELINES = ("random", "heuristic:greedy", "heuristic:expert")


@dataclass(frozen=True)
class PipelineReport:
    """A trained agent and its scores against the baselines."""

    run_dir: Path
    """The training run folder."""
    agent: str
    """The trained agent's spec (``ppo:<run>/best.zip`` or ``rllib:<run>``)."""
    results: list[ScoreRow]
    """One row per opponent, in order."""
    note: str | None = None
    """Why the zoo's agent is missing from the opponents, when it is."""

    def to_json(self) -> dict[str, Any]:
        """The report as ``tonk pipeline --json`` prints it."""
        out: dict[str, Any] = {
            "run_dir": str(self.run_dir),
            "agent": self.agent,
            "results": [r.to_json() for r in self.results],
        }
        if self.note is not None:
            out["note"] = self.note
        return out


def run_pipeline(
    config: str | Path = "quick",
    overrides: list[str] | None = None,
    baselines: tuple[str, ...] = DEFAULT_BASELINES,
    hands: int = 2000,
    seed: int = 2024,
    workers: int = 1,
    progress: bool = True,
    zoo: bool = True,
) -> PipelineReport:
    """Train ``config``, then a duplicate evaluation of ``ppo:<run>/best.zip`` (``rllib:<run>``) per baseline.

    ``config`` is a shipped config's name (default ``quick``) or a YAML file. ``zoo`` adds the
    zoo's agent for this table (if there is one) to the opponents.
    """
    cfg = load_config(find_config(config), overrides)
    run_dir = train(cfg, progress=progress, evaluate=evaluate)
    spec = f"rllib:{run_dir}" if cfg.backend == "rllib" else f"ppo:{run_dir / 'best.zip'}"
    rules = make_rules(cfg.rules, **cfg.rule_options)
    rules_name = cfg.rules + "".join(f" {k}={v}" for k, v in cfg.rule_options.items())
    entry = find_entry(cfg.players, rules.hash) if zoo else None
    opponents = [*baselines, *([f"zoo:{entry}"] if entry else [])]
    rows = []
    for opp in opponents:
        res = evaluate(
            [spec, opp],
            hands=hands,
            players=cfg.players,
            rules=rules,
            seed=seed,
            workers=workers,
            progress=progress,
            rules_name=cfg.rules,
        )
        rows.append(score_row(opp, res))
    note = None
    if zoo and entry is None:
        note = (
            f"the zoo has no agent for {cfg.players} players, rules {rules_name} (hash {rules.hash}); "
            "tonk zoo list shows what it has"
        )
    return PipelineReport(Path(run_dir), spec, rows, note)


def format_pipeline(report: PipelineReport) -> str:
    """The table printed at the end of ``make run``."""
    lines = [
        f"Agent {report.agent}",
        f"{'opponent':22s} {'stakes/hand':>11s}  {'95% CI':>17s}  {'win rate':>8s}  {'hands':>6s}",
    ]
    for r in report.results:
        lo, hi = r.ci95
        verdict = "beats" if lo > 0 else ("loses to" if hi < 0 else "level with")
        lines.append(
            f"{r.opponent:22s} {r.mean_stakes:+11.3f}  {format_ci(r.ci95):>17s}  "
            f"{r.win_rate:8.1%}  {r.hands:6d}   {verdict}"
        )
    if report.note:
        lines.append(report.note)
    return "\n".join(lines)
