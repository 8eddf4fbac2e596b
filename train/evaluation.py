"""Evaluation during training: the duplicate-deal harness on the current policy."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from agents.mlp import MLPPolicy
from eval.duplicate import evaluate
from tonk_env.engine import make_rules

from .config import TrainConfig


def evaluate_layers(
    layers: list[tuple[np.ndarray, np.ndarray]], cfg: TrainConfig, seed: int
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
