"""Write a copy of a policy network with the start of a turn's choices shifted, to test a threshold at the table.

The network's output bias of ``drop``, ``draw`` or ``take`` is raised by the
given amount, so the argmax player drops (draws, takes) wherever that choice's
logit was within the amount of the best one. Evaluating the copies with
``tonk eval AGENT OPPONENT --compare npz:COPY`` measures at the table, on the
same deals, whether the network's own threshold is where the table's value
is highest: a question the playouts' values answer only inside their model.

    python benchmarks/shift_logits.py agents/zoo/2p.npz runs/tilt/drop_1.0.npz --drop 1.0
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from agents.mlp import MLPPolicy
from tonk_env.engine.actions import DRAW, DROP, TAKE

_CHOICES = {"drop": DROP, "draw": DRAW, "take": TAKE}


def shift(src: Path, out: Path, shifts: dict[str, float]) -> MLPPolicy:
    """Load ``src``, add ``shifts[kind]`` to the output bias of each kind's action, save to ``out``."""
    policy = MLPPolicy.load_npz(src)
    _, bias = policy.layers[-1]
    for kind, amount in shifts.items():
        bias[_CHOICES[kind]] += amount
    policy.meta = {**policy.meta, "shifted_logits": {"from": str(src), **shifts}}
    out.parent.mkdir(parents=True, exist_ok=True)
    policy.save_npz(out)
    return policy


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("src", type=Path, help="a policy .npz (a zoo network is agents/zoo/NAME.npz)")
    p.add_argument("out", type=Path, help="the copy to write (.npz, with its .sha256 sidecar)")
    for kind in _CHOICES:
        p.add_argument(f"--{kind}", type=float, default=0.0, help=f"added to the {kind} logit")
    args = p.parse_args(argv)
    shifts = {k: getattr(args, k) for k in _CHOICES if getattr(args, k) != 0.0}
    try:
        shift(args.src, args.out, shifts)
    except ValueError as e:
        print(f"shift_logits: error: {e}", file=sys.stderr)
        return 2
    print(f"wrote {args.out}: {shifts or 'no shift'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
