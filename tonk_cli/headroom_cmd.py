"""``tonk headroom gap``: the one-step improvement gap of a policy network (:mod:`eval.headroom`)."""

from __future__ import annotations

import argparse
import json

from . import args as _args


def cmd_headroom(args: argparse.Namespace) -> int:
    """Measure the gap and print its table (or JSON)."""
    from eval.headroom import format_gap, improvement_gap
    from tonk_env.engine import make_rules, parse_assignments

    rules = make_rules(args.rules, **parse_assignments(args.set or []))
    name = args.rules + "".join(f" {s}" for s in args.set or [])
    if args.out:
        _args.writable_file(args.out)  # before the playouts, not after
    res = improvement_gap(
        agent=args.agent,
        opponent=args.opponent,
        positions=args.positions,
        worlds=args.worlds,
        players=args.players,
        rules=rules,
        seed=args.seed,
        progress=not args.no_progress,
        rules_name=name,
    )
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(json.dumps(res.to_dict(), indent=1) + "\n")
    print(json.dumps(res.to_dict(), indent=1) if args.json else format_gap(res))
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``headroom`` to the ``tonk`` command line."""
    h = sub.add_parser(
        "headroom",
        help="diagnostics of how much better an agent could play (the one-step improvement gap)",
        description="Headroom diagnostics. The peek agents (peek:ismcts, cheats) are measured with "
        "`tonk eval ... --allow-peek`; `gap` measures a policy network's one-step improvement gap.",
    )
    hs = h.add_subparsers(dest="action", required=True, metavar="ACTION")
    g = hs.add_parser(
        "gap",
        help="Q(best) - Q(chosen) of a network's decisions, by decision type, per hand",
        description="Play AGENT against OPPONENT, take AGENT's decisions as positions, value every legal "
        "action with playouts (AGENT in every seat) in the same sampled worlds, and report Q(best) - "
        "Q(chosen) summed per hand, split by decision type.",
    )
    g.add_argument(
        "--agent", default="zoo:2p", help="the policy network measured (zoo:NAME, npz:FILE, ppo:RUN)"
    )
    g.add_argument("--opponent", default="search:ismcts", help="the agent it plays to reach positions")
    g.add_argument(
        "--positions",
        type=_args.count(1, 10_000_000),
        default=5000,
        help="positions to value (whole hands are played)",
    )
    g.add_argument(
        "--worlds",
        type=_args.count(2, 100_000),
        default=64,
        help="sampled worlds per position (playouts per action)",
    )
    g.add_argument("--players", type=_args.players, default=2, help="seats at the table")
    g.add_argument("--rules", default="standard", metavar="PRESET", help="rules preset")
    g.add_argument("--set", action="append", metavar="OPTION=VALUE", help="change one rules option")
    g.add_argument("--seed", type=_args.seed, default=0, help="seed of the deals, the agents and the worlds")
    g.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    g.add_argument("--out", metavar="FILE.json", help="also write the JSON object to this file")
    g.add_argument("--no-progress", action="store_true", help="no progress bars")
    g.set_defaults(func=cmd_headroom)
