"""The luck value function: a small full-state network, numpy inference, and its file and card.

A value file is ``NAME.npz`` (arrays ``w0, b0, w1, b1, ...``: a ReLU MLP
from one row of :func:`~tonk_env.luck.features.state_features` to one float,
read with ``allow_pickle=False``) with its card ``NAME.json`` beside it:

=====================  ==============================================================
field                  content
=====================  ==============================================================
``format``             ``tonk-luck-value/1``
``name``               the name (a shipped value is loadable by it)
``file``, ``sha256``   the ``.npz`` file and the SHA-256 of its bytes (checked at load)
``num_players``        the table size it was fitted for (checked against the table)
``rules``              the rules preset, ``rules_hash`` its hash (checked at load)
``feature_version``    the feature layout version (checked at load)
``network``            ``activation`` (``relu``) and the layer ``sizes``
``data``               what it was fitted on: agents, hands, deal seeds, positions
``fit``                the fit: epochs, learning rate, losses, wall seconds
``created``            when the card was written (UTC)
=====================  ==============================================================

:meth:`ValueNet.values` turns a batch of seat rows into per-seat values that
sum to zero over the table (each seat's raw output minus the table's mean), so
a deal that every agent plays from every seat carries no luck term.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from tonk_env.engine import TonkRules
from tonk_env.safe_arrays import load_npz

from .features import FEATURE_VERSION, feature_size

FORMAT = "tonk-luck-value/1"
#: Where the shipped value files live (package data).
BUILTIN_DIR = Path(__file__).resolve().parent
#: The shipped value used when none is named.
DEFAULT_VALUE = "2p"
#: Largest value file read (a small network; a bigger file is refused, not loaded).
MAX_BYTES = 64 << 20

_CARD_FIELDS: dict[str, type | tuple[type, ...]] = {
    "format": str,
    "name": str,
    "file": str,
    "sha256": str,
    "num_players": int,
    "rules": str,
    "rules_hash": str,
    "feature_version": int,
    "network": dict,
    "data": dict,
    "fit": dict,
    "created": str,
}


@dataclass
class ValueNet:
    """A fixed full-state value function: ``values(rows)`` gives each seat's expected payoff."""

    layers: list[tuple[np.ndarray, np.ndarray]]  # (W of shape (in, out), b of shape (out,))
    name: str = "value"
    path: str = ""
    sha256: str = ""
    card: dict[str, Any] = field(default_factory=dict)

    def raw(self, x: np.ndarray) -> np.ndarray:
        """The network's output for each row of ``x`` (shape ``(..., F)`` to ``(...)``)."""
        h = x
        last = len(self.layers) - 1
        for i, (w, b) in enumerate(self.layers):
            h = h @ w + b
            if i < last:
                h = np.maximum(h, 0.0)
        return h[..., 0]

    def values(self, rows: np.ndarray) -> np.ndarray:
        """Per-seat values of ``rows`` (shape ``(..., n, F)`` to ``(..., n)``), zero-sum over the seats."""
        v = self.raw(rows)
        return v - v.mean(axis=-1, keepdims=True)

    def check_table(self, players: int, rules: TonkRules) -> None:
        """Raise ``ValueError`` naming the file unless it was fitted for this table."""
        want_n = self.card.get("num_players")
        if want_n != players:
            raise ValueError(f"{self.path}: value fitted for {want_n} players, the evaluation has {players}")
        want = self.card.get("rules_hash")
        if want != rules.hash:
            raise ValueError(
                f"{self.path}: value fitted for rules hash {want} ({self.card.get('rules')}), "
                f"the evaluation plays rules hash {rules.hash}"
            )


def resolve(name_or_path: str) -> Path:
    """The ``.npz`` path of a shipped value's name, or of a file path (``.npz`` or its card ``.json``)."""
    if not name_or_path:
        raise ValueError("empty value name; give a shipped value's name (e.g. 2p) or an .npz file")
    p = Path(name_or_path)
    if p.suffix == ".json":
        return p.with_suffix(".npz")
    if p.suffix == ".npz" or "/" in name_or_path or p.exists():
        return p
    builtin = BUILTIN_DIR / f"{name_or_path}.npz"
    if not builtin.is_file():
        known = ", ".join(sorted(q.stem for q in BUILTIN_DIR.glob("*.npz"))) or "none"
        raise ValueError(f"unknown value {name_or_path!r}: not a file and not a shipped value ({known})")
    return builtin


def load_value(name_or_path: str = DEFAULT_VALUE) -> ValueNet:
    """Load a value file and its card, checked whole (``ValueError`` naming the file if anything is off)."""
    path = resolve(name_or_path)
    if not path.is_file():
        raise ValueError(f"{path}: {'not a file' if path.exists() else 'no such file'}")
    size = path.stat().st_size
    if size > MAX_BYTES:
        raise ValueError(f"{path}: {size} bytes, more than a value file may have ({MAX_BYTES})")
    blob = path.read_bytes()
    digest = hashlib.sha256(blob).hexdigest()
    card = read_card(path.with_suffix(".json"))
    if card["sha256"] != digest:
        raise ValueError(f"{path}: SHA-256 {digest[:12]}... differs from its card's {card['sha256'][:12]}...")
    layers = _read_layers(path)
    check_network(str(path), layers, card)
    return ValueNet(layers, name=card["name"], path=str(path), sha256=digest, card=card)


def read_card(path: Path) -> dict[str, Any]:
    """The card of a value file, with every field present and of its type."""
    if not path.is_file():
        raise ValueError(f"{path}: no such file (a value file needs its card beside it)")
    if path.stat().st_size > MAX_BYTES:
        raise ValueError(f"{path}: larger than a card may be ({MAX_BYTES} bytes)")
    try:
        card = json.loads(path.read_text())
    except (ValueError, UnicodeDecodeError, RecursionError) as e:
        raise ValueError(f"{path}: not a JSON card ({type(e).__name__}: {e})") from None
    if not isinstance(card, dict):
        raise ValueError(f"{path}: a {type(card).__name__}, not a JSON object")
    for key, typ in _CARD_FIELDS.items():
        if key not in card:
            raise ValueError(f"{path}: card field {key!r} is missing")
        if not isinstance(card[key], typ) or isinstance(card[key], bool):
            raise ValueError(f"{path}: card field {key!r} is {type(card[key]).__name__}, need {typ}")
    if card["format"] != FORMAT:
        raise ValueError(f"{path}: format {card['format']!r}, need {FORMAT!r}")
    if card["feature_version"] != FEATURE_VERSION:
        raise ValueError(
            f"{path}: features version {card['feature_version']}, "
            f"this Tonk RL computes version {FEATURE_VERSION}"
        )
    return card


def _read_layers(path: Path) -> list[tuple[np.ndarray, np.ndarray]]:
    # every array's size is checked from its header before it is decompressed; no pickle
    data = load_npz(path, member_limit=MAX_BYTES, file_limit=MAX_BYTES)
    k = sum(1 for f in data if f.startswith("w") and f[1:].isdigit())
    missing = [f"{c}{i}" for i in range(max(k, 1)) for c in "wb" if f"{c}{i}" not in data]
    if missing:
        raise ValueError(f"{path}: not a value .npz file (missing array(s): {', '.join(missing)})")
    return [(data[f"w{i}"], data[f"b{i}"]) for i in range(k)]


def check_network(
    name: str, layers: Sequence[tuple[np.ndarray, np.ndarray]], card: Mapping[str, Any]
) -> None:
    """Raise ``ValueError`` naming ``name`` unless ``layers`` is a finite MLP from the features to 1 float."""
    n = card["num_players"]
    if not 2 <= n <= 6:
        raise ValueError(f"{name}: num_players {n} in its card; need 2..6")
    prev = feature_size(n)
    for i, (w, b) in enumerate(layers):
        if w.dtype.kind != "f" or b.dtype.kind != "f" or w.ndim != 2 or b.ndim != 1:
            raise ValueError(
                f"{name}: layer {i} is {w.dtype} {w.shape} / {b.dtype} {b.shape}; need float 2-D / 1-D"
            )
        if w.shape[0] != prev or b.shape[0] != w.shape[1]:
            raise ValueError(f"{name}: layer {i} takes {w.shape[0]} inputs with bias {b.shape}; need {prev}")
        if not (np.isfinite(w).all() and np.isfinite(b).all()):
            raise ValueError(f"{name}: layer {i} has a NaN or infinite weight")
        prev = w.shape[1]
    if prev != 1:
        raise ValueError(f"{name}: the network gives {prev} outputs; a value gives 1")


def save_value(
    path: Path, layers: Sequence[tuple[np.ndarray, np.ndarray]], card: Mapping[str, Any]
) -> dict[str, Any]:
    """Write ``path`` (.npz) and its card (.json, completed with file, sha256, format); return the card."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    arrays: dict[str, np.ndarray] = {}
    for i, (w, b) in enumerate(layers):
        arrays[f"w{i}"] = np.asarray(w, dtype=np.float32)
        arrays[f"b{i}"] = np.asarray(b, dtype=np.float32)
    with path.open("wb") as f:
        np.savez(f, **arrays)  # type: ignore[arg-type]
    full = {
        **card,
        "format": FORMAT,
        "file": path.name,
        "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
        "feature_version": FEATURE_VERSION,
    }
    path.with_suffix(".json").write_text(json.dumps(full, indent=1) + "\n")
    return full


__all__ = [
    "BUILTIN_DIR", "DEFAULT_VALUE", "FORMAT", "MAX_BYTES", "ValueNet", "check_network", "load_value",
    "read_card", "resolve", "save_value",
]  # fmt: skip
