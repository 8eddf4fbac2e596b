"""Hand-written agents: ``heuristic:greedy`` and ``heuristic:expert``.

``heuristic:greedy`` plays the rules of thumb of the public Tonk bots:

- at the start of a turn it drops when its count is at or below
  ``drop_at``; otherwise it takes the top discard only when that card
  completes a spread with its hand, and draws from the stock otherwise;
- in the play phase it lays a spread whenever it can (the highest-counting
  one first), then hits whenever it can (its highest card first);
- it discards its highest card that is not part of a pair or a near-run
  (two cards of a suit at most two ranks apart), or its highest card when
  every card is part of one.

Why: count is everything in Tonk, and these rules shed count as fast as the
cards allow. What greedy does not do: it never looks at what the opponents
hold, it drops at a fixed count whatever the table says, and it happily
discards what the next player needs.

``heuristic:expert`` keeps the greedy reflexes but decides with what the
seat can observe. See :class:`ExpertAgent` for the full list; in short:

- **drop** on an estimate of its value: it samples the opponents' hidden
  cards from the cards it has not seen (cards they took from the pile are
  known), weighting each sample by how well it agrees with their last
  discard (a player who just threw a 6 rarely keeps loose cards above 6),
  scores each sample with the engine's own payment rules (so ``caught_pay``
  and the player count are handled) and drops when the mean payoff of
  dropping beats ``drop_margin`` and the estimated value of playing on;
- **take or draw** by comparing the hand it would keep after taking the
  top discard with the average over every card the stock could give;
- **keep partial spreads** (pairs, near-runs) while they are cheap and
  likely to complete, weighing the outs left unseen against the count;
- **shed high cards by hitting**, and under waiting rules prefer hits that
  make an opponent wait and avoid hitting its own spreads when it wants to
  drop soon;
- **avoid feeding**: it penalises discards that complete or extend a
  spread with the next player's known cards or hit a spread on the table.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from functools import cache
from typing import Any

import numpy as np

from tonk_env.engine import START, SeatInfo, scoring
from tonk_env.engine.actions import DISCARD, DRAW, DROP, HIT_BOOK, HIT_HIGH, HIT_LOW, SPREAD, TAKE
from tonk_env.engine.cards import SUIT_BITS
from tonk_env.engine.rules import TonkRules

from .base import BaseAgent
from .beliefs import belief_param, check_belief_table
from .greedy_arrays import greedy_moves
from .hand import (
    RANK_MASKS,
    VALUES,
    cards_desc,
    cards_of_mask,
    completing_cards,
    connected,
    hand_value,
    hit_targets,
    in_spread_with,
    spread_ids,
    wins_by_taking,
)
from .hidden_counts import sample_hidden_counts_many, turns_adding

__all__ = [
    "ExpertAgent", "GreedyAgent", "best_spread", "feed_penalty", "hand_score", "highest_hit",
    "loose_discard", "plan_score", "potential",
]  # fmt: skip


def best_spread(legal: tuple[int, ...] | list[int], info: SeatInfo) -> int | None:
    """The legal spread that removes the most count (ties: more cards, then lower id), or None."""
    best = None
    key = None
    spreads = info.table.spreads
    for a in legal:
        if a >= SPREAD:
            m = spreads[a - SPREAD].mask
            k = (hand_value(m), m.bit_count(), -a)
            if key is None or k > key:
                best, key = a, k
    return best


def highest_hit(legal: tuple[int, ...] | list[int]) -> int | None:
    """The legal hit that plays the highest card (ties: lowest id), or None."""
    best = None
    key = None
    for a in legal:
        if HIT_BOOK <= a < SPREAD:
            c = (a - HIT_BOOK) % 52
            k = (VALUES[c], c % 13, c // 13, -a)
            if key is None or k > key:
                best, key = a, k
    return best


def loose_discard(info: SeatInfo) -> int:
    """Discard the highest card that is not in a pair or near-run (else the highest legal one)."""
    hand = info.hand
    legal = info.legal
    ace_high = info.rules.ace_high
    cards = [c for c in cards_desc(hand) if DISCARD + c in legal]
    for c in cards:
        if not connected(c, hand & ~(1 << c), ace_high):
            return DISCARD + c
    return DISCARD + cards[0]


class GreedyAgent(BaseAgent):
    """``heuristic:greedy``: the public bots' rules of thumb (see the module docstring)."""

    def __init__(self, seed: int | None = None, drop_at: int = 10) -> None:
        super().__init__(seed)
        self.drop_at = drop_at

    def act(self, obs: Mapping[str, Any], info: SeatInfo) -> int:
        """Drop at ``drop_at``, take to complete a spread, spread, hit high, discard high and loose."""
        legal = info.legal
        if info.phase == START:
            if DROP in legal and hand_value(info.hand) <= self.drop_at:
                return DROP
            if TAKE in legal and in_spread_with(info.pile[-1], info.hand, info.table):
                return TAKE
            return DRAW
        a = best_spread(legal, info)
        if a is not None:
            return a
        a = highest_hit(legal)
        if a is not None:
            return a
        return loose_discard(info)

    @property
    def core_policy(self) -> tuple[str, int]:
        """What the compiled core plays for this agent itself (``tonk_env.core.greedy``), without Python."""
        return ("greedy", self.drop_at)

    @property
    def arrays_key(self) -> tuple[str, int]:
        """Greedies with equal keys choose alike (no state, no draws): one ``act_arrays`` call serves them."""
        return ("heuristic:greedy", self.drop_at)

    def act_arrays(
        self, observation: np.ndarray, action_mask: np.ndarray, rules: TonkRules, num_players: int
    ) -> np.ndarray:
        """The same choices for a batch of observation tensors and masks (the vector env's fast path)."""
        return greedy_moves(observation, action_mask, rules.ace_high, num_players, self.drop_at)


# --- heuristic:expert --------------------------------------------------------------------------

#: Count-equivalent of ending the hand by tonking out / running out in the plan evaluation.
TONK_BONUS = 40.0
RUN_BONUS = 25.0


class _Context:
    """What one decision of the expert needs, computed once per call.

    It also memoises, for the decision's life, the hand scores and the
    per-suit near-run terms :func:`potential` adds, so that the ~200 hands one
    decision scores cost a few dictionary lookups each. The memoised terms
    are the very floats the plain formula computes, added in the same order,
    so the scores (and so the decisions) are bit-for-bit the same.
    """

    __slots__ = (
        "info", "unseen", "n_unseen", "targets", "next_known", "horizon", "ace_high", "feed", "p_any",
        "pair_terms", "suit_terms", "scores", "feeds",
    )  # fmt: skip

    def __init__(self, info: SeatInfo, horizon: float, feed: float = 1.0) -> None:
        self.feed = feed
        self.info = info
        self.unseen = info.unseen()
        self.n_unseen = max(1, self.unseen.bit_count())
        self.ace_high = info.rules.ace_high
        self.targets = hit_targets(info.spreads, self.ace_high)
        self.next_known = info.known[(info.seat + 1) % info.n]
        self.horizon = horizon
        #: ``p_any[outs]`` for the outs a pair or near-run can have (at most 4)
        self.p_any = tuple(_p_any(o, self.n_unseen, horizon) for o in range(9))
        unseen = self.unseen
        #: what a pair of rank ``r`` adds to the potential
        self.pair_terms = tuple(
            self.p_any[(RANK_MASKS[r] & unseen).bit_count()] * 2 * VALUES[r] for r in range(13)
        )
        #: per suit: {13-bit pattern: the terms its near-runs add, in order}
        self.suit_terms: tuple[dict[int, tuple[float, ...]], ...] = ({}, {}, {}, {})
        #: hand -> hand_score(hand)
        self.scores: dict[int, float] = {}
        #: card -> feed * feed_penalty(card)
        self.feeds: dict[int, float] = {}

    def add_near_terms(self, s: int, pattern: int) -> tuple[float, ...]:
        """Compute and memoise the potential terms of the near-runs of suit ``s`` holding ``pattern``."""
        p_any, unseen, ace_high = self.p_any, self.unseen, self.ace_high
        terms = []
        for r, r2 in _NEAR_PAIRS[pattern]:
            outs, value = _near_run(s, r, r2, ace_high)
            terms.append(p_any[(outs & unseen).bit_count()] * value)
        self.suit_terms[s][pattern] = out = tuple(terms)
        return out


def _p_any(outs: int, unseen: int, horizon: float) -> float:
    """Chance to see at least one of ``outs`` cards in ``horizon`` draws from ``unseen`` cards."""
    if outs <= 0:
        return 0.0
    return 1.0 - (1.0 - outs / unseen) ** horizon


#: Per 13-bit suit pattern: its near-runs ``(rank, rank + 1 or 2)``, in the order potential() adds them.
_NEAR_PAIRS: tuple[tuple[tuple[int, int], ...], ...] = tuple(
    tuple((r, r + d) for r in range(13) if p >> r & 1 for d in (1, 2) if r + d <= 12 and p >> (r + d) & 1)
    for p in range(1 << 13)
)


@cache
def _near_run(suit: int, r: int, r2: int, ace_high: bool) -> tuple[int, int]:
    """``(cards completing the near-run, its count)`` of ranks ``r < r2`` in ``suit``."""
    pair = (1 << (suit * 13 + r)) | (1 << (suit * 13 + r2))
    return completing_cards(pair, ace_high), VALUES[r] + VALUES[r2]


def potential(hand: int, ctx: _Context) -> float:
    """Expected count a hand's partial spreads will shed (pairs and near-runs, by their outs)."""
    pot = 0.0
    a = hand & SUIT_BITS
    b = (hand >> 13) & SUIT_BITS
    c = (hand >> 26) & SUIT_BITS
    d = (hand >> 39) & SUIT_BITS
    # ranks held exactly twice: bit 0 of the per-rank count is 0 and bit 1 is 1
    s1, s2 = a ^ b, c ^ d
    pairs = ~(s1 ^ s2) & ((s1 & s2) ^ (a & b) ^ (c & d)) & SUIT_BITS
    if pairs:
        terms = ctx.pair_terms
        while pairs:
            low = pairs & -pairs
            pot += terms[low.bit_length() - 1]
            pairs ^= low
    suit_terms = ctx.suit_terms
    for s, pattern in ((0, a), (1, b), (2, c), (3, d)):
        if pattern:
            near = suit_terms[s].get(pattern)
            if near is None:
                near = ctx.add_near_terms(s, pattern)
            for t in near:
                pot += t
    return pot


def feed_penalty(card: int, ctx: _Context) -> float:
    """How much discarding ``card`` may help the next player (known cards, table hits)."""
    pen = 0.0
    known = ctx.next_known
    if known:
        if in_spread_with(card, known, ctx.info.table):
            pen += 8.0
        elif connected(card, known, ctx.ace_high):
            pen += 2.0
    if ctx.targets >> card & 1:
        pen += 3.0
    return pen


def hand_score(hand: int, ctx: _Context) -> float:
    """Lower is better: the count left, less what partial spreads should still shed."""
    score = ctx.scores.get(hand)
    if score is None:
        score = ctx.scores[hand] = hand_value(hand) - potential(hand, ctx) if hand else -RUN_BONUS
    return score


def best_discard(hand: int, ctx: _Context, allowed: int | None = None) -> tuple[float, int]:
    """``(score, card)`` of the discard that leaves the best hand, feeding counted."""
    best = (math.inf, -1)
    scores = ctx.scores
    feeds = ctx.feeds
    for c in cards_desc(hand if allowed is None else hand & allowed):
        rest = hand & ~(1 << c)
        score = scores.get(rest)
        if score is None:
            score = hand_score(rest, ctx)
        feed = feeds.get(c)
        if feed is None:
            feed = feeds[c] = ctx.feed * feed_penalty(c, ctx)
        sc = score + feed
        if sc < best[0] - 1e-9:
            best = (sc, c)
    return best


def plan_score(hand: int, ctx: _Context) -> float:
    """Score of the hand left after spreading, hitting and discarding greedily (lower is better)."""
    table = ctx.info.table
    h = hand
    while True:
        ids = spread_ids(h, table)
        if not ids:
            break
        h &= ~max((table.spreads[a - SPREAD].mask for a in ids), key=lambda m: (hand_value(m), m.bit_count()))
    h &= ~ctx.targets
    if not h:
        return -TONK_BONUS
    return best_discard(h, ctx)[0]


class ExpertAgent(BaseAgent):
    """``heuristic:expert``: reads the table, estimates the drop, keeps partial spreads, avoids feeding.

    Decisions, in order:

    - start of turn: drop when the estimated mean payoff of dropping (sampled
      opponents' hands, weighted by their discards, scored by the engine's
      payment rules) is above ``drop_margin``; else take the top discard when
      the hand it leaves scores better than the average draw; else draw. With
      an empty stock, drawing ends the hand (stock-out scoring), estimated
      the same way.
    - play phase: a spread whenever one is legal (the highest-counting), then
      hits (highest card first; under ``hit_wait`` hits on opponents' spreads
      first, and no hit on its own spread when its count is already low
      enough to want to drop next turn), then the discard that leaves the
      best hand score (count minus the expected shedding of partial spreads)
      plus a penalty for feeding the next player.
    """

    def __init__(
        self,
        seed: int | None = None,
        drop_margin: float = 0.1,
        samples: int = 96,
        selection: float = 0.6,
        horizon: float = 4.0,
        feed: float = 1.0,
        belief: str = "",
    ) -> None:
        super().__init__(seed)
        #: The learned opponent model behind the drop estimate (``belief=``), or None for the selection model.
        self.belief = belief_param(belief, "heuristic:expert")
        self.feed = feed
        self.drop_margin = drop_margin
        self.samples = samples
        self.selection = selection
        self.horizon = horizon

    # -- estimates -----------------------------------------------------------------------------

    def sample_counts(self, info: SeatInfo, samples: int | None = None) -> list[tuple[float, list[int]]]:
        """Samples ``(weight, counts of every seat)`` of the hands now, by the selection model.

        With a learned opponent model (``belief=``) the hands are drawn from it instead.
        """
        count = self.samples if samples is None else samples
        if self.belief is not None:
            return [(1.0, row) for row in self.belief.sample_counts(info, count, self.rng).tolist()]
        me = info.seat
        n = info.n
        pool = cards_of_mask(info.unseen())
        hidden = [0 if o == me else info.hand_sizes[o] - info.known[o].bit_count() for o in range(n)]
        turns = [turns_adding(info.history, o) for o in range(n)]
        base = [hand_value(info.hand) if o == me else hand_value(info.known[o]) for o in range(n)]
        rng = self.rng
        sel = self.selection
        drawn = sample_hidden_counts_many(pool, hidden, turns, sel, rng, count)
        return [(1.0, [b + x for b, x in zip(base, hc, strict=True)]) for hc in drawn]

    def drop_value(self, info: SeatInfo, samples: list[tuple[float, list[int]]] | None = None) -> float:
        """Estimated mean payoff of dropping now."""
        samples = samples if samples is not None else self.sample_counts(info)
        rules = info.rules
        me = info.seat
        tot = wsum = 0.0
        paid: dict[tuple[int, ...], float] = {}  # counts recur often: score each once
        for w, counts in samples:
            key = tuple(counts)
            pay = paid.get(key)
            if pay is None:
                pay = paid[key] = scoring.drop(counts, me, rules)[1][me]
            tot += w * pay
            wsum += w
        return tot / wsum if wsum > 0 else -math.inf

    def stock_out_value(self, info: SeatInfo, samples: list[tuple[float, list[int]]]) -> float:
        """Estimated mean payoff of ending the hand by drawing from the empty stock."""
        rules = info.rules
        me = info.seat
        tot = wsum = 0.0
        for w, counts in samples:
            tot += w * scoring.stock_out(counts, rules)[1][me]
            wsum += w
        return tot / wsum if wsum > 0 else -math.inf

    def reset_hand(self, seat: int, num_players: int, rules: TonkRules) -> None:
        """Check that the opponent model (``belief``) fits this table."""
        check_belief_table(self.belief, num_players, rules)

    # -- decisions -----------------------------------------------------------------------------

    def act(self, obs: Mapping[str, Any], info: SeatInfo) -> int:
        """The expert's choice (see the class docstring)."""
        if info.phase == START:
            return self.start(info)
        return self.play(info)

    def start(self, info: SeatInfo) -> int:
        """Take the discard when it wins at once; else drop, take or draw."""
        if TAKE in info.legal and wins_by_taking(
            info.hand, info.pile[-1], info.table, info.spreads, info.rules.ace_high
        ):
            return TAKE
        if DROP in info.legal and self.drop_value(info) > self.drop_margin:
            return DROP
        return self.take_or_draw(info)

    def take_or_draw(self, info: SeatInfo) -> int:
        """Take the top discard when the hand it leaves beats the average draw; else draw."""
        legal = info.legal
        if TAKE not in legal:
            return DRAW
        if info.stock_size == 0:
            # drawing would end the hand as a stock-out: do it only when it pays well
            if self.stock_out_value(info, self.sample_counts(info)) > 0.5:
                return DRAW
            return TAKE
        ctx = _Context(info, self.horizon, self.feed)
        top = info.pile[-1]
        take = plan_score(info.hand | (1 << top), ctx)
        draws = [plan_score(info.hand | (1 << z), ctx) for z in cards_of_mask(ctx.unseen)]
        draw = sum(draws) / len(draws) if draws else math.inf
        return TAKE if take < draw - 0.5 else DRAW

    def play(self, info: SeatInfo) -> int:
        """Spread, hit, then discard."""
        legal = info.legal
        a = best_spread(legal, info)
        if a is not None:
            return a
        hits = [a for a in legal if HIT_BOOK <= a < SPREAD]
        if hits:
            a = self.choose_hit(info, hits)
            if a is not None:
                return a
        ctx = _Context(info, self.horizon, self.feed)
        allowed = 0
        for a in legal:
            if DISCARD <= a < HIT_BOOK:
                allowed |= 1 << (a - DISCARD)
        _, c = best_discard(info.hand, ctx, allowed)
        return DISCARD + c

    def discard_candidates(self, info: SeatInfo, k: int) -> list[int]:
        """The ``k`` best discard actions by the expert's score, best first."""
        ctx = _Context(info, self.horizon, self.feed)
        scored = []
        for a in info.legal:
            if DISCARD <= a < HIT_BOOK:
                c = a - DISCARD
                sc = hand_score(info.hand & ~(1 << c), ctx) + ctx.feed * feed_penalty(c, ctx)
                scored.append((sc, -VALUES[c], -(c % 13), -(c // 13), a))
        scored.sort()
        return [x[-1] for x in scored[:k]]

    def choose_hit(self, info: SeatInfo, hits: list[int]) -> int | None:
        """The hit to play (highest card; waiting rules shape which spread), or None to hold."""
        rules = info.rules
        me = info.seat
        spreads = info.spreads
        best = None
        key = None
        hand = info.hand
        for a in hits:
            c = (a - HIT_BOOK) % 52
            owner = _hit_owner(info, a)
            empties = hand == 1 << c
            if rules.hit_wait and owner == me and not empties:
                # hitting my own spread makes me wait: hold it if I may want to drop soon
                if hand_value(hand & ~(1 << c)) <= 15:
                    continue
            k = (VALUES[c], 1 if (rules.hit_wait and owner != me) else 0, c % 13, -a)
            if key is None or k > key:
                best, key = a, k
        del spreads
        return best


def _hit_owner(info: SeatInfo, action: int) -> int:
    """The owner of the spread a hit action joins."""
    c = (action - HIT_BOOK) % 52
    ace_high = info.rules.ace_high
    for sp in info.spreads:
        owner, mask, kind, key, lo, hi = sp
        if action < HIT_HIGH:
            if kind == 0 and c % 13 == key and mask.bit_count() == 3:
                return owner
        elif action < HIT_LOW:
            if kind == 1 and key == c // 13 and (hi + 1 == c % 13 or (ace_high and hi == 12 and c % 13 == 0)):
                return owner
        else:
            if kind == 1 and key == c // 13 and lo - 1 == c % 13:
                return owner
    return -1
