"""The one-step improvement gap of a policy network: where a better policy could still gain.

How the gap is measured (:func:`improvement_gap`)
-------------------------------------------------

1. **Positions.** The network (``agent``, e.g. ``zoo:2p``) plays hands
   against ``opponent`` (e.g. ``search:ismcts``): hand ``h`` uses
   :func:`eval.duplicate.deal_deck` ``(seed, h)`` with the agent in seat
   ``h mod players``, every seat reseeded per hand as in a duplicate
   evaluation. Every decision of the agent's seat with more than one legal
   action is a position, with the action the agent chose. Whole hands are
   played until there are at least ``positions`` positions.
2. **Values.** At each position, ``worlds`` deals of the hidden cards are
   sampled from the agent's seat view exactly as ``search:ismcts`` samples
   them (:meth:`agents.search.SearchAgent.worlds`: the selection model and
   the belief weights). Every legal action is played in every world (common
   random numbers: the same worlds, and the network's deterministic play, for
   every action) and the hand finished with the network in every seat, each
   seat acting on its own observation (:class:`agents.search.NetworkPlayouts`,
   batched on the compiled core). ``Q(a)`` is the weighted mean payoff.
3. **Gap.** ``Q(best) - Q(chosen)`` per position (never negative), summed
   per hand and split by the type of the chosen action: drop, draw/take,
   spread, hit, discard. The mean over hands of the per-hand sums, with a
   Student-t 95% interval over hands, is the report.

The maximum over noisy estimates is biased upward, so the in-sample gap
overstates what an improved policy would gain with this many worlds. The
*held-out* gap removes that bias: the worlds are split in two halves, the best
action is picked on one half and valued against the chosen one on the other
(and the other way round, averaged). It can be negative at a position; its
mean per hand is a fair estimate of what the one-step improvement (picking the
argmax of ``worlds / 2`` playouts) would gain.
"""

from __future__ import annotations

import hashlib
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from agents.mlp import policy_network
from agents.registry import check_spec, make_agent
from agents.search import NetworkPlayouts, SearchAgent, world_state
from tonk_env.engine import (
    OVER,
    GameState,
    TonkRules,
    legal_actions,
    make_rules,
    new_game,
    payoffs,
    sample_state,
    seat_info,
)
from tonk_env.engine.actions import action_kind
from tonk_env.play import play, start_hand
from tonk_env.progress import progress_bar

from .duplicate import deal_deck, hand_seed, mean_ci

__all__ = [
    "DECISION_TYPES", "GapResult", "Position", "action_values", "collect_positions", "decision_type",
    "format_gap", "improvement_gap",
]  # fmt: skip

#: The decision types the gap is split by (the type of the chosen action).
DECISION_TYPES = ("drop", "draw/take", "spread", "hit", "discard")
#: Worlds per position at most (each is a playout of every legal action).
MAX_WORLDS = 4096
#: Positions at most (a typo guard: each costs a playout per legal action and world).
MAX_POSITIONS = 1_000_000


def decision_type(action: int) -> str:
    """The decision type of an action id: drop, draw/take, spread, hit or discard."""
    kind = action_kind(action)
    return "draw/take" if kind in ("draw", "take") else kind


@dataclass
class Position:
    """A decision of the agent's seat: the state before the move, the seat, the chosen action, the hand."""

    state: GameState
    seat: int
    chosen: int
    hand: int


def _seed(*parts: Any) -> int:
    """A 63-bit seed from the parts."""
    h = hashlib.blake2b(":".join(map(str, parts)).encode(), digest_size=8)
    return int.from_bytes(h.digest(), "little") >> 1


def collect_positions(
    agent: str,
    opponent: str,
    positions: int,
    rules: TonkRules,
    players: int = 2,
    seed: int = 0,
    progress: Callable[[int], None] | None = None,
) -> tuple[list[Position], int]:
    """Play whole hands of ``agent`` against ``opponent`` until ``positions`` positions; (them, hands)."""
    seats_agents = [make_agent(opponent, seed=_seed("opp", seed, s)) for s in range(players)]
    me = make_agent(agent, seed=_seed("agent", seed))
    out: list[Position] = []
    h = 0
    while len(out) < positions:
        mine = h % players
        seats = [me if s == mine else seats_agents[s] for s in range(players)]
        start_hand(seats, players, rules, [hand_seed(seed, h, 0, s) for s in range(players)])
        state = new_game(rules, players, deck=deal_deck(seed, h), dealer=players - 1)
        hand = h
        before = len(out)

        def record(s: GameState, a: int, hand: int = hand, mine: int = mine) -> None:
            if s.cur == mine and len(legal_actions(s)) > 1:
                out.append(Position(s.copy(), mine, a, hand))

        play(state, seats, on_move=record)
        h += 1
        if progress is not None and len(out) > before:
            progress(len(out) - before)
    return out, h


def action_values(
    pos: Position, sampler: SearchAgent, playouts: NetworkPlayouts, worlds: int, seed: int
) -> tuple[list[int], np.ndarray, np.ndarray]:
    """``(legal actions, values (actions x worlds), world weights)`` of one position (module docstring)."""
    s0 = pos.state
    info = seat_info(s0, pos.seat)
    sampler.reseed(seed)
    deals, weights = sampler.worlds(info, worlds)
    template = sample_state(info, sampler.rng)
    legal = list(info.legal)
    values = np.zeros((len(legal), len(deals)), dtype=np.float64)
    pending: list[GameState] = []
    where: list[tuple[int, int]] = []
    for j, (hands, stock) in enumerate(deals):
        world = world_state(template, hands, stock)
        for i, a in enumerate(legal):
            s = world.copy()
            s.play(a)
            if s.phase == OVER:
                values[i, j] = payoffs(s)[pos.seat]
            else:
                pending.append(s)
                where.append((i, j))
    if pending:
        for (i, j), v in zip(where, playouts.finish(pending, pos.seat), strict=True):
            values[i, j] = v
    return legal, values, np.asarray(weights, dtype=np.float64)


def _q(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Weighted mean over the worlds (columns); the plain mean when every weight is zero."""
    w = weights if weights.sum() > 0 else np.ones_like(weights)
    return np.asarray(values @ w / w.sum())


@dataclass
class TypeStats:
    """The gap of one decision type (or of all): positions, per-position and per-hand figures."""

    positions: int
    changed: int  # positions whose in-sample best is not the chosen action
    mean_gap: float  # per position
    per_hand: float  # mean over hands of the per-hand sum
    per_hand_ci95: tuple[float, float]
    heldout_per_hand: float
    heldout_ci95: tuple[float, float]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        d = dict(self.__dict__)
        d["per_hand_ci95"] = list(self.per_hand_ci95)
        d["heldout_ci95"] = list(self.heldout_ci95)
        return d


@dataclass
class GapResult:
    """The one-step improvement gap, by decision type and in all."""

    agent: str
    opponent: str
    players: int
    rules_name: str
    rules_hash: str
    seed: int
    worlds: int
    hands: int
    positions: int
    by_type: dict[str, TypeStats]
    total: TypeStats
    seconds: float = 0.0
    gaps: list[float] = field(default_factory=list, repr=False)

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of ``tonk headroom gap --json``."""
        return {
            "agent": self.agent,
            "opponent": self.opponent,
            "players": self.players,
            "rules": self.rules_name,
            "rules_hash": self.rules_hash,
            "seed": self.seed,
            "worlds": self.worlds,
            "hands": self.hands,
            "positions": self.positions,
            "by_type": {k: v.to_dict() for k, v in self.by_type.items()},
            "total": self.total.to_dict(),
            "seconds": self.seconds,
        }


def _stats(rows: list[tuple[int, float, float, bool]], hands: int) -> TypeStats:
    """Figures of ``(hand, gap, held-out gap, changed)`` rows over ``hands`` hands."""
    per = [0.0] * hands
    held = [0.0] * hands
    for h, g, ho, _ in rows:
        per[h] += g
        held[h] += ho
    m, ci = mean_ci(per)
    hm, hci = mean_ci(held)
    n = len(rows)
    return TypeStats(
        positions=n,
        changed=sum(1 for r in rows if r[3]),
        mean_gap=math.fsum(r[1] for r in rows) / n if n else math.nan,
        per_hand=m,
        per_hand_ci95=ci,
        heldout_per_hand=hm,
        heldout_ci95=hci,
    )


def _heldout(values: np.ndarray, weights: np.ndarray, chosen: int) -> float:
    """Gap of the best action picked on one half of the worlds, valued on the other (both ways, averaged)."""
    k = values.shape[1]
    if k < 2:
        return 0.0
    halves = (np.arange(k) < k // 2, np.arange(k) >= k // 2)
    tot = 0.0
    for pick, judge in (halves, halves[::-1]):
        best = int(np.argmax(_q(values[:, pick], weights[pick])))
        q = _q(values[:, judge], weights[judge])
        tot += float(q[best] - q[chosen])
    return tot / 2


def improvement_gap(
    agent: str = "zoo:2p",
    opponent: str = "search:ismcts",
    positions: int = 5000,
    worlds: int = 8,
    players: int = 2,
    rules: TonkRules | str = "standard",
    seed: int = 0,
    progress: bool | Callable[[int], None] = False,
    rules_name: str | None = None,
) -> GapResult:
    """The one-step improvement gap of the network ``agent`` playing ``opponent`` (module docstring).

    ``progress``: ``True`` for tqdm bars on stderr, or a callable receiving the positions just valued.
    """
    agent = check_spec(agent)
    opponent = check_spec(opponent)
    if isinstance(rules, str):
        rules_name = rules_name or rules
        rules = make_rules(rules)
    rules_name = rules_name or "custom"
    rules.check_players(players)
    for name, v, most in (("positions", positions, MAX_POSITIONS), ("worlds", worlds, MAX_WORLDS)):
        if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= most:
            raise ValueError(f"{name} must be an integer in [1, {most}], got {v!r}")
    net = policy_network(agent, f"agent {agent!r}", seed=_seed("net", seed), players=players, rules=rules)
    t0 = time.perf_counter()
    bar = None
    tick: Callable[[int], None] | None = progress if callable(progress) else None
    if progress is True:
        bar = progress_bar(total=positions, unit="pos", desc="playing", leave=False, mininterval=0.5)
        tick = bar.update
    try:
        found, hands = collect_positions(agent, opponent, positions, rules, players, seed, tick)
    finally:
        if bar is not None:
            bar.close()
    sampler = SearchAgent(seed=0)
    playouts = NetworkPlayouts(net)
    rows: dict[str, list[tuple[int, float, float, bool]]] = {t: [] for t in DECISION_TYPES}
    gaps: list[float] = []
    bar = None
    if progress is True:
        bar = progress_bar(total=len(found), unit="pos", desc="valuing", leave=False, mininterval=0.5)
    try:
        for k, pos in enumerate(found):
            legal, values, weights = action_values(pos, sampler, playouts, worlds, _seed("worlds", seed, k))
            q = _q(values, weights)
            c = legal.index(pos.chosen)
            gap = float(q.max() - q[c])
            changed = int(np.argmax(q)) != c and gap > 0
            rows[decision_type(pos.chosen)].append((pos.hand, gap, _heldout(values, weights, c), changed))
            gaps.append(gap)
            if bar is not None:
                bar.update(1)
            elif callable(progress):
                progress(1)
    finally:
        if bar is not None:
            bar.close()
    by_type = {t: _stats(rows[t], hands) for t in DECISION_TYPES}
    total = _stats([r for t in DECISION_TYPES for r in rows[t]], hands)
    return GapResult(
        agent=agent,
        opponent=opponent,
        players=players,
        rules_name=rules_name,
        rules_hash=rules.hash,
        seed=seed,
        worlds=worlds,
        hands=hands,
        positions=len(found),
        by_type=by_type,
        total=total,
        seconds=time.perf_counter() - t0,
        gaps=gaps,
    )


def format_gap(res: GapResult) -> str:
    """The table ``tonk headroom gap`` prints."""

    def ci(x: tuple[float, float]) -> str:
        return f"[{x[0]:+.4f}, {x[1]:+.4f}]"

    lines = [
        f"one-step improvement gap of {res.agent} (playing {res.opponent}, {res.players} players, rules "
        f"{res.rules_name} {res.rules_hash})",
        f"{res.positions} positions in {res.hands} hands, {res.worlds} worlds each (seed {res.seed}), "
        f"{res.seconds:.0f} s",
        "",
        f"{'chosen action':14s} {'positions':>9s} {'changed':>8s} {'gap/pos':>8s} {'gap per hand':>13s} "
        f"{'95% CI':>20s} {'held-out/hand':>13s} {'95% CI':>20s}",
    ]
    for name, st in [*res.by_type.items(), ("all", res.total)]:
        lines.append(
            f"{name:14s} {st.positions:9d} {st.changed:8d} {st.mean_gap:8.4f} {st.per_hand:+13.4f} "
            f"{ci(st.per_hand_ci95):>20s} {st.heldout_per_hand:+13.4f} {ci(st.heldout_ci95):>20s}"
        )
    lines += [
        "",
        "gap: Q(best) - Q(chosen) in stakes, from playouts of every legal action in the same sampled worlds "
        f"with {res.agent} in every seat; held-out: best picked on half the worlds, valued on the other",
    ]
    return "\n".join(lines)
