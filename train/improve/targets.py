"""The policy targets: pi' = softmax(log pi + Q/tau) over the legal actions, tau set by a KL budget.

A candidate's ``Q`` is its playout value; a legal action that was not a
candidate gets the candidates' mean value weighted by pi (the completed Q of
Gumbel AlphaZero, Danihelka et al. 2022), so it is neither raised nor lowered
against the others. The temperature ``tau`` is one number for the whole
generation, found by bisection so that the mean KL(pi' || pi) over its
positions is ``kl``: small enough that noisy values move the policy only a
little, large enough that clear gains move it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .playouts import CandidateValues

__all__ = ["Targets", "improved_targets", "log_policy"]


@dataclass
class Targets:
    """Per position: pi' over every action (0 off the legal ones), and the generation's tau and KL."""

    probs: np.ndarray
    tau: float
    kl: float
    changed: float
    """Share of positions whose most likely action under pi' is not the network's choice."""


def log_policy(logits: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """log pi over the legal actions (``-inf`` elsewhere), row by row."""
    z = np.where(masks > 0, logits.astype(np.float64), -np.inf)
    z -= z.max(axis=1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=1, keepdims=True))


def _advantages(logp: np.ndarray, vals: CandidateValues) -> np.ndarray:
    """``Q - v`` per legal action (0 for the actions that were not candidates), ``v`` the pi-weighted mean."""
    adv = np.zeros_like(logp)
    for i, (acts, q) in enumerate(zip(vals.actions, vals.values, strict=True)):
        p = np.exp(logp[i, acts])
        v = float(p @ q / p.sum()) if p.sum() > 0 else float(q.mean())
        adv[i, acts] = q - v
    return adv


def _targets(logp: np.ndarray, adv: np.ndarray, tau: float) -> tuple[np.ndarray, float]:
    """pi' at temperature ``tau`` and its mean KL from pi."""
    z = logp + adv / tau
    z -= z.max(axis=1, keepdims=True)
    p = np.exp(z)
    p /= p.sum(axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, p * (np.log(np.where(p > 0, p, 1.0)) - logp), 0.0)
    return p, float(terms.sum(axis=1).mean())


def improved_targets(logits: np.ndarray, masks: np.ndarray, vals: CandidateValues, kl: float) -> Targets:
    """pi' for every position, ``tau`` chosen so that the mean KL(pi' || pi) is ``kl`` (see the docstring)."""
    logp = log_policy(logits, masks)
    adv = _advantages(logp, vals)
    lo, hi = np.log(1e-4), np.log(1e3)  # log tau; KL falls as tau grows
    if _targets(logp, adv, float(np.exp(lo)))[1] <= kl:
        hi = lo
    for _ in range(50):
        if hi - lo < 1e-3:
            break
        mid = (lo + hi) / 2
        if _targets(logp, adv, float(np.exp(mid)))[1] > kl:
            lo = mid
        else:
            hi = mid
    tau = float(np.exp(hi))
    probs, got = _targets(logp, adv, tau)
    first = np.array([a[0] for a in vals.actions])
    changed = float(np.mean(probs.argmax(axis=1) != first))
    return Targets(probs.astype(np.float32), tau, got, changed)
