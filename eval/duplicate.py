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
- **Recorded hands.** With ``record=N`` the first N hands (the first deal
  groups, every seating of each) come back as hand records
  (:mod:`tonk_env.engine.record`, plus ``"seats"``: the spec in each seat),
  the same for any number of workers; the replay viewer of ``tonk serve``
  shows them.
- **Luck correction** (``luck=VALUE``). Each hand is replayed from its deck and
  actions, and at every stock draw each seat's term E[V over the cards the
  stock held] - V(the card drawn) is added to its payoff (:mod:`tonk_env.luck`);
  the corrected samples are formed like the plain ones and reported beside
  them (:mod:`eval.luck`). The plain figures do not change.
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

from agents.peek import refuse_peek
from agents.registry import check_spec, make_agent
from tonk_env.agent import Agent
from tonk_env.engine import GameState, TonkRules, make_rules, new_game, shuffled_deck, to_record
from tonk_env.engine.numbers import MAX_DERIVED_SEED, check_seed
from tonk_env.engine.state import RESULT_KINDS
from tonk_env.luck import ValueNet, hand_luck, load_value
from tonk_env.play import play, start_hand
from tonk_env.progress import progress_bar
from tonk_env.runtime import MAX_HANDS, MAX_WORKERS
from tonk_env.workers import process_map

from .luck import LuckReport, luck_report
from .stats import mean_ci, t_quantile_975

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
    records: list[dict[str, Any]] = field(default_factory=list)  # the recorded hands of this group
    corrected: list[float] | None = None  # per agent: mean luck-corrected payoff (with a value)


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
    records: list[dict[str, Any]] = field(default_factory=list, repr=False)

    @property
    def labels(self) -> list[str]:
        """One distinct label per agent: its spec, with ``#1``, ``#2``, ... on specs that repeat."""
        return distinct_labels([a.spec for a in self.agents])

    luck: LuckReport | None = None
    group_corrected: list[list[float]] | None = field(default=None, repr=False)  # with a luck value

    @property
    def hands_per_s(self) -> float:
        """Hands played per second of wall time."""
        return self.hands / self.elapsed_s if self.elapsed_s > 0 else math.nan

    def to_dict(self, timing: bool = True) -> dict[str, Any]:
        """The JSON object of ``tonk eval --json``; ``timing=False`` leaves out the only varying part."""
        d: dict[str, Any] = {
            "agents": [
                {"label": lab, **a.to_dict()} for lab, a in zip(self.labels, self.agents, strict=True)
            ],
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
        if self.luck is not None:
            d["luck"] = self.luck.to_dict()
        if timing:
            d["timing"] = {
                "elapsed_s": self.elapsed_s,
                "hands_per_s": self.hands_per_s,
                "workers": self.workers,
                "agent_seconds_per_hand": {
                    lab: a.seconds_per_hand for lab, a in zip(self.labels, self.agents, strict=True)
                },
            }
        return d


def distinct_labels(specs: Sequence[str]) -> list[str]:
    """The specs as labels, numbered ``spec#1``, ``spec#2``, ... where a spec appears more than once."""
    counts = {s: specs.count(s) for s in specs}
    seen: dict[str, int] = {}
    out = []
    for s in specs:
        if counts[s] > 1:
            seen[s] = seen.get(s, 0) + 1
            out.append(f"{s}#{seen[s]}")
        else:
            out.append(s)
    return out


# --- playing ------------------------------------------------------------------------------------


def play_hand(
    state: GameState,
    seats: Sequence[Agent],
    think: list[float] | None = None,
    owners: Sequence[int] | None = None,
    allow_peek: bool = False,
) -> GameState:
    """Play ``state`` to the end in place, ``seats[s]`` deciding for seat ``s``; return it.

    With ``think`` and ``owners``, each decision's seconds are added to
    ``think[owners[seat]]``; ``allow_peek`` seats peek agents (:mod:`agents.peek`).
    """
    if think is None or owners is None:
        return play(state, seats, allow_peek=allow_peek)
    think_of, owner_of = think, owners

    def timer(seat: int, seconds: float) -> None:
        think_of[owner_of[seat]] += seconds

    return play(state, seats, timer=timer, allow_peek=allow_peek)


class _Worker:
    """Agents of one process: one instance per seat, built from the specs."""

    def __init__(
        self,
        specs: Sequence[str],
        players: int,
        rules: TonkRules,
        seed: int,
        record: int = 0,
        luck: str | None = None,
        allow_peek: bool = False,
    ) -> None:
        self.specs = list(specs)
        self.record = record
        self.value: ValueNet | None = load_value(luck) if luck is not None else None
        self.allow_peek = allow_peek
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
        corr_sum = [0.0] * m
        turns = 0
        records = []
        labels = distinct_labels(self.specs)
        for ai, arr in enumerate(self.arrs):
            seats = [self.instances[(arr[s], s)] for s in range(n)]
            start_hand(seats, n, rules, [hand_seed(self.seed, g, ai, s) for s in range(n)])
            state = new_game(rules, n, deck=deck, dealer=n - 1)
            play_hand(state, seats, think, arr, self.allow_peek)
            res = state.result
            assert res is not None
            if self.value is not None:
                luck = hand_luck(self.value, rules, n, deck, n - 1, (a for _, a in state.history))
                for s in range(n):
                    corr_sum[arr[s]] += res.payoffs[s] + float(luck[s])
            kinds[RESULT_KINDS.index(res.kind)] += 1
            turns += state.turn
            if g * len(self.arrs) + ai < self.record:
                records.append({**to_record(state), "seats": [labels[i] for i in arr]})
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
            records=records,
            corrected=[corr_sum[i] / seat_hands[i] for i in range(m)] if self.value is not None else None,
        )


_WORKER: _Worker | None = None


def _init_worker(
    specs: Sequence[str],
    players: int,
    rules: TonkRules,
    seed: int,
    record: int,
    luck: str | None = None,
    allow_peek: bool = False,
) -> None:
    global _WORKER
    _WORKER = _Worker(specs, players, rules, seed, record, luck, allow_peek)


def _run_chunk(groups: Sequence[int]) -> list[GroupResult]:
    assert _WORKER is not None
    return [_WORKER.group(g) for g in groups]


def _chunks(num_groups: int) -> list[list[int]]:
    return [list(range(i, min(i + CHUNK_GROUPS, num_groups))) for i in range(0, num_groups, CHUNK_GROUPS)]


def _check_counts(hands: Any, workers: Any, record: Any) -> None:
    """Refuse a bad ``hands``, ``workers`` or ``record`` argument of :func:`evaluate`, naming it."""
    if isinstance(hands, bool) or not isinstance(hands, int) or not 1 <= hands <= MAX_HANDS:
        raise ValueError(f"hands must be an int 1..{MAX_HANDS:,}, got {hands!r}")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be a positive int, got {workers!r}")
    if workers > MAX_WORKERS:
        raise ValueError(f"workers must be at most {MAX_WORKERS} (a process each), got {workers}")
    if isinstance(record, bool) or not isinstance(record, int) or record < 0:
        raise ValueError(f"record must be an int >= 0 (hands to record), got {record!r}")


def checked_specs(specs: Sequence[str], allow_peek: bool = False) -> list[str]:
    """The canonical specs; a peek agent (a cheat, :mod:`agents.peek`) is refused unless ``allow_peek``."""
    canon = [check_spec(s) for s in specs]
    if not allow_peek:
        refuse_peek(canon, "the evaluation", "--allow-peek (allow_peek=True)")
    return canon


def evaluate(
    specs: Sequence[str],
    hands: int = 1000,
    players: int = 2,
    rules: TonkRules | str = "standard",
    seed: int = 0,
    workers: int = 1,
    progress: bool | Callable[[int], None] = False,
    rules_name: str | None = None,
    record: int = 0,
    luck: str | None = None,
    allow_peek: bool = False,
) -> EvalResult:
    """Duplicate evaluation of ``specs`` over at least ``hands`` hands (whole deal groups).

    ``progress`` is ``True`` for a tqdm bar on stderr or a callable receiving
    the number of deal groups just finished. ``record``: keep the records of
    the first ``record`` hands (``EvalResult.records``). ``luck`` names a value function
    (a shipped name such as ``2p``, or an ``.npz`` file): the result then also
    has the luck-corrected figures (:mod:`eval.luck`); the plain ones are the same. A peek
    agent (a cheat, :mod:`agents.peek`) is refused unless ``allow_peek``.
    """
    if not specs:
        raise ValueError("no agent to evaluate")
    canon = checked_specs(specs, allow_peek)
    if isinstance(rules, str):
        rules_name = rules_name or rules
        rules = make_rules(rules)
    rules_name = rules_name or "custom"
    rules.check_players(players)
    _check_counts(hands, workers, record)
    check_seed(seed, high=MAX_DERIVED_SEED)  # never negative; a tournament derives 63-bit seeds
    value = _value_for(luck, players, rules)
    luck = value.path if value is not None else None
    arrs = arrangements(len(canon), players)
    num_groups = -(-hands // len(arrs))
    chunks = _chunks(num_groups)
    bar = None
    tick: Callable[[int], None] | None = None
    if progress is True:
        bar = progress_bar(
            total=num_groups * len(arrs), unit="hand", desc="tonk eval", leave=False, mininterval=0.5
        )

        def tick(k: int) -> None:
            bar.update(k * len(arrs))
    elif callable(progress):
        tick = progress

    t0 = time.perf_counter()
    results: list[GroupResult] = []
    try:
        if workers == 1 or len(chunks) == 1:
            w = _Worker(canon, players, rules, seed, record, luck, allow_peek)
            for chunk in chunks:
                part = [w.group(g) for g in chunk]
                results.extend(part)
                if tick:
                    tick(len(part))
        else:
            # the agents load here first: a bad file is named now
            _Worker(canon, players, rules, seed, record, luck, allow_peek)
            n = min(workers, len(chunks))
            init = (canon, players, rules, seed, record, luck, allow_peek)
            with closing(process_map(_run_chunk, chunks, n, _init_worker, init)) as parts:
                for part in parts:  # closing: an interrupt takes the workers down at once
                    results.extend(part)
                    if tick:
                        tick(len(part))
    finally:
        if bar is not None:
            bar.close()
    elapsed = time.perf_counter() - t0
    used = 1 if workers == 1 or len(chunks) == 1 else min(workers, len(chunks))  # processes that ran
    res = summarise(canon, results, players, rules, rules_name, seed, arrs, elapsed, used)
    if value is not None:  # the corrected samples in group order, as summarise orders the plain ones
        ordered = sorted(results, key=lambda r: r.group)
        res.group_corrected = [list(r.corrected) for r in ordered if r.corrected is not None]
        res.luck = luck_report(value, canon, res.group_payoffs, res.group_corrected)
    return res


def _value_for(luck: str | None, players: int, rules: TonkRules) -> ValueNet | None:
    """The value function ``luck`` names, checked against the table (None without one)."""
    if luck is None:
        return None
    value = load_value(luck)
    value.check_table(players, rules)
    return value


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
        records=[rec for r in results for rec in r.records],
    )


__all__ = [
    "ACTOR_KINDS", "AGENT_ENDS", "CHUNK_GROUPS", "AgentStats", "EvalResult", "GroupResult",
    "arrangements", "checked_specs", "deal_deck", "distinct_labels", "evaluate", "hand_seed", "mean_ci",
    "play_hand", "summarise", "t_quantile_975",
]  # fmt: skip
