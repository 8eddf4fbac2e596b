"""``tonk zoo list|add|card``: parse the flags and call :mod:`tonk_cli.workflows.zoo`.

``tonk zoo add RUN_DIR --name NAME`` adds a training run's agent to the zoo
(:func:`~tonk_cli.workflows.zoo.add_entry`); ``tonk zoo card NAME --exploit RUN``
records a best response's margin on its card
(:func:`~tonk_cli.workflows.zoo.record_best_response`); ``tonk zoo card NAME
--evaluate`` measures it again, 20,000 hands per opponent by default
(:func:`~tonk_cli.workflows.zoo.reevaluate_card`); ``tonk zoo card NAME``
rewrites the page from the card. The zoo folder is ``agents/zoo/`` of the
package, or ``$TONK_ZOO_DIR``.
"""

from __future__ import annotations

import argparse

from . import args as _args


def cmd_zoo(args: argparse.Namespace) -> int:
    """``tonk zoo list|add|card``."""
    from agents.zoo import zoo_dir, zoo_listing

    from .workflows.zoo import (
        REEVALUATE_HANDS,
        add_entry,
        record_best_response,
        reevaluate_card,
        refresh_card,
    )

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
        entry = add_entry(
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
    elif args.exploit and args.evaluate:
        raise ValueError("--exploit and --evaluate: one at a time")
    elif args.evaluate:
        hands = REEVALUATE_HANDS if args.hands is None else args.hands
        workers = 1 if args.workers is None else args.workers
        entry = reevaluate_card(args.name, hands, args.seed, workers, progress=not args.no_progress)
    elif any(v is not None for v in (args.hands, args.seed, args.workers)):
        raise ValueError("--hands, --seed and --workers go with --evaluate")
    elif args.exploit:
        entry = record_best_response(args.name, args.exploit)
    else:
        entry = refresh_card(args.name)
    print(f"wrote {entry.card_file} and {entry.page_file}\n")
    print(entry.page_file.read_text())
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
    za.add_argument(
        "--checkpoint",
        help="a checkpoint .zip or policy .npz (default: best.zip; a tonk improve run: current.npz)",
    )
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
    zc.add_argument(
        "--evaluate",
        action="store_true",
        help="measure the agent again against its card's opponents (the rest of the card stays)",
    )
    zc.add_argument(
        "--hands", type=_args.hands, help="--evaluate: duplicate hands per opponent (default 20000)"
    )
    zc.add_argument("--seed", type=_args.seed, help="--evaluate: seed of the deals (default: the card's)")
    zc.add_argument("--workers", type=_args.workers, help="--evaluate: evaluation processes (default 1)")
    zc.add_argument("--no-progress", action="store_true", help="--evaluate: no progress bars")
    zc.set_defaults(func=cmd_zoo)
