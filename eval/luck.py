"""The luck-corrected figures of a duplicate evaluation (``evaluate(..., luck=VALUE)``).

Each hand's payoffs plus its luck terms (:mod:`tonk_env.luck`: at every stock
draw, the mean value over the cards that could have come minus the value of
the card that came) give the corrected payoffs; the corrected sample of an
agent in a deal group is the mean of its corrected seat-hands, exactly as the
plain sample is the mean of its payoffs. The terms have mean zero for any
fixed policies that do not see the stock's order, so both figures estimate
the same mean; the corrected one has less of the draws' luck in it. The
*factor* is the plain interval's width over the corrected interval's width
on the same deal groups (2 means the corrected estimate is as precise as the
plain one on 4 times the hands).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tonk_env.luck import ValueNet

from .stats import format_ci, mean_ci


@dataclass
class LuckLine:
    """One agent's plain and luck-corrected figures over the same deal groups."""

    spec: str
    mean_stakes: float
    ci95: tuple[float, float]
    plain_mean: float
    plain_ci95: tuple[float, float]

    @property
    def factor(self) -> float:
        """Plain interval width over corrected interval width (NaN when undefined)."""
        plain = self.plain_ci95[1] - self.plain_ci95[0]
        corr = self.ci95[1] - self.ci95[0]
        return plain / corr if corr > 0 and not math.isnan(plain) else math.nan

    @property
    def inside_plain(self) -> bool:
        """Whether the corrected mean lies inside the plain 95% interval."""
        return self.plain_ci95[0] <= self.mean_stakes <= self.plain_ci95[1]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "spec": self.spec,
            "mean_stakes": self.mean_stakes,
            "ci95": list(self.ci95),
            "plain_mean_stakes": self.plain_mean,
            "plain_ci95": list(self.plain_ci95),
            "factor": self.factor,
            "inside_plain_ci95": self.inside_plain,
        }


@dataclass
class LuckReport:
    """The corrected figures of every agent and the value function that made them."""

    value: str  # the value's name
    path: str
    sha256: str
    agents: list[LuckLine]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (the ``luck`` object of ``tonk eval --json``)."""
        return {
            "value": self.value,
            "file": self.path,
            "sha256": self.sha256,
            "agents": [a.to_dict() for a in self.agents],
        }


def luck_report(
    value: ValueNet,
    specs: Sequence[str],
    plain: Sequence[Sequence[float]],
    corrected: Sequence[Sequence[float]],
) -> LuckReport:
    """The report from per-group samples: ``plain[g][i]`` and ``corrected[g][i]`` of agent ``i``."""
    lines = []
    for i, spec in enumerate(specs):
        pm, pci = mean_ci([row[i] for row in plain])
        cm, cci = mean_ci([row[i] for row in corrected])
        lines.append(LuckLine(spec, cm, cci, pm, pci))
    return LuckReport(value.name, value.path, value.sha256, lines)


def format_luck(rep: LuckReport) -> list[str]:
    """The lines the evaluation table prints for the correction."""
    out = [
        f"luck-corrected (AIVAT, stock draws) with value {rep.value}: {rep.path}",
        f"  sha256 {rep.sha256}",
    ]
    width = max(len("agent"), *(len(a.spec) for a in rep.agents))
    cols = f"{'agent':{width}s}  {'corrected':>9s}  {'95% CI':>17s}  {'plain 95% CI':>17s}  {'factor':>6s}"
    out += [cols, "-" * len(cols)]
    for a in rep.agents:
        ci, pci = format_ci(a.ci95), format_ci(a.plain_ci95)
        out.append(f"{a.spec:{width}s}  {a.mean_stakes:+9.3f}  {ci:>17s}  {pci:>17s}  {a.factor:6.2f}")
    out.append("(factor: plain interval width / corrected interval width, on the same deals)")
    return out


__all__ = ["LuckLine", "LuckReport", "format_luck", "luck_report"]
