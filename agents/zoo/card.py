"""Model cards of the zoo: the JSON record of a shipped agent, checked whole, and its Markdown page.

A card ``agents/zoo/<name>.json`` describes the network ``<name>.npz`` next
to it. Its fields (``FORMAT`` ``tonk-zoo-card/1``):

======================  ==================================================================
field                   content
======================  ==================================================================
``format``              ``tonk-zoo-card/1``
``name``                the zoo name (``zoo:<name>``)
``file``, ``sha256``    the network file and the SHA-256 of its bytes (checked at load)
``num_players``         the table size it was trained for
``rules``               the rules preset the run named, ``rule_options`` its changes,
                        ``rules_hash`` the hash of the resolved options (checked at load)
``obs_version``         the observation layout version (checked at load)
``network``             ``activation`` and the layer ``sizes`` (inputs, hidden..., logits)
``source``              the run folder, checkpoint and step it was exported from; ``averaged``
                        (the networks' specs) for a ``tonk average`` network, ``widened``
                        (the network it grew from) for a ``tonk widen`` one
``config``              the run's resolved training config
``training``            ``steps`` (PPO), ``wall_seconds`` (warm start and PPO), ``ppo_seconds``,
                        ``start`` (the network it began from: PPO's ``init_from``, or
                        ``tonk improve``'s ``start``; absent when it began from scratch),
                        ``machine`` (as given to ``tonk zoo
                        add --machine``, else the machine that wrote the card),
                        ``torch_cpu_capability`` and ``versions`` from the run's ``run.json``
``commit``              the source commit when the card was written (None outside a git
                        checkout), ``dirty`` whether the working tree had changes
``evaluation``          duplicate-deal results: ``hands``, ``seed``, and one row per
                        opponent (``opponent``, ``mean_stakes``, ``ci95``, ``win_rate``,
                        ``hands``), weakest opponent first; after ``tonk zoo card NAME
                        --evaluate`` also ``evaluated`` (when, UTC), ``commit`` and ``dirty``
``headline``            the opponent whose row is the card's headline (the last one by
                        default: the strongest baseline)
``best_response``       None, or what ``tonk exploit`` found: ``margin`` (the best
                        response's stakes per hand against this agent), ``ci95``,
                        ``hands``, ``steps``, ``seed``, ``run``, ``commit``
``created``             when the card was written (UTC, ISO 8601)
======================  ==================================================================

:func:`check_card` refuses a card with a missing or mistyped field, naming
it; :func:`render_markdown` writes the human-readable page from the card.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tonk_env.engine.schema import build, setting

__all__ = ["FORMAT", "check_card", "headline", "headline_row", "render_markdown", "rules_text"]

FORMAT = "tonk-zoo-card/1"

#: The words of a 95% interval.
_INTERVAL = "an interval [low, high] of finite numbers"


@dataclass
class _Row:
    """One evaluation row (the schema :func:`check_card` checks; other fields are kept)."""

    opponent: str
    mean_stakes: float
    ci95: list[float] = setting(words=_INTERVAL)
    win_rate: float = setting(words="a number")
    hands: int = setting(words="an integer")


@dataclass
class _Evaluation:
    """The card's duplicate-deal results."""

    hands: int
    seed: int
    results: list[_Row] = setting(words="a non-empty list of evaluation rows (objects)")


@dataclass
class _Best:
    """What ``tonk exploit`` found."""

    spec: str
    margin: float
    ci95: list[float] = setting(words=_INTERVAL)
    hands: int = setting(words="an integer")
    steps: int = setting(words="an integer")
    seed: int = setting(words="an integer")


@dataclass
class _Card:
    """The required fields of a card and their types (extra fields are allowed)."""

    format: str = setting(words=repr(FORMAT), choices=(FORMAT,))
    name: str = setting(words="a string")
    file: str = setting(words="a string")
    sha256: str = setting(words="a string")
    num_players: int = setting(words="an int 2..6", low=2, high=6)
    rules: str = setting(words="a string")
    rule_options: dict[str, Any] = setting(words="a mapping")
    rules_hash: str = setting(words="a string")
    obs_version: int = setting(words="an integer")
    network: dict[str, Any] = setting(words="a mapping")
    source: dict[str, Any] = setting(words="a mapping")
    config: dict[str, Any] = setting(words="a mapping")
    training: dict[str, Any] = setting(words="a mapping")
    evaluation: _Evaluation = setting(words="a mapping")
    headline: str = setting(words="a string")
    created: str = setting(words="a string")
    best_response: _Best | None = setting(None, "an object or null")


def _check_interval(where: str, ci: list[Any]) -> None:
    """A 95% interval: two finite numbers, low first."""
    if len(ci) != 2 or not all(isinstance(x, (int, float)) and math.isfinite(x) for x in ci) or ci[0] > ci[1]:
        raise ValueError(f"{where}: ci95 {ci!r} is not an interval [low, high] of finite numbers")


def check_card(card: Any, where: str) -> dict[str, Any]:
    """Return ``card`` if it is a whole zoo card, else raise ``ValueError`` naming ``where`` and the field."""
    if not isinstance(card, dict):
        raise ValueError(f"{where}: a card is a JSON object, this is {type(card).__name__}")
    built: _Card = build(_Card, card, f"{where}:", extra=True)
    if built.file != f"{built.name}.npz":
        raise ValueError(f"{where}: file {built.file!r} is not {built.name}.npz")
    if not built.evaluation.results:
        raise ValueError(f"{where}: evaluation has no results")
    for i, row in enumerate(built.evaluation.results):
        _check_interval(f"{where}: evaluation result {i}", row.ci95)
    headline_row(card, where)
    if built.best_response is not None:
        _check_interval(f"{where}: best_response", built.best_response.ci95)
    return card


def headline_row(card: Mapping[str, Any], where: str = "card") -> dict[str, Any]:
    """The evaluation row named by the card's ``headline``."""
    for row in card["evaluation"]["results"]:
        if row["opponent"] == card["headline"]:
            return dict(row)
    known = ", ".join(r["opponent"] for r in card["evaluation"]["results"])
    raise ValueError(f"{where}: headline {card['headline']!r} is not an evaluated opponent ({known})")


def rules_text(card: Mapping[str, Any]) -> str:
    """The card's rules as one label: the preset and each changed option (``standard hit_wait=1``)."""
    opts = card["rule_options"]
    return card["rules"] + "".join(f" {k}={v}" for k, v in opts.items())


def headline(card: Mapping[str, Any]) -> str:
    """One line: table, rules, the headline result and the best response's margin (``tonk agents``)."""
    row = headline_row(card)
    lo, hi = row["ci95"]
    text = (
        f"{card['num_players']} players, {rules_text(card)}: {row['mean_stakes']:+.3f} stakes/hand "
        f"vs {row['opponent']} [{lo:+.3f}, {hi:+.3f}]"
    )
    best = card.get("best_response")
    if best:
        text += f"; a best response wins {best['margin']:+.3f}"
    return text


def render_markdown(card: Mapping[str, Any]) -> str:
    """The human-readable page of a card (``agents/zoo/<name>.md``)."""
    tr = card["training"]
    net = card["network"]
    src = card["source"]
    ev = card["evaluation"]
    dirty = " (with local changes)" if card.get("dirty") else ""
    lines = [
        f"# zoo:{card['name']}",
        "",
        f"{headline(card)}.",
        "",
        "| | |",
        "|---|---|",
        f"| players | {card['num_players']} |",
        f"| rules | {rules_text(card)} (hash `{card['rules_hash']}`) |",
        f"| observation layout | version {card['obs_version']} |",
        f"| network | {net.get('activation', '?')}, layers {net.get('sizes', '?')} |",
        f"| file | `{card['file']}` (sha256 `{card['sha256'][:16]}...`) |",
        _trained(tr),
        f"| machine | {tr.get('machine', '?')} (torch kernels {tr.get('torch_cpu_capability', '?')}) |",
        _source_row(src, tr),
        f"| commit | {card.get('commit') or 'unknown'}{dirty} |",
        f"| card written | {card['created']} |",
        "",
        f"## Evaluation ({ev['hands']} duplicate hands per opponent, seed {ev['seed']})",
        "",
    ]
    if ev.get("evaluated"):
        dirty_ev = " (with local changes)" if ev.get("dirty") else ""
        lines += [
            f"Measured again on {ev['evaluated']} at commit {ev.get('commit') or 'unknown'}{dirty_ev} "
            f"(`tonk zoo card {card['name']} --evaluate --hands {ev['hands']} --seed {ev['seed']}`).",
            "",
        ]
    lines += ["| opponent | stakes/hand | 95% CI | win rate | hands |", "|---|---:|---:|---:|---:|"]
    for row in ev["results"]:
        lo, hi = row["ci95"]
        lines.append(
            f"| {row['opponent']} | {row['mean_stakes']:+.3f} | [{lo:+.3f}, {hi:+.3f}] | "
            f"{row['win_rate']:.1%} | {row['hands']} |"
        )
    lines += ["", "## Best response", ""]
    best = card.get("best_response")
    if best:
        lo, hi = best["ci95"]
        lines.append(
            f"A best response trained for {best['steps']:,} steps against this agent in every other seat "
            f"(`tonk exploit zoo:{card['name']} --steps {best['steps']} --seed {best['seed']}`) wins "
            f"{best['margin']:+.3f} stakes/hand [{lo:+.3f}, {hi:+.3f}] over {best['hands']} duplicate hands "
            f"(run `{best.get('run', '?')}`, commit {best.get('commit') or 'unknown'})."
        )
        if best.get("init_from"):
            start = f"It was warm-started from `{best['init_from']}`"
            if best.get("best_step") == 0:
                start += (
                    "; no later checkpoint scored better than that start, so its best checkpoint is the "
                    "start itself and the margin measures the start, not a weakness found"
                )
            elif best.get("best_step") is not None:
                start += f"; its best checkpoint is step {best['best_step']:,}"
            lines.append("")
            lines.append(start + ".")
    else:
        name = card["name"]
        lines.append(
            f"Not measured yet: `tonk exploit zoo:{name}`, then `tonk zoo card {name} --exploit RUN_DIR`."
        )
    lines += ["", "This page is written from the card `" + card["name"] + ".json` by `tonk zoo card`.", ""]
    return "\n".join(lines)


def _source_row(src: Mapping[str, Any], tr: Mapping[str, Any]) -> str:
    """The card's "source" row: run, checkpoint and step, and an averaged or widened network's making."""
    text = f"| source | `{src.get('run', '?')}`, {src.get('checkpoint', '?')}"
    if src.get("step") is not None:
        text += f", {'generation' if tr.get('generations') is not None else 'step'} {src['step']}"
    averaged = src.get("averaged")
    if isinstance(averaged, list) and averaged:
        names = ", ".join(f"`{a}`" for a in averaged)
        text += (
            f"; the average of {len(averaged)} networks (`tonk average`): {names}; the training row "
            "counts the run named here only"
        )
    if src.get("widened"):
        text += f"; widened (`tonk widen`) from `{src['widened']}`"
    return text + " |"


def _trained(tr: Mapping[str, Any]) -> str:
    """The card's "trained" row: PPO steps, or generations of policy improvement (``tonk improve``)."""
    if tr.get("generations") is not None:
        return (
            f"| trained | {_duration(tr.get('wall_seconds'))} in all: {tr['generations']} generations of "
            f"policy improvement by its own playouts (`tonk improve`) from {tr.get('start', '?')} |"
        )
    start = f" from {tr['start']}" if tr.get("start") else ""
    return (
        f"| trained | {_duration(tr.get('wall_seconds'))} in all; {_steps(tr.get('steps'))} PPO steps "
        f"in {_duration(tr.get('ppo_seconds', tr.get('wall_seconds')))}{start} |"
    )


def _steps(steps: Any) -> str:
    """``1,000,000`` (``?`` when unknown)."""
    return f"{steps:,}" if isinstance(steps, int) else "?"


def _duration(seconds: Any) -> str:
    """``3 h 20 min`` from seconds (``?`` when unknown)."""
    if not isinstance(seconds, (int, float)) or not math.isfinite(seconds):
        return "?"
    if seconds < 60:
        return f"{seconds:.0f} s"
    minutes = int(round(seconds / 60))
    return f"{minutes // 60} h {minutes % 60} min" if minutes >= 60 else f"{minutes} min"
