"""A generation's positions: the current network's decisions in hands against a mix of opponents.

A position is a decision of the network's seat with more than one legal
action, kept with the true state (the playouts deal their worlds from that
seat's view of it, never from the hidden cards themselves), the seat's
observation and its legal mask. The network plays its argmax move, as it plays
when evaluated, so the positions are the ones it meets.

Hands are dealt from ``seed`` in blocks; each block is played by one process
(:func:`tonk_env.workers.process_map`), so the positions depend on the seed and
the block size only, not on the number of workers.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from agents.mlp import MLPPolicy
from agents.registry import make_agent
from tonk_env.engine import GameState, TonkRules, legal_actions, new_game
from tonk_env.obs import observation
from tonk_env.play import play, start_hand
from tonk_env.workers import process_map

__all__ = ["Position", "collect_positions"]

#: Hands each process plays per task.
BLOCK = 64


@dataclass
class Position:
    """One decision of the network's seat: the true state, the seat, its observation and legal mask."""

    state: GameState
    seat: int
    obs: np.ndarray
    mask: np.ndarray
    opponent: str


def _pick(weights: Mapping[str, float], rng: random.Random) -> str:
    """An opponent by weight."""
    names = list(weights)
    return rng.choices(names, weights=[weights[k] for k in names])[0]


def _play_block(task: tuple[Any, ...]) -> list[Position]:
    """The positions of one block of hands (a process's task)."""
    layers, activation, weights, rules, n, seed, hands = task
    rng = random.Random(seed)
    net = MLPPolicy(layers, activation=activation, deterministic=True)
    opponents: dict[str, Any] = {}
    out: list[Position] = []
    for h in range(hands):
        spec = _pick(weights, rng)
        learner = h % n
        if spec == "self":
            seats = [net] * n
            mine = set(range(n))
        else:
            if spec not in opponents:
                opponents[spec] = make_agent(spec, seed=rng.getrandbits(32))
            seats = [net if k == learner else opponents[spec] for k in range(n)]
            mine = {learner}
        deal_seed = rng.getrandbits(63)
        start_hand(seats, n, rules, {k: (deal_seed + k) % 2**32 for k in range(n)})
        s = new_game(rules, n, seed=deal_seed)

        def record(state: GameState, _action: int, mine: set[int] = mine, spec: str = spec) -> None:
            seat = state.cur
            if seat not in mine:
                return
            legal = legal_actions(state)
            if len(legal) < 2:
                return
            mask = np.zeros(state.table.size, dtype=np.int8)
            mask[legal] = 1
            out.append(Position(state.copy(), seat, observation(state, seat), mask, spec))

        play(s, seats, on_move=record)
    return out


def collect_positions(
    net: MLPPolicy,
    weights: Mapping[str, float],
    rules: TonkRules,
    players: int,
    count: int,
    seed: int,
    workers: int = 1,
    progress: Callable[[int], None] | None = None,
) -> list[Position]:
    """At least ``count`` positions (then cut to ``count``) of ``net`` against ``weights``' opponents."""
    layers = net.layers_for_export()
    total = sum(weights.values())
    share = {k: v / total for k, v in weights.items() if v > 0}

    out: list[Position] = []
    block = 0
    per_block = 4.0 * BLOCK  # a first guess; then the mean so far
    while len(out) < count:
        need = max(1, int(np.ceil((count - len(out)) / per_block * 1.1)))
        tasks = [
            (layers, net.activation, share, rules, players, (seed * 1_000_003 + b) % 2**63, BLOCK)
            for b in range(block, block + need)
        ]
        block += need
        for got in process_map(_play_block, tasks, min(workers, need)):
            if progress is not None:
                progress(max(0, min(len(got), count - len(out))))
            out.extend(got)
        per_block = max(1.0, len(out) / block)
    return out[:count]
