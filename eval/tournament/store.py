"""The tournament folder: ``results.jsonl`` (append-only, crash-safe), ``tournament.json`` and its lock.

- ``tournament.json``: the settings, the entrants (globs expanded), the
  schedule of tables and the timing of each run. ``tonk tournament --resume
  DIR`` reads it back.
- ``results.jsonl``: one line per finished match, appended (flushed and
  fsynced) as each match completes. A killed run loses only the matches in
  flight; a torn last line is cut off before new lines are appended; lines
  are deduplicated by match key when read, so no match is ever counted twice.
- ``.lock``: held by the run playing into the folder.

:func:`check_folder` refuses, before anything is played, a folder whose paths
are in the way (the folder a file, a file of :data:`FILES` a folder); a
results line without what the standings read is reported and skipped (its
match is played again); a ``tournament.json`` that a run cannot read is named.

The reports (``ratings.json``, ``leaderboard.*``, ``crosstable.*``, the plots)
are written next to them by :mod:`eval.tournament.report` and
:mod:`eval.tournament.plots`.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from eval.report import _clean
from tonk_env.runtime import append_jsonl, write_json

from .config import TournamentConfig

RESULTS = "results.jsonl"
SAVED = "tournament.json"
SAVED_VERSION = 1
LOCK = ".lock"
#: the folder of each match's sample hands (JSON lines of hand records, for the replay viewer)
HANDS = "hands"
#: Every file a run writes into the folder (the store's, then the reports'); each must be a file if present.
FILES = (
    RESULTS,
    SAVED,
    LOCK,
    "ratings.json",
    "leaderboard.csv",
    "leaderboard.md",
    "crosstable.csv",
    "crosstable.png",
    "ratings_by_step.png",
)


def check_folder(folder: Path) -> None:
    """Refuse, before anything is played, a folder that cannot be one or whose files are not files.

    Makes the folder if it does not exist yet; a ``ValueError`` names the path
    that is in the way (a file where the folder goes, a folder where
    ``results.jsonl`` or a report goes, an unwritable place).
    """
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"{folder}: not a folder (a tournament keeps its results and reports in one)")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ValueError(f"{folder}: cannot make the tournament folder ({e.strerror or e})") from None
    if (folder / HANDS).exists() and not (folder / HANDS).is_dir():
        raise ValueError(f"{folder / HANDS}: not a folder (a tournament writes its sample hands there)")
    for name in FILES:
        for path in (folder / name, folder / (name + ".tmp")):
            if path.exists() and not path.is_file():
                raise ValueError(
                    f"{path}: not a file (a tournament writes this file); move it away and run again"
                )


def record_problem(rec: Any) -> str | None:
    """What is wrong with a results line's record (None if it has what the standings read)."""
    if not isinstance(rec, dict):
        return f"a JSON {type(rec).__name__}, not an object"
    missing = [k for k in ("key", "table", "agents", "group_payoffs") if k not in rec]
    if missing:
        return "missing " + ", ".join(missing)
    table, agents, groups = rec["table"], rec["agents"], rec["group_payoffs"]
    if (
        not isinstance(rec["key"], str)
        or not isinstance(table, list)
        or not all(isinstance(x, str) for x in table)
    ):
        return "key or table of the wrong type"
    fields = ("spec", "win_rate", "seat_hands", "hands")
    if not isinstance(agents, list) or not all(
        isinstance(a, dict) and all(f in a for f in fields) for a in agents
    ):
        return "agents without " + ", ".join(fields)
    if not isinstance(groups, list) or not all(isinstance(g, list) and len(g) == len(table) for g in groups):
        return "group_payoffs not one list per deal group with a payoff per seat"
    return None


def read_results(path: str | Path, warn: Any = None) -> tuple[dict[str, dict[str, Any]], int]:
    """Records by key (the first of duplicate keys wins) and the number of unreadable lines skipped.

    A line that is not JSON, or whose record lacks what the standings read,
    is skipped (its match is played again) and reported through ``warn(text)``.
    """
    p = Path(path)
    out: dict[str, dict[str, Any]] = {}
    bad = 0
    if p.exists() and not p.is_file():
        raise ValueError(f"{p}: not a file (a tournament folder keeps its results in this file)")
    if not p.is_file():
        return out, 0
    with p.open("rb") as f:
        for n, raw in enumerate(f, 1):
            try:
                rec = json.loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError) as e:
                problem: str | None = f"not JSON ({e})"
            else:
                problem = record_problem(rec)
            if problem is not None:
                bad += 1
                if warn is not None:
                    warn(f"{p}:{n}: skipped ({problem}); its match is played again")
                continue
            out.setdefault(rec["key"], rec)
    return out, bad


def repair_results(path: str | Path) -> int:
    """Cut a torn last line (a run killed while writing); return the bytes removed."""
    p = Path(path)
    if not p.is_file():
        return 0
    with p.open("r+b") as f:
        size = f.seek(0, os.SEEK_END)
        if size == 0:
            return 0
        f.seek(size - 1)
        if f.read(1) == b"\n":
            return 0
        # find the last newline
        pos = size
        block = 4096
        keep = 0
        while pos > 0:
            start = max(0, pos - block)
            f.seek(start)
            chunk = f.read(pos - start)
            i = chunk.rfind(b"\n")
            if i >= 0:
                keep = start + i + 1
                break
            pos = start
        f.truncate(keep)
        f.flush()
        os.fsync(f.fileno())
        return size - keep


def append_result(path: str | Path, record: dict[str, Any]) -> dict[str, Any]:
    """Append one record as a JSON line, flushed and fsynced; return it as it will be read back."""
    return json.loads(append_jsonl(Path(path), _clean(record), compact=True, sync=True))


@contextlib.contextmanager
def folder_lock(folder: Path) -> Iterator[None]:
    """Hold ``folder/.lock`` so two runs never play into the same tournament at once."""
    try:
        import fcntl  # POSIX only
    except ImportError:  # pragma: no cover - not on POSIX
        yield
        return
    f = open(folder / LOCK, "a")
    try:
        try:
            # a POSIX record lock: released when this process dies (SIGKILL too) and, unlike flock,
            # not inherited by the forked pool workers, which may outlive a killed parent for a moment
            fcntl.lockf(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise ValueError(f"{folder}: another tournament run is playing into this folder") from None
        yield
    finally:
        f.close()


def write_json_atomic(path: Path, data: Any) -> None:
    """Write ``data`` as indented JSON (NaN as null) through a temporary file, so a reader never sees half."""
    write_json(path, _clean(data), end="\n")


def read_saved(folder: str | Path) -> dict[str, Any]:
    """The contents of ``folder/tournament.json``, checked; empty when the folder holds none yet."""
    p = Path(folder) / SAVED
    if not p.is_file():
        return {}
    try:
        saved = json.loads(p.read_text(encoding="utf-8"))
    except (ValueError, RecursionError) as e:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise ValueError(f"{p}: not valid JSON ({type(e).__name__}: {e})") from None
    problem = saved_problem(saved)
    if problem is not None:
        raise ValueError(f"{p}: {problem}; not a {SAVED} written by tonk tournament")
    return saved


def saved_problem(saved: Any) -> str | None:
    """What is wrong with the contents of a ``tournament.json`` (None if a run can read them)."""
    if not isinstance(saved, dict):
        return f"a JSON {type(saved).__name__}, not an object"
    if not isinstance(saved.get("config", {}), dict):
        return "its config is not an object"
    tables = saved.get("schedule", [])
    if not isinstance(tables, list) or not all(
        isinstance(t, list) and all(isinstance(s, str) for s in t) for t in tables
    ):
        return "its schedule is not a list of tables (lists of specs)"
    if not isinstance(saved.get("runs", []), list):
        return "its runs are not a list"
    if not isinstance(saved.get("rules_hash", ""), str | None):
        return "its rules_hash is not a string"
    return None


def load_saved(folder: str | Path) -> TournamentConfig:
    """The config saved in ``folder/tournament.json`` (for ``--resume``)."""
    p = Path(folder) / SAVED
    if not p.is_file():
        raise ValueError(f"{folder}: no {SAVED}; not a tournament folder")
    saved = read_saved(folder)
    if "config" not in saved:
        raise ValueError(f"{p}: no config in it; not a {SAVED} written by tonk tournament")
    cfg = TournamentConfig.from_dict(saved["config"], where=str(p))
    cfg.out = str(folder)
    return cfg
