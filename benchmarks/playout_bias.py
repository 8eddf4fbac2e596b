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
opponent only. The drop's bias is also given less the draw's and the take's at
the same positions (what tilts the start of a turn; paired, so with its own
standard error), and by bins of the model's value of the drop (its
reliability: a 2-player drop is worth +1 or -2 stakes).

``--belief`` may be repeated: the models are then compared on the same
positions, candidates and table values, and the change of each candidate's
model value from the first model's is given with its paired standard error.

    python benchmarks/playout_bias.py --opponent heuristic:expert --model-opponent npz:runs/clone_expert.npz \
        --positions 3000 --worlds 256 --workers 2 --belief 2p --belief runs/belief/2p_expert_count.npz
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
from train.improve.playouts import CandidateValues, value_positions
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


#: Edges of the bins of the model's value of a drop (a 2-player drop is worth +1 or -2 stakes).
DROP_BINS = (-2.0, -1.5, -1.0, -0.5, 0.0, 0.5, 1.0)


def _drop_bins(model_v: list[float], table_v: list[float]) -> dict[str, list[float]]:
    """Per bin of the model's value of the drop: [mean model value, mean table value, se of the bias, n]."""
    m, t = np.asarray(model_v), np.asarray(table_v)
    out = {}
    for lo, hi in zip(DROP_BINS[:-1], DROP_BINS[1:], strict=True):
        sel = (m >= lo) & ((m < hi) | (hi == DROP_BINS[-1]))
        if sel.any():
            _, se, n = _mean_se((m[sel] - t[sel]).tolist())
            out[f"{lo:+.1f}..{hi:+.1f}"] = [
                round(float(m[sel].mean()), 4),
                round(float(t[sel].mean()), 4),
                se,
                n,
            ]
    return out


def belief_report(model: CandidateValues, table: list[list[float]]) -> dict[str, Any]:
    """One opponent model's bias by candidate type, the drop's by its value, and what choosing by it gains."""
    bias: dict[str, list[float]] = defaultdict(list)
    gain_table: dict[str, list[float]] = defaultdict(list)
    gain_model: dict[str, list[float]] = defaultdict(list)
    drop_model: list[float] = []
    drop_table: list[float] = []
    assert model.halves is not None  # worlds >= 2
    held_out = model.held_out_gains()  # the model's gain of the choice below, valued on the other half
    rows = zip(model.actions, model.values, table, model.halves, held_out, strict=True)
    # per position, the drop's bias less the draw's or the take's
    tilt: dict[str, list[float]] = defaultdict(list)
    for acts, q, t, (h0, h1), g in rows:
        here = {}
        for act, qa, ta in zip(acts, q, t, strict=True):
            kind = action_kind(int(act))
            here[kind] = float(qa - ta)
            bias[kind].append(here[kind])
            if kind == "drop":
                drop_model.append(float(qa))
                drop_table.append(float(ta))
        for other in ("draw", "take"):
            if "drop" in here and other in here:
                tilt[f"drop - {other}"].append(here["drop"] - here[other])
        b0, b1 = int(np.argmax(h0)), int(np.argmax(h1))  # the best by each half of the worlds
        for kind in (action_kind(int(acts[0])), "all"):
            gain_table[kind].append((t[b0] + t[b1]) / 2 - t[0])
            gain_model[kind].append(float(g))
    return {
        "model minus table, by candidate [mean, se, n]": {k: _mean_se(v) for k, v in sorted(bias.items())},
        "the drop's bias less another start choice's, paired by position [mean, se, n]": {
            k: _mean_se(v) for k, v in sorted(tilt.items())
        },
        "the drop by the model's value of it [model, table, se of the difference, n]": _drop_bins(
            drop_model, drop_table
        ),
        "choosing by the model, gain at the table, by the network's move [mean, se, n]": {
            k: _mean_se(v) for k, v in sorted(gain_table.items())
        },
        "the same choice's gain in the model, held out [mean, se, n]": {
            k: _mean_se(v) for k, v in sorted(gain_model.items())
        },
    }


def paired_differences(first: CandidateValues, other: CandidateValues) -> dict[str, list[float]]:
    """Per candidate type, ``other``'s value minus ``first``'s on the same candidates: the change of bias."""
    diff: dict[str, list[float]] = defaultdict(list)
    for acts, qa, qb in zip(first.actions, first.values, other.values, strict=True):
        for act, a, b in zip(acts, qa, qb, strict=True):
            diff[action_kind(int(act))].append(float(b - a))
    return {k: _mean_se(v) for k, v in sorted(diff.items())}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--net", default="zoo:2p", help="the network whose positions and playouts these are")
    p.add_argument("--opponent", default="heuristic:expert", help="who the network plays at the table")
    p.add_argument("--model-opponent", default="self", help="who plays the other seat in the playouts")
    p.add_argument("--positions", type=int, default=3000)
    p.add_argument("--worlds", type=int, default=256)
    p.add_argument("--table-playouts", type=int, default=2)
    p.add_argument(
        "--belief", action="append", default=None,
        help="an opponent model that deals the worlds (default 2p); repeat it to compare models on the "
        "same positions, candidates and table values",
    )  # fmt: skip
    p.add_argument("--seed", type=int, default=77)
    p.add_argument("--workers", type=int, default=2)
    a = p.parse_args()
    beliefs = a.belief or ["2p"]
    rules = make_rules()
    net = policy_network(a.net, "--net", 0, 2, rules)
    pos = collect_positions(net, {a.opponent: 1.0}, rules, 2, a.positions, seed=a.seed, workers=a.workers)
    extra: dict[str, Any] = {}
    if a.model_opponent != "self":
        extra = {
            "opponents": {"m": policy_network(a.model_opponent, "--model-opponent", 0, 2, rules)},
            "weights": {"m": 1.0},
        }
    models = [
        value_positions(net, pos, 3, a.worlds, b, seed=5, workers=a.workers, **extra)[0] for b in beliefs
    ]
    for m in models[1:]:  # the candidates are the network's top 3: the same whoever deals the worlds
        assert all(np.array_equal(x, y) for x, y in zip(models[0].actions, m.actions, strict=True))
    table = table_values(net, a.opponent, pos, models[0].actions, a.table_playouts, a.workers)
    report: dict[str, Any] = {
        "net": a.net,
        "opponent": a.opponent,
        "model_opponent": a.model_opponent,
        "positions": len(pos),
        "worlds": a.worlds,
        "table_playouts": a.table_playouts,
        "beliefs": {b: belief_report(m, table) for b, m in zip(beliefs, models, strict=True)},
    }
    if len(models) > 1:
        report[f"model values minus those of {beliefs[0]!r}, by candidate [mean, se, n]"] = {
            b: paired_differences(models[0], m) for b, m in zip(beliefs[1:], models[1:], strict=True)
        }
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
