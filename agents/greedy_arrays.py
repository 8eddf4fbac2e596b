"""``heuristic:greedy`` decided for a whole batch from observation tensors and masks.

:meth:`agents.heuristic.GreedyAgent.act_arrays` calls :func:`greedy_moves`,
which makes the same choice as ``GreedyAgent.act`` reading a ``SeatInfo``
(``tests/test_greedy_arrays.py`` compares them position by position), from
what the observation holds: the hand, the top discard, the phase, and the
legal mask. So the vector env plays ``heuristic:greedy`` without an engine
mirror of each game: one numpy pass per round instead of a Python engine.

The greedy's ties are broken by static keys per action id
(:func:`tonk_env.core.greedy.greedy_keys`, which the compiled core's own greedy
reads too), so each rule reduces to a masked argmax:

- a spread: most count, then most cards, then the lowest id;
- a hit: the highest card (value, rank, suit), then the lowest id;
- a discard: the highest card (value, rank, suit) that is not in a pair or
  near-run, else the highest card.
"""

from __future__ import annotations

import numpy as np

from tonk_env.core.greedy import ID_MASK, greedy_keys
from tonk_env.engine.actions import DISCARD, DRAW, DROP, TAKE
from tonk_env.engine.cards import VALUES
from tonk_env.obs import obs_layout

__all__ = ["greedy_moves"]

_CARD_VALUES = np.asarray(VALUES, dtype=np.int64)


def _near(hand: np.ndarray, ace_high: bool) -> np.ndarray:
    """``(B, 4, 13)``: whether a card of the same suit lies one or two ranks away (a near-run)."""
    near = np.zeros_like(hand)
    for d in (1, 2):
        near[:, :, d:] |= hand[:, :, :-d]
        near[:, :, :-d] |= hand[:, :, d:]
    if ace_high:  # the ace also sits above the king: Q-A, K-A
        near[:, :, 0] |= hand[:, :, 12] | hand[:, :, 11]
        near[:, :, 12] |= hand[:, :, 0]
        near[:, :, 11] |= hand[:, :, 0]
    return near


def _top_makes_spread(hand: np.ndarray, top: np.ndarray, ace_high: bool) -> np.ndarray:
    """Whether each row's top discard forms a book or a run of three with cards of its hand."""
    rows = np.flatnonzero(top.any(axis=1))
    out = np.zeros(hand.shape[0], dtype=np.bool_)
    if not rows.size:
        return out
    card = top[rows].argmax(axis=1)
    suit, rank = card // 13, card % 13
    r = np.arange(rows.size)
    full = (hand[rows] | top[rows]).reshape(-1, 4, 13)
    book = full[r, :, rank].sum(axis=1) >= 3
    pat = full[r, suit]  # (R, 13): the top card's suit
    three = pat[:, :-2] & pat[:, 1:-1] & pat[:, 2:]  # (R, 11): a run of three from rank lo
    run = np.zeros(rows.size, dtype=np.bool_)
    for d in (2, 1, 0):
        lo = rank - d
        ok = (lo >= 0) & (lo <= 10)
        run |= ok & three[r, np.clip(lo, 0, 10)]
    if ace_high:
        run |= np.isin(rank, (0, 11, 12)) & pat[:, 11] & pat[:, 12] & pat[:, 0]
    out[rows] = book | run
    return out


def greedy_moves(
    observation: np.ndarray, action_mask: np.ndarray, ace_high: bool, num_players: int, drop_at: int = 10
) -> np.ndarray:
    """The greedy's action ids (int64 ``(B,)``) for observations ``(B, size)`` and masks ``(B, actions)``.

    At the start of a turn: drop at a count of ``drop_at`` or less, take the top
    discard when it makes a spread with the hand, else draw. In the play phase:
    the best spread, else the highest hit, else the loose discard.
    """
    spread_key, hit_key, high = greedy_keys(ace_high)
    lay = obs_layout(num_players)
    obs = np.asarray(observation)
    mask = np.asarray(action_mask) != 0
    if mask.shape[1] != spread_key.size:
        raise ValueError(f"greedy: masks of {mask.shape[1]} actions, the rules' table has {spread_key.size}")
    hand = obs[:, lay["hand"]] > 0.5
    start = obs[:, lay["phase"].start] > 0.5
    moves = np.full(obs.shape[0], DRAW, dtype=np.int64)

    s = np.flatnonzero(start)
    if s.size:
        count = hand[s].astype(np.int64) @ _CARD_VALUES
        take = mask[s, TAKE] & _top_makes_spread(hand[s], obs[s, lay["top_discard"]] > 0.5, ace_high)
        moves[s] = np.where(mask[s, DROP] & (count <= drop_at), DROP, np.where(take, TAKE, DRAW))

    p = np.flatnonzero(~start)
    if p.size:
        m = mask[p]
        best_spread = np.where(m, spread_key, -1).max(axis=1)
        best_hit = np.where(m, hit_key, -1).max(axis=1)
        h = hand[p].reshape(-1, 4, 13)
        pair = h.sum(axis=1, keepdims=True) >= 2  # (R, 1, 13): two or more of the rank
        loose = (h & ~(pair | _near(h, ace_high))).reshape(-1, 52)
        legal = m[:, DISCARD : DISCARD + 52] & hand[p]
        loose &= legal
        pool = np.where(loose.any(axis=1, keepdims=True), loose, legal)
        discard = DISCARD + np.where(pool, high[:52], 0).argmax(axis=1)
        moves[p] = np.where(
            best_spread >= 0,
            ID_MASK - (best_spread & ID_MASK),
            np.where(best_hit >= 0, ID_MASK - (best_hit & ID_MASK), discard),
        )
    return moves
