"""Evaluation during training: the current policy against ``cfg.eval.opponents``, by an injected evaluator.

Training does not import the evaluation package (``eval`` and ``train`` sit
side by side, neither imports the other). Whoever starts a run passes the
evaluator, a callable shaped like :func:`eval.duplicate.evaluate`
(:class:`Evaluator`); ``tonk train`` and ``tonk pipeline`` pass that one.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from agents.mlp import MLPPolicy
from tonk_env.engine import TonkRules, make_rules

from .config import TrainConfig

__all__ = ["AgentScore", "EvalOutcome", "Evaluator", "evaluate_layers", "require_evaluator"]


class AgentScore(Protocol):
    """What training reads of one agent's line in an evaluation (``eval.duplicate.AgentStats``)."""

    @property
    def mean_stakes(self) -> float:
        """Mean payoff per seat-hand."""
        ...

    @property
    def ci95(self) -> tuple[float, float]:
        """Its 95% interval."""
        ...

    @property
    def win_rate(self) -> float:
        """Share of seat-hands won."""
        ...

    @property
    def hands(self) -> int:
        """Hands played."""
        ...


class EvalOutcome(Protocol):
    """What training reads of an evaluation's result (``eval.duplicate.EvalResult``)."""

    @property
    def agents(self) -> Sequence[AgentScore]:
        """One line per agent spec, in the order given."""
        ...

    @property
    def group_payoffs(self) -> Sequence[Sequence[float]]:
        """Per deal group, each agent's mean payoff per seat-hand (the samples of its interval)."""
        ...


class Evaluator(Protocol):
    """A duplicate evaluation with the signature of :func:`eval.duplicate.evaluate`."""

    def __call__(
        self,
        specs: Sequence[str],
        hands: int = ...,
        players: int = ...,
        rules: TonkRules | str = ...,
        seed: int = ...,
        workers: int = ...,
        progress: bool | Callable[[int], None] = ...,
        rules_name: str | None = ...,
    ) -> EvalOutcome:
        """Evaluate ``specs`` against each other over ``hands`` duplicate hands."""
        ...


def require_evaluator(cfg: TrainConfig, evaluate: Evaluator | None) -> None:
    """Raise ``ValueError`` when ``cfg`` evaluates against opponents but no evaluator was passed."""
    if evaluate is None and cfg.eval.opponents:
        raise ValueError(
            f"training {cfg.name!r} evaluates the policy against eval.opponents={cfg.eval.opponents} "
            "(to choose best.zip) but no evaluator was given: pass evaluate=eval.duplicate.evaluate "
            "to train() / resume(), as tonk train does"
        )


def evaluate_layers(
    layers: list[tuple[np.ndarray, np.ndarray]], cfg: TrainConfig, seed: int, evaluate: Evaluator
) -> dict[str, dict[str, Any]]:
    """Mean stakes (95% CI), win rate and hands of the policy against each ``cfg.eval.opponents``."""
    rules = make_rules(cfg.rules, **cfg.rule_options)
    out: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="tonk-eval-") as tmp:
        path = Path(tmp) / "policy.npz"
        MLPPolicy(
            layers, activation=cfg.net.activation, meta={"num_players": cfg.players, "rules_hash": rules.hash}
        ).save_npz(path)
        for spec in cfg.eval.opponents:
            res = evaluate(
                [f"npz:{path}", spec],
                hands=cfg.eval.hands,
                players=cfg.players,
                rules=rules,
                seed=seed,
                workers=cfg.eval.workers,
                rules_name=cfg.rules,
            )
            me = res.agents[0]
            out[spec] = {
                "mean_stakes": me.mean_stakes,
                "ci95": list(me.ci95),
                "win_rate": me.win_rate,
                "hands": me.hands,
            }
    return out
