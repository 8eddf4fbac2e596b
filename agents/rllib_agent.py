"""The ``rllib:PATH`` agent: a checkpoint of the RLlib backend, played with numpy (no Ray needed).

A checkpoint of ``tonk train`` with ``backend: rllib`` is a folder
(``RUN/checkpoints/step_<N>/``, ``RUN/best/``) holding ``tonk_meta.json`` and
the policy network as ``policy.npz`` (written by :mod:`train.rllib.folder_checkpoint`).
``rllib:RUN`` means the run's ``best/`` (else its newest checkpoint);
``rllib:FOLDER`` a checkpoint folder. Only the metadata (JSON) and the
``.npz`` weights (``allow_pickle=False``) are read, so naming a downloaded
checkpoint runs no code; RLlib's own pickled state files are never written
nor read.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from .checkpoint import check_meta
from .mlp import MLPPolicy, parse_bool_param

__all__ = ["FORMAT", "META_NAME", "load_rllib_agent", "read_rllib_meta", "resolve_rllib_checkpoint"]

META_NAME = "tonk_meta.json"
FORMAT = "tonk-rllib-checkpoint/1"
_STEP_DIR = re.compile(r"step_(\d+)")


def resolve_rllib_checkpoint(path: str | Path) -> Path:
    """A run folder means its ``best/`` (else its newest ``checkpoints/step_<N>``); a checkpoint is itself."""
    p = Path(path)
    if not p.is_dir():
        raise ValueError(
            f"{p}: {'not a folder' if p.exists() else 'no such folder'}; an RLlib run or checkpoint"
        )
    if (p / META_NAME).is_file():
        return p
    if (p / "best" / META_NAME).is_file():
        return p / "best"
    steps = sorted(
        (int(m.group(1)), f)
        for f in (p / "checkpoints").glob("step_*")
        if (m := _STEP_DIR.fullmatch(f.name)) and (f / META_NAME).is_file()
    )
    if not steps:
        raise ValueError(
            f"{p}: no {META_NAME}, best/ or checkpoints/step_N/ inside; not an RLlib run or checkpoint "
            "of tonk train (backend: rllib)"
        )
    return steps[-1][1]


def read_rllib_meta(folder: Path) -> dict[str, Any]:
    """The checked ``tonk_meta.json`` of a checkpoint folder; ``ValueError`` names the problem."""
    path = folder / META_NAME
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"{folder}: no {META_NAME}; not an RLlib checkpoint of tonk train") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as e:
        raise ValueError(f"{path}: unreadable ({type(e).__name__}: {e})") from None
    return check_meta(str(path), meta, FORMAT)


def load_rllib_agent(
    path: str, seed: int | None = None, deterministic: Any = True, **params: Any
) -> MLPPolicy:
    """The ``rllib:PATH`` agent: the policy of an RLlib run (its best) or checkpoint folder."""
    if params:
        raise ValueError(f"agent rllib:{path}: unknown parameters {sorted(params)}; known: deterministic")
    det = parse_bool_param(deterministic, "deterministic", f"rllib:{path}")
    folder = resolve_rllib_checkpoint(path)
    meta = read_rllib_meta(folder)
    pol = MLPPolicy.load_npz(folder / "policy.npz", deterministic=det, seed=seed, name=f"rllib:{path}")
    for key in ("rules_hash", "num_players"):
        if pol.meta.get(key) != meta.get(key):
            raise ValueError(f"{folder}: policy.npz and {META_NAME} disagree on {key}")
    return pol
