"""The luck terms of a hand: at each stock draw, E[V over the possible cards] - V(the card drawn).

Cards leave the stock in one way only: a draw (RULES.md section 3; a draw
from an empty stock ends the hand, section 4, and involves no chance). Given
the true state, the next stock card is uniform over the cards left in the
stock, because no agent sees the stock's order; so for fixed policies each
term has mean zero whatever the value function, and adding the terms to the
payoffs leaves their mean unchanged while removing the luck of the draws
that the value function explains (AIVAT, Burch et al., arXiv 1612.06915).
The value function must be fixed before the evaluation and must not see the
stock's order (:mod:`tonk_env.luck.features` gives it the stock as a set).

The deal is the other chance event. Duplicate evaluation replays every deal
with every agent in every seat, and the values are zero-sum over the table,
so a deal's terms cancel within an agent's sample: they are not added.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from tonk_env.engine import GameState, TonkRules, new_game
from tonk_env.engine.actions import DRAW

from .features import draw_outcomes
from .value import ValueNet


def draw_term(value: ValueNet, after: GameState, drawn: int) -> np.ndarray:
    """Per-seat luck term of the draw of ``drawn`` that led to ``after``: mean over outcomes minus actual."""
    _, rows = draw_outcomes(after, drawn)
    v = value.values(rows)  # (outcomes, seats); outcome 0 is the card drawn
    return (v.mean(axis=0) - v[0]).astype(np.float64)


def hand_luck(
    value: ValueNet,
    rules: TonkRules,
    players: int,
    deck: list[int],
    dealer: int,
    actions: Iterable[int],
) -> np.ndarray:
    """The summed luck terms of each seat over a hand, replayed from its deck and actions."""
    s = new_game(rules, players, deck=deck, dealer=dealer)
    total = np.zeros(players)
    for a in actions:
        if a == DRAW and s.stock:
            card = s.stock[-1]
            s.play(a)
            total += draw_term(value, s, card)
        else:
            s.play(a)
    return total


def corrected_payoffs(value: ValueNet, state: GameState, deck: list[int]) -> list[float]:
    """The payoffs of a finished hand ``state`` (dealt from ``deck``) plus each seat's luck terms."""
    if state.result is None:
        raise ValueError("the hand is not over")
    luck = hand_luck(value, state.rules, state.n, deck, state.dealer, (a for _, a in state.history))
    return [float(p + t) for p, t in zip(state.result.payoffs, luck, strict=True)]


__all__ = ["corrected_payoffs", "draw_term", "hand_luck"]
