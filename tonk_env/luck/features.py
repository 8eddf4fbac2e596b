"""Full-state features for the luck value function: everything but the order of the stock.

One row per seat, from that seat's point of view: offset 0 is the seat, offset
1 the next seat clockwise, and so on (``n`` players). Unlike the observation
(:mod:`tonk_env.obs`) a row sees every hand and the *set* of stock cards; it
never sees the stock's order, so every card left in the stock is an equally
likely next draw for it.

================  ==========  ===================================================
slice             size        content
================  ==========  ===================================================
``hands``         n*52        each seat's hand (offset 0..n-1)
``table``         52          every card in a spread on the table
``top_discard``   52          one-hot top card of the discard pile (0 if empty)
``pile``          52          every card in the discard pile
``stock``         52          every card in the stock (the set, not the order)
``counts``        n           each seat's count / 50
``hand_sizes``    n           cards in each hand / 10
``to_act``        n           one-hot offset of the seat to act
``phase``         2           one-hot: start of turn, play phase
``waits``         n           turns each seat may not drop, min(w, 10) / 10
``stock_size``    1           cards in the stock / 52
``turn``          1           turns played / max_turns
``deadwood``      n           each seat's count of *loose* cards (in no spread with
                              its other cards, hitting no spread on the table) / 50
``after_discard`` n           deadwood less its highest loose card / 50
``hittable``      n           value of the cards that hit a spread on the table / 50
``count_gap``     n           count less the lowest other count / 50
``dead_gap``      n           deadwood less the lowest other deadwood / 50
================  ==========  ===================================================

Size: ``52 * (n + 4) + 10n + 4`` (2 players: 336). The last five slices are
functions of the others, computed because the data that fit a value are few. :data:`FEATURE_VERSION`
changes whenever this layout changes; value files record it.

:func:`draw_outcomes` gives the rows of every possible outcome of one stock
draw at once (one batch for the value network): the state after the draw
with the drawn card exchanged for each card that was in the stock.
"""

from __future__ import annotations

import numpy as np

from tonk_env.engine import GameState, hand_value
from tonk_env.engine.cards import VALUES, forms_spread

FEATURE_VERSION = 1
"""Version of the feature layout above (recorded by every value file)."""


def feature_size(n: int) -> int:
    """Floats in one row of :func:`state_features` for ``n`` players."""
    return 52 * (n + 4) + 10 * n + 4


def _bits(masks: list[int]) -> np.ndarray:
    """52 0/1 floats per mask, side by side."""
    big = 0
    for m in reversed(masks):
        big = (big << 52) | m
    nb = 52 * len(masks)
    raw = np.frombuffer(big.to_bytes(nb // 8 + 1, "little"), dtype=np.uint8)
    return np.unpackbits(raw, bitorder="little")[:nb].astype(np.float32)


def _offsets(n: int) -> dict[str, int]:
    """Start of each slice after the hands (which fill ``0 .. 52n``)."""
    o = 52 * n
    return {
        "table": o,
        "top_discard": o + 52,
        "pile": o + 104,
        "stock": o + 156,
        "counts": o + 208,
        "hand_sizes": o + 208 + n,
        "to_act": o + 208 + 2 * n,
        "phase": o + 208 + 3 * n,
        "waits": o + 210 + 3 * n,
        "stock_size": o + 210 + 4 * n,
        "turn": o + 211 + 4 * n,
        "stats": o + 212 + 4 * n,  # deadwood, after_discard, hittable, count_gap, dead_gap: n each
    }


def _seat_stats(hands: list[int], targets: int, ace_high: bool) -> list[tuple[int, ...]]:
    """Per seat in seat order: count, deadwood, after_discard, hittable, count_gap, dead_gap."""
    base = []
    for hand in hands:
        loose = top = 0
        m = hand
        while m:
            low = m & -m
            c = low.bit_length() - 1
            m ^= low
            if not (targets & low or forms_spread(c, hand & ~low, ace_high)):
                loose |= low
                if VALUES[c] > top:
                    top = VALUES[c]
        dead = hand_value(loose)
        base.append((hand_value(hand), dead, dead - top, hand_value(hand & targets)))
    out: list[tuple[int, ...]] = []
    for seat, (count, dead, after, hit) in enumerate(base):
        low_count = min(b[0] for o, b in enumerate(base) if o != seat)
        low_dead = min(b[1] for o, b in enumerate(base) if o != seat)
        out.append((count, dead, after, hit, count - low_count, dead - low_dead))
    return out


def _put_stats(rows: np.ndarray, stats: np.ndarray, off: dict[str, int]) -> None:
    """Write ``stats`` (``(..., n, 6)`` in seat order) into ``rows`` (``(..., n, F)``), each row rotated."""
    n = stats.shape[-2]
    for i in range(n):
        order = [(i + r) % n for r in range(n)]
        rows[..., i, off["counts"] : off["counts"] + n] = stats[..., order, 0] / 50
        for j in range(5):
            col = off["stats"] + j * n
            rows[..., i, col : col + n] = stats[..., order, j + 1] / 50


def _targets(s: GameState) -> int:
    return s.book_targets | s.high_targets | s.low_targets


def state_features(s: GameState) -> np.ndarray:
    """The ``(n, F)`` float32 rows of ``s``: row ``i`` from seat ``i``'s point of view."""
    n = s.n
    off = _offsets(n)
    table = 0
    for sp in s.spreads:
        table |= sp.mask
    pile = 0
    for c in s.pile:
        pile |= 1 << c
    stock = 0
    for c in s.stock:
        stock |= 1 << c
    top = 1 << s.pile[-1] if s.pile else 0
    shared = _bits([table, top, pile, stock])
    hands = _bits(list(s.hands)).reshape(n, 52)
    sizes = np.array([h.bit_count() / 10 for h in s.hands], dtype=np.float32)
    waits = np.array([min(w, 10) / 10 for w in s.waits], dtype=np.float32)
    out = np.zeros((n, feature_size(n)), dtype=np.float32)
    for i in range(n):
        order = [(i + r) % n for r in range(n)]
        row = out[i]
        row[: 52 * n] = hands[order].reshape(-1)
        row[off["table"] : off["counts"]] = shared
        row[off["hand_sizes"] : off["hand_sizes"] + n] = sizes[order]
        if s.phase < 2:
            row[off["to_act"] + (s.cur - i) % n] = 1.0
            row[off["phase"] + s.phase] = 1.0
        row[off["waits"] : off["waits"] + n] = waits[order]
        row[off["stock_size"]] = len(s.stock) / 52
        row[off["turn"]] = s.turn / s.rules.max_turns
    _put_stats(out, np.asarray(_seat_stats(list(s.hands), _targets(s), s.rules.ace_high), np.float64), off)
    return out


def draw_outcomes(after: GameState, drawn: int) -> tuple[np.ndarray, np.ndarray]:
    """Every outcome of the stock draw that led to ``after``: ``(cards, rows)``.

    ``after`` is the state right after seat ``after.cur`` drew ``drawn``. The
    possible draws were ``drawn`` and every card still in the stock, each
    equally likely; ``cards`` lists them (``drawn`` first) and ``rows[k]`` is
    the ``(n, F)`` feature block of the state with ``cards[k]`` drawn instead.
    """
    n = after.n
    off = _offsets(n)
    base = state_features(after)
    cards = np.array([drawn, *after.stock], dtype=np.int64)
    k = len(cards)
    rows = np.repeat(base[None], k, axis=0)
    seats = np.arange(n)
    cur = after.cur
    hand_col = 52 * ((cur - seats) % n)  # where the drawer's hand starts in each seat's row
    ks = np.arange(k)[:, None]
    rows[:, seats, hand_col + drawn] = 0.0
    rows[ks, seats[None, :], hand_col[None, :] + cards[:, None]] = 1.0
    rows[:, :, off["stock"] + drawn] = 1.0
    rows[ks, :, off["stock"] + cards[:, None]] = 0.0
    rest = after.hands[cur] & ~(1 << drawn)
    targets, ace_high = _targets(after), after.rules.ace_high
    hands = list(after.hands)
    stats = []
    for c in cards.tolist():
        hands[cur] = rest | 1 << c
        stats.append(_seat_stats(hands, targets, ace_high))
    _put_stats(rows, np.asarray(stats, np.float64), off)
    return cards, rows


__all__ = ["FEATURE_VERSION", "draw_outcomes", "feature_size", "state_features"]
