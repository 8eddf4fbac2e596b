"""What the workflows share: the one-seat evaluation, a score row, the source commit."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from eval.duplicate import EvalResult, evaluate
from tonk_env.engine import TonkRules

__all__ = ["ScoreRow", "evaluate_one_seat", "git_commit", "score_row"]


@dataclass(frozen=True)
class ScoreRow:
    """One agent's duplicate score against one opponent."""

    opponent: str
    """The opponent's spec (in every other seat)."""
    mean_stakes: float
    """The agent's mean stakes per hand."""
    ci95: tuple[float, float]
    """The 95% interval of ``mean_stakes``."""
    win_rate: float
    """The share of hands the agent won."""
    hands: int
    """Hands the agent played."""

    def to_json(self) -> dict[str, Any]:
        """The row as the JSON object the reports and zoo cards hold (the fields in order)."""
        return {**asdict(self), "ci95": list(self.ci95)}


def score_row(opponent: str, result: EvalResult) -> ScoreRow:
    """The row of the first agent of ``result`` (the one in one seat) against ``opponent``."""
    me = result.agents[0]
    return ScoreRow(opponent, me.mean_stakes, (me.ci95[0], me.ci95[1]), me.win_rate, me.hands)


def git_commit(where: Path | None = None) -> tuple[str | None, bool]:
    """``(commit, dirty)`` of the git checkout holding this package (``(None, False)`` outside one)."""
    root = where or Path(__file__).resolve().parents[2]
    try:
        head = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10
        )
        if head.returncode != 0:
            return None, False
        status = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError):
        return None, False
    return head.stdout.strip() or None, bool(status.stdout.strip())


def evaluate_one_seat(
    specs: Sequence[str],
    hands: int = 1000,
    players: int = 2,
    rules: TonkRules | str = "standard",
    seed: int = 0,
    workers: int = 1,
    progress: bool | Callable[[int], None] = False,
    rules_name: str | None = None,
) -> EvalResult:
    """:func:`eval.duplicate.evaluate` with ``specs[0]`` in one seat and ``specs[1]`` in every other.

    Two specs at a table of more than two are repeated to ``[A, B, B, ...]``
    (plain evaluation would fill the seats ``A, B, A, ...``); the first line of
    the result is ``A``'s.
    """
    if len(specs) == 2 and players > 2:
        specs = [specs[0], *[specs[1]] * (players - 1)]
    return evaluate(specs, hands, players, rules, seed, workers, progress, rules_name)
