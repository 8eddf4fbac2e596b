"""The learned opponent model: per opponent, the chance that each unseen card is in its hand.

:class:`BeliefModel` is a small MLP evaluated with numpy alone. From one
seat's view (:func:`agents.beliefs.features.view_features`) it gives one
logit per card and opponent; :func:`fit_hand_size` turns an opponent's logits
into probabilities ``sigmoid(z + t)`` over the cards the seat has not seen,
with the one shift ``t`` that makes them sum to the opponent's hidden-card
count (so each is at most 1, and cards the seat has seen get 0).

:meth:`BeliefModel.deal_worlds` samples full deals from it for the search:
each opponent's hidden cards by randomized systematic sampling (Madow), whose
inclusion chances are exactly the model's probabilities and which always
takes exactly the hidden-card count; with several opponents, seat by seat
over the cards still free, refitted to each hand size. The stock gets the
rest in random order.

A model may also have a **count head** (``meta["count_bins"]`` > 0): per
opponent, the chance of each total value of its hidden cards. Cards drawn
independently by their chances miss how an opponent's cards go together (a
player who keeps low cards rarely holds two kings), so the drawn totals are
spread too wide. With the head, :data:`OVERSAMPLE` times the worlds are drawn
and ``count`` of them are kept by systematic resampling with the weight
``head(total) / share of drawn worlds with that total`` (:func:`resample_by_count`),
which gives the kept worlds the head's totals and, within a total, the cards'
chances.

The file is an ``.npz`` of plain arrays (``w0``, ``b0``, ... and a JSON
``meta``), read with ``allow_pickle=False`` and refused above
:data:`MAX_BYTES`; :meth:`BeliefModel.load` checks it whole.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agents.mlp import check_layers, read_npz
from tonk_env.engine import SeatInfo
from tonk_env.engine.cards import VALUES, hand_value

from .features import feature_sizes, view_features

__all__ = [
    "FEATURES_VERSION", "MAX_BYTES", "OVERSAMPLE", "BeliefModel", "fit_hand_size", "resample_by_count",
    "systematic_sample",
]  # fmt: skip

#: The layout of :mod:`agents.beliefs.features`; a change bumps it and old files are refused.
FEATURES_VERSION = 1
#: The largest belief file read (a model is well under 2 MB).
MAX_BYTES = 32 * 1024 * 1024
_BISECT = 34
#: Worlds drawn per world kept by a model with a count head.
OVERSAMPLE = 4
_VALUES = np.asarray(VALUES[:52], dtype=np.int64)


def fit_hand_size(z: np.ndarray, free: np.ndarray, hidden: np.ndarray) -> np.ndarray:
    """Probabilities ``sigmoid(z + t)`` on ``free`` cards (0 elsewhere), each row summing to ``hidden``.

    ``z``: logits ``(..., 52)``; ``free``: bool ``(..., 52)``; ``hidden``: ints ``(...)``, at most
    the number of free cards. The shift ``t`` of each row is found by bisection, then the row is
    scaled to the exact sum.
    """
    z = np.asarray(z, dtype=np.float64)
    free = np.asarray(free, dtype=bool)
    if z.ndim == 1:
        return _fit_row(z, free, int(hidden))
    f = free.astype(np.float64)
    h = np.asarray(hidden, dtype=np.float64)
    nfree = f.sum(axis=-1)
    if np.any(h > nfree) or np.any(h < 0):
        raise ValueError("a hidden-card count is negative or larger than the cards left to hold it")
    zf = np.where(free, z, 0.0)
    lo = -np.where(free, z, -np.inf).max(axis=-1, initial=-np.inf) - 40.0
    hi = -np.where(free, z, np.inf).min(axis=-1, initial=np.inf) + 40.0
    lo = np.where(np.isfinite(lo), lo, 0.0)
    hi = np.where(np.isfinite(hi), hi, 0.0)
    for _ in range(_BISECT):
        mid = 0.5 * (lo + hi)
        below = (_sigmoid(zf + mid[..., None]) * f).sum(axis=-1) < h
        lo = np.where(below, mid, lo)
        hi = np.where(below, hi, mid)
    p = _sigmoid(zf + (0.5 * (lo + hi))[..., None]) * f
    s = p.sum(axis=-1, keepdims=True)
    p = np.minimum(p * (h[..., None] / np.where(s > 0, s, 1.0)), 1.0)
    full = (h == nfree)[..., None]
    return np.where(full, f, p)


def _fit_row(z: np.ndarray, free: np.ndarray, h: int) -> np.ndarray:
    """:func:`fit_hand_size` for one row: Newton's method on ``t`` inside a shrinking bracket."""
    out = np.zeros(52)
    zs = z[free]
    k = len(zs)
    if h < 0 or h > k:
        raise ValueError("a hidden-card count is negative or larger than the cards left to hold it")
    if h == 0:
        return out
    if h == k:
        out[free] = 1.0
        return out
    lo, hi = -float(zs.max()) - 40.0, -float(zs.min()) + 40.0
    t = min(max(float(np.log(h / (k - h)) - np.median(zs)), lo), hi)
    for _ in range(100):
        p = _sigmoid(zs + t)
        g = float(p.sum()) - h
        if abs(g) < 1e-9:
            break
        if g < 0:
            lo = t
        else:
            hi = t
        d = float((p * (1.0 - p)).sum())
        step = t - g / d if d > 0 else lo - 1.0
        t = step if lo < step < hi else 0.5 * (lo + hi)
    p = _sigmoid(zs + t)
    out[free] = np.minimum(p * (h / p.sum()), 1.0)
    return out


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * x))


def systematic_sample(p: np.ndarray, hidden: np.ndarray, gen: np.random.Generator) -> np.ndarray:
    """Per row of ``p`` (``(W, 52)``, rows summing to ``hidden``), a 0/1 draw of exactly ``hidden`` cards.

    Randomized systematic sampling: the cards in random order, points ``u, u + 1, ...`` on the
    running sum of ``p``; a card is drawn when a point falls in its stretch. Card ``c`` is drawn
    with chance ``p[c]``.
    """
    rows, size = p.shape
    h = np.asarray(hidden, dtype=np.int64).reshape(rows)
    order = np.argsort(gen.random((rows, size)), axis=1)
    q = np.take_along_axis(p, order, axis=1)
    cum = np.cumsum(q, axis=1)
    total = cum[:, -1:]
    cum = np.where(total > 0, cum * (h[:, None] / np.where(total > 0, total, 1.0)), 0.0)
    cum[:, -1] = h
    u = 1.0 - gen.random((rows, 1))  # (0, 1]
    points = np.floor(cum - u + 1.0).clip(0)
    prev = np.concatenate([np.zeros((rows, 1)), points[:, :-1]], axis=1)
    took = (points > prev) & (q > 0)
    out = np.zeros((rows, size), dtype=bool)
    np.put_along_axis(out, order, took, axis=1)
    short = h - out.sum(axis=1)
    for r in np.flatnonzero(short):  # float round-off only: top up (or trim) by probability
        if short[r] > 0:
            rest = np.flatnonzero(~out[r] & (p[r] > 0))
            out[r, rest[np.argsort(-p[r, rest])[: short[r]]]] = True
        else:
            have = np.flatnonzero(out[r])
            out[r, have[np.argsort(p[r, have])[: -short[r]]]] = False
    return out


def resample_by_count(
    totals: np.ndarray, heads: np.ndarray, count: int, gen: np.random.Generator
) -> np.ndarray:
    """Indices of ``count`` of the drawn worlds, chosen so their hidden totals follow the count head.

    ``totals``: ``(m, K)`` each drawn world's hidden total per opponent; ``heads``: ``(K, B)`` the
    head's chances of each total (totals above ``B - 1`` count as ``B - 1``). A world's weight is
    the product over opponents of head chance over the drawn share of its total; ``count`` indices
    are drawn by systematic resampling (a world of weight share ``w`` is kept about ``count * w``
    times).
    """
    m = len(totals)
    bins = heads.shape[1]
    logw = np.zeros(m)
    for k in range(heads.shape[0]):
        t = np.minimum(totals[:, k], bins - 1)
        share = np.bincount(t, minlength=bins)[t] / m
        logw += np.log(heads[k, t] + 1e-12) - np.log(share)
    w = np.exp(logw - logw.max())
    cum = np.cumsum(w / w.sum())
    points = (gen.random() + np.arange(count)) / count
    return np.minimum(np.searchsorted(cum, points, side="right"), m - 1)


class BeliefModel:
    """A learned opponent model for one table size (see the module docstring)."""

    def __init__(self, layers: Sequence[tuple[np.ndarray, np.ndarray]], meta: Mapping[str, Any]) -> None:
        name = str(meta.get("name", "belief model"))
        check_layers(list(layers), name)
        n = meta.get("num_players")
        if isinstance(n, bool) or not isinstance(n, int) or not 2 <= n <= 6:
            raise ValueError(f"{name}: num_players {n!r} in its metadata; need 2..6")
        bits, floats = feature_sizes(n)
        w_in = np.asarray(layers[0][0]).shape[1]
        if w_in != bits + floats:
            raise ValueError(
                f"{name}: the network takes {w_in} inputs; {n}-player views have {bits + floats}"
            )
        out = np.asarray(layers[-1][0]).shape[0]
        bins = meta.get("count_bins", 0)
        if isinstance(bins, bool) or not isinstance(bins, int) or not 0 <= bins <= 1000:
            raise ValueError(f"{name}: count_bins {bins!r} in its metadata; need 0..1000")
        if out != (52 + bins) * (n - 1):
            raise ValueError(
                f"{name}: the network gives {out} outputs; {n} players with {bins} count bins need "
                f"{(52 + bins) * (n - 1)}"
            )
        if meta.get("features_version") != FEATURES_VERSION:
            raise ValueError(
                f"{name}: features version {meta.get('features_version')!r}, this Tonk RL reads "
                f"version {FEATURES_VERSION}"
            )
        self.layers = [(np.asarray(w, np.float32).T.copy(), np.asarray(b, np.float32)) for w, b in layers]
        self.meta = dict(meta)
        self.num_players = n
        self.count_bins = bins
        self.name = name

    # -- inference -----------------------------------------------------------------------------

    def outputs_batch(self, bits: np.ndarray, floats: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """Card logits ``(B, n - 1, 52)`` and the count head's chances ``(B, n - 1, bins)`` (or None)."""
        x = np.concatenate([np.asarray(bits, np.float32), np.asarray(floats, np.float32)], axis=1)
        for w, b in self.layers[:-1]:
            x = np.maximum(x @ w + b, 0.0)
        w, b = self.layers[-1]
        y = (x @ w + b).astype(np.float64)
        k = self.num_players - 1
        z = y[:, : 52 * k].reshape(len(x), k, 52)
        if not self.count_bins:
            return z, None
        c = y[:, 52 * k :].reshape(len(x), k, self.count_bins)
        c = np.exp(c - c.max(axis=-1, keepdims=True))
        return z, c / c.sum(axis=-1, keepdims=True)

    def logits_batch(self, bits: np.ndarray, floats: np.ndarray) -> np.ndarray:
        """Raw card logits ``(B, n - 1, 52)`` for a batch of view features."""
        return self.outputs_batch(bits, floats)[0]

    def check_table(self, info: SeatInfo) -> None:
        """Raise ``ValueError`` unless ``info`` comes from the table this model was trained for."""
        if info.n != self.num_players:
            raise ValueError(
                f"{self.name}: trained for {self.num_players} players, used at a {info.n}-player table"
            )

    def logits(self, info: SeatInfo) -> np.ndarray:
        """Raw logits ``(n - 1, 52)``, opponent ``k`` (``(seat + k) % n``) in row ``k - 1``."""
        self.check_table(info)
        bits, floats = view_features(info)
        return self.logits_batch(bits[None], floats[None])[0]

    def probabilities(self, info: SeatInfo) -> np.ndarray:
        """``P[o, c]``: the chance that card ``c`` is among seat ``o``'s hidden cards (``(n, 52)``).

        The seat's own row is 0; each opponent's row sums to its hidden-card count; cards the seat
        has seen are 0.
        """
        z = self.logits(info)
        free = _bits(info.unseen())
        n, me = info.n, info.seat
        out = np.zeros((n, 52))
        for k in range(1, n):
            o = (me + k) % n
            h = info.hand_sizes[o] - info.known[o].bit_count()
            out[o] = fit_hand_size(z[k - 1], free, np.asarray(h))
        return out

    def _draw(
        self, info: SeatInfo, count: int, gen: np.random.Generator
    ) -> tuple[dict[int, np.ndarray], np.ndarray]:
        """Per opponent seat, ``(count, 52)`` 0/1 draws of its hidden cards; and the cards left free."""
        self.check_table(info)
        bits, floats = view_features(info)
        zs, heads = self.outputs_batch(bits[None], floats[None])
        if heads is None:
            return self._draw_cards(info, zs[0], count, gen)
        drawn_by, free = self._draw_cards(info, zs[0], count * OVERSAMPLE, gen)
        n, me = info.n, info.seat
        totals = np.stack([drawn_by[(me + k) % n].astype(np.int64) @ _VALUES for k in range(1, n)], axis=1)
        keep = resample_by_count(totals, heads[0], count, gen)
        return {o: d[keep] for o, d in drawn_by.items()}, free[keep]

    def _draw_cards(
        self, info: SeatInfo, z: np.ndarray, count: int, gen: np.random.Generator
    ) -> tuple[dict[int, np.ndarray], np.ndarray]:
        """:meth:`_draw` by the cards' chances alone (logits ``z``)."""
        n, me = info.n, info.seat
        free = np.broadcast_to(_bits(info.unseen()), (count, 52)).copy()
        drawn_by: dict[int, np.ndarray] = {}
        for k in range(1, n):
            o = (me + k) % n
            h = info.hand_sizes[o] - info.known[o].bit_count()
            if h <= 0:
                drawn_by[o] = np.zeros((count, 52), dtype=bool)
                continue
            hv = np.full(count, h)
            if k == 1:  # every world has the same free cards: fit once
                p = np.broadcast_to(fit_hand_size(z[0], free[0], np.asarray(h)), (count, 52))
            else:
                p = fit_hand_size(np.broadcast_to(z[k - 1], (count, 52)), free, hv)
            drawn = systematic_sample(p, hv, gen)
            free &= ~drawn
            drawn_by[o] = drawn
        return drawn_by, free

    def _hands(self, info: SeatInfo, drawn_by: dict[int, np.ndarray], count: int) -> list[list[int]]:
        base = list(info.known)
        base[info.seat] = info.hand
        masks = {o: _masks(d) for o, d in drawn_by.items()}
        out = []
        for w in range(count):
            hands = base.copy()
            for o, m in masks.items():
                hands[o] |= int(m[w])
            out.append(hands)
        return out

    def sample_hands(self, info: SeatInfo, count: int, rng: random.Random) -> list[list[int]]:
        """``count`` samples of every seat's whole hand (its known cards plus drawn hidden ones)."""
        gen = np.random.default_rng(rng.getrandbits(64))
        drawn_by, _ = self._draw(info, count, gen)
        return self._hands(info, drawn_by, count)

    def sample_counts(self, info: SeatInfo, count: int, rng: random.Random) -> np.ndarray:
        """``count`` samples of every seat's count (``(count, n)``): known cards plus drawn hidden ones."""
        gen = np.random.default_rng(rng.getrandbits(64))
        drawn_by, _ = self._draw(info, count, gen)
        out = np.zeros((count, info.n), dtype=np.int64)
        out[:, info.seat] = hand_value(info.hand)
        for o, drawn in drawn_by.items():
            out[:, o] = hand_value(info.known[o]) + drawn.astype(np.int64) @ _VALUES
        return out

    def deal_worlds(
        self, info: SeatInfo, count: int, rng: random.Random
    ) -> list[tuple[list[int], list[int]]]:
        """``count`` deals of the unseen cards drawn from the model: ``(hands of every seat, stock)``.

        The stock is the unseen cards no hand drew, in uniformly random order.
        """
        gen = np.random.default_rng(rng.getrandbits(64))
        drawn_by, free = self._draw(info, count, gen)
        size = info.stock_size
        if np.any(free.sum(axis=1) != size):
            raise AssertionError("the view does not add up: unseen cards != hidden cards + stock")
        keys = np.where(free, gen.random((count, 52)), 2.0)
        stocks = np.argsort(keys, axis=1)[:, :size].tolist()
        return list(zip(self._hands(info, drawn_by, count), stocks, strict=True))

    # -- files ---------------------------------------------------------------------------------

    def save(self, path: str | Path) -> None:
        """Write the weights and metadata as an ``.npz`` of plain arrays (no pickled objects)."""
        arrays: dict[str, Any] = {}
        for i, (w, b) in enumerate(self.layers):
            arrays[f"w{i}"] = w.T
            arrays[f"b{i}"] = b
        arrays["meta"] = np.array(json.dumps(self.meta))
        with open(path, "wb") as f:
            np.savez(f, **arrays)

    @classmethod
    def load(cls, path: str | Path, name: str | None = None) -> BeliefModel:
        """Read a model file, checked whole; ``ValueError`` naming the file and what is wrong."""
        p = Path(path)
        if not p.is_file():
            raise ValueError(f"{p}: {'not a file' if p.exists() else 'no such file'}")
        size = p.stat().st_size
        if size > MAX_BYTES:
            raise ValueError(
                f"{p}: {size} bytes, larger than a belief model may be ({MAX_BYTES} bytes); refused"
            )
        # the policy files' format: array sizes checked from their headers before decompressing, no pickle
        meta, layers = read_npz(p, what="belief model", limit=MAX_BYTES)
        meta["name"] = name or str(p)
        return cls(layers, meta)


def _bits(mask: int) -> np.ndarray:
    """A card bitmask as 52 booleans."""
    raw = np.frombuffer(mask.to_bytes(7, "little"), dtype=np.uint8)
    return np.unpackbits(raw, bitorder="little")[:52].astype(bool)


def _masks(drawn: np.ndarray) -> np.ndarray:
    """Rows of 52 booleans as card bitmasks (Python ints, in an object array)."""
    packed = np.packbits(drawn, axis=1, bitorder="little")
    return np.array([int.from_bytes(row.tobytes(), "little") for row in packed], dtype=object)
