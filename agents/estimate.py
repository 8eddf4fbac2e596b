"""How low is an opponent's hand? The opponent model behind every drop decision.

An opponent's count is the value of the cards it is known to hold (taken
from the pile, not played since) plus its *hidden* cards. Players shed their
highest loose card every turn, so after ``k`` turns a hand is not a random
draw from the unseen cards: it is closer to the lowest cards of everything
the player has held. The model (a *selection* model):

    a hand with ``h`` hidden cards, whose owner added a card to it on ``k``
    turns (draws and takes), holds the ``h`` lowest of ``h + D`` cards drawn
    from the cards this seat has not seen, with ``D = selection * k``
    (fractional ``D`` rounded at random).

``selection = 0`` treats hidden cards as random; ``1`` as the lowest of every
card the player drew. Calibrated on expert and greedy opponents (predicted
against actual payoff of dropping, 2 players, ``standard``), 0.5–0.6 fits
best; 0.6 is the default.

:func:`sample_hidden_counts` samples the model from the exact unseen cards
(the expert, ~100 samples per decision); :func:`prob_count_above` reads a
table computed once per process for a full deck (the rollouts of the
search, which need microseconds).
"""

from __future__ import annotations

import random
from functools import cache

import numpy as np

from tonk_env.engine.cards import VALUES

MAX_HIDDEN = 8
MAX_EXTRA = 24
MAX_SUM = 10 * MAX_HIDDEN
TABLE_SAMPLES = 6000
TABLE_SEED = 20240611

#: Card values sorted for the table: a full deck.
_DECK_VALUES = np.array([VALUES[c] for c in range(52)], dtype=np.int64)


def turns_adding(history: tuple[tuple[int, int], ...] | list[tuple[int, int]], seat: int) -> int:
    """How many turns ``seat`` drew or took a card so far."""
    return sum(1 for s, a in history if s == seat and (a == 1 or a == 2))


def extra_cards(turns: int, selection: float, rng: random.Random) -> int:
    """``D`` of the model: ``selection * turns`` rounded at random."""
    x = selection * turns
    d = int(x)
    if x - d > 0 and rng.random() < x - d:
        d += 1
    return min(d, MAX_EXTRA)


def sample_hidden_counts(
    pool: list[int], hidden: list[int], turns: list[int], selection: float, rng: random.Random
) -> list[int]:
    """One joint sample of every seat's hidden count (0 where ``hidden`` is 0), without replacement."""
    pool = pool.copy()
    out = [0] * len(hidden)
    for o, h in enumerate(hidden):
        if h <= 0:
            continue
        d = extra_cards(turns[o], selection, rng)
        k = min(len(pool), h + d)
        # partial Fisher-Yates: the first k cards of pool become a random k-subset
        for i in range(k):
            j = i + int(rng.random() * (len(pool) - i))
            pool[i], pool[j] = pool[j], pool[i]
        drawn = pool[:k]
        drawn.sort(key=VALUES.__getitem__)
        kept = drawn[:h]
        out[o] = sum(VALUES[c] for c in kept)
        keep = set(kept)
        pool = [c for c in pool if c not in keep]
    return out


@cache
def above_table() -> tuple[tuple[tuple[float, ...], ...], ...]:
    """``T[h][D][t + 1]`` = P(the ``h`` lowest of ``h + D`` random cards count more than ``t``).

    Monte Carlo over a full deck (fixed seed, so every process builds the same
    table); ``t`` runs from -1 to ``MAX_SUM``.
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
