"""``tonk clone TEACHER --out FILE.npz``: a policy network that plays as the teacher does.

The recipe is :func:`train.clone.clone`; this module parses the flags.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import yaml

from . import args as _args


def _weights(text: str) -> dict[str, float]:
    """``--opponents``: a YAML mapping of agent specs to weights, e.g. ``{heuristic:expert: 2}``."""
    try:
        data: Any = yaml.safe_load(text)
    except yaml.YAMLError:
        data = None
    if not isinstance(data, dict) or not all(
        isinstance(k, str) and isinstance(v, int | float) and not isinstance(v, bool) for k, v in data.items()
    ):
        raise argparse.ArgumentTypeError(
            f"{text!r}: a mapping of agent specs to weights is needed, "
            "e.g. '{heuristic:expert: 2, zoo:2p: 1}'"
        )
    return {k: float(v) for k, v in data.items()}


def cmd_clone(args: argparse.Namespace) -> int:
    """Make the clone and print its report."""
    from train.clone import CloneSettings, clone

    _args.writable_file(args.out)  # before the hands and the fit, not after
    settings = CloneSettings(
        teacher=args.teacher,
        start=args.start,
        players=args.players,
        rules=args.rules,
        hands=args.hands,
        opponents=args.opponents,
        epochs=args.epochs,
        seed=args.seed,
        workers=args.workers,
    )
    report = clone(settings, args.out, progress=not args.no_progress and sys.stderr.isatty())
    if args.json:
        print(json.dumps(report, indent=1))
    else:
        print(
            f"clone of {report['teacher']}: {report['decisions']:,} decisions; held-out agreement "
            f"with it {report['agreement_before']:.1%} at the start, {report['agreement']:.1%} fitted; "
            f"wrote {report['out']} (play it as npz:{report['out']})"
        )
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``clone`` to the ``tonk`` command line."""
    p = sub.add_parser(
        "clone",
        help="a policy network that plays as another agent (e.g. search:ismcts) does",
        description="Plays hands with TEACHER in a random seat against --opponents, records its "
        "decisions and fits a policy network to them (cross-entropy, from --start's weights, a "
        "tenth held out). The .npz plays as npz:FILE, e.g. as the opponent in the playouts of "
        "tonk improve (values.opponents) or search:playouts (opponent=).",
    )
    p.add_argument("teacher", metavar="TEACHER", help="the agent to imitate, e.g. search:ismcts")
    p.add_argument("--out", required=True, help="the .npz to write (with its .sha256)")
    p.add_argument(
        "--start", default="", help="the network to start from (default: the zoo's agent for the table)"
    )
    p.add_argument("--players", type=_args.players, default=2)
    p.add_argument("--rules", default="standard", metavar="PRESET")
    p.add_argument("--hands", type=_args.hands, default=20_000, help="hands the teacher plays")
    p.add_argument(
        "--opponents",
        type=_weights,
        default={"heuristic:expert": 1.0},
        help="who the teacher plays, a YAML mapping of specs to weights (default: {heuristic:expert: 1})",
    )
    p.add_argument("--epochs", type=_args.count(1, 1000), default=8, help="passes of the fit")
    p.add_argument("--seed", type=_args.seed, default=0)
    p.add_argument("--workers", type=_args.workers, default=2, help="processes that play the hands")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    p.set_defaults(func=cmd_clone)
