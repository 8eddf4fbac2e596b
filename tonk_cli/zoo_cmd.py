"""``tonk zoo``: list the shipped agents, add one from a training run, record a best response on its card.

``tonk zoo add RUN_DIR --name NAME`` exports the run's ``best.zip`` (or
``--checkpoint``) to ``<zoo>/NAME.npz``, evaluates it on duplicate deals
against the baselines (the agent in one seat, the baseline in every other)
and writes the card ``NAME.json`` and its page ``NAME.md``
(:mod:`agents.zoo`). ``tonk zoo card NAME --exploit RUN`` copies the margin of
a ``tonk exploit zoo:NAME`` run into the card; ``tonk zoo card NAME`` alone
rewrites the page from the card. The zoo folder is ``agents/zoo/`` of the
package, or ``$TONK_ZOO_DIR``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import tempfile
from pathlib import Path
from typing import Any

from . import args as _args

#: The baselines of a card's evaluation, weakest first (the last one is the headline); two-player
#: entries meet the search too, as in docs/RESULTS.md's tables.
BASELINES = ("random", "heuristic:greedy", "heuristic:expert")
SEARCH_BASELINE = "search:ismcts"


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
) -> dict[str, Any]:
    """Export a run's checkpoint into the zoo as ``name``, evaluate it, write its card; return the card."""
    from agents.checkpoint import resolve_checkpoint
    from agents.peek import refuse_peek
    from agents.ppo import load_policy
    from agents.registry import check_spec
    from agents.zoo import check_name, read_card, write_entry
    from agents.zoo.card import FORMAT
    from tonk_env.engine import make_rules
    from train.config import read_config_file

    from .exploit_cmd import evaluate_one_seat, git_commit

    check_name(name)
    if isinstance(hands, bool) or not isinstance(hands, int) or hands < 1:
        raise ValueError(f"--hands must be a positive integer, got {hands!r}")
    for spec in [*(baselines or []), *([headline] if headline else [])]:
        check_spec(spec)  # an unknown opponent is named before anything is evaluated
    refuse_peek([*(baselines or []), *([headline] if headline else [])], "tonk zoo add")
    run = Path(run_dir)
    if not (run / "config.yaml").is_file():
        raise ValueError(f"{run}: no config.yaml; not a training run folder")
    ckpt = resolve_checkpoint(Path(checkpoint) if checkpoint else run)
    config = read_config_file(run / "config.yaml")
    policy = load_policy(ckpt)
    meta = policy.meta
    players = meta["num_players"]
    preset, options = config.get("rules", "standard"), config.get("rule_options") or {}
    rules = make_rules(preset, **options)
    if rules.hash != meta.get("rules_hash"):
        raise ValueError(
            f"{ckpt}: trained with rules hash {meta.get('rules_hash')}, but its run's config.yaml "
            f"names rules {preset} {options} (hash {rules.hash})"
        )
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
            me = res.agents[0]
            rows.append(
                {
                    "opponent": opp,
                    "mean_stakes": me.mean_stakes,
                    "ci95": list(me.ci95),
                    "win_rate": me.win_rate,
                    "hands": me.hands,
                }
            )
    run_info = _read_json(run / "run.json")
    summary = _read_json(run / "summary.json")
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
            "sizes": [policy.obs_size, *(b.shape[0] for _, b in policy.layers)],
        },
        "source": {"run": str(run), "checkpoint": ckpt.name, "step": meta.get("step")},
        "config": config,
        "training": {
            "steps": summary.get("steps"),
            "wall_seconds": _training_seconds(run, summary),
            "ppo_seconds": summary.get("wall_seconds"),
            "machine": machine or f"{_machine()} (the machine that wrote this card)",
            "torch_cpu_capability": run_info.get("torch_cpu_capability"),
            "versions": run_info.get("versions"),
        },
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
    return read_card(name)


def record_best_response(name: str, exploit_run: str | Path) -> dict[str, Any]:
    """Copy a ``tonk exploit zoo:NAME`` run's margin into the card of ``name``; return the card."""
    from agents.registry import parse_spec
    from agents.zoo import read_card, write_card

    from .exploit_cmd import read_exploit

    card = read_card(name)
    record = read_exploit(exploit_run)
    sp = parse_spec(record["spec"])
    if sp.kind != "zoo" or sp.name != name:
        raise ValueError(f"{exploit_run}: a best response to {record['spec']}, not to zoo:{name}")
    for key, want in (("players", card["num_players"]), ("rules_hash", card["rules_hash"])):
        if record.get(key) != want:
            raise ValueError(f"{exploit_run}: played with {key} {record.get(key)!r}, the card has {want!r}")
    if record.get("zoo_sha256") != card["sha256"]:
        raise ValueError(
            f"{exploit_run}: exploited another version of zoo:{name} (its file changed since); "
            "run tonk exploit again"
        )
    card["best_response"] = {
        "spec": record["spec"],
        "margin": record["margin"],
        "ci95": record["ci95"],
        "win_rate": record.get("win_rate"),
        "hands": record["hands"],
        "steps": record["budget"]["steps"],
        "seed": record["seed"],
        "run": record.get("run"),
        "commit": record.get("commit"),
        "init_from": record["budget"].get("init_from"),
        "best_step": record.get("best_step"),
    }
    write_card(card)
    return card


def cmd_zoo(args: argparse.Namespace) -> int:
    """``tonk zoo list|add|card``."""
    from agents.zoo import card_path, read_card, write_card, zoo_dir, zoo_listing

    if args.action == "list":
        entries = zoo_listing()
        print(f"zoo folder: {zoo_dir()}")
        if not entries:
            print("  no agents (tonk zoo add RUN_DIR --name NAME adds one)")
        width = max((len(n) for n, _ in entries), default=0) + 4
        for name, line in entries:
            print(f"  {'zoo:' + name:{width}s}  {line}")
        return 0
    if args.action == "add":
        card = add_entry(
            args.run_dir,
            args.name,
            checkpoint=args.checkpoint,
            baselines=args.baselines,
            headline=args.headline,
            hands=args.hands,
            seed=args.seed,
            workers=args.workers,
            machine=args.machine,
            progress=not args.no_progress,
        )
    elif args.exploit:
        card = record_best_response(args.name, args.exploit)
    else:
        card = read_card(args.name)
        write_card(card)
    path = card_path(card["name"])
    print(f"wrote {path} and {path.with_suffix('.md')}\n")
    print(path.with_suffix(".md").read_text())
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``zoo`` to the ``tonk`` command line."""
    z = sub.add_parser(
        "zoo",
        help="the shipped agents: list them, add one from a run, record a best response",
        description="The zoo (agents/zoo/, or $TONK_ZOO_DIR) holds trained agents as .npz files with "
        "model cards; each is the agent zoo:NAME.",
    )
    zs = z.add_subparsers(dest="action", required=True, metavar="ACTION")
    zl = zs.add_parser("list", help="list the zoo's agents and their headline results")
    zl.set_defaults(func=cmd_zoo)
    za = zs.add_parser("add", help="export a run's best checkpoint into the zoo, evaluate it, write its card")
    za.add_argument("run_dir", metavar="RUN_DIR", help="a training run folder")
    za.add_argument("--name", required=True, help="the zoo name (zoo:NAME), e.g. 2p")
    za.add_argument("--checkpoint", help="a checkpoint .zip of the run (default: its best.zip)")
    za.add_argument(
        "--baselines", nargs="+", metavar="SPEC", help="opponents, weakest first (default: random, "
        "heuristic:greedy, heuristic:expert, and search:ismcts for 2 players)",
    )  # fmt: skip
    za.add_argument("--headline", metavar="SPEC", help="the opponent of the headline (default: the last)")
    za.add_argument("--hands", type=_args.hands, default=2000, help="duplicate hands per opponent")
    za.add_argument("--seed", type=_args.seed, default=2024, help="seed of the evaluation deals")
    za.add_argument("--workers", type=_args.workers, default=1, help="evaluation processes")
    za.add_argument("--machine", help="the training machine in words (default: this machine)")
    za.add_argument("--no-progress", action="store_true", help="no progress bars")
    za.set_defaults(func=cmd_zoo)
    zc = zs.add_parser("card", help="rewrite an entry's page; --exploit records a best response's margin")
    zc.add_argument("name", metavar="NAME")
    zc.add_argument("--exploit", metavar="RUN_DIR", help="a tonk exploit zoo:NAME run folder")
    zc.set_defaults(func=cmd_zoo)


def _training_seconds(run: Path, summary: dict[str, Any]) -> float | None:
    """The run's whole training time: the warm start's play and fitting (``pretrain.json``) and PPO."""
    ppo = summary.get("wall_seconds")
    pre = run / "pretrain.json"
    if ppo is None or not pre.is_file():
        return ppo
    info = _read_json(pre)
    return float(ppo) + sum(float(v) for k, v in info.items() if k.endswith("_seconds"))
