"""How far the playouts' values are from the values at the table, by decision type.

A network's positions in hands against a real opponent (``--opponent``, e.g.
``heuristic:expert``) are kept with their true state. Each position's
candidates (the network's top 3) are valued twice:

- **model**: as ``tonk improve`` values them, over ``--worlds`` worlds dealt by
  the opponent model from the seat's view, the other seat played by
  ``--model-opponent`` (``self``: the network; or a network such as a ``tonk
  clone`` of the opponent);
- **table**: from the true state (the true hidden cards and stock), the
  candidate played and the hand finished by the network in its seat and the
  real opponent in the other, ``--table-playouts`` times (the opponent's own
  randomness differs between them): an unbiased estimate of the candidate's
  value against that opponent in that very deal.

It prints, per decision type of the candidate, the mean of model minus table
(the model's bias there; the opponent model's hidden cards alone at a drop,
which ends the hand, the opponent's play as well at every other type), and the
gain at the table of choosing the candidate the model values highest instead
of the network's own move, beside the gain the model itself promises for that
choice (per type of the network's move). Both choose by one half of the worlds
and average the two halves' choices; the model's gain is valued on the other
half (``CandidateValues.held_out_gains``), so neither is raised by noise. A
choice worth more in the model than at the table is a gain against the model's
opponent only.

    python benchmarks/playout_bias.py --opponent heuristic:expert --model-opponent npz:runs/clone_expert.npz \
        --positions 3000 --worlds 256 --workers 2
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from typing import Any

import numpy as np

from agents.mlp import MLPPolicy, policy_network
from agents.registry import make_agent
from tonk_env.engine import apply, make_rules, payoffs
from tonk_env.engine.actions import action_kind
from tonk_env.play import play, start_hand
from tonk_env.workers import process_map
from train.improve.playouts import value_positions
from train.improve.positions import Position, collect_positions

BLOCK = 128


def _table_block(task: tuple[Any, ...]) -> list[list[float]]:
    """Per position of the block, per candidate: its mean payoff over ``reps`` hands finished at the table."""
    layers, activation, spec, positions, actions, reps, seed = task
    rules = make_rules()
    net = MLPPolicy(layers, activation=activation, deterministic=True)
    rival = make_agent(spec, seed=seed)
    out = []
    for i, (p, cands) in enumerate(zip(positions, actions, strict=True)):
        seats = [rival, rival]
        seats[p.seat] = net
        row = []
        for a in cands:
            total = 0.0
            for r in range(reps):
                start_hand(seats, 2, rules, [(seed + 7919 * i + 104729 * r + k) % 2**32 for k in range(2)])
                s = play(apply(p.state, int(a)), seats)
                total += payoffs(s)[p.seat]
            row.append(total / reps)
        out.append(row)
    return out


def table_values(
    net: MLPPolicy, spec: str, positions: list[Position], actions: list[np.ndarray], reps: int, workers: int
) -> list[list[float]]:
    """:func:`_table_block` over all positions, in blocks shared among ``workers`` processes."""
    layers = net.layers_for_export()
    tasks = [
        (layers, net.activation, spec, positions[b : b + BLOCK], actions[b : b + BLOCK], reps, 1_000 + b)
        for b in range(0, len(positions), BLOCK)
    ]
    return [row for rows in process_map(_table_block, tasks, max(1, workers)) for row in rows]


def _mean_se(x: list[float]) -> list[float]:
    a = np.asarray(x, dtype=np.float64)
    return [round(float(a.mean()), 4), round(float(a.std() / np.sqrt(len(a))), 4), len(a)]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--net", default="zoo:2p", help="the network whose positions and playouts these are")
    p.add_argument("--opponent", default="heuristic:expert", help="who the network plays at the table")
    p.add_argument("--model-opponent", default="self", help="who plays the other seat in the playouts")
    p.add_argument("--positions", type=int, default=3000)
    p.add_argument("--worlds", type=int, default=256)
    p.add_argument("--table-playouts", type=int, default=2)
    p.add_argument("--belief", default="2p", help="the opponent model that deals the worlds")
    p.add_argument("--seed", type=int, default=77)
    p.add_argument("--workers", type=int, default=2)
    a = p.parse_args()
    rules = make_rules()
    net = policy_network(a.net, "--net", 0, 2, rules)
    pos = collect_positions(net, {a.opponent: 1.0}, rules, 2, a.positions, seed=a.seed, workers=a.workers)
    extra: dict[str, Any] = {}
    if a.model_opponent != "self":
        extra = {
            "opponents": {"m": policy_network(a.model_opponent, "--model-opponent", 0, 2, rules)},
            "weights": {"m": 1.0},
        }
    model, _ = value_positions(net, pos, 3, a.worlds, a.belief, seed=5, workers=a.workers, **extra)
    table = table_values(net, a.opponent, pos, model.actions, a.table_playouts, a.workers)
    bias: dict[str, list[float]] = defaultdict(list)
    gain_table: dict[str, list[float]] = defaultdict(list)
    gain_model: dict[str, list[float]] = defaultdict(list)
    assert model.halves is not None  # worlds >= 2
    held_out = model.held_out_gains()  # the model's gain of the choice below, valued on the other half
    rows = zip(model.actions, model.values, table, model.halves, held_out, strict=True)
    for acts, q, t, (h0, h1), g in rows:
        for act, qa, ta in zip(acts, q, t, strict=True):
            bias[action_kind(int(act))].append(float(qa - ta))
        b0, b1 = int(np.argmax(h0)), int(np.argmax(h1))  # the best by each half of the worlds
        for kind in (action_kind(int(acts[0])), "all"):
            gain_table[kind].append((t[b0] + t[b1]) / 2 - t[0])
            gain_model[kind].append(float(g))
    report = {
        "net": a.net,
        "opponent": a.opponent,
        "model_opponent": a.model_opponent,
        "positions": len(pos),
        "worlds": a.worlds,
        "table_playouts": a.table_playouts,
        "model minus table, by candidate [mean, se, n]": {k: _mean_se(v) for k, v in sorted(bias.items())},
        "choosing by the model, gain at the table, by the network's move [mean, se, n]": {
            k: _mean_se(v) for k, v in sorted(gain_table.items())
        },
        "the same choice's gain in the model, held out [mean, se, n]": {
            k: _mean_se(v) for k, v in sorted(gain_model.items())
        },
    }
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
