"""``tonk improve CONFIG``: generations of policy improvement by network playouts (:mod:`train.improve`).

The recipe is :func:`train.improve.run.improve`, callable from Python; this
module parses the flags and passes the duplicate evaluator.
"""

from __future__ import annotations

import argparse
import json


def cmd_improve(args: argparse.Namespace) -> int:
    """Start or resume a run; print its generations table."""
    from eval.duplicate import evaluate
    from train.improve.config import load_improve_config
    from train.improve.run import format_row, improve, resume_improve

    progress = not args.no_progress

    def on_row(row: dict) -> None:
        if not args.json:
            print(format_row(row), flush=True)

    if args.resume:
        if args.config is not None or args.overrides:
            raise ValueError(
                "tonk improve --resume RUN takes no CONFIG or KEY=VALUE (the run keeps its config)"
            )
        report = resume_improve(
            args.resume, evaluate, progress=progress, generations=args.generations, on_row=on_row
        )
    else:
        if args.config is None:
            raise ValueError("tonk improve needs a CONFIG (e.g. configs/improve_2p.yaml) or --resume RUN")
        overrides = list(args.overrides)
        if args.generations is not None:
            overrides.append(f"generations={args.generations}")
        report = improve(
            load_improve_config(args.config, overrides), evaluate, progress=progress, on_row=on_row
        )
    if args.json:
        print(json.dumps({"run_dir": str(report.run_dir), "generations": report.rows}, indent=1))
    else:
        print(
            f"run {report.run_dir}: {len(report.rows)} generation(s) done; current network {report.current}"
        )
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``improve`` to the ``tonk`` command line."""
    p = sub.add_parser(
        "improve",
        help="improve a policy network by generations of playouts it plays itself",
        description="Each generation collects the network's decisions, values its top candidates by "
        "playouts the network plays in worlds dealt by the opponent model, fits the next network to "
        "softmax(log pi + Q/tau) and accepts it only if it beats the current one in a duplicate "
        "evaluation. Checkpointed after every generation; --resume RUN goes on after any stop.",
    )
    p.add_argument(
        "config", nargs="?", metavar="CONFIG", help="the recipe's YAML, e.g. configs/improve_2p.yaml"
    )
    p.add_argument(
        "overrides", nargs="*", metavar="KEY=VALUE", help="config overrides, e.g. values.worlds=32"
    )
    p.add_argument("--resume", metavar="RUN", help="go on with this run folder")
    p.add_argument(
        "--generations", type=int, metavar="N", help="total generations (also extends a resumed run)"
    )
    p.add_argument("--json", action="store_true", help="print the generations as JSON")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    p.set_defaults(func=cmd_improve)
