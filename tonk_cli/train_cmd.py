"""``tonk train``: fit an agent from a YAML config, or resume a run; ``tonk pipeline``: train, then evaluate.

Training scores its checkpoints (to choose ``best.zip``) with
:func:`eval.duplicate.evaluate`, passed in here: ``train`` does not import ``eval``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from . import args as _args


def cmd_train(args: argparse.Namespace) -> int:
    """Train from ``CONFIG.yaml [key=value ...]`` or ``--resume RUN_DIR``."""
    import json

    from eval.duplicate import evaluate
    from train.config import load_config, parse_overrides
    from train.trainer import resume, train

    from .recipes import find_config

    if args.address is not None:  # quoted: YAML would read some HOST:PORT forms as numbers
        args.overrides.append(f"rllib.address={json.dumps(args.address)}")
    if args.resume:
        if args.config and not args.config.endswith((".yaml", ".yml")):
            args.overrides.insert(0, args.config)
            args.config = None
        if args.config:
            raise ValueError("give either CONFIG.yaml or --resume RUN_DIR, not both")
        run_dir = resume(
            args.resume,
            progress=not args.no_progress,
            overrides=parse_overrides(args.overrides),
            evaluate=evaluate,
        )
    else:
        if args.config is None:
            raise ValueError(
                "give a config (a shipped name such as quick, or a YAML file), or --resume RUN_DIR"
            )
        cfg = load_config(find_config(args.config), args.overrides, defaults=args.defaults)
        run_dir = train(cfg, progress=not args.no_progress, evaluate=evaluate)
    _print_summary(run_dir)
    return 0


def _print_summary(run_dir: Path) -> None:
    import json

    summary_path = run_dir / "summary.json"
    print(f"run folder: {run_dir}")
    if summary_path.is_file():
        s = json.loads(summary_path.read_text())
        print(
            f"  steps {s['steps']:,}  wall {s['wall_seconds']:.0f}s  {s['steps_per_s']:,.0f} steps/s "
            f"({s['steps_per_s_excluding_eval']:,.0f} excluding evaluation)"
            + (f"  stopped by {s['stopped_by']}" if s.get("stopped_by") else "")
        )
    best = run_dir / "best.json"
    if best.is_file():
        b = json.loads(best.read_text())
        name = "best/ (rllib:RUN_DIR)" if (run_dir / "best").is_dir() else "best.zip"
        print(f"  {name}: step {b['step']:,}, score {b['score']:+.3f} stakes/hand")
        for spec, r in b["results"].items():
            print(
                f"    vs {spec:22s} {r['mean_stakes']:+.3f}"
                f"  95% CI [{r['ci95'][0]:+.3f}, {r['ci95'][1]:+.3f}]"
                f"  win {r['win_rate']:.1%}  ({r['hands']} hands)"
            )


def cmd_pipeline(args: argparse.Namespace) -> int:
    """Train a config, evaluate the result against the baselines, print the table."""
    import json

    from .workflows.pipeline import format_pipeline, run_pipeline

    report = run_pipeline(
        args.config,
        args.overrides,
        tuple(args.baselines),
        hands=args.hands,
        seed=args.seed,
        workers=args.workers,
        progress=not args.no_progress,
    )
    print(json.dumps(report.to_json(), indent=1) if args.json else "\n" + format_pipeline(report))
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``train`` and ``pipeline`` to the ``tonk`` command line."""
    q = sub.add_parser("pipeline", help="train a config, then evaluate it against the baselines (make run)")
    q.add_argument(
        "config", nargs="?", default="quick", help="a shipped config name (default: quick) or a YAML file"
    )
    q.add_argument("overrides", nargs="*", metavar="KEY=VALUE")
    q.add_argument("--baselines", nargs="+", default=["random", "heuristic:greedy", "heuristic:expert"])
    q.add_argument("--hands", type=_args.hands, default=2000, help="duplicate hands per baseline")
    q.add_argument("--seed", type=_args.seed, default=2024)
    q.add_argument("--workers", type=_args.workers, default=1)
    q.add_argument("--json", action="store_true")
    q.add_argument("--no-progress", action="store_true")
    q.set_defaults(func=cmd_pipeline)

    p = sub.add_parser(
        "train",
        help="train a PPO agent from a YAML config (SB3's MaskablePPO; RLlib with backend: rllib), or resume",
    )
    p.add_argument(
        "config", nargs="?", help="a shipped config (quick, ppo_2p, ...: configs/NAME.yaml) or a YAML file"
    )
    p.add_argument(
        "overrides", nargs="*", metavar="KEY=VALUE", help="config overrides, e.g. ppo.learning_rate=1e-4"
    )
    p.add_argument("--resume", metavar="RUN_DIR", help="continue a run from its newest checkpoint")
    p.add_argument(
        "--defaults", action="store_true", help="allow an empty config file: train on the default settings"
    )
    p.add_argument(
        "--address",
        metavar="ADDR",
        help="backend rllib: join the Ray cluster at ADDR (HOST:PORT of `ray start --head`, or auto) "
        "instead of starting a local Ray (sets rllib.address)",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_train)
