"""The candidates of each position, valued by playouts the network plays for every seat.

For a position the network's own choice (its argmax) is a candidate, and
``k - 1`` more legal actions are drawn without replacement by Gumbel top-k
on its logits. The hidden cards are dealt ``worlds`` times from the seat's
view by an opponent model (the learned one of :mod:`agents.beliefs`, or the
search's selection model); in every world each candidate is played and the
hand finished by the network for every seat, each seat choosing from its own
observation of that world (:class:`agents.search.NetworkPlayouts`, on the
compiled core: one matrix product moves every unfinished playout of a batch).
Every candidate meets the same worlds, and the playouts are the network's
argmax, so the world is the only random stream and it is common to all.
The other seats of a share of the worlds may be played by other networks
(``values.opponents``, :func:`world_opponents`): a model of opponents that
do not play as the network does; the valued seat is always the network's.
A candidate's value ``Q`` is its mean payoff to the seat over the worlds.

Blocks of positions are valued in separate processes
(:func:`tonk_env.workers.process_map`), each seeded from the position's
index, so the values do not depend on the number of workers.
"""

from __future__ import annotations

import functools
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from agents.beliefs import load_belief
from agents.beliefs.model import BeliefModel
from agents.mlp import MLPPolicy
from agents.playout_search import candidate_states, deal
from agents.playout_search import gumbel_candidates as candidates
from agents.search import NetworkPlayouts
from tonk_env.engine import seat_info
from tonk_env.workers import process_map

from .positions import Position

__all__ = ["CandidateValues", "PlayoutStats", "candidates", "value_positions", "world_opponents"]

#: Positions per process task.
BLOCK = 256


@dataclass
class CandidateValues:
    """Per position: the candidate actions (the network's choice first) and their playout values."""

    actions: list[np.ndarray]
    values: list[np.ndarray]
    halves: list[np.ndarray] | None = None
    """Per position ``(2, k)``: the values over the even and over the odd worlds (an unbiased gap)."""

    def index_of(self, i: int, move: int) -> int | None:
        """The index of ``move`` among position ``i``'s candidates (None: it is not one of them)."""
        hit = np.flatnonzero(self.actions[i] == move)
        return int(hit[0]) if len(hit) else None

    def held_out_gap(self) -> tuple[float, float]:
        """The mean gain of the best candidate by one half of the worlds, valued on the other half.

        Unlike the mean of ``max(Q) - Q[0]``, which noise alone makes positive, this is an unbiased
        estimate of what choosing by the playouts gains over the network's choice (and its standard
        error), at half the worlds. ``(nan, nan)`` without halves.
        """
        if not self.halves:
            return float("nan"), float("nan")
        g = self.held_out_gains()
        return float(g.mean()), float(g.std() / np.sqrt(max(len(g), 1)))

    def held_out_gains(self) -> np.ndarray:
        """Per position, the held-out gain that :meth:`held_out_gap` averages (empty without halves)."""
        if not self.halves:
            return np.zeros(0)
        return np.array(
            [(b[int(np.argmax(a))] - b[0] + a[int(np.argmax(b))] - a[0]) / 2 for a, b in self.halves]
        )


@dataclass
class PlayoutStats:
    """What the playouts cost: playouts, network decisions and seconds (of all processes together)."""

    playouts: int = 0
    decisions: int = 0
    seconds: float = 0.0
    dealing: float = 0.0

    def add(self, other: PlayoutStats) -> None:
        """Add another block's counts."""
        self.playouts += other.playouts
        self.decisions += other.decisions
        self.seconds += other.seconds
        self.dealing += other.dealing


#: Playouts of one seat waiting to be finished: the states, and per state (position, candidate, world).
_Pending = tuple[list[Any], list[tuple[int, int, int]]]


@functools.lru_cache(maxsize=4)
def _belief(ref: str) -> BeliefModel | None:
    """The opponent model ``ref`` names, read once per process (a worker values many blocks)."""
    return load_belief(ref) if ref else None


class _Counting:
    """A policy whose batched decisions are counted."""

    def __init__(self, policy: MLPPolicy) -> None:
        self.policy = policy
        self.decisions = 0

    def act_batch(self, obs: Any, infos: Sequence[Any] = ()) -> list[int]:
        self.decisions += len(obs["observation"])
        return self.policy.act_batch(obs, infos)


def world_opponents(weights: Mapping[str, float], worlds: int) -> np.ndarray:
    """Per world, who plays the other seats: 0 the network, ``j`` the j-th spec of ``weights`` but ``self``.

    Each half of the worlds (the even and the odd ones, :attr:`CandidateValues.halves`) is shared
    out by the weights, largest remainders first, in the order the weights are given.
    """
    names = list(weights)
    others = [s for s in names if s != "self"]
    code = np.array([0 if s == "self" else others.index(s) + 1 for s in names], dtype=np.int64)
    share = np.array([weights[s] for s in names], dtype=np.float64)
    share = share / share.sum()
    out = np.zeros(worlds, dtype=np.int64)
    for h in (0, 1):
        rows = np.arange(h, worlds, 2)
        exact = share * len(rows)
        counts = np.floor(exact).astype(np.int64)
        for j in np.argsort(-(exact - counts), kind="stable")[: len(rows) - counts.sum()]:
            counts[j] += 1
        out[rows] = np.repeat(code, counts)
    return out


def _value_block(task: tuple[Any, ...]) -> tuple[CandidateValues, PlayoutStats]:
    """Values of one block of positions (a process's task)."""
    layers, activation, belief_ref, positions, k, worlds, batch, seed, rivals, whom = task
    t0 = time.perf_counter()
    net = MLPPolicy(layers, activation=activation, deterministic=True)
    counting = _Counting(net)
    others = [_Counting(MLPPolicy(ls, activation=act, deterministic=True)) for ls, act in rivals]
    playouts = NetworkPlayouts(counting, opponents=others)
    belief = _belief(belief_ref)
    logits = net.logits(np.stack([p.obs for p in positions]))
    stats = PlayoutStats()
    cand_out: list[np.ndarray] = []
    val_out: list[np.ndarray] = []  # per position (2, k): sums over the even and the odd worlds
    pending: dict[int, _Pending] = {}  # by seat: the states to finish and whose value each adds to

    def flush() -> None:
        for seat, (states, owners) in sorted(pending.items()):
            pay = playouts.finish(states, seat, against=whom[[w for _, _, w in owners]])
            for (i, c, w), v in zip(owners, pay, strict=True):
                val_out[i][w % 2, c] += v
            stats.playouts += len(states)
        pending.clear()

    for i, pos in enumerate(positions):
        rng = random.Random(seed + i)
        gen = np.random.default_rng(seed + i)
        acts = candidates(logits[i], pos.mask, k, gen)
        cand_out.append(acts)
        val_out.append(np.zeros((2, len(acts))))
        d0 = time.perf_counter()
        template, deals = deal(seat_info(pos.state, pos.seat), worlds, belief, rng)
        stats.dealing += time.perf_counter() - d0
        states, owners = pending.setdefault(pos.seat, ([], []))
        states += candidate_states(template, deals, acts)  # world by world
        owners += [(i, c, w) for w in range(len(deals)) for c in range(len(acts))]
        if sum(len(v[0]) for v in pending.values()) >= batch:
            flush()
    flush()
    values = [v.sum(axis=0) / worlds for v in val_out]
    counts = np.array([[(worlds + 1) // 2], [worlds // 2]], dtype=np.float64)
    halves = [v / counts for v in val_out] if worlds >= 2 else None
    stats.decisions = counting.decisions + sum(o.decisions for o in others)
    stats.seconds = time.perf_counter() - t0
    return CandidateValues(cand_out, values, halves), stats


def value_positions(
    net: MLPPolicy,
    positions: Sequence[Position],
    k: int,
    worlds: int,
    belief: str,
    seed: int,
    batch: int = 8192,
    workers: int = 1,
    progress: Callable[[int], None] | None = None,
    opponents: Mapping[str, MLPPolicy] | None = None,
    weights: Mapping[str, float] | None = None,
) -> tuple[CandidateValues, PlayoutStats]:
    """Every position's candidates and their values (see the module docstring), with what they cost.

    ``weights`` shares the worlds among who plays the other seats (:func:`world_opponents`): ``self``
    the network, any other name the network ``opponents[name]``. Default: the network everywhere.
    """
    layers = net.layers_for_export()
    weights = dict(weights or {"self": 1.0})
    nets = [(opponents or {})[s] for s in weights if s != "self"]
    rivals = [(o.layers_for_export(), o.activation) for o in nets]
    whom = world_opponents(weights, worlds)
    tasks = [
        (
            layers,
            net.activation,
            belief,
            list(positions[b : b + BLOCK]),
            k,
            worlds,
            batch,
            seed * 7_919 + b,
            rivals,
            whom,
        )
        for b in range(0, len(positions), BLOCK)
    ]
    out = CandidateValues([], [], [] if worlds >= 2 else None)
    stats = PlayoutStats()
    for vals, st in process_map(_value_block, tasks, max(1, min(workers, len(tasks)))):
        out.actions.extend(vals.actions)
        out.values.extend(vals.values)
        if out.halves is not None and vals.halves is not None:
            out.halves.extend(vals.halves)
        stats.add(st)
        if progress is not None:
            progress(len(vals.actions))
    return out, stats
