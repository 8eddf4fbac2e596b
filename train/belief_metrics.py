"""How well an opponent model reads the hidden cards, measured on held-out positions.

For the positions of a dataset (:mod:`train.belief_data`) never trained on,
split by how they were held out (``1``: other hands of the training styles,
``2``: the style left out of training), :func:`belief_metrics` compares

- the learned model (:class:`agents.beliefs.BeliefModel`),
- the hand-written model: the search's weighted worlds (the selection model
  with the last-turn weights), stored with the dataset,
- the uniform guess (every unseen card equally likely, as a floor),

by per-card log-loss and Brier score over the cards the seat has not seen,
and the drop decision's own question, "is my count the lowest?", at
start-of-turn positions where a drop is legal: a reliability table
(predicted probability in tenths against the observed frequency), its Brier
score and log-loss, for the learned model (its probability from
:data:`LOW_SAMPLES` hands sampled from it), the search's worlds, the
expert's sampler and the odds table.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from agents.beliefs import BeliefModel
from agents.beliefs.model import OVERSAMPLE, fit_hand_size, resample_by_count, systematic_sample
from tonk_env.engine.cards import VALUES

__all__ = [
    "LOW_SAMPLES",
    "belief_metrics",
    "learned_heads",
    "learned_probabilities",
    "paired_difference",
    "unpack",
]

LOW_SAMPLES = 400
_EPS = 1e-6
_VALUES = np.asarray(VALUES[:52], dtype=np.int64)
SPLITS = {1: "held-out hands of the training styles", 2: "the style left out of training"}


def unpack(data: dict[str, Any], rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(planes as 0/1 uint8, numbers, labels (rows, n - 1, 52))`` of the dataset's ``rows``."""
    n = int(data["summary"]["players"])
    nbits = 52 * (5 + 8 * (n - 1))
    bits = np.unpackbits(data["bits"][rows], axis=1)[:, :nbits]
    labels = np.unpackbits(data["labels"][rows], axis=1)[:, : 52 * (n - 1)].reshape(len(rows), n - 1, 52)
    return bits, data["floats"][rows], labels


def learned_probabilities(
    model: BeliefModel, bits: np.ndarray, floats: np.ndarray, hidden: np.ndarray
) -> np.ndarray:
    """The model's per-card chances ``(rows, n - 1, 52)`` for stored views, fitted to the hand sizes."""
    out = []
    for i in range(0, len(bits), 4096):
        b, f, h = bits[i : i + 4096], floats[i : i + 4096], hidden[i : i + 4096]
        z = model.logits_batch(b, f)
        free = np.broadcast_to(b[:, None, 52:104].astype(bool), z.shape)
        out.append(fit_hand_size(z, free, h.astype(np.int64)))
    return np.concatenate(out) if out else np.zeros((0, model.num_players - 1, 52))


def _card_scores(p: np.ndarray, y: np.ndarray, free: np.ndarray) -> tuple[float, float]:
    """Mean per-card log-loss and Brier score over the free cards."""
    m = np.broadcast_to(free[:, None, :], p.shape)
    pc = np.clip(p[m], _EPS, 1 - _EPS)
    yc = y[m].astype(np.float64)
    logloss = float(-np.mean(yc * np.log(pc) + (1 - yc) * np.log(1 - pc)))
    brier = float(np.mean((p[m] - yc) ** 2))
    return logloss, brier


def learned_heads(model: BeliefModel, bits: np.ndarray, floats: np.ndarray) -> np.ndarray | None:
    """The count head's chances ``(rows, n - 1, bins)`` for stored views; None without a head."""
    if not model.count_bins:
        return None
    return np.concatenate(
        [model.outputs_batch(bits[i : i + 4096], floats[i : i + 4096])[1] for i in range(0, len(bits), 4096)]
    )


def _p_lowest(
    p: np.ndarray,
    hidden: np.ndarray,
    mine: np.ndarray,
    known: np.ndarray,
    seed: int,
    heads: np.ndarray | None = None,
) -> np.ndarray:
    """P(my count < every opponent's) from per-card chances, by :data:`LOW_SAMPLES` sampled hands each.

    With the count head's chances (``heads``) the hands are drawn as the model deals them:
    :data:`OVERSAMPLE` times as many, resampled to the head's totals.
    """
    gen = np.random.default_rng(seed)
    out = np.zeros(len(p))
    m = LOW_SAMPLES * (OVERSAMPLE if heads is not None else 1)
    for i in range(len(p)):
        totals = np.zeros((m, p.shape[1]), dtype=np.int64)
        for k in range(p.shape[1]):
            h = int(hidden[i, k])
            if h > 0:
                drawn = systematic_sample(np.broadcast_to(p[i, k], (m, 52)), np.full(m, h), gen)
                totals[:, k] = drawn.astype(np.int64) @ _VALUES
        if heads is not None:
            totals = totals[resample_by_count(totals, heads[i], LOW_SAMPLES, gen)]
        out[i] = np.all(mine[i] < known[i] + totals, axis=1).mean()
    return out


def _position_card_losses(p: np.ndarray, y: np.ndarray, free: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per position: the summed per-card log-loss over its free cards, and their number."""
    m = np.broadcast_to(free[:, None, :], p.shape)
    pc = np.clip(p, _EPS, 1 - _EPS)
    ll = -(y * np.log(pc) + (1 - y) * np.log(1 - pc)) * m
    return ll.reshape(len(p), -1).sum(axis=1), m.reshape(len(p), -1).sum(axis=1).astype(np.float64)


def paired_difference(
    a: np.ndarray, b: np.ndarray, weights: np.ndarray, hands: np.ndarray
) -> tuple[float, float]:
    """Mean of ``(a - b) / weights`` pooled (a ratio of sums) and its 95% half-width, clustered by hand.

    ``a`` and ``b`` are per-position sums over ``weights`` items; positions of one hand are not
    independent, so the standard error sums the linearised residuals within each hand first.
    """
    d = np.asarray(a, np.float64) - np.asarray(b, np.float64)
    w = np.asarray(weights, np.float64)
    total = w.sum()
    if total <= 0:
        return float("nan"), float("nan")
    mean = float(d.sum() / total)
    resid = (d - mean * w) / (total / len(w))
    _, inverse = np.unique(hands, return_inverse=True)
    per_hand = np.bincount(inverse, weights=resid)
    se = float(np.sqrt((per_hand**2).sum())) / len(w)
    return mean, 1.96 * se


def _reliability(pred: np.ndarray, truth: np.ndarray) -> list[tuple[int, float, float]]:
    """Per tenth of predicted probability: ``(positions, mean predicted, observed frequency)``."""
    bins = np.minimum((pred * 10).astype(int), 9)
    out = []
    for b in range(10):
        sel = bins == b
        k = int(sel.sum())
        out.append(
            (
                k,
                float(pred[sel].mean()) if k else float("nan"),
                float(truth[sel].mean()) if k else float("nan"),
            )
        )
    return out


def _binary_scores(pred: np.ndarray, truth: np.ndarray) -> tuple[float, float]:
    pc = np.clip(pred, 1e-4, 1 - 1e-4)
    t = truth.astype(np.float64)
    return float(np.mean((pred - t) ** 2)), float(-np.mean(t * np.log(pc) + (1 - t) * np.log(1 - pc)))


def belief_metrics(model: BeliefModel, data: dict[str, Any], seed: int = 0) -> dict[str, Any]:
    """Per-card scores and the drop question's reliability, learned against hand-written, per split."""
    hw_row = data["hw_row"]
    pos_of = {int(r): i for i, r in enumerate(hw_row)}
    result: dict[str, Any] = {"splits": {}}
    for split, title in SPLITS.items():
        rows = np.flatnonzero(data["split"] == split)
        rows = np.array([r for r in rows if int(r) in pos_of], dtype=np.int64)
        if not len(rows):
            continue
        bits, floats, labels = unpack(data, rows)
        hidden = data["hidden"][rows]
        free = bits[:, 52:104].astype(bool)
        learned = learned_probabilities(model, bits, floats, hidden)
        heads = learned_heads(model, bits, floats)
        hw = data["hw_probs"][[pos_of[int(r)] for r in rows]].astype(np.float64)
        n_free = np.maximum(free.sum(axis=1), 1)
        uniform = free[:, None, :] * (hidden[:, :, None] / n_free[:, None, None])
        cards = {
            name: dict(zip(("log_loss", "brier"), _card_scores(p, labels, free), strict=True))
            for name, p in (("learned", learned), ("hand_written", hw), ("uniform", uniform))
        }
        hands = data["hand"][rows]
        ll_learned, n_cards = _position_card_losses(learned, labels, free)
        ll_hw, _ = _position_card_losses(hw, labels, free)
        paired = {"card_log_loss": paired_difference(ll_learned, ll_hw, n_cards, hands)}
        drop = data["drop_legal"][rows]
        truth = data["lowest"][rows][drop]
        hw_idx = [pos_of[int(r)] for r in rows[drop]]
        preds = {
            "learned": _p_lowest(
                learned[drop],
                hidden[drop],
                data["my_count"][rows][drop],
                data["known_value"][rows][drop],
                seed,
                None if heads is None else heads[drop],
            ),
            "search_worlds": data["hw_low_search"][hw_idx],
            "expert_sampler": data["hw_low_expert"][hw_idx],
            "odds_table": data["hw_low_table"][hw_idx],
        }
        lowest = {}
        for name, pred in preds.items():
            brier, logloss = _binary_scores(pred, truth)
            lowest[name] = {"brier": brier, "log_loss": logloss, "reliability": _reliability(pred, truth)}
        t = truth.astype(np.float64)
        paired["lowest_brier"] = paired_difference(
            (preds["learned"] - t) ** 2, (preds["search_worlds"] - t) ** 2, np.ones(len(t)), hands[drop]
        )
        result["splits"][str(split)] = {
            "title": title,
            "positions": len(rows),
            "drop_positions": int(drop.sum()),
            "drop_won_rate": float(truth.mean()) if len(truth) else float("nan"),
            "cards": cards,
            "lowest": lowest,
            "learned_minus_search_worlds": paired,
        }
    result["report"] = report_lines(result)
    return result


def report_lines(result: dict[str, Any]) -> list[str]:
    """The metrics as Markdown tables (printed by ``tonk belief metrics``, kept in the card)."""
    lines: list[str] = []
    for split, r in result["splits"].items():
        lines += [
            f"### Split {split}: {r['title']} "
            f"({r['positions']} positions, {r['drop_positions']} with a legal drop)",
            "",
            "| model | per-card log-loss | per-card Brier |",
            "|---|---:|---:|",
        ]
        for name, c in r["cards"].items():
            lines.append(f"| {name} | {c['log_loss']:.4f} | {c['brier']:.4f} |")
        lines += [
            "",
            f'"Is my count the lowest?" at drop decisions (observed: {r["drop_won_rate"]:.3f}):',
            "",
            "| model | Brier | log-loss |",
            "|---|---:|---:|",
        ]
        for name, c in r["lowest"].items():
            lines.append(f"| {name} | {c['brier']:.4f} | {c['log_loss']:.4f} |")
        pd = r.get("learned_minus_search_worlds")
        if pd:
            (m1, h1), (m2, h2) = pd["card_log_loss"], pd["lowest_brier"]
            lines += [
                "",
                f"Learned minus the search's worlds, 95% interval clustered by hand: per-card log-loss "
                f'{m1:+.4f} [{m1 - h1:+.4f}, {m1 + h1:+.4f}]; Brier of "lowest?" '
                f"{m2:+.4f} [{m2 - h2:+.4f}, {m2 + h2:+.4f}] (negative: the learned model is better).",
            ]
        names = list(r["lowest"])
        lines += ["", "Reliability (positions, mean predicted -> observed frequency):", ""]
        lines.append("| predicted | " + " | ".join(names) + " |")
        lines.append("|---|" + "---:|" * len(names))
        for b in range(10):
            cells = []
            for name in names:
                k, mp, fo = r["lowest"][name]["reliability"][b]
                cells.append(f"{k}: {mp:.2f} -> {fo:.2f}" if k else "0")
            lines.append(f"| {b / 10:.1f}-{(b + 1) / 10:.1f} | " + " | ".join(cells) + " |")
        lines.append("")
    return lines
