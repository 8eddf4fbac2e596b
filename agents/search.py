"""``search:ismcts``: determinized Monte Carlo search over sampled worlds.

At each decision worth searching the agent

1. lists candidate actions. At the start of a turn: drop (unless its value,
   below, is hopeless or sure), the expert's choice between draw and take,
   and a take of a low or spread-completing card. In the play phase spreads
   and hits are played as the expert plays them; with ``candidates > 1`` the
   expert's best discards are searched too.
2. samples *worlds*: full game states consistent with its view. The cards it
   has not seen are dealt at random to the opponents' hidden hands and the
   stock, with each opponent holding the lowest ``h`` of ``h + D`` cards
   (the opponent model of :mod:`tonk_env.odds`, sampled by :mod:`agents.hidden_counts`:
   players keep low cards).
   Each world is weighted by what the opponents did (:mod:`agents.belief`):
   ``doubt`` if an opponent would have dropped at the start of its last turn
   in that world but did not, ``caution`` per loose card it keeps above its
   last discard.
3. values a drop exactly in each of ``drop_samples`` worlds (the engine's
   payment rules), and every other candidate by playing it in ``budget``
   worlds and finishing the hand with the fast policy for every seat (common
   random numbers: all candidates meet the same worlds);
4. plays the candidate with the best weighted mean payoff.

Why it beats the expert: its beliefs read the opponents' refusals to drop and
their discards, and it compares dropping with what playing on is worth in
this very position (e.g. taking a card that completes a spread) instead of
a fixed margin.

The rollout policy is the fast policy of :mod:`agents.fast` (also the agent
``heuristic:fast``): it reads only what its seat may know, so the rollouts do
not give the opponents sight of the searcher's cards.

A policy network can join the search (:class:`NetworkPlayouts`):

- ``rollout=SPEC`` (``zoo:NAME``, ``npz:FILE``, ``ppo:RUN``): the network
  finishes every playout for every seat instead of the fast policy. Each
  seat's move is chosen from that seat's observation of the sampled world,
  so the network, too, sees only what its seat may know. All playouts of a
  decision advance together: one matrix product gives the moves of every
  unfinished playout.
- ``prior=SPEC``: the network's choice in the real position is searched as
  one more candidate (at the start of a turn and in the play phase), so the
  search can prefer it where the playouts say it is worth more.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from tonk_env.agent import check_deadline
from tonk_env.core import BatchGames
from tonk_env.engine import OVER, START, GameState, SeatInfo, legal_actions, payoffs, sample_state, scoring
from tonk_env.engine.actions import DISCARD, DRAW, DROP, HIT_BOOK, TAKE
from tonk_env.engine.cards import VALUES, hand_value
from tonk_env.engine.rules import TonkRules
from tonk_env.obs import obs_layout, observation

from .base import BaseAgent
from .belief import last_turns, world_weight
from .beliefs import belief_param, check_belief_table
from .fast import FastParams, fast_action, fast_discard, turns_adding_all
from .hand import in_spread_with
from .heuristic import ExpertAgent
from .hidden_counts import extra_cards
from .mlp import policy_network


def rollout(s: GameState, seat: int, fp: FastParams, turns: list[int]) -> float:
    """Play ``s`` to the end in place with the fast policy for every seat; ``seat``'s payoff.

    ``turns`` (per seat, the turns it drew or took; see :func:`turns_adding_all`) is updated.
    """
    play = s.play
    while s.phase != OVER:
        a = fast_action(s, turns, fp)
        if a == DRAW or a == TAKE:
            turns[s.cur] += 1
        play(a)
    return payoffs(s)[seat]


def play_out(s: GameState, a: int, seat: int, fp: FastParams, turns0: list[int]) -> float:
    """Play ``a`` (``seat``'s action) on ``s`` in place and finish the hand with the fast policy.

    Returns ``seat``'s payoff; ``turns0`` (see :func:`turns_adding_all`) is not changed.
    """
    s.play(a)
    if s.phase == OVER:
        return payoffs(s)[seat]
    turns = turns0.copy()
    if a == DRAW or a == TAKE:
        turns[seat] += 1
    return rollout(s, seat, fp, turns)


#: A sampled deal of the cards a seat has not seen: ``(hands of every seat, stock)``.
World = tuple[list[int], list[int]]


def deal_worlds(info: SeatInfo, count: int, rng: random.Random, selection: float) -> list[World]:
    """``count`` deals of the cards ``info``'s seat has not seen: ``(hands of every seat, stock)``.

    Every opponent's hidden cards are the lowest ``h`` of ``h + D`` cards drawn
    from the unseen ones (the opponent model of :mod:`tonk_env.odds`, sampled by
    :mod:`agents.hidden_counts`); the stock is the rest in uniformly random order (top last).
    """
    unseen = info.unseen()
    pool = []
    m = unseen
    while m:
        low = m & -m
        pool.append(low.bit_length() - 1)
        m ^= low
    me = info.seat
    n = info.n
    hidden = [0 if o == me else info.hand_sizes[o] - info.known[o].bit_count() for o in range(n)]
    turns = turns_adding_all(info.history, n)
    if sum(hidden) + info.stock_size != len(pool):
        raise AssertionError("the view does not add up: unseen cards != hidden cards + stock")
    gen = np.random.default_rng(rng.getrandbits(64))
    perms = np.asarray(pool, dtype=np.int64)[np.argsort(gen.random((count, len(pool))), axis=1)].tolist()
    rnd = rng.random
    out = []
    for rest in perms:
        hands = list(info.known)
        hands[me] = info.hand
        for o in range(n):
            h = hidden[o]
            if h <= 0:
                continue
            k = min(len(rest), h + extra_cards(turns[o], selection, rng)) if selection > 0 else h
            drawn = rest[:k]
            del rest[:k]
            if k > h:
                drawn.sort(key=VALUES.__getitem__)  # stable: ties stay in random order
                for c in drawn[h:]:
                    rest.insert(int(rnd() * (len(rest) + 1)), c)
            hm = hands[o]
            for c in drawn[:h]:
                hm |= 1 << c
            hands[o] = hm
        out.append((hands, rest))
    return out


def world_state(template: GameState, hands: list[int], stock: list[int]) -> GameState:
    """A copy of ``template`` (a determinization of the view) with these hands and stock."""
    s = template.copy()
    s.hands = hands.copy()
    s.stock = stock.copy()
    return s


def drop_value(info: SeatInfo, worlds: list[World], weights: list[float]) -> float:
    """The weighted mean payoff to ``info``'s seat of dropping now, scored exactly in each world."""
    seat = info.seat
    rules = info.rules
    tot = 0.0
    for w, (hands, _) in zip(weights, worlds, strict=True):
        if w > 0.0:
            tot += w * scoring.drop([hand_value(h) for h in hands], seat, rules)[1][seat]
    wsum = sum(weights)
    return tot / wsum if wsum > 0 else 0.0


def fast_discard_action(info: SeatInfo) -> int:
    """The fast policy's discard among the legal ones."""
    allowed = 0
    for b in info.legal:
        if DISCARD <= b < HIT_BOOK:
            allowed |= 1 << (b - DISCARD)
    return DISCARD + fast_discard(info.hand, allowed)


def best_candidate(cands: list[int], values: list[float]) -> int:
    """The candidate of highest value (the first one on a tie)."""
    return cands[max(range(len(cands)), key=lambda i: (values[i], -i))]


class NetworkPlayouts:
    """Finishes many hands at once with a policy network for every seat, its decisions batched.

    The hands run on the compiled core (:mod:`tonk_env.core`): each state is
    loaded into a row, and every round one kernel call writes all masks and
    observations and one applies all moves; the engine is the fallback
    (``core=False``) and gives the same payoffs (tests/test_search_rollout.py).
    """

    def __init__(self, policy: Any, core: bool = True, opponents: Sequence[Any] = ()) -> None:
        self.policy = policy
        self.core = core
        self.opponents = list(opponents)
        """Other networks that may play the seats other than the valued one (``finish(..., against=)``)."""
        self._batch: BatchGames | None = None  # reused while the rules and players stay

    def finish(
        self, states: list[GameState], seat: int, check: Any = None, against: Sequence[int] | None = None
    ) -> list[float]:
        """Play every state to the end in place; ``seat``'s payoff in each (``check()`` between steps).

        ``against[i]`` (default all 0) says who plays the other seats of state ``i``: 0 the policy,
        ``j`` the network ``opponents[j - 1]``; ``seat`` is always played by the policy.
        numpy's BLAS runs on one thread here: the products are small, and a BLAS thread per core
        spin-waiting between them takes the cores from everything else (as in training, train/sb3/trainer.py).
        With the core, the states themselves are left as they were; their payoffs are returned.
        """
        whom = np.zeros(len(states), dtype=np.int64) if against is None else np.asarray(against, np.int64)
        if len(whom) != len(states) or (
            len(whom) and not 0 <= whom.min() <= whom.max() <= len(self.opponents)
        ):
            raise ValueError(f"against: one of 0..{len(self.opponents)} per state is needed")
        with threadpool_limits(limits=1, user_api="blas"):
            if self.core and states:
                return self._finish_core(states, seat, check, whom)
            return self._finish(states, seat, check, whom)

    def _moves(self, obs: np.ndarray, masks: np.ndarray, whom: np.ndarray) -> np.ndarray:
        """The moves of the rows, each by the network ``whom`` names (0: the policy)."""
        if not whom.any():
            return np.asarray(
                self.policy.act_batch({"observation": obs, "action_mask": masks}), dtype=np.int64
            )
        moves = np.empty(len(whom), dtype=np.int64)
        for j in np.unique(whom):
            rows = whom == j
            net = self.policy if j == 0 else self.opponents[j - 1]
            moves[rows] = net.act_batch({"observation": obs[rows], "action_mask": masks[rows]})
        return moves

    def _finish(self, states: list[GameState], seat: int, check: Any, whom: np.ndarray) -> list[float]:
        active = [i for i, s in enumerate(states) if s.phase != OVER]
        if not active:
            return [payoffs(s)[seat] for s in states]
        size = obs_layout(states[0].n).size
        actions = states[0].table.size
        while active:
            if check is not None:
                check()
            obs = np.empty((len(active), size), dtype=np.float32)
            masks = np.zeros((len(active), actions), dtype=np.int8)
            for k, i in enumerate(active):
                s = states[i]
                observation(s, s.cur, obs[k])
                masks[k, legal_actions(s)] = 1
            who = whom[active]
            if who.any():  # the valued seat is the policy's in every playout
                who = np.where(np.array([states[i].cur for i in active]) == seat, 0, who)
            moves = self._moves(obs, masks, who)
            for i, a in zip(active, moves, strict=True):
                states[i].play(a)
            active = [i for i in active if states[i].phase != OVER]
        return [payoffs(s)[seat] for s in states]

    def _finish_core(self, states: list[GameState], seat: int, check: Any, whom: np.ndarray) -> list[float]:
        s0 = states[0]
        b = self._batch
        if b is None or b.rules != s0.rules or b.n != s0.n or b.batch_size < len(states):
            b = self._batch = BatchGames(s0.rules, s0.n, max(len(states), 64), deal=False)
        count = len(states)
        for i, s in enumerate(states):
            b.load(i, s)
        rows = np.array([i for i, s in enumerate(states) if s.phase != OVER], dtype=np.int64)
        masks = np.zeros((count, b.num_actions), dtype=np.int8)
        obs = np.zeros((count, b.obs_size), dtype=np.float32)
        while rows.size:
            if check is not None:
                check()
            live = rows.size  # only the unfinished rows are observed: a few long hands set the rounds
            b.observe_rows(rows, obs[:live], masks[:live])
            who = whom[rows]
            if who.any():  # the valued seat is the policy's in every playout
                who = np.where(np.asarray(b.acting_seats(rows)) == seat, 0, who)
            ended = b.step_rows(rows, self._moves(obs[:live], masks[:live], who))
            rows = rows[~ended]
        return [float(x) for x in b.payoffs[:count, seat]]


class SearchAgent(BaseAgent):
    """``search:ismcts``: determinized Monte Carlo over the expert's candidates (module docstring)."""

    def __init__(
        self,
        seed: int | None = None,
        budget: int = 300,
        candidates: int = 1,
        drop_margin: float = 0.1,
        selection: float = 0.5,
        bias: float = 0.0,
        drop_samples: int = 400,
        hopeless: float = -0.5,
        sure: float = 0.95,
        doubt: float = 0.1,
        opp_margin: float = 0.1,
        takes: str = "some",
        caution: float = 0.3,
        discard: str = "expert",
        self_margin: float | None = None,
        rollout: str = "",
        prior: str = "",
        belief: str = "",
    ) -> None:
        super().__init__(seed)
        self.budget = budget
        self.candidates = candidates
        self.selection = selection
        self.bias = bias
        self.drop_samples = drop_samples
        self.hopeless = hopeless
        self.sure = sure
        self.doubt = doubt
        self.opp_margin = opp_margin
        self.takes = takes
        self.caution = caution
        self.discard = discard
        self.self_margin = self_margin
        self.fp = FastParams(drop_margin, selection)
        self.expert = ExpertAgent(seed, selection=selection)
        #: The network that plays the playouts (``rollout=``), and the one proposing a candidate (``prior=``).
        who = "agent 'search:ismcts': parameter"
        self.rollout_net = policy_network(rollout, f"{who} rollout={rollout!r}", seed) if rollout else None
        self.prior_net = policy_network(prior, f"{who} prior={prior!r}", seed) if prior else None
        self.playouts = None if self.rollout_net is None else NetworkPlayouts(self.rollout_net)
        #: The learned opponent model that deals the worlds (``belief=``), or None for the selection model.
        self.belief = belief_param(belief, "search:ismcts")
        #: Set by the hand loop when a consumer bounds a decision's time (tonk_env.agent); read
        #: afresh at every world, so a consumer may move it earlier to stop a running decision.
        self.deadline: float | None = None

    def reseed(self, seed: int) -> None:
        """Reset the generators (the agent's and its expert's)."""
        super().reseed(seed)
        self.expert.reseed(seed ^ 0x5EED)
        for k, net in enumerate((self.rollout_net, self.prior_net)):
            if net is not None and hasattr(net, "reseed"):
                net.reseed(seed ^ (0xB0B + k))

    def reset_hand(self, seat: int, num_players: int, rules: TonkRules) -> None:
        """Check that the networks (``rollout``, ``prior``, ``belief``) fit this table."""
        check_belief_table(self.belief, num_players, rules)
        for net in (self.rollout_net, self.prior_net):
            if net is not None and hasattr(net, "reset_hand"):
                net.reset_hand(seat, num_players, rules)

    def prior_choice(self, obs: Mapping[str, Any]) -> int | None:
        """The ``prior`` network's action in the real position (None without one)."""
        if self.prior_net is None:
            return None
        return int(self.prior_net.act(obs, None))

    def check_deadline(self) -> None:
        """Raise :class:`DecisionTimeout` if the decision's ``deadline`` has passed."""
        check_deadline(self.deadline, "search:ismcts")

    def worlds(self, info: SeatInfo, count: int) -> tuple[list[World], list[float]]:
        """``count`` sampled deals of the hidden cards and their belief weights.

        With a learned opponent model (``belief=``) the deals are drawn from it, all of weight 1:
        it has read the opponents' last turns already.
        """
        rng = self.rng
        if self.belief is not None:
            return self.belief.deal_worlds(info, count, rng), [1.0] * count
        lasts = []
        waiting = info.rules.spread_wait or info.rules.hit_wait  # a refusal to drop may be a wait
        if (self.doubt < 1.0 or self.caution < 1.0) and not waiting:
            lasts = last_turns(info)
        deals = deal_worlds(info, count, rng, self.selection)
        if not lasts:
            return deals, [1.0] * len(deals)
        turns = turns_adding_all(info.history, info.n)
        weights = []
        for i, (hands, _) in enumerate(deals):
            if i % 64 == 0:
                self.check_deadline()
            weights.append(
                world_weight(
                    hands, info, lasts, turns, self.selection, self.opp_margin, self.doubt, rng, self.caution
                )
            )
        return deals, weights

    def act(self, obs: Mapping[str, Any], info: SeatInfo) -> int:
        """Search the start-of-turn choice and the discard; play spreads and hits as the expert."""
        legal = info.legal
        if len(legal) == 1:
            return legal[0]
        if self.budget <= 0:
            return self.expert.act(obs, info)
        net = self.prior_choice(obs)
        if info.phase != START:
            return self.play_turn(info, net)
        return self.start_turn(info, net)

    def play_turn(self, info: SeatInfo, net: int | None = None) -> int:
        """The play phase: spreads and hits as the expert plays them, a searched discard.

        ``net`` (the prior network's choice) is searched too when it differs.
        """
        a = self.expert.play(info)
        if not DISCARD <= a < HIT_BOOK:
            cands = [a]
        elif self.candidates == 1 and self.discard == "fast" and net is None:
            return fast_discard_action(info)
        else:
            cands = self.expert.discard_candidates(info, self.candidates)
        if net is not None and net not in cands:
            cands.append(net)
        if len(cands) == 1:
            return cands[0]
        worlds, weights = self.worlds(info, self.budget)
        return best_candidate(cands, self.evaluate(info, cands, worlds, weights))

    def continuations(self, info: SeatInfo) -> list[int]:
        """The candidates to draw or take at the start of a turn (the drop aside)."""
        legal = info.legal
        if TAKE in legal and info.stock_size > 0 and self.takes == "all":
            return [DRAW, TAKE]
        cont = self.expert.take_or_draw(info)
        cands = [cont]
        if cont == DRAW and TAKE in legal and info.stock_size > 0:
            top = info.pile[-1]
            if VALUES[top] <= 3 or in_spread_with(top, info.hand, info.table):
                cands.append(TAKE)
        return cands

    def start_turn(self, info: SeatInfo, net: int | None = None) -> int:
        """The start of a turn: drop (valued exactly over many worlds), draw or take, by search.

        ``net`` (the prior network's choice) is searched too when it differs.
        """
        cands = self.continuations(info)
        if net is not None and net != DROP and net not in cands:
            cands.append(net)
        worlds: list[World] = []
        weights: list[float] = []
        known: dict[int, float] = {}
        if DROP in info.legal:
            worlds, weights = self.worlds(info, max(self.drop_samples, self.budget))
            d = drop_value(info, worlds, weights)
            if d >= self.sure and TAKE not in cands:
                return DROP
            if d > self.hopeless or net == DROP:
                known[DROP] = d + self.bias
                cands.insert(0, DROP)
        if len(cands) == 1:
            return cands[0]
        if not worlds:
            worlds, weights = self.worlds(info, self.budget)
        return best_candidate(
            cands, self.evaluate(info, cands, worlds[: self.budget], weights[: self.budget], known)
        )

    def evaluate(
        self,
        info: SeatInfo,
        cands: list[int],
        worlds: list[World],
        weights: list[float],
        known: dict[int, float] | None = None,
    ) -> list[float]:
        """Weighted mean payoff of each candidate over the worlds (the same worlds for all).

        ``known`` gives values already estimated (the drop's, from more worlds).
        """
        known = known or {}
        seat = info.seat
        fp = self.fp
        if self.self_margin is not None:
            fp = FastParams(fp.margin, fp.selection, seat, self.self_margin)
        turns0 = turns_adding_all(info.history, info.n)
        todo = [i for i, a in enumerate(cands) if a not in known]
        tot = [0.0] * len(cands)
        template = sample_state(info, self.rng)
        if self.playouts is not None:
            return self.evaluate_batched(cands, worlds, weights, known, template, seat)
        for (hands, stock), w in zip(worlds, weights, strict=True):
            self.check_deadline()
            if w <= 0.0:
                continue
            world = world_state(template, hands, stock)
            for i in todo:
                s = world.copy() if len(todo) > 1 else world
                tot[i] += w * play_out(s, cands[i], seat, fp, turns0)
        wsum = sum(weights) or 1.0
        return [known[a] if a in known else tot[i] / wsum for i, a in enumerate(cands)]

    def evaluate_batched(
        self,
        cands: list[int],
        worlds: list[World],
        weights: list[float],
        known: dict[int, float],
        template: GameState,
        seat: int,
    ) -> list[float]:
        """:meth:`evaluate` with the rollout network: every playout of every candidate advanced together."""
        assert self.playouts is not None
        todo = [i for i, a in enumerate(cands) if a not in known]
        states: list[GameState] = []
        owners: list[tuple[int, float]] = []
        for (hands, stock), w in zip(worlds, weights, strict=True):
            if w <= 0.0:
                continue
            world = world_state(template, hands, stock)
            for i in todo:
                s = world.copy()
                s.play(cands[i])
                states.append(s)
                owners.append((i, w))
        values = self.playouts.finish(states, seat, self.check_deadline)
        tot = [0.0] * len(cands)
        for (i, w), v in zip(owners, values, strict=True):
            tot[i] += w * v
        wsum = sum(weights) or 1.0
        return [known[a] if a in known else tot[i] / wsum for i, a in enumerate(cands)]


__all__ = [
    "NetworkPlayouts",
    "SearchAgent",
    "World",
    "best_candidate",
    "deal_worlds",
    "drop_value",
    "fast_discard_action",
    "play_out",
    "rollout",
    "world_state",
]
