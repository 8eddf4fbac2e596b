"""Duplicate evaluation: the same deals, every seating, mean stakes with a 95% interval.

How a run is organised
----------------------

- **Deals.** Deal group ``g`` (0, 1, 2, ...) uses one shuffled deck drawn from
  ``random.Random(f"deal:{seed}:{g}")``. The deals depend only on the seed
  and the group number, so every pairing of agents meets the same deals.
- **Arrangements.** Every deal of a group is replayed once per
  *arrangement* of the agents over the seats (:func:`arrangements`):

  - as many agents as seats, 2 or 3 players: every permutation (2 and 6
    arrangements), so every agent holds every hand from every seat;
  - as many agents as seats, 4 or more players: the K cyclic rotations;
  - fewer agents than seats: the seats are filled cyclically (agents
    ``0, 1, ..., m-1, 0, 1, ...``) and that line-up is rotated through all K
    seat rotations (a rotation that repeats an earlier one, as with 2 agents
    at 4 seats, is played once). An agent that fills several seats is scored
    per seat.

  The dealer is always the last seat, so seat 0 plays first; the rotation
  moves each agent through the first seat too. Same deal, other seats: the
  luck of the deal cancels within a group.
- **Seeds of the agents.** Each seat's agent is built once per worker from its
  spec, then ``reseed``-ed before every hand from ``(seed, group,
  arrangement, seat)``, so an agent's random choices do not depend on the
  hands it played before, nor on the worker that played them.
- **Statistics.** For each agent and deal group, the mean payoff over its
  seat-hands in the group is one sample. ``mean_stakes`` is the mean of those
  samples (= the mean payoff per seat-hand) and ``ci95`` the Student-t 95%
  interval over deal groups (groups are independent; hands within a group
  are not). ``win_rate`` is the fraction of the agent's seat-hands with a
  payoff above zero (a void hand is not a win). Ends are counted per agent
  as the hands *it* ended by each kind (``tonk_out``, ``run_out``,
  ``drop_won``, ``caught``, ``instant_win``) plus ``stock_out`` hands it won;
  the overall ends count every hand once.
- **Workers.** Deal groups are cut into fixed chunks of :data:`CHUNK_GROUPS`
  groups (independent of the number of workers), chunks run on a
  ``multiprocessing`` pool and the results are merged in group order, so a
  result is identical for any ``workers``. Only the ``timing`` figures
  differ from run to run.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import random
import time
from collections.abc import Callable, Sequence
from contextlib import closing
from dataclasses import dataclass, field
from typing import Any

from tqdm import tqdm

from agents.registry import check_spec, make_agent
from tonk_env.agent import Agent
from tonk_env.engine import GameState, TonkRules, make_rules, new_game, shuffled_deck
from tonk_env.engine.numbers import MAX_DERIVED_SEED, check_seed
from tonk_env.engine.state import RESULT_KINDS
from tonk_env.play import play, start_hand
from tonk_env.workers import process_map

#: Worker processes at most (each is a process: more than this is a typo, not a machine).
MAX_WORKERS = 256
#: The most hands of one evaluation.
MAX_HANDS = 10_000_000
#: Deal groups per chunk of work handed to a worker (fixed, so results do not depend on workers).
CHUNK_GROUPS = 8

#: Kinds a seat ends a hand by (``Result.seat`` is that seat).
ACTOR_KINDS = ("tonk_out", "run_out", "drop_won", "caught", "instant_win")
#: Per-agent end counters: the actor kinds, then stock-out hands won.
AGENT_ENDS = (*ACTOR_KINDS, "stock_out")


def arrangements(num_agents: int, players: int) -> list[tuple[int, ...]]:
    """Seatings to replay each deal with: tuple ``t`` gives seat ``s`` the agent ``t[s]``."""
    if num_agents < 1:
        raise ValueError("at least one agent is needed")
    if num_agents > players:
        raise ValueError(
            f"{num_agents} agents do not fit {players} seats; use --players {num_agents} or more"
        )
    if num_agents == players and players <= 3:
        return list(itertools.permutations(range(players)))
    lineup = [i % num_agents for i in range(players)]
    out: list[tuple[int, ...]] = []
    for r in range(players):
        arr = tuple(lineup[(s + r) % players] for s in range(players))
        if arr not in out:  # a rotation that repeats an earlier one is played once
            out.append(arr)
    return out


def deal_deck(seed: int, group: int) -> list[int]:
    """The deck (dealing order) of deal group ``group``."""
    return shuffled_deck(random.Random(f"deal:{seed}:{group}"))


def hand_seed(seed: int, group: int, arrangement: int, seat: int) -> int:
    """The seed an agent is reseeded with before a hand."""
    h = hashlib.blake2b(f"agent:{seed}:{group}:{arrangement}:{seat}".encode(), digest_size=8)
    return int.from_bytes(h.digest(), "little")


def t_quantile_975(df: int) -> float:
    """The 97.5% quantile of Student's t with ``df`` degrees of freedom."""
    table = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
             2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
             2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042)  # fmt: skip
    if df < 1:
        return math.inf
    if df <= len(table):
        return table[df - 1]
    z = 1.959963984540054
    # Cornish-Fisher expansion of t around the normal quantile (error < 1e-4 for df > 30)
    return (z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)
            + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * df**3))  # fmt: skip


def mean_ci(samples: Sequence[float]) -> tuple[float, tuple[float, float]]:
    """Mean and Student-t 95% interval of independent samples (NaN interval for fewer than 2)."""
    n = len(samples)
    if n == 0:
        return math.nan, (math.nan, math.nan)
    mean = math.fsum(samples) / n
    if n < 2:
        return mean, (math.nan, math.nan)
    var = math.fsum((x - mean) ** 2 for x in samples) / (n - 1)
    half = t_quantile_975(n - 1) * math.sqrt(var / n)
    return mean, (mean - half, mean + half)


@dataclass
class GroupResult:
    """What one deal group produced, per agent and overall."""

    group: int
    payoff: list[float]  # per agent: mean payoff per seat-hand in this group
    wins: list[int]  # per agent: seat-hands with payoff > 0
    ends: list[list[int]]  # per agent: counts in AGENT_ENDS order
    kinds: list[int]  # per RESULT_KINDS: hands that ended so
    turns: int  # turns played over the group's hands
    hands: int
    think: list[float]  # per agent: seconds spent deciding (timing only)


@dataclass
class AgentStats:
    """The report line of one agent."""

    spec: str
    mean_stakes: float
    ci95: tuple[float, float]
    win_rate: float
    hands: int
    seat_hands: int
    ends: dict[str, float]
    mean_turns: float
    seconds_per_hand: float

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (timing excluded: see :class:`EvalResult`)."""
        return {
            "spec": self.spec,
            "mean_stakes": self.mean_stakes,
            "ci95": list(self.ci95),
            "win_rate": self.win_rate,
            "hands": self.hands,
            "seat_hands": self.seat_hands,
            "ends": self.ends,
            "mean_turns": self.mean_turns,
        }


@dataclass
class EvalResult:
    """A whole evaluation: per-agent statistics, overall ends, and (non-deterministic) timing."""

    agents: list[AgentStats]
    players: int
    rules: TonkRules
    rules_name: str
    seed: int
    groups: int
    arrangements: list[tuple[int, ...]]
    hands: int
    ends: dict[str, float]
    mean_turns: float
    group_payoffs: list[list[float]] = field(repr=False)
    elapsed_s: float = 0.0
    workers: int = 1

    @property
    def hands_per_s(self) -> float:
        """Hands played per second of wall time."""
        return self.hands / self.elapsed_s if self.elapsed_s > 0 else math.nan

    def to_dict(self, timing: bool = True) -> dict[str, Any]:
        """The JSON object of ``tonk eval --json``; ``timing=False`` leaves out the only varying part."""
        d: dict[str, Any] = {
            "agents": [a.to_dict() for a in self.agents],
            "players": self.players,
            "rules": self.rules_name,
            "rules_options": self.rules.to_dict(),
            "rules_hash": self.rules.hash,
            "seed": self.seed,
            "deal_groups": self.groups,
            "arrangements": [list(a) for a in self.arrangements],
            "hands": self.hands,
            "ends": self.ends,
            "mean_turns": self.mean_turns,
        }
        if timing:
            d["timing"] = {
                "elapsed_s": self.elapsed_s,
                "hands_per_s": self.hands_per_s,
                "workers": self.workers,
                "agent_seconds_per_hand": {a.spec: a.seconds_per_hand for a in self.agents},
            }
        return d


# --- playing ------------------------------------------------------------------------------------


def play_hand(
    state: GameState,
    seats: Sequence[Agent],
    think: list[float] | None = None,
    owners: Sequence[int] | None = None,
) -> GameState:
    """Play ``state`` to the end in place, ``seats[s]`` deciding for seat ``s``; return it.

    With ``think`` and ``owners``, each decision's seconds are added to
    ``think[owners[seat]]``.
    """
    if think is None or owners is None:
        return play(state, seats)
    think_of, owner_of = think, owners

    def timer(seat: int, seconds: float) -> None:
        think_of[owner_of[seat]] += seconds

    return play(state, seats, timer=timer)


class _Worker:
    """Agents of one process: one instance per seat, built from the specs."""

    def __init__(self, specs: Sequence[str], players: int, rules: TonkRules, seed: int) -> None:
        self.specs = list(specs)
        self.players = players
        self.rules = rules
        self.seed = seed
        self.arrs = arrangements(len(specs), players)
        # one instance per (agent, seat): an agent filling two seats has two instances
        self.instances = {
            (i, s): make_agent(spec, seed=hand_seed(seed, -1, i, s))
            for i, spec in enumerate(self.specs)
            for s in range(players)
            if any(arr[s] == i for arr in self.arrs)
        }

    def group(self, g: int) -> GroupResult:
        m = len(self.specs)
        n = self.players
        rules = self.rules
        deck = deal_deck(self.seed, g)
        pay_sum = [0.0] * m
        seat_hands = [0] * m
        wins = [0] * m
        ends = [[0] * len(AGENT_ENDS) for _ in range(m)]
        kinds = [0] * len(RESULT_KINDS)
        think = [0.0] * m
        turns = 0
        for ai, arr in enumerate(self.arrs):
            seats = [self.instances[(arr[s], s)] for s in range(n)]
            start_hand(seats, n, rules, [hand_seed(self.seed, g, ai, s) for s in range(n)])
            state = new_game(rules, n, deck=deck, dealer=n - 1)
            play_hand(state, seats, think, arr)
            res = state.result
            assert res is not None
            kinds[RESULT_KINDS.index(res.kind)] += 1
            turns += state.turn
            for s in range(n):
                i = arr[s]
                p = res.payoffs[s]
                pay_sum[i] += p
                seat_hands[i] += 1
                if p > 0:
                    wins[i] += 1
                if res.seat == s and res.kind in ACTOR_KINDS:
                    ends[i][ACTOR_KINDS.index(res.kind)] += 1
                if res.kind == "stock_out" and p > 0:
                    ends[i][len(ACTOR_KINDS)] += 1
        return GroupResult(
            group=g,
            payoff=[pay_sum[i] / seat_hands[i] for i in range(m)],
            wins=wins,
            ends=ends,
            kinds=kinds,
            turns=turns,
            hands=len(self.arrs),
            think=think,
        )


_WORKER: _Worker | None = None


def _init_worker(specs: Sequence[str], players: int, rules: TonkRules, seed: int) -> None:
    global _WORKER
    _WORKER = _Worker(specs, players, rules, seed)


def _run_chunk(groups: Sequence[int]) -> list[GroupResult]:
    assert _WORKER is not None
    return [_WORKER.group(g) for g in groups]


def _chunks(num_groups: int) -> list[list[int]]:
    return [list(range(i, min(i + CHUNK_GROUPS, num_groups))) for i in range(0, num_groups, CHUNK_GROUPS)]


def evaluate(
    specs: Sequence[str],
    hands: int = 1000,
    players: int = 2,
    rules: TonkRules | str = "standard",
    seed: int = 0,
    workers: int = 1,
    progress: bool | Callable[[int], None] = False,
    rules_name: str | None = None,
) -> EvalResult:
    """Duplicate evaluation of ``specs`` over at least ``hands`` hands (whole deal groups).

    ``progress`` is ``True`` for a tqdm bar on stderr or a callable receiving
    the number of deal groups just finished.
    """
    if not specs:
        raise ValueError("no agent to evaluate")
    canon = [check_spec(s) for s in specs]
    if isinstance(rules, str):
        rules_name = rules_name or rules
        rules = make_rules(rules)
    rules_name = rules_name or "custom"
    rules.check_players(players)
    if isinstance(hands, bool) or not isinstance(hands, int) or not 1 <= hands <= MAX_HANDS:
        raise ValueError(f"hands must be an int 1..{MAX_HANDS:,}, got {hands!r}")
    check_seed(seed, high=MAX_DERIVED_SEED)  # never negative; a tournament derives 63-bit seeds
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be a positive int, got {workers!r}")
    if workers > MAX_WORKERS:
        raise ValueError(f"workers must be at most {MAX_WORKERS} (a process each), got {workers}")
    arrs = arrangements(len(canon), players)
    num_groups = -(-hands // len(arrs))
    chunks = _chunks(num_groups)
    bar = None
    tick: Callable[[int], None] | None = None
    if progress is True:
        bar = tqdm(total=num_groups * len(arrs), unit="hand", desc="tonk eval", leave=False, mininterval=0.5)

        def tick(k: int) -> None:
            bar.update(k * len(arrs))
    elif callable(progress):
        tick = progress

    t0 = time.perf_counter()
    results: list[GroupResult] = []
    try:
        if workers == 1 or len(chunks) == 1:
            w = _Worker(canon, players, rules, seed)
            for chunk in chunks:
                part = [w.group(g) for g in chunk]
                results.extend(part)
                if tick:
                    tick(len(part))
        else:
            _Worker(canon, players, rules, seed)  # the agents load here first: a bad file is named now
            n = min(workers, len(chunks))
            with closing(
                process_map(_run_chunk, chunks, n, _init_worker, (canon, players, rules, seed))
            ) as parts:
                for part in parts:  # closing: an interrupt takes the workers down at once
                    results.extend(part)
                    if tick:
                        tick(len(part))
    finally:
        if bar is not None:
            bar.close()
    elapsed = time.perf_counter() - t0
    used = 1 if workers == 1 or len(chunks) == 1 else min(workers, len(chunks))  # processes that ran
    return summarise(canon, results, players, rules, rules_name, seed, arrs, elapsed, used)


def summarise(
    specs: Sequence[str],
    results: Sequence[GroupResult],
    players: int,
    rules: TonkRules,
    rules_name: str,
    seed: int,
    arrs: list[tuple[int, ...]],
    elapsed: float = 0.0,
    workers: int = 1,
) -> EvalResult:
    """Merge group results (in group order) into the report."""
    m = len(specs)
    results = sorted(results, key=lambda r: r.group)
    total_hands = sum(r.hands for r in results)
    seats_per_hand = [sum(1 for s in range(players) for arr in arrs if arr[s] == i) for i in range(m)]
    turns = sum(r.turns for r in results)
    agents = []
    for i, spec in enumerate(specs):
        samples = [r.payoff[i] for r in results]
        mean, ci = mean_ci(samples)
        seat_hands = seats_per_hand[i] * len(results)
        hands_in = sum(1 for arr in arrs if i in arr) * len(results)
        ends = {k: sum(r.ends[i][j] for r in results) / seat_hands for j, k in enumerate(AGENT_ENDS)}
        agents.append(
            AgentStats(
                spec=spec,
                mean_stakes=mean,
                ci95=ci,
                win_rate=sum(r.wins[i] for r in results) / seat_hands,
                hands=hands_in,
                seat_hands=seat_hands,
                ends=ends,
                mean_turns=turns / total_hands if total_hands else math.nan,
                seconds_per_hand=math.fsum(r.think[i] for r in results) / hands_in if hands_in else math.nan,
            )
        )
    ends = {k: sum(r.kinds[j] for r in results) / total_hands for j, k in enumerate(RESULT_KINDS)}
    return EvalResult(
        agents=agents,
        players=players,
        rules=rules,
        rules_name=rules_name,
        seed=seed,
        groups=len(results),
        arrangements=arrs,
        hands=total_hands,
        ends=ends,
        mean_turns=turns / total_hands if total_hands else math.nan,
        group_payoffs=[list(r.payoff) for r in results],
        elapsed_s=elapsed,
        workers=workers,
    )


__all__ = [
    "ACTOR_KINDS", "AGENT_ENDS", "CHUNK_GROUPS", "AgentStats", "EvalResult", "GroupResult",
    "arrangements", "deal_deck", "evaluate", "hand_seed", "mean_ci", "play_hand", "summarise",
    "t_quantile_975",
]  # fmt: skip
