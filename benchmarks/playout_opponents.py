"""How much the playouts' choices depend on who plays the opponent's seat in them.

A network's positions (as ``tonk improve`` collects them) are valued twice over the
same worlds: once with the network playing every seat of the playouts (model A),
once with another network playing the other seat (model B, e.g. a ``tonk clone`` of
``search:ismcts``). For each pair of models it prints the held-out gain of choosing
by one model's values, valued by the other's: the best candidate by one half of
the worlds under the first, its gain over the network's own move on the other half
under the second (``train.improve.playouts.CandidateValues.held_out_gap`` across
models). A gain found in one model and not in the other is a gain against that
model's opponent only.

    python benchmarks/playout_opponents.py --other npz:runs/clone_ismcts.npz --positions 2000 --worlds 512
"""

from __future__ import annotations

import argparse
import json

import numpy as np

from agents.mlp import MLPPolicy
from agents.registry import make_agent
from tonk_env.engine import make_rules
from train.improve.playouts import CandidateValues, value_positions
from train.improve.positions import collect_positions


def cross_gain(choose: CandidateValues, value: CandidateValues) -> tuple[float, float]:
    """Mean and standard error of: the best candidate by one half under ``choose``, valued by ``value``."""
    assert choose.halves is not None and value.halves is not None
    g = np.array(
        [
            (b[1][int(np.argmax(a[0]))] - b[1][0] + b[0][int(np.argmax(a[1]))] - b[0][0]) / 2
            for a, b in zip(choose.halves, value.halves, strict=True)
        ]
    )
    return round(float(g.mean()), 5), round(float(g.std() / np.sqrt(len(g))), 5)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--net", default="zoo:2p", help="the network whose positions and playouts these are")
    p.add_argument("--other", required=True, help="the network that plays the other seat in model B")
    p.add_argument("--positions", type=int, default=2000)
    p.add_argument("--worlds", type=int, default=512)
    p.add_argument("--belief", default="2p", help="the opponent model that deals the worlds")
    p.add_argument("--seed", type=int, default=77)
    p.add_argument("--workers", type=int, default=1)
    a = p.parse_args()
    net, other = make_agent(a.net, seed=0), make_agent(a.other, seed=0)
    if not (isinstance(net, MLPPolicy) and isinstance(other, MLPPolicy)):
        p.error("--net and --other must be policy networks (zoo:, npz:, ppo:)")
    mix = {"self": 0.6, "heuristic:expert": 0.3, "search:ismcts": 0.1}  # tonk improve's default
    pos = collect_positions(net, mix, make_rules(), 2, a.positions, seed=a.seed, workers=a.workers)
    models = {
        "A": value_positions(net, pos, 3, a.worlds, a.belief, seed=5, workers=a.workers)[0],
        "B": value_positions(
            net,
            pos,
            3,
            a.worlds,
            a.belief,
            seed=5,
            workers=a.workers,
            opponents={"other": other},
            weights={"other": 1.0},
        )[0],
    }
    out: dict[str, object] = {
        f"choose by {x}, valued by {y}": cross_gain(models[x], models[y]) for x in "AB" for y in "AB"
    }
    best = [np.array([int(np.argmax(v)) for v in m.values]) for m in models.values()]
    out["share of positions whose best candidate differs"] = round(float((best[0] != best[1]).mean()), 4)
    print(
        json.dumps(
            {"net": a.net, "other": a.other, "positions": len(pos), "worlds": a.worlds, **out}, indent=1
        )
    )


if __name__ == "__main__":
    main()
