"""The policy targets: pi' = softmax(log pi + Q/tau) over the legal actions, tau set by a KL budget.

A candidate's ``Q`` is its playout value; a legal action that was not a
candidate gets the candidates' mean value weighted by pi (the completed Q of
Gumbel AlphaZero, Danihelka et al. 2022), so it is neither raised nor lowered
against the others. The temperature ``tau`` is one number for the whole
generation, found by bisection so that the mean KL(pi' || pi) over its
positions is ``kl``: small enough that noisy values move the policy only a
little, large enough that clear gains move it.

``kept`` (per position and action, optional) marks actions whose probability
stays pi's: the values then move the choice only among the other actions,
which share what is left (``fit.kinds`` keeps the actions of the decision types
not listed, so that values the opponent model may misjudge, a drop's, move
nothing).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from agents.playout_search import log_policy

from .playouts import CandidateValues

__all__ = ["KL_SWEEP", "Targets", "held_out_choice_gain", "improved_targets", "log_policy"]

#: The KL budgets whose held-out gain every generation records (``held_out_gain_by_kl``).
KL_SWEEP = (0.02, 0.05, 0.1, 0.2, 0.5)


@dataclass
class Targets:
    """Per position: pi' over every action (0 off the legal ones), and the generation's tau and KL."""

    probs: np.ndarray
    tau: float
    kl: float
    changed: float
    """Share of positions whose most likely action under pi' is not the network's choice."""


def _advantages(logp: np.ndarray, vals: CandidateValues) -> np.ndarray:
    """``Q - v`` per legal action (0 for the actions that were not candidates), ``v`` the pi-weighted mean."""
    adv = np.zeros_like(logp)
    for i, (acts, q) in enumerate(zip(vals.actions, vals.values, strict=True)):
        p = np.exp(logp[i, acts])
        v = float(p @ q / p.sum()) if p.sum() > 0 else float(q.mean())
        adv[i, acts] = q - v
    return adv


def _targets(
    logp: np.ndarray, adv: np.ndarray, tau: float, kept: np.ndarray | None = None
) -> tuple[np.ndarray, float]:
    """pi' at temperature ``tau`` and its mean KL from pi (``kept`` actions keep pi's probability)."""
    z = logp + adv / tau
    if kept is not None:
        z = np.where(kept, -np.inf, z)  # the others' softmax apart, so that no kept value swamps it
    top = z.max(axis=1, keepdims=True)
    free = np.isfinite(top)  # a row with every legal action kept keeps pi
    p = np.exp(z - np.where(free, top, 0.0))
    p /= np.where(free, p.sum(axis=1, keepdims=True), 1.0)
    if kept is not None:
        pi = np.exp(logp)
        share = 1.0 - np.where(kept, pi, 0.0).sum(axis=1, keepdims=True)  # what the others had under pi
        p = np.where(free, p * share + np.where(kept, pi, 0.0), pi)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, p * (np.log(np.where(p > 0, p, 1.0)) - logp), 0.0)
    return p, float(terms.sum(axis=1).mean())


def improved_targets(
    logits: np.ndarray, masks: np.ndarray, vals: CandidateValues, kl: float, kept: np.ndarray | None = None
) -> Targets:
    """pi' for every position, ``tau`` chosen so that the mean KL(pi' || pi) is ``kl`` (see the docstring)."""
    logp = log_policy(logits, masks)
    adv = _advantages(logp, vals)
    lo, hi = np.log(1e-4), np.log(1e3)  # log tau; KL falls as tau grows
    if _targets(logp, adv, float(np.exp(lo)), kept)[1] <= kl:
        hi = lo
    for _ in range(50):
        if hi - lo < 1e-3:
            break
        mid = (lo + hi) / 2
        if _targets(logp, adv, float(np.exp(mid)), kept)[1] > kl:
            lo = mid
        else:
            hi = mid
    tau = float(np.exp(hi))
    probs, got = _targets(logp, adv, tau, kept)
    first = np.array([a[0] for a in vals.actions])
    changed = float(np.mean(probs.argmax(axis=1) != first))
    return Targets(probs.astype(np.float32), tau, got, changed)


def held_out_choice_gain(
    logits: np.ndarray, masks: np.ndarray, vals: CandidateValues, kl: float, kept: np.ndarray | None = None
) -> tuple[float, float, float]:
    """What the argmax of pi' gains over the network's choice, pi' made on one half of the worlds.

    The targets are made from the values over the even worlds at the KL budget ``kl`` and their
    argmax is valued over the odd worlds, then the other way round; the mean of the two is an
    unbiased estimate of what a network that plays argmax pi' gains per position at half the
    worlds (``kl`` 0 is the argmax of the values alone, as :meth:`CandidateValues.held_out_gap`,
    ``kept`` unread).
    A move of pi' outside the candidates (possible only where every candidate is worth less than
    the network's choice is thought to be) has no value of its own and counts as the choice.
    Returns the gain, its standard error and the share of positions whose move changes.
    """
    if not vals.halves:
        return float("nan"), float("nan"), float("nan")
    gains = np.zeros(len(vals.actions))
    changed = 0.0
    for h in (0, 1):
        choose = CandidateValues(vals.actions, [v[h] for v in vals.halves])
        if kl > 0:
            probs = improved_targets(logits, masks, choose, kl, kept).probs
            moves = probs.argmax(axis=1)
            found = [vals.index_of(i, int(m)) for i, m in enumerate(moves)]
            picks = [0 if k is None else k for k in found]
        else:
            picks = [int(np.argmax(q)) for q in choose.values]
        judge = [v[1 - h] for v in vals.halves]
        gains += np.array([q[p] - q[0] for q, p in zip(judge, picks, strict=True)]) / 2
        changed += float(np.mean(np.array(picks) != 0)) / 2
    return float(gains.mean()), float(gains.std() / np.sqrt(max(len(gains), 1))), changed
