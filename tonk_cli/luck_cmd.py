"""``tonk luck``: fit a luck value function (``fit``) and show a value file's card (``show``).

``tonk luck fit OUT.npz`` plays hands between a mix of agents on deals that no
evaluation uses and fits the full-state value network that ``tonk eval --luck``
applies (:func:`train.luck_fit.fit_value`).
"""

from __future__ import annotations

import argparse
import sys

from . import args as _args


def cmd_luck_fit(args: argparse.Namespace) -> int:
    """Fit a value file and print its card's summary."""
    from tonk_env.engine import make_rules, parse_assignments
    from train.luck_fit import fit_value

    rules = make_rules(args.rules, **parse_assignments(args.set or []))
    name = args.rules + ("".join(f" --set {s}" for s in args.set) if args.set else "")
    try:
        hidden = tuple(int(h) for h in args.hidden.split(",")) if args.hidden else ()
    except ValueError:
        hidden = (0,)
    if not args.lr > 0:
        raise ValueError(f"--lr {args.lr}: need a positive learning rate")
    if any(h < 1 for h in hidden):
        raise ValueError(f"--hidden {args.hidden!r}: layer sizes must be positive ints, e.g. 256,256")
    _args.writable_file(args.out, "OUT")  # before the hands and the fit, not after
    progress = not args.no_progress and sys.stderr.isatty()
    card = fit_value(
        args.out,
        hands=args.hands,
        players=args.players,
        rules=rules,
        rules_name=name,
        seed=args.seed,
        mix=_args.mix(args.mix),
        hidden=hidden,
        epochs=args.epochs,
        workers=args.workers,
        progress=progress,
        log=None if args.no_progress else lambda m: print(m, file=sys.stderr),
        hands_file=args.hands_file,
        lr=args.lr,
    )
    print(_summary(args.out, card))
    return 0


def _summary(path: str, card: dict) -> str:
    fit, data = card["fit"], card["data"]
    r2 = fit.get("heldout_r2")
    return (
        f"{path}: sha256 {card['sha256']}\n"
        f"  {card['num_players']} players, rules {card['rules']} ({card['rules_hash']}), "
        f"network {card['network']['sizes']}\n"
        f"  fitted on {data['positions']} positions of {data['hands']} hands (deals {data['deals']})\n"
        f"  held-out mse {fit['heldout_mse']:.4f} (constant {fit['heldout_mse_constant']:.4f}, "
        f"R^2 {'n/a' if r2 is None else format(r2, '.3f')}), best epoch {fit['best_epoch']}"
    )


def cmd_luck_show(args: argparse.Namespace) -> int:
    """Print a value file's card summary (its name or path)."""
    from tonk_env.luck import load_value

    v = load_value(args.value)
    print(_summary(v.path, v.card))
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``luck`` subcommand group."""
    p = sub.add_parser("luck", help="value functions for the luck correction of `tonk eval --luck`")
    lsub = p.add_subparsers(dest="luck_command", required=True, metavar="ACTION")
    f = lsub.add_parser(
        "fit",
        help="fit a full-state value function on simulated hands",
        description="Play hands between agents drawn from a mix, on deals no evaluation uses, and fit "
        "the value network of `tonk eval --luck` by regressing each hand's payoffs on the full state "
        "after each stock draw. Writes OUT (.npz) and its card OUT with .json.",
    )
    f.add_argument("out", metavar="OUT", help="the value file to write (ends in .npz)")
    f.add_argument("--hands", type=_args.hands, default=8000, help="hands to simulate")
    f.add_argument("--players", type=_args.players, default=2, help="seats at the table (2..6)")
    f.add_argument("--rules", default="standard", metavar="PRESET", help="rules preset")
    f.add_argument("--set", action="append", metavar="OPTION=VALUE", help="change one rules option")
    f.add_argument("--seed", type=_args.seed, default=0, help="seed of the fitting deals, agents and network")
    f.add_argument(
        "--mix", action="append", metavar="SPEC=WEIGHT",
        help="an agent of the mix and its weight (repeatable; default: train.luck_fit.DEFAULT_MIX)",
    )  # fmt: skip
    f.add_argument("--hidden", default="256,256", help="hidden layer sizes, comma-separated")
    f.add_argument("--lr", type=_args.number(1e-9, 1.0), default=1e-3, help="Adam's learning rate")
    f.add_argument(
        "--epochs",
        type=_args.count(1, 10_000),
        default=30,
        help="passes over the data (the best held-out one is kept)",
    )
    f.add_argument(
        "--workers",
        type=_args.workers,
        default=1,
        help="processes playing the hands (data do not depend on it)",
    )
    f.add_argument(
        "--hands-file", metavar="JSONL",
        help="keep the simulated hands here, chunk by chunk: a file written with the same settings is "
        "read and continued, so a refit or an interrupted run does not replay its hands",
    )  # fmt: skip
    f.add_argument("--no-progress", action="store_true", help="no progress bar or per-epoch lines")
    f.set_defaults(func=cmd_luck_fit)
    s = lsub.add_parser("show", help="print a value file's card")
    s.add_argument("value", metavar="VALUE", help="a shipped value's name (e.g. 2p) or an .npz file")
    s.set_defaults(func=cmd_luck_show)
