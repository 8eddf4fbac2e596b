"""Fit the learned opponent model on a dataset of positions, and ship it with its card.

The network (an MLP, ReLU) maps a view's features to one logit per card and
opponent. Training fits the very probabilities the model gives at play
time: ``sigmoid(z + t)`` over the unseen cards with the shift ``t`` that
makes them sum to the opponent's hidden-card count
(:func:`agents.beliefs.model.fit_hand_size`); ``t`` is found by bisection
and one Newton step on it carries the exact gradient of the constraint.
The loss is the per-card log-loss against the true hidden cards; with
``count_bins`` > 0 the network has a count head too (see
:mod:`agents.beliefs.model`), fitted by the log-loss of each opponent's true
hidden total, weighted :data:`COUNT_WEIGHT`.

Positions of the training split are cut by hand into fitting and validation
(``hand % 10 == 3``); the epoch with the lowest validation loss is kept. The
held-out splits are only read by the metrics, after the fit. One seed
drives the initial weights and the batch order; torch runs on
``torch_threads`` threads, so a run repeats on one machine.
"""

from __future__ import annotations

import datetime
import json
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from agents.beliefs import (
    CARD_FORMAT,
    BeliefModel,
    belief_dir,
    check_belief_card,
    load_belief,
    read_belief_card,
    render_belief_card,
)
from agents.beliefs.features import feature_sizes
from agents.beliefs.model import FEATURES_VERSION
from agents.zoo import NAME as _NAME
from agents.zoo import file_sha256
from tonk_env.engine.cards import VALUES
from tonk_env.progress import progress_bar

from .belief_data import load_data
from .belief_metrics import belief_metrics, unpack

__all__ = ["COUNT_WEIGHT", "FitConfig", "fit_belief", "measure_belief", "torch_fit_probs"]

#: The count head's log-loss (nats a position and opponent) in the loss, beside the per-card one.
COUNT_WEIGHT = 0.1
_VALUES = torch.tensor(VALUES[:52], dtype=torch.float32)


@dataclass(frozen=True)
class FitConfig:
    """How :func:`fit_belief` trains."""

    name: str = "2p"
    hidden: tuple[int, ...] = (256, 256)
    epochs: int = 20
    batch_size: int = 512
    learning_rate: float = 1e-3
    weight_decay: float = 1e-5
    seed: int = 0
    torch_threads: int = 1
    count_bins: int = 0
    """bins of the count head (hidden totals 0 .. bins - 1; 0: no head); 81 covers every 2-player hand"""


def torch_fit_probs(z: torch.Tensor, free: torch.Tensor, hidden: torch.Tensor) -> torch.Tensor:
    """``sigmoid(z + t)`` on free cards summing to ``hidden`` (``z``: ``(B, K, 52)``); differentiable."""
    neg = torch.finfo(z.dtype).min
    with torch.no_grad():
        zf = torch.where(free, z, torch.zeros_like(z))
        lo = -torch.where(free, z, torch.full_like(z, neg)).amax(-1) - 40.0
        hi = -torch.where(free, z, torch.full_like(z, -neg)).amin(-1) + 40.0
        lo = torch.where(torch.isfinite(lo) & (lo > -1e30), lo, torch.zeros_like(lo))
        hi = torch.where(torch.isfinite(hi) & (hi < 1e30), hi, torch.zeros_like(hi))
        for _ in range(40):
            mid = 0.5 * (lo + hi)
            s = (torch.sigmoid(zf + mid[..., None]) * free).sum(-1)
            below = s < hidden
            lo = torch.where(below, mid, lo)
            hi = torch.where(below, hi, mid)
        t0 = 0.5 * (lo + hi)
    p0 = torch.sigmoid(z + t0[..., None]) * free
    f = p0.sum(-1) - hidden
    df = (p0 * (1 - p0)).sum(-1).clamp_min(1e-6)
    t = t0 - f / df
    return torch.sigmoid(z + t[..., None]) * free


def _network(inputs: int, hidden: tuple[int, ...], outputs: int) -> torch.nn.Sequential:
    layers: list[torch.nn.Module] = []
    prev = inputs
    for h in hidden:
        layers += [torch.nn.Linear(prev, h), torch.nn.ReLU()]
        prev = h
    layers.append(torch.nn.Linear(prev, outputs))
    return torch.nn.Sequential(*layers)


def _loss(
    net: torch.nn.Sequential,
    x: torch.Tensor,
    y: torch.Tensor,
    free: torch.Tensor,
    h: torch.Tensor,
    totals: torch.Tensor,
) -> torch.Tensor:
    k = y.shape[1]
    out = net(x)
    z = out[:, : 52 * k].reshape(len(x), k, 52)
    p = torch_fit_probs(z, free, h).clamp(1e-6, 1 - 1e-6)
    ll = -(y * torch.log(p) + (1 - y) * torch.log(1 - p)) * free
    loss = ll.sum() / free.sum().clamp_min(1)
    bins = (out.shape[1] - 52 * k) // k
    if bins:
        c = out[:, 52 * k :].reshape(len(x) * k, bins)
        loss = loss + COUNT_WEIGHT * torch.nn.functional.cross_entropy(
            c, totals.reshape(-1).clamp_max(bins - 1)
        )
    return loss


def _commit() -> str | None:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10, check=False
        )
    except OSError:
        return None
    return out.stdout.strip() or None


def _check_fit(cfg: FitConfig) -> None:
    if not _NAME.fullmatch(cfg.name):
        raise ValueError(
            f"belief model name {cfg.name!r} is invalid; allowed: 1-64 letters, digits, '_' or '-'"
        )
    if cfg.epochs < 1 or cfg.batch_size < 1 or not cfg.hidden or min(cfg.hidden) < 1:
        raise ValueError("epochs, batch_size and every hidden layer size must be at least 1")
    if not 0 <= cfg.count_bins <= 1000 or cfg.count_bins == 1:
        raise ValueError(f"count_bins {cfg.count_bins}: allowed 0 (no count head) or 2..1000")


def _tensors(data: dict[str, Any], rows: np.ndarray, n: int) -> tuple[torch.Tensor, ...]:
    """Inputs, labels, the free-card mask, the hidden-card counts and hidden totals of ``rows``."""
    bits, floats, labels = unpack(data, rows)
    x = torch.from_numpy(np.concatenate([bits.astype(np.float32), floats.astype(np.float32)], axis=1))
    free = torch.from_numpy(np.repeat(bits[:, None, 52:104].astype(bool), n - 1, axis=1))
    y = torch.from_numpy(labels.astype(np.float32))
    return (
        x,
        y,
        free,
        torch.from_numpy(data["hidden"][rows].astype(np.float32)),
        (y @ _VALUES).round().long(),
    )


def _train(
    net: torch.nn.Sequential,
    fit_t: tuple[torch.Tensor, ...],
    val_t: tuple[torch.Tensor, ...],
    cfg: FitConfig,
    progress: bool,
) -> tuple[int, list[dict[str, Any]]]:
    """Fit ``net`` for ``cfg.epochs``, leave it at its best validation epoch; that epoch and the curve."""
    gen = np.random.default_rng(cfg.seed)
    opt = torch.optim.Adam(net.parameters(), lr=cfg.learning_rate, weight_decay=cfg.weight_decay)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=cfg.epochs)
    best: tuple[float, int, dict[str, Any] | None] = (float("inf"), -1, None)
    curve = []
    n_fit, n_val = len(fit_t[0]), len(val_t[0])
    bar = progress_bar(
        total=cfg.epochs,
        unit="epoch",
        desc=f"belief fit {cfg.name}",
        dynamic_ncols=True,
        disable=not progress,
    )
    for epoch in range(cfg.epochs):
        net.train()
        order = gen.permutation(n_fit)
        tot = 0.0
        for i in range(0, len(order), cfg.batch_size):
            idx = torch.from_numpy(order[i : i + cfg.batch_size])
            loss = _loss(net, *(t[idx] for t in fit_t))
            opt.zero_grad()
            loss.backward()
            opt.step()
            tot += float(loss.detach()) * len(idx)
        sched.step()
        net.eval()
        with torch.no_grad():
            val = (
                sum(
                    float(_loss(net, *(t[i : i + 8192] for t in val_t))) * len(val_t[0][i : i + 8192])
                    for i in range(0, n_val, 8192)
                )
                / n_val
            )
        curve.append({"epoch": epoch + 1, "train_log_loss": tot / len(order), "val_log_loss": val})
        if val < best[0]:
            best = (val, epoch + 1, {k: v.detach().clone() for k, v in net.state_dict().items()})
        bar.set_postfix(val=f"{val:.4f}")
        bar.update(1)
    bar.close()
    assert best[2] is not None
    net.load_state_dict(best[2])
    return best[1], curve


def fit_belief(
    data_path: str | Path, cfg: FitConfig, out_dir: str | Path | None = None, progress: bool = True
) -> dict[str, Any]:
    """Train on ``data_path``, measure on its held-out positions, write ``NAME.npz/.json/.md``; the card."""
    _check_fit(cfg)
    data = load_data(data_path)
    summary = data["summary"]
    n = int(summary["players"])
    t0 = time.time()
    torch.set_num_threads(cfg.torch_threads)
    torch.manual_seed(cfg.seed)
    train_rows = np.flatnonzero(data["split"] == 0)
    val_mask = data["hand"][train_rows] % 10 == 3
    fit_rows, val_rows = train_rows[~val_mask], train_rows[val_mask]
    if not len(fit_rows) or not len(val_rows):
        raise ValueError(f"{data_path}: too few training hands to cut a validation set")
    nbits, nfloats = feature_sizes(n)
    fit_t = _tensors(data, fit_rows, n)
    val_t = _tensors(data, val_rows, n)
    outputs = (52 + cfg.count_bins) * (n - 1)
    net = _network(nbits + nfloats, cfg.hidden, outputs)
    best_epoch, curve = _train(net, fit_t, val_t, cfg, progress)
    linears = [m for m in net if isinstance(m, torch.nn.Linear)]
    layers = [(m.weight.detach().numpy().copy(), m.bias.detach().numpy().copy()) for m in linears]
    sizes = [nbits + nfloats, *cfg.hidden, outputs]
    meta = {
        "num_players": n,
        "rules_hash": summary["rules_hash"],
        "features_version": FEATURES_VERSION,
        "sizes": sizes,
        "name": cfg.name,
        **({"count_bins": cfg.count_bins} if cfg.count_bins else {}),
    }
    model = BeliefModel(layers, meta)
    wall = time.time() - t0
    metrics = belief_metrics(model, data, seed=cfg.seed)
    folder = Path(out_dir) if out_dir is not None else belief_dir()
    folder.mkdir(parents=True, exist_ok=True)
    npz = folder / f"{cfg.name}.npz"
    model.save(npz)
    card = {
        "format": CARD_FORMAT,
        "name": cfg.name,
        "file": npz.name,
        "sha256": file_sha256(npz),
        "num_players": n,
        "rules": summary["rules"],
        "rules_hash": summary["rules_hash"],
        "features_version": FEATURES_VERSION,
        "network": {"activation": "relu", "sizes": sizes},
        "data": {
            **summary,
            "path": str(data_path),
            "fit_positions": len(fit_rows),
            "val_positions": len(val_rows),
        },
        "metrics": metrics,
        "training": {
            "epochs": cfg.epochs,
            "best_epoch": best_epoch,
            "batch_size": cfg.batch_size,
            "learning_rate": cfg.learning_rate,
            "weight_decay": cfg.weight_decay,
            "seed": cfg.seed,
            "torch_threads": cfg.torch_threads,
            "count_bins": cfg.count_bins,
            "wall_seconds": round(wall, 1),
            "curve": curve,
        },
        "commit": _commit(),
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }
    _write_card(card, folder)
    return card


def _write_card(card: dict[str, Any], folder: Path) -> None:
    """Check a belief card and write it with its page."""
    check_belief_card(card, f"card {card.get('name')!r}")
    (folder / f"{card['name']}.json").write_text(json.dumps(card, indent=1) + "\n", encoding="utf-8")
    (folder / f"{card['name']}.md").write_text(render_belief_card(card), encoding="utf-8")


def measure_belief(
    model_ref: str, data_path: str | Path, seed: int = 0, update_card: bool = False
) -> dict[str, Any]:
    """The held-out metrics of a model (a name or an ``.npz``); ``update_card`` writes them into its card."""
    model = load_belief(model_ref)
    data = load_data(data_path)
    if data["summary"]["players"] != model.num_players:
        raise ValueError(
            f"{data_path}: positions of {data['summary']['players']} players, "
            f"the model is for {model.num_players}"
        )
    result = belief_metrics(model, data, seed=seed)
    if update_card:
        if model_ref.endswith(".npz") or "/" in model_ref:
            raise ValueError(f"--update-card needs a shipped model's name, not a file ({model_ref})")
        card = read_belief_card(model_ref)
        card["metrics"] = result
        card["data"] = {**card["data"], **data["summary"], "path": str(data_path)}
        _write_card(card, belief_dir())
    return result
