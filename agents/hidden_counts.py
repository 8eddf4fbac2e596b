"""Samples of the opponents' hidden counts under the opponent model of :mod:`tonk_env.odds`.

The model (the *selection* model, described and calibrated in
:mod:`tonk_env.odds`): a hand with ``h`` hidden cards, whose owner added a
card on ``k`` turns, holds the ``h`` lowest of ``h + D`` cards, ``D =
selection * k``. :mod:`tonk_env.odds` reads it from a table over a full deck;
this module draws it from the cards this seat has not seen (``D`` rounded at
random), as the expert heuristic's drop estimate (~100 samples a decision) and
the search's sampled worlds need.
"""

from __future__ import annotations

import random

from tonk_env.engine.cards import VALUES
from tonk_env.odds import MAX_EXTRA

__all__ = ["extra_cards", "sample_hidden_counts", "sample_hidden_counts_many", "turns_adding"]


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
    return sample_hidden_counts_many(pool, hidden, turns, selection, rng, 1)[0]


def sample_hidden_counts_many(
    pool: list[int], hidden: list[int], turns: list[int], selection: float, rng: random.Random, samples: int
) -> list[list[int]]:
    """``samples`` independent joint samples of the hidden counts (see :func:`sample_hidden_counts`).

    Seat by seat in order, each sample draws ``h + D`` cards of ``pool`` by a
    partial Fisher-Yates shuffle, keeps the ``h`` lowest (ties: the first
    drawn) and removes them before the next seat draws. Only values matter,
    so it shuffles the cards' values; it reads ``rng`` exactly as that many
    calls of :func:`sample_hidden_counts` one after another would.
    """
    values = [VALUES[c] for c in pool]
    seats = [o for o, h in enumerate(hidden) if h > 0]
    last = seats[-1] if seats else -1
    rand = rng.random
    out = []
    for _ in range(samples):
        vals = values.copy()
        n = len(vals)
        counts = [0] * len(hidden)
        for o in seats:
            h = hidden[o]
            k = min(n, h + extra_cards(turns[o], selection, rng))
            for i in range(k):
                j = i + int(rand() * (n - i))
                vals[i], vals[j] = vals[j], vals[i]
            if o == last:
                counts[o] = sum(sorted(vals[:k])[:h])
            else:
                kept = set(sorted(range(k), key=vals.__getitem__)[:h])
                counts[o] = sum(vals[i] for i in kept)
                vals = [v for i, v in enumerate(vals) if i not in kept]
                n = len(vals)
        out.append(counts)
    return out
