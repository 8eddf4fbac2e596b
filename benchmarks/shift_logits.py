"""Write a copy of a policy network with one kind of decision shifted, to test its threshold at the table.

The network's output bias of every action of a kind (``drop``, ``draw``,
``take``, ``hit``, ``spread``) is raised by the given amount, so the argmax
player drops (draws, hits, ...) wherever that choice's logit was within the
amount of the best one. ``--discard-value A`` adds ``A * value / 10`` to each
discard's bias (value: the card's count, ace 1 to 10), so a positive ``A``
sheds high cards sooner. Evaluating the copies with ``tonk eval AGENT OPPONENT
--compare npz:COPY`` measures at the table, on the same deals, whether the
network's own threshold is where the table's value is highest: a question the
playouts' values answer only inside their model.

    python benchmarks/shift_logits.py agents/zoo/2p.npz runs/tilt/drop_1.0.npz --drop 1.0
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from agents.mlp import MLPPolicy
from tonk_env.engine.actions import ACTION_KINDS, DISCARD, action_kind_index
from tonk_env.engine.cards import VALUES

_KINDS = ("drop", "draw", "take", "hit", "spread")


def shift(src: Path, out: Path, shifts: dict[str, float]) -> MLPPolicy:
    """Load ``src``, shift its output bias by ``shifts`` (a kind's or ``discard_value``), save to ``out``."""
    policy = MLPPolicy.load_npz(src)
    _, bias = policy.layers[-1]
    kinds = action_kind_index(np.arange(len(bias)))
    for kind, amount in shifts.items():
        if kind == "discard_value":
            bias[DISCARD : DISCARD + 52] += amount * np.asarray(VALUES, np.float64) / 10
        else:
            bias[kinds == ACTION_KINDS.index(kind)] += amount
    policy.meta = {**policy.meta, "shifted_logits": {"from": str(src), **shifts}}
    out.parent.mkdir(parents=True, exist_ok=True)
    policy.save_npz(out)
    return policy


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("src", type=Path, help="a policy .npz (a zoo network is agents/zoo/NAME.npz)")
    p.add_argument("out", type=Path, help="the copy to write (.npz, with its .sha256 sidecar)")
    for kind in _KINDS:
        p.add_argument(f"--{kind}", type=float, default=0.0, help=f"added to every {kind} action's logit")
    p.add_argument("--discard-value", type=float, default=0.0, help="A: A * value / 10 added to a discard's")
    args = p.parse_args(argv)
    shifts = {k: getattr(args, k) for k in (*_KINDS, "discard_value") if getattr(args, k) != 0.0}
    try:
        shift(args.src, args.out, shifts)
    except ValueError as e:
        print(f"shift_logits: error: {e}", file=sys.stderr)
        return 2
    print(f"wrote {args.out}: {shifts or 'no shift'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
