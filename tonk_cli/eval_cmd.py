"""``tonk eval`` (duplicate evaluation of agents) and ``tonk agents`` (the agent list).

Heavy imports stay inside the command functions; errors are ``ValueError``
(``tonk eval: error: ...``, exit status 2).
"""

from __future__ import annotations

import argparse

from . import args as _args


def cmd_eval(args: argparse.Namespace) -> int:
    """Run a duplicate evaluation and print the table (or JSON)."""
    import sys

    from eval.duplicate import evaluate
    from eval.paired import compare
    from eval.report import format_table, to_json, write_hands
    from tonk_env.engine import make_rules, parse_assignments

    rules = make_rules(args.rules, **parse_assignments(args.set or []))
    name = args.rules + ("".join(f" --set {s}" for s in args.set) if args.set else "")
    specs = [args.agent, *(args.opponents or ["random"])]
    progress = not (args.json or args.quiet or args.no_progress) and sys.stderr.isatty()
    if args.compare is not None and args.compare.strip() == args.agent.strip():
        raise ValueError(
            f"--compare {args.compare}: that is AGENT itself; name another agent to compare with"
        )
    if args.record:
        write_hands(args.record, [])  # a path that cannot be written fails now, not after the evaluation
    common = dict(
        hands=args.hands,
        players=args.players,
        rules=rules,
        seed=args.seed,
        workers=args.workers,
        progress=progress,
        rules_name=name,
        luck=args.luck,
        allow_peek=args.allow_peek,
    )
    if args.compare is not None:  # one deal group first: a bad OTHER is named before the long evaluation
        evaluate([args.compare, *specs[1:]], **{**common, "hands": 1, "workers": 1, "progress": False})
    res = evaluate(specs, record=args.record_hands if args.record else 0, **common)
    if args.record:
        write_hands(args.record, res.records)
    paired = None
    if args.compare is not None:
        paired = compare(res, evaluate([args.compare, *specs[1:]], **common))
    print(to_json(res, compare=paired) if args.json else format_table(res, paired))
    if args.record:
        print(
            f"recorded {len(res.records)} hand(s) in {args.record} (watch them: tonk serve, then /replay)",
            file=sys.stderr,
        )
    return 0


def cmd_agents(args: argparse.Namespace) -> int:
    """List the registered agents, one line each (``-v``: their parameters)."""
    from agents.registry import describe_agents

    print("\n".join(describe_agents(verbose=args.verbose)))
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``eval`` and ``agents`` subcommands."""
    e = sub.add_parser(
        "eval",
        help="duplicate evaluation of agents (mean stakes per hand with a 95%% CI)",
        description="Play the same deals with the agents rotated through every seating and report "
        "mean stakes per hand (95% CI over deals), win rate and how hands ended. "
        "Without OPPONENT the agent plays `random`.",
    )
    e.add_argument("agent", metavar="AGENT", help="agent spec, e.g. heuristic:expert (see `tonk agents`)")
    e.add_argument("opponents", metavar="OPPONENT", nargs="*", help="opponent specs (default: random)")
    e.add_argument(
        "--hands", type=_args.hands, default=1000, help="hands to play, rounded up to whole deal groups"
    )
    e.add_argument("--players", type=_args.players, default=2, help="seats at the table (2..6)")
    e.add_argument(
        "--rules",
        default="standard",
        metavar="PRESET",
        help="rules preset (standard, hit_penalty, full_waiting, seven_card, low_tonk, no_upcard)",
    )
    e.add_argument(
        "--set", action="append", metavar="OPTION=VALUE", help="change one rules option (repeatable)"
    )
    e.add_argument("--seed", type=_args.seed, default=0, help="seed of the deals and the agents")
    e.add_argument(
        "--workers", type=_args.workers, default=1, help="worker processes (results do not depend on it)"
    )
    e.add_argument(
        "--luck",
        metavar="VALUE",
        help="also report luck-corrected figures (AIVAT over the stock draws) with this value function: "
        "a shipped name (2p) or an .npz file with its .json card; see `tonk luck`",
    )
    e.add_argument(
        "--compare",
        metavar="OTHER",
        help="also play OTHER in AGENT's place on the same deals and report AGENT - OTHER, paired by "
        "deal group (a far narrower interval than the two apart)",
    )
    e.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    e.add_argument("--no-progress", action="store_true", help="no progress bar")
    e.add_argument("--quiet", action="store_true", help="no progress bar (the same as --no-progress)")
    e.add_argument(
        "--record",
        metavar="FILE.jsonl",
        help="write the first --record-hands hands as JSON lines of hand records (for the replay viewer)",
    )
    e.add_argument(
        "--record-hands",
        type=_args.count(0, _args.MAX_HANDS),
        default=20,
        metavar="N",
        help="hands --record writes (default 20)",
    )
    e.add_argument(
        "--allow-peek",
        action="store_true",
        help="seat peek agents (peek:*, cheats that read the hidden cards)",
    )
    e.set_defaults(func=cmd_eval)

    a = sub.add_parser("agents", help="list the agents and their spec strings")
    a.add_argument("-v", "--verbose", action="store_true", help="also list each agent's parameters")
    a.set_defaults(func=cmd_agents)
