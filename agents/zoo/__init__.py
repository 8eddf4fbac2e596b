"""The zoo: trained agents shipped with the package, each with a model card.

The folder ``agents/zoo/`` holds, per agent ``NAME``::

    NAME.npz    the policy network (the ``npz:`` format of :mod:`agents.mlp`: arrays and a JSON
                text, loaded with ``allow_pickle=False``, so it runs no code)
    NAME.json   its model card (:mod:`agents.zoo.card`): config, commit, training time and machine,
                rules hash, layout version, players, evaluation with intervals, best response
    NAME.md     the card as a page, written from the JSON (``tonk zoo card NAME``)

The spec ``zoo:NAME`` (``?deterministic=false`` samples) builds the agent
wherever specs work; it loads only after checking that the file's SHA-256,
players, rules hash and observation layout version match its card. The
environment variable ``TONK_ZOO_DIR`` points the zoo at another folder (the
tests use a temporary one). ``tonk zoo add RUN_DIR --name NAME`` adds or
refreshes an entry from a training run; ``tonk zoo card NAME --exploit
RUN`` records a best response's margin.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agents.mlp import MLPPolicy, parse_bool_param
from tonk_env.obs import OBS_VERSION, OLDEST_LOADABLE

from .card import FORMAT, check_card, headline, render_markdown

__all__ = [
    "FORMAT", "NAME", "ZOO_ENV", "card_path", "file_sha256", "find_entry", "load_zoo_agent", "read_card",
    "write_card", "write_entry", "zoo_dir", "zoo_listing", "zoo_names",
]  # fmt: skip

#: The environment variable that moves the zoo to another folder.
ZOO_ENV = "TONK_ZOO_DIR"
#: What a zoo name may be: it names files in the zoo folder and sits in spec strings.
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")


def zoo_dir() -> Path:
    """The zoo folder: ``$TONK_ZOO_DIR`` when set, else ``agents/zoo/`` of the installed package."""
    env = os.environ.get(ZOO_ENV, "").strip()
    return Path(env) if env else Path(__file__).resolve().parent


def check_name(name: str) -> str:
    """Return ``name`` if it is a valid zoo name, else raise ``ValueError`` saying what is allowed."""
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise ValueError(
            f"zoo name {name!r} is invalid; allowed: 1-64 letters, digits, '_' or '-', "
            "starting with a letter or digit"
        )
    return name


def card_path(name: str, folder: Path | None = None) -> Path:
    """``<zoo>/<name>.json``."""
    return (folder or zoo_dir()) / f"{check_name(name)}.json"


def zoo_names(folder: Path | None = None) -> list[str]:
    """The names of the cards in the zoo folder, sorted (an absent folder is an empty zoo)."""
    folder = folder or zoo_dir()
    if not folder.is_dir():
        return []
    return sorted(p.stem for p in folder.glob("*.json") if NAME.fullmatch(p.stem) and p.is_file())


def read_card(name: str, folder: Path | None = None) -> dict[str, Any]:
    """The checked card of ``name``; ``ValueError`` lists the available names when there is none."""
    folder = folder or zoo_dir()
    path = card_path(name, folder)
    if not path.is_file():
        names = zoo_names(folder)
        have = ", ".join(f"zoo:{n}" for n in names) if names else f"none (the zoo folder {folder} is empty)"
        raise ValueError(f"unknown zoo agent 'zoo:{name}'; available: {have}")
    try:
        card = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as e:
        raise ValueError(f"{path}: not a readable JSON card ({type(e).__name__}: {e})") from None
    check_card(card, str(path))
    if card["name"] != name:
        raise ValueError(f"{path}: the card names {card['name']!r}, its file name says {name!r}")
    return card


def zoo_listing(folder: Path | None = None) -> list[tuple[str, str]]:
    """``(name, headline)`` of every card in the zoo (a broken card's line says what is wrong)."""
    out = []
    for name in zoo_names(folder):
        try:
            out.append((name, headline(read_card(name, folder))))
        except ValueError as e:
            out.append((name, f"BROKEN: {e}"))
    return out


def file_sha256(path: Path) -> str:
    """The SHA-256 of a file's bytes, in hex."""
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def check_fit(card: Mapping[str, Any], meta: Mapping[str, Any], where: str) -> None:
    """Raise ``ValueError`` unless a network's metadata agree with its card and this Tonk RL."""
    if not OLDEST_LOADABLE <= card["obs_version"] <= OBS_VERSION:
        raise ValueError(
            f"{where}: its card says observation layout version {card['obs_version']}, "
            f"this Tonk RL reads versions {OLDEST_LOADABLE} to {OBS_VERSION}; "
            "refresh the entry (tonk zoo add)"
        )
    saved = {**meta, "obs_version": meta.get("obs_version_saved", meta.get("obs_version"))}
    for key in ("num_players", "rules_hash", "obs_version"):
        if saved.get(key) != card[key]:
            raise ValueError(
                f"{where}: the network's {key} is {saved.get(key)!r}, its card says {card[key]!r}"
            )


def load_zoo_agent(
    name: str, seed: int | None = None, deterministic: Any = True, folder: Path | None = None
) -> MLPPolicy:
    """The ``zoo:NAME`` agent, checked against its card (file hash, players, rules hash, layout)."""
    folder = folder or zoo_dir()
    card = read_card(name, folder)
    path = folder / card["file"]
    if not path.is_file():
        raise ValueError(f"zoo:{name}: its card names {card['file']}, which is not in {folder}")
    digest = file_sha256(path)
    if digest != card["sha256"]:
        raise ValueError(
            f"zoo:{name}: {path} has SHA-256 {digest[:16]}..., its card says {card['sha256'][:16]}...; "
            "the file was changed after the card was written (refresh it with tonk zoo add)"
        )
    det = parse_bool_param(deterministic, "deterministic", f"zoo:{name}")
    policy = MLPPolicy.load_npz(path, deterministic=det, seed=seed, name=f"zoo:{name}")
    check_fit(card, policy.meta, f"zoo:{name}")
    # Copies of one zoo file hold equal weights: a vectorised training env may batch them
    # (train.sb3.dummy_vec).
    policy.batch_key = ("zoo", digest)
    return policy


def find_entry(num_players: int, rules_hash: str, folder: Path | None = None) -> str | None:
    """The first zoo name (sorted) whose card fits this table size and rules, or None."""
    for name in zoo_names(folder):
        try:
            card = read_card(name, folder)
        except ValueError:
            continue
        if card["num_players"] == num_players and card["rules_hash"] == rules_hash:
            return name
    return None


def _write_atomic(path: Path, data: bytes) -> None:
    """Write ``path`` through a temporary file in its folder, so a reader never sees half a file."""
    with tempfile.NamedTemporaryFile(dir=path.parent, prefix=f".{path.name}.", delete=False) as f:
        f.write(data)
        tmp = Path(f.name)
    tmp.chmod(0o644)  # a shipped file: readable by all, like the rest of the package
    os.replace(tmp, path)


def write_card(card: dict[str, Any], folder: Path | None = None) -> Path:
    """Check ``card`` and write it with its Markdown page; returns the JSON's path."""
    folder = folder or zoo_dir()
    path = card_path(card.get("name", ""), folder)
    check_card(card, f"card {card.get('name')!r}")
    _write_atomic(path, (json.dumps(card, indent=1) + "\n").encode())
    _write_atomic(path.with_suffix(".md"), render_markdown(card).encode())
    return path


def write_entry(name: str, policy: MLPPolicy, card: dict[str, Any], folder: Path | None = None) -> Path:
    """Write ``<name>.npz`` from ``policy`` and its card (``sha256`` and ``file`` filled in here)."""
    folder = folder or zoo_dir()
    check_name(name)
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder, prefix=".zoo-") as tmp:
        staged = Path(tmp) / f"{name}.npz"
        policy.save_npz(staged)
        staged.chmod(0o644)
        card = {**card, "name": name, "file": f"{name}.npz", "sha256": file_sha256(staged)}
        check_card(card, f"card {name!r}")
        os.replace(staged, folder / f"{name}.npz")
    return write_card(card, folder)
