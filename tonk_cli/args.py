"""Argument types of the ``tonk`` command line: counts with ranges, seeds, ASCII-only numbers.

``type=int`` would take ``--hands ١٠٠`` (Unicode digits) and
``--hands 99999999999999999999999`` (then run until killed). These types
accept ASCII digits only and say the allowed range when a value is outside it.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from pathlib import Path

from tonk_env.engine.numbers import MAX_SEED, parse_float, parse_int
from tonk_env.runtime import MAX_HANDS, MAX_WORKERS


def count(low: int, high: int) -> Callable[[str], int]:
    """An argparse type: an integer ``low..high`` in ASCII digits."""

    def parse(text: str) -> int:
        try:
            v = parse_int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{_shown(text)} is not an integer; allowed: {low:,}..{high:,}"
            ) from None
        if not low <= v <= high:
            raise argparse.ArgumentTypeError(f"{_shown(text)} is out of range; allowed: {low:,}..{high:,}")
        return v

    parse.__name__ = "count"  # argparse names the type in its messages
    return parse


def number(low: float, high: float) -> Callable[[str], float]:
    """An argparse type: a number ``low..high`` in ASCII digits."""

    def parse(text: str) -> float:
        try:
            v = parse_float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{_shown(text)} is not a number; allowed: {low:g}..{high:g}"
            ) from None
        if not low <= v <= high:
            raise argparse.ArgumentTypeError(f"{_shown(text)} is out of range; allowed: {low:g}..{high:g}")
        return v

    parse.__name__ = "number"
    return parse


#: ``--seed``: the one rule for seeds in every command (never negative).
seed = count(0, MAX_SEED)
#: ``--hands`` of evaluations and matches.
hands = count(1, MAX_HANDS)
#: ``--workers``.
workers = count(1, MAX_WORKERS)
#: ``--players``.
players = count(2, 6)


def mix(items: list[str] | None) -> dict[str, float] | None:
    """Repeated ``--mix SPEC=WEIGHT`` items as a mix of agents (None when none is given: the default)."""
    if not items:
        return None
    out: dict[str, float] = {}
    for item in items:
        spec, sep, weight = item.rpartition("=")
        try:
            w = parse_float(weight)
        except ValueError:
            w = -1.0
        if not sep or not spec or not w > 0:
            raise ValueError(
                f"--mix {_shown(item)}: need SPEC=WEIGHT with a positive weight, e.g. heuristic:expert=2"
            )
        out[spec] = w
    return out


def npz_out(text: str) -> Path:
    """The ``--out`` file of a command writing a network (``ValueError`` unless a ``.npz`` in a folder)."""
    out = Path(text)
    if out.suffix != ".npz":
        raise ValueError(f"--out {text}: the file must end in .npz")
    if not out.parent.is_dir():
        raise ValueError(f"--out {text}: no folder {out.parent}")
    return out


def _folder_problem(path: Path) -> str | None:
    """Why ``path`` cannot be made or written to (it is made if missing), or ``None``."""
    if path.exists() and not path.is_dir():
        return f"{path} is a file, not a folder"
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        return f"cannot make the folder {path} ({e.strerror or e})"
    if not os.access(path, os.W_OK | os.X_OK):
        return f"the folder {path} is not writable"
    return None


def writable_folder(folder: str, flag: str) -> Path:
    """``folder``, made if missing and checked writable before any work (``ValueError`` naming ``flag``).

    For the commands that write their result only at the end of minutes of work: a path that
    cannot be written is refused before the work starts, not after it.
    """
    path = Path(folder)
    problem = _folder_problem(path)
    if problem:
        raise ValueError(f"{flag} {folder}: {problem}")
    return path


def writable_file(text: str, flag: str = "--out") -> Path:
    """The output file ``text``: not a folder, its folder made and writable (see :func:`writable_folder`)."""
    out = Path(text)
    problem = "a folder, not a file" if out.is_dir() else _folder_problem(out.parent)
    if problem:
        raise ValueError(f"{flag} {text}: {problem}")
    return out


def _shown(text: str) -> str:
    return repr(text if len(text) <= 30 else text[:27] + "...")
