"""Reporting an evaluation: a terminal table and the ``--json`` object.

The table has one line per agent (an agent given twice is labelled ``spec#1``,
``spec#2``): mean stakes per hand with the 95%
interval over deal groups, win rate (payoff above zero), and how the agent
ended hands (percent of its seat-hands: tonk out, run out, drop won, caught,
stock out won), then a footer with how all hands ended and their mean
length in turns.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .duplicate import EvalResult
from .luck import format_luck
from .paired import PairedReport, format_paired
from .stats import format_ci

_END_COLUMNS = (("tonk_out", "tonk"), ("run_out", "run"), ("drop_won", "drop+"), ("caught", "caught"),
                ("stock_out", "stock"))  # fmt: skip
_KIND_LABELS = {
    "tonk_out": "tonk out", "run_out": "run out", "drop_won": "drop won", "caught": "caught",
    "stock_out": "stock out", "instant_win": "instant win", "void": "void",
}  # fmt: skip


def _num(x: float, fmt: str = "+.3f") -> str:
    return "nan" if x != x else format(x, fmt)


def format_table(res: EvalResult, compare: PairedReport | None = None) -> str:
    """The evaluation as a plain-text table (and its comparison with another agent, if given)."""
    arr = len(res.arrangements)
    head = (
        f"duplicate evaluation: {res.players} players, rules {res.rules_name} ({res.rules.hash}), "
        f"seed {res.seed}, "
        f"{res.hands} hands = {res.groups} deal{'' if res.groups == 1 else 's'} "
        f"x {arr} seating{'' if arr == 1 else 's'}"
    )
    labels = res.labels  # a spec that fills two places is shown as spec#1, spec#2
    width = max(len("agent"), *(len(x) for x in labels))
    cols = f"{'agent':{width}s}  {'stakes/hand':>11s}  {'95% CI':>17s}  {'win%':>5s}  " + "  ".join(
        f"{label:>6s}" for _, label in _END_COLUMNS
    )
    lines = [head, "", cols, "-" * len(cols)]
    for label, a in zip(labels, res.agents, strict=True):
        ci = format_ci(a.ci95)
        ends = "  ".join(f"{100 * a.ends[k]:6.1f}" for k, _ in _END_COLUMNS)
        lines.append(
            f"{label:{width}s}  {_num(a.mean_stakes):>11s}  {ci:>17s}  {100 * a.win_rate:5.1f}  {ends}"
        )
    lines.append("")
    lines.append(
        "hands ended: " + ", ".join(f"{_KIND_LABELS[k]} {100 * v:.1f}%" for k, v in res.ends.items() if v > 0)
    )
    lines.append(f"mean hand length: {res.mean_turns:.1f} turns")
    think = ", ".join(
        f"{label} {1000 * a.seconds_per_hand:.2f} ms"
        for label, a in zip(labels, res.agents, strict=True)
        if not math.isnan(a.seconds_per_hand)
    )
    lines.append(
        f"time: {res.elapsed_s:.1f} s, {res.hands_per_s:,.0f} hands/s with {res.workers} worker(s); "
        f"thinking per hand: {think}"
    )
    lines.append("(ends columns: % of the agent's seat-hands it ended that way; stock = stock-outs it won)")
    if res.groups < 2:
        lines.append(
            f"(95% CI n/a: one deal group; --hands {arr + 1} or more plays two, the fewest an interval needs)"
        )
    if res.luck is not None:
        lines += ["", *format_luck(res.luck)]
    if compare is not None:
        lines += ["", *format_paired(compare)]
    return "\n".join(lines)


def to_json(res: EvalResult, timing: bool = True, compare: PairedReport | None = None) -> str:
    """The evaluation as one JSON object (:meth:`EvalResult.to_dict`; ``compare`` is its ``compare`` key)."""
    d = res.to_dict(timing=timing)
    if compare is not None:
        d["compare"] = compare.to_dict()
    return json.dumps(_clean(d))


def _clean(x: Any) -> Any:
    if isinstance(x, float) and (math.isnan(x) or math.isinf(x)):
        return None
    if isinstance(x, dict):
        return {k: _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    return x


def write_hands(path: str | Path, records: Sequence[dict[str, Any]]) -> Path:
    """Write hand records as JSON lines (one hand a line), creating the folder; return the path."""
    p = Path(path)
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records), encoding="utf-8")
    except OSError as e:
        raise ValueError(f"cannot write the hand records to {p}: {e.strerror or e}") from None
    return p
