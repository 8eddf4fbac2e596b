"""``search:playouts``: a policy network improved at play time by its own playouts.

At every decision with more than one legal action the network proposes its
argmax and ``candidates - 1`` more actions (Gumbel top-k on its logits); the
hidden cards are dealt ``worlds`` times from the seat's view by an opponent
model (the learned one of :mod:`agents.beliefs`, or the search's selection
model); in every world each candidate is played and the hand finished by the
network for every seat (:class:`agents.search.NetworkPlayouts`, batched on the
compiled core), or the other seats by another network (``opponent``: a model
of opponents that play otherwise). Every candidate meets the same worlds. The move is the
candidate of highest ``Q(a) + tau * log pi(a)``: its mean playout payoff,
leaning towards the network's own preference by ``tau`` (``tau`` 0 is the best
playout value alone; a large ``tau`` the network's choice).

This is the one-step improvement that ``tonk improve`` distils into the next
network (:mod:`train.improve`), made at the table instead: it keeps the whole
gain of the playouts at every decision, for their cost at every decision.
Figures: docs/RESULTS.md, "Policy improvement by network playouts".
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

import numpy as np

from tonk_env.agent import check_deadline
from tonk_env.engine import GameState, SeatInfo, sample_state
from tonk_env.engine.rules import TonkRules

from .base import BaseAgent
from .beliefs import belief_param, check_belief_table
from .beliefs.model import BeliefModel
from .mlp import policy_network
from .search import NetworkPlayouts, World, deal_worlds, world_state

__all__ = ["PlayoutSearchAgent", "candidate_states", "deal", "gumbel_candidates", "log_policy"]

#: The search's selection (its ``selection`` default) when no learned model deals the worlds.
SELECTION = 0.5


def gumbel_candidates(logits: np.ndarray, mask: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """The argmax legal action, then up to ``k - 1`` others by Gumbel top-k on the logits."""
    legal = np.flatnonzero(mask)
    z = logits[legal].astype(np.float64)
    best = int(np.argmax(z))
    g = z + rng.gumbel(size=len(z))
    g[best] = np.inf
    order = np.argsort(-g, kind="stable")[: min(k, len(legal))]
    return legal[order].astype(np.int64)


def log_policy(logits: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """log pi over the legal actions (``-inf`` elsewhere), row by row."""
    z = np.where(masks > 0, logits.astype(np.float64), -np.inf)
    z -= z.max(axis=1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=1, keepdims=True))


def deal(
    info: SeatInfo, worlds: int, belief: BeliefModel | None, rng: random.Random
) -> tuple[GameState, list[World]]:
    """A state of the seat's view and ``worlds`` deals of its hidden cards, by ``belief`` (or the
    search's selection model without one): what :func:`candidate_states` plays the candidates in."""
    template = sample_state(info, rng)
    if belief is not None:
        return template, belief.deal_worlds(info, worlds, rng)
    return template, deal_worlds(info, worlds, rng, SELECTION)


def candidate_states(template: GameState, deals: list[World], acts: np.ndarray) -> list[GameState]:
    """Every candidate played in every world, world by world (``len(deals) * len(acts)`` states)."""
    states = []
    for hands, stock in deals:
        world = world_state(template, hands, stock)
        for a in acts:
            s = world.copy()
            s.play(int(a))
            states.append(s)
    return states


class PlayoutSearchAgent(BaseAgent):
    """``search:playouts``: the network's candidates valued by its own playouts (module docstring)."""

    def __init__(
        self,
        seed: int | None = None,
        net: str = "zoo:2p",
        worlds: int = 256,
        candidates: int = 3,
        tau: float = 0.015,
        belief: str = "2p",
        opponent: str = "",
    ) -> None:
        super().__init__(seed)
        who = "agent 'search:playouts': parameter"
        self.net = policy_network(net, f"{who} net={net!r}", seed)
        self.opponent = policy_network(opponent, f"{who} opponent={opponent!r}", seed) if opponent else None
        self.worlds = worlds
        self.candidates = candidates
        self.tau = tau
        self.belief = belief_param(belief, "search:playouts")
        self.playouts = NetworkPlayouts(self.net, opponents=[self.opponent] if self.opponent else [])
        self.gen = np.random.default_rng(seed)
        #: Set by the hand loop when a consumer bounds a decision's time (tonk_env.agent).
        self.deadline: float | None = None

    def reseed(self, seed: int) -> None:
        """Reset the generators (the worlds' and the candidates')."""
        super().reseed(seed)
        self.gen = np.random.default_rng(seed)

    def reset_hand(self, seat: int, num_players: int, rules: TonkRules) -> None:
        """Check that the network and the opponent model fit this table."""
        check_belief_table(self.belief, num_players, rules)
        for net in (self.net, self.opponent):
            if net is not None:
                net.reset_hand(seat, num_players, rules)

    def check_deadline(self) -> None:
        """Raise :class:`DecisionTimeout` if the decision's ``deadline`` has passed."""
        check_deadline(self.deadline, "search:playouts")

    def values(self, info: SeatInfo, acts: np.ndarray) -> np.ndarray:
        """Each candidate's mean payoff to the seat over the same ``worlds`` deals."""
        template, deals = deal(info, self.worlds, self.belief, self.rng)
        states = candidate_states(template, deals, acts)
        self.check_deadline()
        against = [1 if self.opponent else 0] * len(states)
        pay = self.playouts.finish(states, info.seat, self.check_deadline, against)
        return np.asarray(pay, dtype=np.float64).reshape(len(deals), len(acts)).mean(axis=0)

    def act(self, obs: Mapping[str, Any], info: SeatInfo) -> int:
        """The candidate of highest ``Q + tau * log pi`` (the only legal action without search)."""
        legal = info.legal
        if len(legal) == 1:
            return int(legal[0])
        mask = np.asarray(obs["action_mask"])
        logits = self.net.logits(np.asarray(obs["observation"], dtype=np.float32)[None])[0].astype(np.float64)
        acts = gumbel_candidates(logits, mask, self.candidates, self.gen)
        if len(acts) == 1:
            return int(acts[0])
        logp = log_policy(logits[None], mask[None])[0]
        score = self.values(info, acts) + self.tau * logp[acts]
        return int(acts[int(np.argmax(score))])
