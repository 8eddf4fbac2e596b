"""``tonk tournament``: rate agents and checkpoints in a resumable tournament of duplicate matches.

Heavy imports stay inside the command function; errors are ``ValueError``
(``tonk tournament: error: ...``, exit status 2).
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from . import args as _args

#: command-line flags that override a config key (flag dest -> key)
_OVERRIDES = (
    "hands",
    "players",
    "format",
    "fixed",
    "seed",
    "out",
    "workers",
    "backend",
    "address",
    "bootstrap",
    "anchor",
    "sample_hands",
    "allow_peek",
)
#: what may change when resuming
_RESUME_OK = ("workers", "backend", "address", "out", "sample_hands")


def cmd_tournament(args: argparse.Namespace) -> int:
    """Build the config (file, specs or a saved folder), play the missing matches, print the leaderboard."""
    from eval.tournament import (
        TournamentConfig,
        default_out,
        format_leaderboard,
        load_config,
        load_saved,
        print_err,
        run_tournament,
    )
    from tonk_env.engine import parse_assignments

    from .recipes import find_config

    given = _overrides(args)
    _check_items(args, given)
    config_path = None
    if args.resume:
        cfg = load_saved(args.resume)
        out = args.resume
    else:
        if args.items[0].endswith((".yaml", ".yml")):
            config_path = str(find_config(args.items[0], prefix="tournament"))
            cfg = load_config(config_path)
        else:
            cfg = TournamentConfig(entrants=list(args.items))
        out = None
    for k, v in given.items():
        if k != "rules":
            setattr(cfg, k, v)
    if not args.resume:
        if "rules" in given:
            cfg.rules = args.rules or cfg.rules
        if args.set:
            cfg.rule_options = {**cfg.rule_options, **parse_assignments(args.set)}
    if args.anchor is not None and args.anchor.lower() in ("none", "mean"):
        cfg.anchor = None
    cfg.check("the options")
    if out is None:
        out = cfg.out or default_out(cfg, config_path)
    progress = not (args.quiet or args.no_progress) and sys.stderr.isatty()
    log = (lambda s: None) if args.quiet else print_err
    t0 = time.perf_counter()
    res = run_tournament(cfg, out=out, progress=progress, log=log)
    print(format_leaderboard(res))
    # the local backend runs a process per match at most; a local Ray gets --workers CPUs
    workers = min(cfg.workers, max(res.matches_played, 1)) if cfg.backend == "local" else cfg.workers
    print(
        f"\n{res.matches_played} matches played in {time.perf_counter() - t0:.1f} s "
        f"({res.wall_s:.1f} s playing, {workers} worker(s), backend {cfg.backend}); "
        f"{res.matches_reused} found in {res.folder / 'results.jsonl'}"
    )
    if res.skipped_lines:
        print(f"({res.skipped_lines} unreadable line(s) in results.jsonl were skipped)")
    print(
        f"reports: {res.folder}/leaderboard.md, ratings.json, leaderboard.csv, ratings_by_step.png, "
        "crosstable.png"
        + (", hands/ (sample hands: tonk serve, then /replay)" if (res.folder / "hands").is_dir() else "")
    )
    return 0


def _overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The config keys given on the command line (``rules`` when --rules or --set was given)."""
    given = {k: getattr(args, k) for k in _OVERRIDES if getattr(args, k) is not None}
    if args.rules is not None or args.set:
        given["rules"] = args.rules
    return given


def _check_items(args: argparse.Namespace, given: dict[str, Any]) -> None:
    """Refuse contradictory arguments: --resume with specs or changed settings, no specs, YAML and specs."""
    if args.resume:
        if args.items:
            raise ValueError("give either --resume DIR or a config / agent specs, not both")
        bad = [k for k in given if k not in _RESUME_OK]
        if bad:
            raise ValueError(
                f"--resume keeps the saved settings; cannot change {', '.join(bad)} "
                f"(allowed: --workers, --backend, --address, --sample-hands)"
            )
        return
    if not args.items:
        raise ValueError("give a config file (CONFIG.yaml), agent specs, or --resume DIR")
    if args.items[0].endswith((".yaml", ".yml")) and len(args.items) > 1:
        raise ValueError("give either CONFIG.yaml or agent specs, not both")


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``tournament`` subcommand."""
    t = sub.add_parser(
        "tournament",
        help="rate agents and checkpoints in a resumable tournament of duplicate matches",
        description="Play every scheduled match (duplicate deals, seats rotated) between the agents, "
        "append each result to DIR/results.jsonl as it finishes, and rate the agents (Bradley-Terry / "
        "Plackett-Luce on the Elo scale, 95% bootstrap intervals). Re-running into the same folder or "
        "--resume DIR plays only the matches not yet there. Agent specs may be globs over checkpoints: "
        "'ppo:runs/x/checkpoints/*.zip'.",
    )
    t.add_argument(
        "items",
        metavar="CONFIG.yaml | AGENT",
        nargs="*",
        help="a tournament config (configs/tournament_*.yaml) or agent specs / globs",
    )
    t.add_argument(
        "--resume", metavar="DIR", help="finish (or extend with new checkpoints) the tournament in DIR"
    )
    t.add_argument(
        "--hands", type=_args.hands, help="hands per match, rounded up to whole deal groups (default 200)"
    )
    t.add_argument("--players", type=_args.players, help="seats at a table: 2 (pairs), 3 or 4 (default 2)")
    t.add_argument("--format", choices=["round-robin", "gauntlet"], help="round-robin (default) or gauntlet")
    t.add_argument("--fixed", nargs="+", metavar="AGENT", help="gauntlet: the agents every entrant plays")
    t.add_argument("--rules", default=None, metavar="PRESET", help="rules preset (default standard)")
    t.add_argument(
        "--set", action="append", metavar="OPTION=VALUE", help="change one rules option (repeatable)"
    )
    t.add_argument(
        "--seed", type=_args.seed, help="tournament seed: every match's deals derive from it (default 0)"
    )
    t.add_argument(
        "--out", metavar="DIR", help="tournament folder (default tournaments/<config name or hash>)"
    )
    t.add_argument("--workers", type=_args.workers, help="matches played at once on this machine (default 1)")
    t.add_argument("--backend", choices=["local", "ray"], help="local processes (default) or Ray tasks")
    t.add_argument("--address", metavar="HOST:PORT", help="Ray cluster to join (default: start a local Ray)")
    t.add_argument(
        "--bootstrap",
        type=_args.count(0, 1_000_000),
        help="bootstrap resamples for the rating intervals (default 1000)",
    )
    t.add_argument(
        "--anchor", metavar="AGENT", help="entrant rated 1000 (default random if playing; 'mean': mean 1500)"
    )
    t.add_argument(
        "--sample-hands",
        type=_args.count(0, _args.MAX_HANDS),
        metavar="N",
        help="hands of each match recorded in DIR/hands/ for the replay viewer (default 4; 0: none)",
    )
    t.add_argument("--no-progress", action="store_true", help="no progress bar (the log lines stay)")
    t.add_argument(
        "--allow-peek",
        action="store_true",
        default=None,
        help="seat peek agents (peek:*, cheats that read the hidden cards); config key allow_peek",
    )
    t.add_argument("--quiet", action="store_true", help="no progress bar or log lines")
    t.set_defaults(func=cmd_tournament)
