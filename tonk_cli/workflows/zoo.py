"""A training run added to the zoo, and a best response recorded on a card (``tonk zoo add|card``).

:func:`add_entry` exports the run's ``best.zip`` (or another checkpoint) to
``<zoo>/NAME.npz``, evaluates it on duplicate deals against the baselines (the
agent in one seat, the baseline in every other) and writes the card
``NAME.json`` and its page ``NAME.md`` (:mod:`agents.zoo`).
:func:`record_best_response` copies the margin of a ``tonk exploit zoo:NAME``
run (:mod:`tonk_cli.workflows.exploit`) into the card; :func:`reevaluate_card`
measures the shipped network again against its card's opponents (more hands, other
deals) and keeps the rest of the card; :func:`refresh_card` rewrites the page from
the card. The zoo folder is ``agents/zoo/`` of the
package, or ``$TONK_ZOO_DIR``.

Example::

    from tonk_cli.workflows.zoo import add_entry

    entry = add_entry("runs/quick__...", "mine", hands=1000, progress=False)
    print(entry.page_file, [(r.opponent, r.mean_stakes) for r in entry.results])
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agents.checkpoint import resolve_checkpoint
from agents.mlp import MLPPolicy
from agents.peek import refuse_peek
from agents.ppo import load_policy
from agents.registry import check_spec, parse_spec
from agents.zoo import card_path, check_name, load_zoo_agent, read_card, write_card, write_entry
from agents.zoo.card import FORMAT, rules_text
from eval.duplicate import arrangements
from tonk_env.engine import TonkRules, make_rules
from train.config import read_config_file

from .common import ScoreRow, evaluate_one_seat, git_commit, score_row
from .exploit import read_exploit

__all__ = [
    "BASELINES", "REEVALUATE_HANDS", "SEARCH_BASELINE", "ZooEntry", "add_entry", "default_baselines",
    "record_best_response", "reevaluate_card", "refresh_card",
]  # fmt: skip

#: The baselines of a card's evaluation, weakest first (the last one is the headline); two-player
#: entries meet the search too, as in docs/RESULTS.md's tables.
BASELINES = ("random", "heuristic:greedy", "heuristic:expert")
SEARCH_BASELINE = "search:ismcts"

#: Duplicate hands per opponent of ``tonk zoo card NAME --evaluate``: enough to resolve a margin at
#: the top of the ladder (docs/RESULTS.md, "every zoo card measured again at 20,000 hands a row").
REEVALUATE_HANDS = 20000


@dataclass(frozen=True)
class ZooEntry:
    """A zoo entry as written: its card and the files that hold it."""

    name: str
    """The zoo name (the agent ``zoo:NAME``)."""
    card: dict[str, Any]
    """The model card (the format of :mod:`agents.zoo.card`)."""
    card_file: Path
    """``NAME.json``."""
    page_file: Path
    """``NAME.md``, the card as a page."""

    @property
    def results(self) -> list[ScoreRow]:
        """The card's evaluation, one row per opponent."""
        return [
            ScoreRow(r["opponent"], r["mean_stakes"], (r["ci95"][0], r["ci95"][1]), r["win_rate"], r["hands"])
            for r in self.card["evaluation"]["results"]
        ]


def _entry(card: dict[str, Any]) -> ZooEntry:
    """The :class:`ZooEntry` of a card just written."""
    path = card_path(card["name"])
    return ZooEntry(card["name"], card, path, path.with_suffix(".md"))


def min_card_hands(players: int) -> int:
    """The fewest ``--hands`` that give a card's evaluation two deal groups, so intervals.

    The card's tables seat the network and ``players - 1`` copies of an opponent
    (:func:`evaluate_one_seat`), and the hands round up to whole deal groups of one
    hand per seating.
    """
    return len(arrangements(players, players)) + 1


def default_baselines(players: int) -> list[str]:
    """The baselines of a card: :data:`BASELINES`, and ``search:ismcts`` at a two-player table."""
    return [*BASELINES, *([SEARCH_BASELINE] if players == 2 else [])]


def _machine() -> str:
    """This machine in words (processor, cores, system)."""
    cpu = platform.processor() or platform.machine()
    return f"{cpu}, {os.cpu_count()} cores, {platform.system()} {platform.release()}"


def _read_json(path: Path) -> dict[str, Any]:
    """A JSON object from a run folder's file (empty when absent); ``ValueError`` naming a broken one."""
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise ValueError(f"{path}: not readable JSON ({type(e).__name__}: {e})") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: holds {type(data).__name__}, not a JSON object")
    return data


def _training_seconds(run: Path, summary: dict[str, Any]) -> float | None:
    """The run's whole training time: the warm start's play and fitting (``pretrain.json``) and PPO."""
    ppo = summary.get("wall_seconds")
    pre = run / "pretrain.json"
    if ppo is None or not pre.is_file():
        return ppo
    info = _read_json(pre)
    return float(ppo) + sum(float(v) for k, v in info.items() if k.endswith("_seconds"))


def _read_run(run: Path, checkpoint: str | None) -> tuple[Path, dict[str, Any], Any, TonkRules]:
    """The run's checkpoint path, its config, the policy and the rules (checked against the policy's)."""
    if not (run / "config.yaml").is_file():
        raise ValueError(f"{run}: no config.yaml; not a training run folder")
    if checkpoint is None and (run / "current.npz").is_file() and not (run / "best.zip").is_file():
        checkpoint = str(run / "current.npz")  # a `tonk improve` run: its accepted network
    ckpt = resolve_checkpoint(Path(checkpoint) if checkpoint else run)
    config = read_config_file(run / "config.yaml")
    policy = MLPPolicy.load_npz(ckpt) if ckpt.suffix == ".npz" else load_policy(ckpt)
    meta = policy.meta
    preset, options = config.get("rules", "standard"), config.get("rule_options") or {}
    rules = make_rules(preset, **options)
    if rules.hash != meta.get("rules_hash"):
        raise ValueError(
            f"{ckpt}: trained with rules hash {meta.get('rules_hash')}, but its run's config.yaml "
            f"names rules {preset} {options} (hash {rules.hash})"
        )
    return ckpt, config, policy, rules


def _source(run: Path, ckpt: Path, meta: dict[str, Any]) -> dict[str, Any]:
    """The card's ``source``: the run, checkpoint and step, and how a ``tonk average``/``tonk widen``
    network was made (``averaged``: the networks' specs; ``widened``: the network widened)."""
    src: dict[str, Any] = {
        "run": str(run),
        "checkpoint": ckpt.name,
        "step": meta.get("step", meta.get("generation")),
    }
    if meta.get("averaged"):
        src["averaged"] = [str(s) for s in meta["averaged"]]
    if isinstance(meta.get("widened"), dict) and meta["widened"].get("from"):
        src["widened"] = str(meta["widened"]["from"])
    return src


def _training(run: Path, config: dict[str, Any], machine: str | None) -> dict[str, Any]:
    """The card's ``training``: steps (or generations of ``tonk improve``), times, machine, versions."""
    run_info = _read_json(run / "run.json")
    summary = _read_json(run / "summary.json")
    improved = "generations" in summary  # a `tonk improve` run: generations, no PPO
    out: dict[str, Any] = {
        "steps": summary.get("steps"),
        "wall_seconds": _training_seconds(run, summary),
        "ppo_seconds": None if improved else summary.get("wall_seconds"),
        "machine": machine or f"{_machine()} (the machine that wrote this card)",
        "torch_cpu_capability": run_info.get("torch_cpu_capability"),
        "versions": run_info.get("versions"),
    }
    if improved:
        out.update(generations=summary["generations"], start=config.get("start"))
    elif config.get("init_from"):
        out["start"] = config["init_from"]  # a warm start: the network the PPO steps began from
    return out


def _check_hands(hands: Any, players: int | None = None) -> None:
    """Refuse ``--hands`` that is not a positive integer, or (given ``players``) too few for an interval."""
    if isinstance(hands, bool) or not isinstance(hands, int) or hands < 1:
        raise ValueError(f"--hands must be a positive integer, got {hands!r}")
    if players is None:
        return
    least = min_card_hands(players)
    if hands < least:  # one deal group has no spread, so no interval for the card
        raise ValueError(
            f"--hands {hands}: a card's 95% intervals need two deal groups of {least - 1} hands, so "
            f"{least} hands at least at a {players}-player table"
        )


def add_entry(
    run_dir: str | Path,
    name: str,
    checkpoint: str | None = None,
    baselines: list[str] | None = None,
    headline: str | None = None,
    hands: int = 2000,
    seed: int = 2024,
    workers: int = 1,
    machine: str | None = None,
    progress: bool = True,
) -> ZooEntry:
    """Export a run's checkpoint into the zoo as ``name``, evaluate it, write its card; return the entry."""
    check_name(name)
    _check_hands(hands)
    for spec in [*(baselines or []), *([headline] if headline else [])]:
        check_spec(spec)  # an unknown opponent is named before anything is evaluated
    refuse_peek([*(baselines or []), *([headline] if headline else [])], "tonk zoo add")
    run = Path(run_dir)
    ckpt, config, policy, rules = _read_run(run, checkpoint)
    meta = policy.meta
    players = meta["num_players"]
    _check_hands(hands, players)
    preset, options = config.get("rules", "standard"), config.get("rule_options") or {}
    opponents = list(baselines or default_baselines(players))
    top = headline or opponents[-1]
    if top not in opponents:
        raise ValueError(f"--headline {top}: not one of the evaluated opponents ({', '.join(opponents)})")
    rules_name = preset + "".join(f" {k}={v}" for k, v in options.items())
    rows = []
    with tempfile.TemporaryDirectory(prefix="tonk-zoo-") as tmp:
        staged = Path(tmp) / f"{name}.npz"
        policy.save_npz(staged)
        for opp in opponents:
            res = evaluate_one_seat(
                [f"npz:{staged}", opp], hands, players, rules, seed, workers, progress, rules_name
            )
            rows.append(score_row(opp, res).to_json())
    commit, dirty = git_commit()
    card: dict[str, Any] = {
        "format": FORMAT,
        "name": name,
        "num_players": players,
        "rules": preset,
        "rule_options": options,
        "rules_hash": rules.hash,
        "obs_version": meta["obs_version"],
        "network": {
            "activation": policy.activation,
            "sizes": policy.sizes,
        },
        "source": _source(run, ckpt, meta),
        "config": config,
        "training": _training(run, config, machine),
        "commit": commit,
        "dirty": dirty,
        "evaluation": {
            "hands": hands,
            "seed": seed,
            "seating": "the agent in one seat, the opponent in every other",
            "results": rows,
        },
        "headline": top,
        "best_response": None,
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }
    write_entry(name, policy, card)
    return _entry(read_card(name))


def record_best_response(name: str, exploit_run: str | Path) -> ZooEntry:
    """Copy a ``tonk exploit zoo:NAME`` run's margin into the card of ``name``; return the entry."""
    card = read_card(name)
    result = read_exploit(exploit_run)
    sp = parse_spec(result.spec)
    if sp.kind != "zoo" or sp.name != name:
        raise ValueError(f"{exploit_run}: a best response to {result.spec}, not to zoo:{name}")
    for key, got, want in (
        ("players", result.players, card["num_players"]),
        ("rules_hash", result.rules_hash, card["rules_hash"]),
    ):
        if got != want:
            raise ValueError(f"{exploit_run}: played with {key} {got!r}, the card has {want!r}")
    if result.zoo_sha256 != card["sha256"]:
        raise ValueError(
            f"{exploit_run}: exploited another version of zoo:{name} (its file changed since); "
            "run tonk exploit again"
        )
    card["best_response"] = {
        "spec": result.spec,
        "margin": result.margin,
        "ci95": list(result.ci95),
        "win_rate": result.win_rate,
        "hands": result.hands,
        "steps": result.budget.steps,
        "seed": result.seed,
        "run": result.run,
        "commit": result.commit,
        "init_from": result.budget.init_from,
        "best_step": result.best_step,
    }
    write_card(card)
    return _entry(card)


def reevaluate_card(
    name: str,
    hands: int = REEVALUATE_HANDS,
    seed: int | None = None,
    workers: int = 1,
    progress: bool = True,
) -> ZooEntry:
    """Evaluate ``zoo:NAME`` again against its card's opponents, ``hands`` duplicate hands each.

    The card's evaluation is replaced (deals of ``seed``, the card's own by default) and marked with
    the commit and time it was measured at; the network, its training and its best response stay.
    """
    card = read_card(name)
    players = card["num_players"]
    _check_hands(hands, players)
    load_zoo_agent(name)  # the file is the one the card describes (its hash), or a one-line refusal
    seed = card["evaluation"]["seed"] if seed is None else seed
    rules = make_rules(card["rules"], **card["rule_options"])
    rows = []
    for row in card["evaluation"]["results"]:
        res = evaluate_one_seat(
            [f"zoo:{name}", row["opponent"]], hands, players, rules, seed, workers, progress, rules_text(card)
        )
        rows.append(score_row(row["opponent"], res).to_json())
    commit, dirty = git_commit()
    card["evaluation"] = {
        **card["evaluation"],
        "hands": hands,
        "seed": seed,
        "results": rows,
        "commit": commit,
        "dirty": dirty,
        "evaluated": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }
    write_card(card)
    return _entry(card)


def refresh_card(name: str) -> ZooEntry:
    """Rewrite the page of ``name`` from its card (after the card format's page changed); return the entry."""
    card = read_card(name)
    write_card(card)
    return _entry(card)
