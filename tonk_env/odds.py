"""The opponent model: how low is an opponent's hand? (a model of play, not a rule).

What it assumes. An opponent's count is the value of the cards it is known
to hold (taken from the pile, not played since) plus its *hidden* cards.
Players shed their highest loose card every turn, so after ``k`` turns a hand
is not a random draw from the unseen cards: it is closer to the lowest cards
of everything the player has held. The *selection model*:

    a hand with ``h`` hidden cards, whose owner added a card to it on ``k``
    turns (draws and takes), holds the ``h`` lowest of ``h + D`` cards drawn
    at random from a full deck, with ``D = round(selection * k)``.

``selection = 0`` treats hidden cards as random; ``1`` as the lowest of every
card the player drew. Opponents are taken as independent of each other, and
the cards are drawn from a full deck rather than from the cards this seat has
not seen (that is what makes one table serve every position).

How it was calibrated. On hands played by the expert and greedy heuristics
(the model's predicted payoff of dropping against the actual payoff, 2
players, ``standard``), ``selection`` between 0.5 and 0.6 fits best;
:data:`SELECTION` = 0.6 is the default. It describes players who shed high
cards as those heuristics do; other opponents may keep higher hands.

Who uses it. The observation tensor's ``opp_above`` and ``drop_win`` features
(:mod:`tonk_env.obs`), and the hand-written agents' drop decisions, which call
:func:`drop_win_chance`; :mod:`agents.hidden_counts` draws samples of the
same model from the exact unseen cards (the expert heuristic's drop estimate,
the search's sampled worlds) instead of reading this table. This module is
the one description of the model.

:func:`above_table` is computed once per process (Monte Carlo with a fixed
seed, so every process builds the same table); lookups then take
microseconds, fast enough for observations and search rollouts.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

import numpy as np

from .engine.cards import VALUES, hand_value

__all__ = [
    "MAX_EXTRA", "MAX_HIDDEN", "MAX_SUM", "SELECTION", "above_chance", "above_table", "drop_win_chance",
    "prob_count_above",
]  # fmt: skip

MAX_HIDDEN = 8
MAX_EXTRA = 24
MAX_SUM = 10 * MAX_HIDDEN
TABLE_SAMPLES = 6000
TABLE_SEED = 20240611
#: Default ``selection`` of the model (see the module docstring).
SELECTION = 0.6

_DECK_VALUES = np.array([VALUES[c] for c in range(52)], dtype=np.int64)


@cache
def above_table() -> tuple[tuple[tuple[float, ...], ...], ...]:
    """``T[h][D][t + 1]`` = P(the ``h`` lowest of ``h + D`` random cards count more than ``t``).

    Monte Carlo over a full deck (fixed seed); ``t`` runs from -1 to ``MAX_SUM``.
    """
    gen = np.random.default_rng(TABLE_SEED)
    out = []
    for h in range(MAX_HIDDEN + 1):
        row = []
        for d in range(MAX_EXTRA + 1):
            k = min(52, h + d)
            if h == 0:
                row.append(tuple([1.0] + [0.0] * (MAX_SUM + 1)))
                continue
            keys = gen.random((TABLE_SAMPLES, 52))
            idx = np.argpartition(keys, k - 1, axis=1)[:, :k]
            vals = np.sort(_DECK_VALUES[idx], axis=1)[:, :h].sum(axis=1)
            hist = np.bincount(vals, minlength=MAX_SUM + 1)[: MAX_SUM + 1] / TABLE_SAMPLES
            tail = np.concatenate([[1.0], 1.0 - np.cumsum(hist)])
            row.append(tuple(float(x) for x in np.clip(tail, 0.0, 1.0)))
        out.append(tuple(row))
    return tuple(out)


def prob_count_above(hidden: int, extra: int, t: int) -> float:
    """P(``hidden`` cards, the lowest of ``hidden + extra``, count more than ``t``) (table, full deck)."""
    if hidden <= 0:
        return 1.0 if t < 0 else 0.0
    if t < 0:
        return 1.0
    if t >= MAX_SUM:
        return 0.0
    return above_table()[min(hidden, MAX_HIDDEN)][min(extra, MAX_EXTRA)][t + 1]


def above_chance(t: int, hidden: int, turns: int, selection: float = SELECTION) -> float:
    """P(an opponent counts more than its known cards plus ``t``), under the selection model.

    ``hidden`` is the number of its cards not known, ``turns`` the turns it
    added a card: :func:`prob_count_above` with ``D = round(selection * turns)``.
    """
    return prob_count_above(hidden, int(selection * turns + 0.5), t)


def drop_win_chance(
    count: int,
    seat: int,
    known: Sequence[int],
    hand_sizes: Sequence[int],
    turns: Sequence[int],
    selection: float = SELECTION,
) -> float:
    """P(a drop by ``seat`` with ``count`` wins): every opponent counts more (model, public information).

    ``known[o]`` is the mask of cards known to be in ``o``'s hand, ``hand_sizes[o]``
    its size and ``turns[o]`` the turns it added a card. Opponents are taken
    as independent (the table samples each from a full deck).
    """
    p = 1.0
    for o in range(len(hand_sizes)):
        if o != seat:
            k = known[o]
            p *= above_chance(count - hand_value(k), hand_sizes[o] - k.bit_count(), turns[o], selection)
    return p
