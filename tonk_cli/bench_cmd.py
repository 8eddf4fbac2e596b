"""``tonk bench``: speed benchmarks (engine, env, train) and the core's long differential check (exact).

``tonk bench engine`` and ``tonk bench env`` print medians of timed trials
(``--json``: one JSON object; the keys are documented in
:mod:`tonk_env.bench`). ``tonk bench exact --hands N`` plays N hands through
the compiled core and the engine (:func:`tonk_env.core.exact_check`), split
evenly over every preset and 2 to 6 players, comparing legal sets,
observations and payoffs at every decision; any difference is an error
(exit status 1) naming the configuration and the first difference.
``tonk bench train`` trains each backend and mode for ``--steps`` steps
(:func:`train.bench.bench_train`) and prints their steps/s with the
collection and update rates.
"""

from __future__ import annotations

import argparse
import json
import time

from tonk_env.engine import PRESETS

from . import args as _args


def cmd_bench(args: argparse.Namespace) -> int:
    """Run a speed benchmark (or the exact check) and print its figures."""
    if args.what == "exact":
        return _exact(args)
    if args.what == "train":
        return _train(args)
    if args.trials < 1 or args.seconds <= 0:
        raise ValueError(f"--trials must be >= 1 and --seconds > 0, got {args.trials} and {args.seconds}")
    if args.what == "engine":
        from tonk_env.bench import bench_engine

        res = bench_engine(args.rules, args.players, args.trials, args.seconds, args.with_obs)
        if args.json:
            print(json.dumps(res))
        else:
            print(
                f"engine, {args.players} players, rules {args.rules}, "
                f"{'with' if args.with_obs else 'without'} observations, legal mask every decision"
            )
            print(
                f"  decisions/s: {res['decisions_per_s']:,.0f} (median of {args.trials} trials: "
                f"{', '.join(f'{x:,}' for x in res['decisions_per_s_trials'])})"
            )
            print(
                f"  hands/s:     {res['hands_per_s']:,.0f}"
                f"  ({res['decisions_per_hand']:.1f} decisions a hand)"
            )
        return 0
    from tonk_env.bench import bench_env

    res = bench_env(args.rules, args.players, args.trials, args.seconds)
    print(json.dumps(res) if args.json else "\n".join(f"  {k}: {v}" for k, v in res.items()))
    return 0


def _exact(args: argparse.Namespace) -> int:
    """``tonk bench exact``: the differential check over every preset and player count."""
    from tonk_env.core import CoreMismatchError, exact_check, exact_runs
    from tonk_env.progress import progress_bar

    only = [args.rules] if args.only_rules else None
    runs = exact_runs(args.hands, only, args.players_list)
    done = decisions = 0
    t0 = time.perf_counter()
    bar = progress_bar(total=args.hands, unit="hand", desc="exact", disable=args.json or args.no_progress)
    try:
        for i, (preset, n, hands) in enumerate(runs):
            try:
                res = exact_check(hands, preset, n, seed=args.seed + i)
            except CoreMismatchError as e:
                bar.close()
                print(f"tonk bench exact: MISMATCH in {preset}, {n} players (seed {args.seed + i}): {e}")
                return 1
            done += res["hands"]
            decisions += res["decisions"]
            bar.update(res["hands"])
    finally:
        bar.close()
    seconds = time.perf_counter() - t0
    presets = sorted({p for p, _, _ in runs})
    players = sorted({n for _, n, _ in runs})
    out = {
        "benchmark": "exact",
        "hands": done,
        "decisions": decisions,
        "configurations": len(runs),
        "presets": presets,
        "players": players,
        "mismatches": 0,
        "seconds": seconds,
    }
    if args.json:
        print(json.dumps(out))
    else:
        print(
            f"core == engine on {done:,} hands ({decisions:,} decisions; {len(runs)} configurations: "
            f"{', '.join(presets)} x {players} players) in {seconds:,.0f} s: no difference"
        )
    return 0


def _train(args: argparse.Namespace) -> int:
    """``tonk bench train``: one short run of each training mode, side by side."""
    import sys

    from train.bench import bench_train

    from .recipes import find_config

    res = bench_train(
        find_config(args.sb3_config),
        find_config(args.rllib_config),
        steps=args.steps,
        modes=args.modes,
        overrides=args.set,
        log=None if args.no_progress else lambda text: print(text, file=sys.stderr, flush=True),
    )
    if args.json:
        print(json.dumps(res))
        return 0
    load = ", ".join(f"{x:.1f}" for x in res["load_average_before"])
    print(f"training speed, {res['steps']:,} steps per mode (load average before: {load})")
    print(f"  {'mode':16s} {'steps/s':>9s} {'collect':>9s} {'update':>9s} {'per runner':>11s}")
    for mode, r in res["modes"].items():
        runner = r.get("collect_steps_per_s_per_runner")
        print(
            f"  {mode:16s} {r['steps_per_s']:>9,.0f} {r['collect_steps_per_s']:>9,.0f} "
            f"{r['update_steps_per_s']:>9,.0f} {'' if runner is None else f'{runner:,.0f}':>11s}"
        )
    return 0


def _modes(text: str) -> list[str]:
    from train.bench import MODES

    modes = [m.strip() for m in text.split(",") if m.strip()]
    if not modes or any(m not in MODES for m in modes):
        raise argparse.ArgumentTypeError(f"modes are a comma list of {', '.join(MODES)}; got {text!r}")
    return modes


def _players(text: str) -> list[int]:
    try:
        ns = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected player counts like 2,3,4 (2..6), got {text!r}") from None
    if not ns or any(not 2 <= n <= 6 for n in ns):
        raise argparse.ArgumentTypeError(f"player counts must be 2..6, got {text!r}")
    return ns


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``bench`` subcommand."""
    b = sub.add_parser(
        "bench",
        help="speed benchmarks (engine, env, train) and the core's differential check (exact)",
        description="engine: the rules engine alone; env: the PettingZoo AEC env against OpenSpiel's gin "
        "rummy, the single-agent env and the compiled core's 1,024-game batch; exact: play --hands hands "
        "through the compiled core and the engine and compare every decision; train: train SB3 on the "
        "core, RLlib PPO and RLlib APPO for --steps steps each and print their steps/s.",
    )
    b.add_argument("what", choices=["engine", "env", "exact", "train"])
    b.add_argument("--rules", default="standard", choices=list(PRESETS), help="rules preset")
    b.add_argument("--players", type=_args.players, default=2, help="players (engine, env)")
    b.add_argument(
        "--trials", type=_args.count(1, 1000), default=5, help="timed trials; the median is reported"
    )
    b.add_argument("--seconds", type=_args.number(0.001, 3600), default=1.0, help="seconds per trial")
    b.add_argument("--with-obs", action="store_true", help="engine: build the observation every decision")
    b.add_argument("--json", action="store_true", help="print one JSON object")
    b.add_argument("--no-progress", action="store_true", help="exact: no progress bar")
    b.add_argument(
        "--hands",
        type=_args.count(1, _args.MAX_HANDS),
        default=100_000,
        help="exact: hands to check (default 100,000)",
    )
    b.add_argument(
        "--players-list",
        type=_players,
        default=[2, 3, 4, 5, 6],
        metavar="N,N,...",
        help="exact: player counts (default 2,3,4,5,6)",
    )
    b.add_argument(
        "--only-rules", action="store_true", help="exact: only the --rules preset (default: every preset)"
    )
    b.add_argument("--seed", type=_args.seed, default=0, help="exact: seed of the first configuration")
    b.add_argument(
        "--steps",
        type=_args.count(1, 100_000_000),
        default=16_384,
        help="train: steps each mode trains (default 16,384: a few seconds each)",
    )
    b.add_argument(
        "--modes",
        type=_modes,
        default=["sb3-core", "sb3-core-overlap", "rllib-ppo-core", "rllib-appo-core"],
        metavar="MODE,MODE,...",
        help="train: modes to run (default sb3-core,sb3-core-overlap,rllib-ppo-core,rllib-appo-core)",
    )
    b.add_argument("--sb3-config", default="quick", help="train: the SB3 modes' config (default quick)")
    b.add_argument(
        "--rllib-config", default="rllib_2p", help="train: the RLlib modes' config (default rllib_2p)"
    )
    b.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="train: a config override for every mode (repeatable), e.g. --set torch_threads=1",
    )
    b.set_defaults(func=cmd_bench)
