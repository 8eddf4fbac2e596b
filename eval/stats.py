"""Interval arithmetic of evaluations: the Student-t 95% interval of independent samples."""

from __future__ import annotations

import math
from collections.abc import Sequence


def t_quantile_975(df: int) -> float:
    """The 97.5% quantile of Student's t with ``df`` degrees of freedom."""
    table = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
             2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
             2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042)  # fmt: skip
    if df < 1:
        return math.inf
    if df <= len(table):
        return table[df - 1]
    z = 1.959963984540054
    # Cornish-Fisher expansion of t around the normal quantile (error < 1e-4 for df > 30)
    return (z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)
            + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * df**3))  # fmt: skip


def mean_ci(samples: Sequence[float]) -> tuple[float, tuple[float, float]]:
    """Mean and Student-t 95% interval of independent samples (NaN interval for fewer than 2)."""
    n = len(samples)
    if n == 0:
        return math.nan, (math.nan, math.nan)
    mean = math.fsum(samples) / n
    if n < 2:
        return mean, (math.nan, math.nan)
    var = math.fsum((x - mean) ** 2 for x in samples) / (n - 1)
    half = t_quantile_975(n - 1) * math.sqrt(var / n)
    return mean, (mean - half, mean + half)


def format_ci(ci: tuple[float, float], fmt: str = "+.3f") -> str:
    """An interval as ``[lo, hi]``, or ``n/a`` where it is undefined (one sample: NaN bounds)."""
    lo, hi = ci
    if math.isnan(lo) or math.isnan(hi):
        return "n/a"
    return f"[{lo:{fmt}}, {hi:{fmt}}]"


__all__ = ["format_ci", "mean_ci", "t_quantile_975"]
