"""``tonk widen SPEC --width N --out FILE.npz``: a policy network with wider hidden layers, same moves.

The widening is :func:`agents.mlp.widen_network` (function-preserving: new
units give out zero weights); this module parses the flags, loads the network
and writes the ``.npz``. Train on from it with ``init_from=npz:FILE`` and
``net.pi`` set to the new sizes.
"""

from __future__ import annotations

import argparse

from . import args as _args
from .args import npz_out


def cmd_widen(args: argparse.Namespace) -> int:
    """Widen the network and write the result."""
    from agents.mlp import policy_network, widen_network

    out = npz_out(args.out)
    net = policy_network(args.network, what=f"network {args.network!r}", seed=0)
    wide = widen_network(net, args.width, args.network, seed=args.seed)
    wide.save_npz(out)
    pi = ", ".join(map(str, wide.sizes[1:-1]))
    print(
        f"widened {args.network} from {net.sizes_text} to {wide.sizes_text} ({wide.activation}; the same "
        f"moves); wrote {out} (train on from it with init_from=npz:{out} 'net.pi=[{pi}]')"
    )
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``widen`` to the ``tonk`` command line."""
    p = sub.add_parser(
        "widen",
        help="a policy network with wider hidden layers that plays the same moves",
        description="Grows every hidden layer of a policy network (zoo:NAME, npz:FILE, ppo:RUN or a "
        "checkpoint) to --width units. The new units take random incoming weights and give out zero "
        "weights, so the network's logits, and its moves, are unchanged until training grows them "
        "(function-preserving widening, Net2Net). Same network and --seed give the same file.",
    )
    p.add_argument("network", metavar="SPEC", help="the network to widen")
    p.add_argument(
        "--width", type=_args.count(1, 65536), required=True, help="units of every hidden layer afterwards"
    )
    p.add_argument(
        "--seed", type=_args.seed, default=0, help="seed of the new units' incoming weights (default 0)"
    )
    p.add_argument("--out", required=True, help="the .npz to write (with its .sha256)")
    p.set_defaults(func=cmd_widen)
