"""``tonk belief``: the learned opponent model: make its data, train it, measure it, list the shipped ones.

- ``tonk belief data --out FILE`` plays hands of the agent mix and writes labelled positions
  (:func:`train.belief_data.generate`);
- ``tonk belief train DATA --name NAME`` fits a model and writes ``NAME.npz``, its card
  ``NAME.json`` and page ``NAME.md`` (:func:`train.belief_fit.fit_belief`);
- ``tonk belief metrics DATA --model NAME|FILE`` prints the held-out comparison with the
  hand-written model (:func:`train.belief_metrics.belief_metrics`);
- ``tonk belief list`` lists the shipped models.
"""

from __future__ import annotations

import argparse
import json
import sys

from . import args as _args


def cmd_data(args: argparse.Namespace) -> int:
    """Generate a dataset and print its summary."""
    from train.belief_data import DataConfig, generate

    cfg = DataConfig(
        hands=args.hands,
        style_hands=args.style_hands,
        players=args.players,
        rules=args.rules,
        seed=args.seed,
        play_share=args.play_share,
        holdout_every=args.holdout_every,
        mix=_args.mix(args.mix),
    )
    _args.writable_file(args.out)  # before the hands, not after
    summary = generate(cfg, args.out, progress=not args.no_progress and sys.stderr.isatty())
    print(json.dumps(summary, indent=1))
    return 0


def cmd_train(args: argparse.Namespace) -> int:
    """Train a model, write it with its card, print the held-out metrics."""
    from train.belief_fit import FitConfig, fit_belief

    try:
        hidden = tuple(int(x) for x in args.hidden.split(",") if x.strip())
    except ValueError:
        raise ValueError(f"--hidden {args.hidden!r}: expected sizes like 256,256") from None
    cfg = FitConfig(
        name=args.name,
        hidden=hidden,
        epochs=args.epochs,
        batch_size=args.batch_size,
        learning_rate=args.lr,
        seed=args.seed,
        torch_threads=args.torch_threads,
        count_bins=args.count_bins,
    )
    if args.out_dir is not None:
        _args.writable_folder(args.out_dir, "--out-dir")  # before the fit, not after
    card = fit_belief(args.data, cfg, args.out_dir, progress=not args.no_progress and sys.stderr.isatty())
    tr = card["training"]
    print(
        f"belief model {card['name']}: best epoch {tr['best_epoch']} of {tr['epochs']}, "
        f"{tr['wall_seconds']} s"
    )
    print("\n".join(card["metrics"]["report"]))
    return 0


def cmd_metrics(args: argparse.Namespace) -> int:
    """Print the held-out metrics of a model on a dataset."""
    from train.belief_fit import measure_belief

    result = measure_belief(args.model, args.data, seed=args.seed, update_card=args.update_card)
    if args.json:
        print(json.dumps({k: v for k, v in result.items() if k != "report"}, indent=1))
    else:
        print("\n".join(result["report"]))
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    """One line per shipped model."""
    from agents.beliefs import belief_names, read_belief_card

    for name in belief_names():
        try:
            card = read_belief_card(name)
            d = card["data"]
            print(
                f"{name}: {card['num_players']} players, {card['rules']} (hash {card['rules_hash']}); "
                f"{d.get('train_positions', '?')} training positions"
            )
        except ValueError as e:
            print(f"{name}: BROKEN: {e}")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``belief`` subcommand."""
    b = sub.add_parser("belief", help="the learned opponent model: data, train, metrics, list")
    bs = b.add_subparsers(dest="belief_command", required=True, metavar="ACTION")

    d = bs.add_parser("data", help="play hands of the agent mix and write labelled positions (.npz)")
    d.add_argument("--out", required=True, help="the dataset file to write")
    d.add_argument("--hands", type=_args.hands, default=12000, help="hands of the training mix")
    d.add_argument(
        "--style-hands",
        type=_args.count(0, _args.MAX_HANDS),
        default=800,
        help="hands against the held-out style",
    )
    d.add_argument("--players", type=_args.players, default=2)
    d.add_argument("--rules", default="standard", metavar="PRESET")
    d.add_argument("--seed", type=_args.seed, default=0)
    d.add_argument(
        "--play-share",
        type=_args.number(0.0, 1.0),
        default=0.25,
        help="chance to record a play-phase decision",
    )
    d.add_argument(
        "--holdout-every",
        type=_args.count(2, 1_000_000),
        default=10,
        help="hold out every k-th hand of the mix",
    )
    d.add_argument(
        "--mix", action="append", metavar="SPEC=WEIGHT",
        help="an agent of the mix and its weight (repeatable; default: train.belief_data.MIX with the "
        "table's zoo agent); one agent alone, e.g. heuristic:expert=1, makes a model of that opponent",
    )  # fmt: skip
    d.add_argument("--no-progress", action="store_true")
    d.set_defaults(func=cmd_data)

    t = bs.add_parser("train", help="fit a model on a dataset; write NAME.npz, NAME.json, NAME.md")
    t.add_argument("data", help="a dataset written by tonk belief data")
    t.add_argument("--name", default="2p", help="the model's name (belief=NAME)")
    t.add_argument(
        "--out-dir", default=None, help="where to write it (default: the package's agents/beliefs/)"
    )
    t.add_argument("--hidden", default="256,256", help="hidden layer sizes")
    t.add_argument("--epochs", type=_args.count(1, 10_000), default=20)
    t.add_argument("--batch-size", type=_args.count(1, 1_000_000), default=512)
    t.add_argument("--lr", type=_args.number(1e-9, 1.0), default=1e-3)
    t.add_argument("--seed", type=_args.seed, default=0)
    t.add_argument("--torch-threads", type=_args.count(1, 256), default=1)
    t.add_argument(
        "--count-bins",
        type=_args.count(0, 1000),
        default=0,
        help="a count head with this many bins of an opponent's hidden total (81 covers 2 players; "
        "0: none); its worlds are resampled to the head's totals",
    )
    t.add_argument("--no-progress", action="store_true")
    t.set_defaults(func=cmd_train)

    m = bs.add_parser("metrics", help="compare a model with the hand-written one on held-out positions")
    m.add_argument("data", help="a dataset written by tonk belief data")
    m.add_argument("--model", default="2p", help="a shipped model's name or a path to its .npz")
    m.add_argument("--seed", type=_args.seed, default=0, help="seed of the sampled hands behind P(lowest)")
    m.add_argument("--json", action="store_true")
    m.add_argument(
        "--update-card", action="store_true", help="write the metrics into the shipped model's card"
    )
    m.set_defaults(func=cmd_metrics)

    ls = bs.add_parser("list", help="list the shipped models")
    ls.set_defaults(func=cmd_list)
