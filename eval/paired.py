"""Two agents against the same opponents on the same deals: their difference, paired by deal group.

``tonk eval AGENT OPPONENT... --compare OTHER`` plays the evaluation twice,
once with ``OTHER`` in ``AGENT``'s place. Both see the same deals, seatings and
random streams (a hand's seeds depend only on the seed, the group, the
seating and the seat: :func:`eval.duplicate.hand_seed`), so in every deal
group the two samples share the deal's luck, and their difference has far
less of it than either. The difference's interval is over the groups'
differences; the *factor* is the width the interval would have if the two
had been measured on independent deals (the two plain intervals combined)
over the paired width. Where the two agents decide alike in a whole group,
its difference is exactly zero: ``differ`` is the share of groups where
they do not.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .duplicate import EvalResult
from .stats import format_ci, mean_ci, t_quantile_975


@dataclass
class Difference:
    """``agent`` minus ``other``: mean, paired 95% interval and the unpaired interval's half width."""

    mean: float
    ci95: tuple[float, float]
    unpaired_half: float

    @property
    def factor(self) -> float:
        """Unpaired interval width over paired interval width (NaN when undefined)."""
        paired = self.ci95[1] - self.ci95[0]
        return (
            2 * self.unpaired_half / paired if paired > 0 and not math.isnan(self.unpaired_half) else math.nan
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "mean_stakes": self.mean,
            "ci95": list(self.ci95),
            "unpaired_ci95": [self.mean - self.unpaired_half, self.mean + self.unpaired_half],
            "factor": self.factor,
        }


@dataclass
class PairedReport:
    """The comparison of ``agent`` and ``other`` over the same deal groups."""

    agent: str
    other: str
    opponents: list[str]
    groups: int
    agent_mean: float
    other_mean: float
    other_ci95: tuple[float, float]
    differ: float  # share of deal groups whose two samples differ
    plain: Difference
    corrected: Difference | None = None  # the same from the luck-corrected samples (with --luck)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (the ``compare`` object of ``tonk eval --json``)."""
        d: dict[str, Any] = {
            "agent": self.agent,
            "other": self.other,
            "opponents": self.opponents,
            "deal_groups": self.groups,
            "agent_mean_stakes": self.agent_mean,
            "other_mean_stakes": self.other_mean,
            "other_ci95": list(self.other_ci95),
            "groups_that_differ": self.differ,
            "difference": self.plain.to_dict(),
        }
        if self.corrected is not None:
            d["corrected_difference"] = self.corrected.to_dict()
        return d


def _difference(a: Sequence[float], b: Sequence[float]) -> Difference:
    """The paired difference of two per-group samples and the half width it would have unpaired."""
    mean, ci = mean_ci([x - y for x, y in zip(a, b, strict=True)])
    n = len(a)
    if n < 2:
        return Difference(mean, ci, math.nan)
    var = [math.fsum((x - math.fsum(s) / n) ** 2 for x in s) / (n - 1) for s in (a, b)]
    return Difference(mean, ci, t_quantile_975(n - 1) * math.sqrt((var[0] + var[1]) / n))


def check_comparable(a: EvalResult, b: EvalResult) -> None:
    """A ``ValueError`` unless ``a`` and ``b`` were played on the same deals against the same opponents."""
    same = {
        "seed": (a.seed, b.seed),
        "players": (a.players, b.players),
        "rules": (a.rules.hash, b.rules.hash),
        "deal groups": (a.groups, b.groups),
        "seatings": (a.arrangements, b.arrangements),
        "opponents": ([x.spec for x in a.agents[1:]], [x.spec for x in b.agents[1:]]),
    }
    for what, (x, y) in same.items():
        if x != y:
            raise ValueError(f"the two evaluations differ in their {what} ({x} and {y}): not paired")


def compare(a: EvalResult, b: EvalResult) -> PairedReport:
    """The first agent of ``a`` minus the first agent of ``b``, paired by deal group."""
    check_comparable(a, b)
    pa = [row[0] for row in a.group_payoffs]
    pb = [row[0] for row in b.group_payoffs]
    corrected = None
    if a.group_corrected is not None and b.group_corrected is not None:
        corrected = _difference([r[0] for r in a.group_corrected], [r[0] for r in b.group_corrected])
    first, other = a.agents[0], b.agents[0]
    return PairedReport(
        agent=first.spec,
        other=other.spec,
        opponents=[x.spec for x in a.agents[1:]],
        groups=a.groups,
        agent_mean=first.mean_stakes,
        other_mean=other.mean_stakes,
        other_ci95=other.ci95,
        differ=sum(x != y for x, y in zip(pa, pb, strict=True)) / len(pa) if pa else math.nan,
        plain=_difference(pa, pb),
        corrected=corrected,
    )


def _line(label: str, d: Difference) -> str:
    spread = (
        "" if math.isnan(d.unpaired_half) else f"  (unpaired: +-{d.unpaired_half:.4f}; factor {d.factor:.2f})"
    )
    return f"{label:10s} {d.mean:+.4f}  {format_ci(d.ci95, '+.4f'):>18s}{spread}"


def format_paired(rep: PairedReport) -> list[str]:
    """The lines the evaluation table prints for ``--compare``."""
    groups = f"{rep.groups} deal group" + ("" if rep.groups == 1 else "s")
    out = [
        f"--compare: the same {groups} again, {100 * rep.differ:.1f}% played otherwise",
        f"  {rep.other} in {rep.agent}'s place: {rep.other_mean:+.4f} {format_ci(rep.other_ci95, '+.4f')}",
        f"  {rep.agent} - {rep.other}, paired by deal group:",
        "  " + _line("plain", rep.plain),
    ]
    if rep.corrected is not None:
        out.append("  " + _line("corrected", rep.corrected))
    out.append("(factor: the interval's width on independent deals / its width paired)")
    return out


__all__ = ["Difference", "PairedReport", "check_comparable", "compare", "format_paired"]
