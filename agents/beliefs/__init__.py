"""Learned opponent models shipped with the package, each with a card, loadable by name.

The folder ``agents/beliefs/`` holds, per model ``NAME``::

    NAME.npz    the network (:class:`~agents.beliefs.model.BeliefModel`: plain arrays and a JSON
                text, read with ``allow_pickle=False``, so it runs no code)
    NAME.json   its card: the data it was trained on, the held-out metrics against the
                hand-written model, the rules hash, the player count, the file's SHA-256
    NAME.md     the card as a page (written from the JSON by ``tonk belief train``)

:func:`load_belief` takes a name (``2p``) or a path to an ``.npz``; a name is
loaded only after the file's SHA-256, player count and rules hash match its
card. Agents take it as a spec parameter: ``search:ismcts?belief=2p``,
``heuristic:expert?belief=2p``. ``TONK_BELIEF_DIR`` points at another folder
(the tests use a temporary one).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from agents.zoo import file_sha256

from .model import FEATURES_VERSION, BeliefModel

__all__ = [
    "BELIEF_ENV", "CARD_FORMAT", "BeliefModel", "belief_dir", "belief_names", "belief_param",
    "check_belief_table", "check_belief_card", "load_belief", "read_belief_card", "render_belief_card",
]  # fmt: skip

BELIEF_ENV = "TONK_BELIEF_DIR"
CARD_FORMAT = "tonk-belief-card/1"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
_FIELDS: dict[str, type] = {
    "format": str,
    "name": str,
    "file": str,
    "sha256": str,
    "num_players": int,
    "rules": str,
    "rules_hash": str,
    "features_version": int,
    "network": dict,
    "data": dict,
    "metrics": dict,
    "training": dict,
    "created": str,
}


def belief_dir() -> Path:
    """The models' folder: ``$TONK_BELIEF_DIR`` when set, else ``agents/beliefs/`` of the package."""
    env = os.environ.get(BELIEF_ENV, "").strip()
    return Path(env) if env else Path(__file__).resolve().parent


def belief_names(folder: Path | None = None) -> list[str]:
    """The names of the model cards in the folder, sorted."""
    folder = folder or belief_dir()
    if not folder.is_dir():
        return []
    return sorted(p.stem for p in folder.glob("*.json") if _NAME.fullmatch(p.stem) and p.is_file())


def check_belief_card(card: Any, where: str) -> dict[str, Any]:
    """Return ``card`` if it is a whole belief card, else ``ValueError`` naming ``where`` and the field."""
    if not isinstance(card, dict):
        raise ValueError(f"{where}: a card is a JSON object, this is {type(card).__name__}")
    for key, tp in _FIELDS.items():
        if key not in card:
            raise ValueError(f"{where}: missing the field {key!r}")
        if isinstance(card[key], bool) or not isinstance(card[key], tp):
            raise ValueError(f"{where}: field {key!r} is {type(card[key]).__name__}, expected {tp.__name__}")
    if card["format"] != CARD_FORMAT:
        raise ValueError(f"{where}: card format {card['format']!r}, expected {CARD_FORMAT!r}")
    if card["file"] != f"{card['name']}.npz":
        raise ValueError(f"{where}: file {card['file']!r} is not {card['name']}.npz")
    return card


def read_belief_card(name: str, folder: Path | None = None) -> dict[str, Any]:
    """The checked card of model ``name``; ``ValueError`` lists the known names when there is none."""
    folder = folder or belief_dir()
    path = folder / f"{name}.json"
    if not _NAME.fullmatch(name) or not path.is_file():
        known = ", ".join(belief_names(folder)) or f"none (the folder {folder} holds no cards)"
        raise ValueError(f"unknown belief model {name!r}; known: {known} (or a path to a .npz file)")
    try:
        card = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as e:
        raise ValueError(f"{path}: not a readable JSON card ({type(e).__name__}: {e})") from None
    check_belief_card(card, str(path))
    if card["name"] != name:
        raise ValueError(f"{path}: the card names {card['name']!r}, its file name says {name!r}")
    return card


def load_belief(ref: str, folder: Path | None = None) -> BeliefModel:
    """The model a name (``2p``, checked against its card) or a path to an ``.npz`` names."""
    ref = ref.strip()
    if ref.endswith(".npz") or "/" in ref or os.sep in ref:
        return BeliefModel.load(ref, name=ref)
    folder = folder or belief_dir()
    card = read_belief_card(ref, folder)
    path = folder / card["file"]
    if not path.is_file():
        raise ValueError(f"belief model {ref!r}: its card names {card['file']}, which is not in {folder}")
    digest = file_sha256(path)
    if digest != card["sha256"]:
        raise ValueError(
            f"belief model {ref!r}: {path} has SHA-256 {digest[:16]}..., "
            f"its card says {card['sha256'][:16]}...; the file was changed after the card was written"
        )
    model = BeliefModel.load(path, name=f"belief model {ref!r}")
    for key in ("num_players", "rules_hash", "features_version"):
        if model.meta.get(key) != card[key]:
            raise ValueError(
                f"belief model {ref!r}: the network's {key} is {model.meta.get(key)!r}, "
                f"its card says {card[key]!r}"
            )
    return model


def belief_param(ref: str, agent: str) -> BeliefModel | None:
    """The model an agent's ``belief=`` parameter names (None when empty); ``ValueError`` in one line."""
    if not ref:
        return None
    try:
        return load_belief(ref)
    except ValueError as e:
        raise ValueError(f"agent {agent!r}: parameter belief={ref!r}: {e}") from None


def check_belief_table(model: BeliefModel | None, num_players: int, rules: Any) -> None:
    """Raise ``ValueError`` if ``model`` was trained for another table size or rules."""
    if model is None:
        return
    if model.num_players != num_players:
        raise ValueError(
            f"{model.name}: trained for {model.num_players} players, used at a {num_players}-player table"
        )
    want = model.meta.get("rules_hash")
    if want is not None and getattr(rules, "hash", want) != want:
        raise ValueError(
            f"{model.name}: trained with rules hash {want}, the table plays rules hash {rules.hash}"
        )


def render_belief_card(card: dict[str, Any]) -> str:
    """The card as a Markdown page (``NAME.md``)."""
    m = card["metrics"]
    d = card["data"]
    tr = card["training"]
    lines = [
        f"# belief model {card['name']}",
        "",
        "A learned opponent model: from one seat's view, the chance that each unseen card is in each "
        "opponent's hand (`search:ismcts?belief="
        + card["name"]
        + "`, `heuristic:expert?belief="
        + card["name"]
        + "`).",
        "",
        "| | |",
        "|---|---|",
        f"| players | {card['num_players']} |",
        f"| rules | {card['rules']} (hash `{card['rules_hash']}`) |",
        f"| features | version {card['features_version']} |",
        f"| network | relu, layers {card['network'].get('sizes')} |",
        f"| file | `{card['file']}` (sha256 `{card['sha256'][:16]}...`) |",
        f"| data | {d.get('train_positions', '?')} training positions from {d.get('hands', '?')} hands, seed "
        f"{d.get('seed', '?')}; agents {', '.join(d.get('agents', []))}; left out of training: "
        f"`{d.get('held_out_style', '?')}` |",
        f"| training | {tr.get('epochs', '?')} epochs, {tr.get('wall_seconds', 0):.0f} s, torch threads "
        f"{tr.get('torch_threads', '?')} |",
        f"| commit | {card.get('commit') or 'unknown'} |",
        f"| card written | {card['created']} |",
        "",
        "## Held-out metrics",
        "",
    ]
    lines += [str(x) for x in m.get("report", [])]
    lines.append("")
    return "\n".join(lines)


__all__ += ["FEATURES_VERSION"]
