"""The next generation's networks: the policy fitted to pi', a value network to the playout returns.

The policy starts from the current network's weights and is fitted by
cross-entropy to the targets (:mod:`train.improve.targets`) over the legal
actions; the value network (the observation to the payoff of the network's own
move, its mean over the worlds) starts from the previous generation's, or
afresh. A tenth of the positions is held out to report each fit's error.
Torch runs on one thread with a fixed seed, so a generation's fit is the same
when it is run again (a resumed run matches an uninterrupted one).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import nn

from .config import FitSettings

__all__ = ["FitReport", "fit_policy", "fit_value", "held_out_rows", "layers_of", "mlp"]

_ACT = {"tanh": nn.Tanh, "relu": nn.ReLU}


@dataclass
class FitReport:
    """Held-out figures of one fit."""

    train_loss: float
    held_out_loss: float
    agreement: float
    """Policy: held-out share where the fitted argmax is pi''s argmax. Value: the returns' variance."""


def mlp(layers: list[tuple[np.ndarray, np.ndarray]], activation: str) -> nn.Sequential:
    """A torch MLP holding ``layers`` (``(W, b)``, ``W`` of shape (out, in))."""
    mods: list[nn.Module] = []
    for k, (w, b) in enumerate(layers):
        lin = nn.Linear(w.shape[1], w.shape[0])
        with torch.no_grad():
            lin.weight.copy_(torch.as_tensor(np.asarray(w, np.float32)))
            lin.bias.copy_(torch.as_tensor(np.asarray(b, np.float32)))
        mods.append(lin)
        if k < len(layers) - 1:
            mods.append(_ACT[activation]())
    return nn.Sequential(*mods)


def layers_of(net: nn.Sequential) -> list[tuple[np.ndarray, np.ndarray]]:
    """The ``(W, b)`` layers of a torch MLP made by :func:`mlp`."""
    return [
        (m.weight.detach().numpy().copy(), m.bias.detach().numpy().copy())
        for m in net
        if isinstance(m, nn.Linear)
    ]


def fresh_layers(sizes: list[int], rng: np.random.Generator) -> list[tuple[np.ndarray, np.ndarray]]:
    """Randomly initialised ``(W, b)`` layers of these sizes (inputs first)."""
    out = []
    for a, b in zip(sizes[:-1], sizes[1:], strict=True):
        bound = 1.0 / np.sqrt(a)
        out.append((rng.uniform(-bound, bound, (b, a)).astype(np.float32), np.zeros(b, np.float32)))
    return out


def _split(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Shuffled indices: nine tenths to fit, a tenth held out (at least one each when n >= 2)."""
    order = np.random.default_rng(seed).permutation(n)
    held = max(1, n // 10) if n >= 2 else 0
    return order[held:], order[:held]


def held_out_rows(n: int, seed: int) -> np.ndarray:
    """The rows :func:`fit_policy` holds out of a fit of ``n`` positions seeded by ``seed``."""
    return _split(n, seed)[1]


def _batches(idx: np.ndarray, size: int, gen: torch.Generator) -> list[np.ndarray]:
    perm = idx[torch.randperm(len(idx), generator=gen).numpy()]
    return [perm[i : i + size] for i in range(0, len(perm), size)]


def _descend(opt: Any, loss_of: Any, fit_idx: np.ndarray, epochs: int, batch_size: int, gen: Any) -> float:
    """``epochs`` passes of Adam over shuffled minibatches of ``fit_idx``; the last minibatch's loss."""
    last = float("nan")
    for _ in range(epochs):
        for idx in _batches(fit_idx, batch_size, gen):
            opt.zero_grad()
            loss = loss_of(idx)
            loss.backward()
            opt.step()
            last = float(loss.detach())
    return last


def fit_policy(
    layers: list[tuple[np.ndarray, np.ndarray]],
    activation: str,
    obs: np.ndarray,
    masks: np.ndarray,
    targets: np.ndarray,
    f: FitSettings,
    seed: int,
) -> tuple[list[tuple[np.ndarray, np.ndarray]], FitReport]:
    """The policy fitted to ``targets`` from ``layers`` (cross-entropy over the legal actions)."""
    torch.manual_seed(seed)
    net = mlp(layers, activation)
    opt = torch.optim.Adam(net.parameters(), lr=f.learning_rate)
    x, m, t = (torch.as_tensor(a) for a in (obs.astype(np.float32), masks > 0, targets.astype(np.float32)))
    fit_idx, held = _split(len(x), seed)
    gen = torch.Generator().manual_seed(seed)

    def loss_of(idx: Any) -> Any:
        z = net(x[idx]).masked_fill(~m[idx], -1e9)
        return -(t[idx] * torch.log_softmax(z, dim=1)).sum(dim=1).mean()

    last = _descend(opt, loss_of, fit_idx, f.epochs, f.batch_size, gen)
    with torch.no_grad():
        held_loss = float(loss_of(held)) if len(held) else float("nan")
        z = net(x[held]).masked_fill(~m[held], -1e9)
        agree = (
            float((z.argmax(dim=1) == t[held].argmax(dim=1)).float().mean()) if len(held) else float("nan")
        )
    return layers_of(net), FitReport(last, held_loss, agree)


def fit_value(
    layers: list[tuple[np.ndarray, np.ndarray]],
    obs: np.ndarray,
    returns: np.ndarray,
    f: FitSettings,
    seed: int,
) -> tuple[list[tuple[np.ndarray, np.ndarray]], FitReport]:
    """The value network fitted to ``returns`` from ``layers`` (mean squared error; tanh hidden layers)."""
    torch.manual_seed(seed)
    net = mlp(layers, "tanh")
    opt = torch.optim.Adam(net.parameters(), lr=f.learning_rate)
    x = torch.as_tensor(obs.astype(np.float32))
    y = torch.as_tensor(returns.astype(np.float32))
    fit_idx, held = _split(len(x), seed + 1)
    gen = torch.Generator().manual_seed(seed + 1)

    def loss_of(idx: Any) -> Any:
        return ((net(x[idx]).squeeze(1) - y[idx]) ** 2).mean()

    last = _descend(opt, loss_of, fit_idx, f.epochs, f.batch_size, gen)
    with torch.no_grad():
        held_loss = float(loss_of(held)) if len(held) else float("nan")
    variance = float(y[held].var()) if len(held) > 1 else float("nan")
    return layers_of(net), FitReport(last, held_loss, variance)
