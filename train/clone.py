"""A network that plays as another agent does: behaviour cloning into a policy ``.npz`` (``tonk clone``).

:func:`clone` plays ``hands`` hands with the teacher (any agent spec, e.g.
``search:ismcts``) in a random seat against ``opponents`` (drawn per hand by
weight), records each of the teacher's decisions (the observation, the mask
and its move: :func:`train.pretrain.collect_demos`), and fits a policy network
to them by cross-entropy over the legal actions, starting from the weights of
``start``, by default the zoo's agent for the table
(:func:`train.improve.fit.fit_policy`; a tenth of the decisions held out).
The result is an ``npz:`` network for the table: an opponent that plays like
the teacher at a network's speed, e.g. for the playouts of ``tonk improve``
(``values.opponents``) or ``search:playouts`` (``opponent=``), where a search
could not be played a million times.

The data do not depend on ``workers``, and the fit runs on one thread from a
fixed seed, so a clone is the same when it is made again on one machine.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from agents.mlp import MLPPolicy, policy_network
from agents.registry import check_spec
from agents.zoo import find_entry
from tonk_env.engine import TonkRules, make_rules

from .config import config_from_dict
from .improve.config import FitSettings
from .improve.fit import fit_policy, held_out_rows
from .pretrain import collect_demos
from .run_folder import policy_meta

__all__ = ["CloneSettings", "clone", "start_spec"]


@dataclass
class CloneSettings:
    """What ``tonk clone`` imitates, where, and how long it fits."""

    teacher: str
    start: str = ""  # empty: the zoo's agent for the table (:func:`start_spec`)
    players: int = 2
    rules: str = "standard"
    hands: int = 20_000
    opponents: dict[str, float] = field(default_factory=lambda: {"heuristic:expert": 1.0})
    epochs: int = 8
    batch_size: int = 512
    learning_rate: float = 3.0e-4
    seed: int = 0
    workers: int = 2


def start_spec(s: CloneSettings, rules: TonkRules) -> str:
    """``s.start``, or when it is empty the zoo's agent for the table; ``ValueError`` naming ``--start``."""
    if s.start:
        return s.start
    entry = find_entry(s.players, rules.hash)
    if entry is None:
        raise ValueError(
            f"--start: the zoo has no agent for {s.players} players and rules {s.rules!r}; "
            "name the network to start from, e.g. --start npz:FILE"
        )
    return f"zoo:{entry}"


def _check(s: CloneSettings) -> tuple[MLPPolicy, str, Any]:
    """The start network, its spec and the config of the teacher's hands; ``ValueError`` naming the option."""
    try:
        check_spec(s.teacher)
    except ValueError as e:
        raise ValueError(f"teacher {s.teacher!r}: {e}") from None
    for spec in s.opponents:
        try:
            check_spec(spec)
        except ValueError as e:
            raise ValueError(f"--opponents {spec!r}: {e}") from None
    if not s.opponents or sum(s.opponents.values()) <= 0 or min(s.opponents.values()) < 0:
        raise ValueError(f"--opponents {s.opponents!r}: weights >= 0 with a positive sum are needed")
    cfg = config_from_dict(  # names a bad --rules, --players or --workers by its config key
        {
            "players": s.players,
            "rules": s.rules,
            "seed": s.seed,
            "pool": {"latest": 0.0, "snapshots": 0.0, "baselines": dict(s.opponents)},
            "pretrain": {"teacher": s.teacher, "hands": s.hands, "workers": s.workers},
        }
    )
    rules = make_rules(cfg.rules, **cfg.rule_options)
    spec = start_spec(s, rules)
    start = policy_network(spec, f"--start {spec!r}", 0, s.players, rules)
    return start, spec, cfg


def clone(s: CloneSettings, out: str | Path, progress: bool = True) -> dict[str, Any]:
    """Make the clone (module docstring), save it as ``out`` (``.npz`` and its ``.sha256``); its report."""
    start, start_name, cfg = _check(s)
    out = Path(out)
    if out.suffix != ".npz":
        raise ValueError(f"--out {str(out)!r}: a .npz file name is needed")
    t0 = time.perf_counter()
    demos = collect_demos(cfg, s.hands, seed=s.seed, progress=progress, workers=s.workers)
    played = time.perf_counter() - t0
    targets = np.zeros(demos.masks.shape, dtype=np.float32)
    targets[np.arange(len(demos)), demos.actions] = 1.0
    held = held_out_rows(len(demos), s.seed)
    logits = np.where(demos.masks[held], start.logits(demos.obs[held]), -np.inf)
    before = float((logits.argmax(axis=1) == demos.actions[held]).mean()) if len(held) else float("nan")
    fit = FitSettings(epochs=s.epochs, batch_size=s.batch_size, learning_rate=s.learning_rate)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        layers, report = fit_policy(
            start.layers_for_export(), start.activation, demos.obs, demos.masks, targets, fit, s.seed
        )
    finally:
        torch.set_num_threads(threads)
    meta = {
        **policy_meta(make_rules(cfg.rules, **cfg.rule_options), s.players),
        "clone_of": s.teacher,
        "start": start_name,
        "hands": s.hands,
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    MLPPolicy(layers, activation=start.activation, meta=meta).save_npz(out)
    return {
        "out": str(out),
        "teacher": s.teacher,
        "decisions": len(demos),
        "held_out": len(held),
        "agreement_before": round(before, 4),
        "agreement": round(report.agreement, 4),
        "held_out_loss": round(report.held_out_loss, 4),
        "seconds": {"play": round(played, 1), "fit": round(time.perf_counter() - t0 - played, 1)},
    }
