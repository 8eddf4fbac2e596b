"""``tonk average SPEC SPEC ... --out FILE.npz``: one network, the mean of several networks' weights.

The averaging is :func:`agents.mlp.average_networks` (a "model soup"); this
module parses the flags, loads the networks and writes the ``.npz``.
"""

from __future__ import annotations

import argparse

from .args import npz_out


def cmd_average(args: argparse.Namespace) -> int:
    """Average the networks and write the result."""
    from agents.mlp import average_networks, policy_network

    if len(args.networks) < 2:
        raise ValueError(f"two networks at least are needed, got {len(args.networks)}: {args.networks[0]}")
    out = npz_out(args.out)
    nets = [policy_network(spec, what=f"network {spec!r}", seed=0) for spec in args.networks]
    average = average_networks(nets, args.networks)
    average.save_npz(out)
    print(
        f"averaged {len(nets)} networks ({average.sizes_text}, {average.activation}); "
        f"wrote {out} (play it as npz:{out})"
    )
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``average`` to the ``tonk`` command line."""
    p = sub.add_parser(
        "average",
        help="one policy network, the mean of several networks' weights (a model soup)",
        description="Averages the weights of policy networks layer by layer (zoo:NAME, npz:FILE, "
        "ppo:RUN or a checkpoint). Meant for networks fine-tuned from one start, e.g. PPO runs "
        "from one zoo network: their hidden units still line up. The networks must share their "
        "layer sizes, activation, table, rules and observation layout.",
    )
    p.add_argument("networks", nargs="+", metavar="SPEC", help="the networks, two at least")
    p.add_argument("--out", required=True, help="the .npz to write (with its .sha256)")
    p.set_defaults(func=cmd_average)
