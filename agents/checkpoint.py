"""Checkpoints: finding a training checkpoint and reading its metadata (no torch needed).

A checkpoint is sb3-contrib's ``.zip`` (``MaskablePPO.save``) with one more
member, ``tonk_meta.json`` (:data:`META_NAME`): the rules (options and hash),
the number of players, the observation layout version and the action table
size. Tournaments read it to label checkpoints by run and step; the
``ppo:PATH`` agent (:mod:`agents.ppo`) reads it with the policy weights.

Writing checkpoints and resuming from them (safely: nothing is unpickled) is
training's business: :mod:`train.sb3.zip_checkpoint`.
"""

from __future__ import annotations

import json
import re
import zipfile
import zlib
from pathlib import Path
from typing import Any

from tonk_env.obs import OBS_VERSION, OLDEST_LOADABLE
from tonk_env.safe_arrays import check_zip_sizes, read_member

__all__ = [
    "FORMAT", "META_NAME", "STEP_NAME", "check_meta", "latest_checkpoint", "read_meta", "resolve_checkpoint",
    "run_checkpoints",
]  # fmt: skip

META_NAME = "tonk_meta.json"
FORMAT = "tonk-ppo-checkpoint/1"


def resolve_checkpoint(path: str | Path) -> Path:
    """A run folder means its ``best.zip`` (else its newest checkpoint); a file is itself."""
    p = Path(path)
    if p.is_dir():
        if (p / "best.zip").is_file():
            return p / "best.zip"
        latest = latest_checkpoint(p)
        if latest is None:
            raise ValueError(f"{p}: a folder without best.zip or checkpoints/*.zip; not a training run")
        return latest
    if not p.exists():
        raise ValueError(f"{p}: no such checkpoint file")
    return p


#: The name of a run's checkpoints: ``checkpoints/step_<N>.zip`` (other files there are ignored).
STEP_NAME = re.compile(r"step_(\d+)\.zip")


def run_checkpoints(run_dir: Path) -> list[tuple[int, Path]]:
    """``(step, file)`` of every ``checkpoints/step_<N>.zip`` of a run, newest first (strays ignored)."""
    found = []
    for f in (run_dir / "checkpoints").glob("step_*.zip"):
        m = STEP_NAME.fullmatch(f.name)
        if m and f.is_file():
            found.append((int(m.group(1)), f))
    return sorted(found, reverse=True)


def latest_checkpoint(run_dir: Path) -> Path | None:
    """The checkpoint with the highest step in ``run_dir/checkpoints``."""
    found = run_checkpoints(run_dir)
    return found[0][1] if found else None


def read_meta(path: Path, older: bool = False) -> dict[str, Any]:
    """Read and check ``tonk_meta.json``; raise ``ValueError`` naming the file and the problem.

    ``older``: also accept an older observation layout (to play the network, not to resume it).
    """
    try:
        with zipfile.ZipFile(path) as z:
            names = set(z.namelist())
            if META_NAME not in names:
                raise ValueError(f"{path}: a zip without {META_NAME}; not a Tonk RL checkpoint")
            check_zip_sizes(z, str(path))
            meta = json.loads(read_member(z, META_NAME, str(path)))
    except zipfile.BadZipFile as e:
        if zipfile.is_zipfile(path):
            raise ValueError(f"{path}: a damaged zip ({e}); not a readable Tonk RL checkpoint") from None
        raise ValueError(f"{path}: not a zip file; not a Tonk RL checkpoint") from None
    except (OSError, EOFError, zlib.error, NotImplementedError) as e:
        raise ValueError(f"{path}: unreadable ({type(e).__name__}: {e})") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ValueError(f"{path}: {META_NAME} is not valid JSON ({e})") from None
    return check_meta(f"{path}: {META_NAME}", meta, FORMAT, older)


def check_meta(label: str, meta: Any, fmt: str, older: bool = False) -> dict[str, Any]:
    """A checkpoint's metadata, checked: an object of format ``fmt`` and this observation layout.

    ``older``: a layout from ``OLDEST_LOADABLE`` on passes too (its network is read
    through :func:`agents.mlp.upgrade_layout`). ``ValueError`` starting with ``label``
    (the file) otherwise; SB3 zips and RLlib folders (:mod:`agents.rllib_agent`) check theirs here.
    """
    if not isinstance(meta, dict):
        raise ValueError(f"{label} holds a {type(meta).__name__}, not an object")
    if meta.get("format") != fmt:
        raise ValueError(f"{label}: checkpoint format {meta.get('format')!r}, expected {fmt!r}")
    version = meta.get("obs_version")
    readable = older and isinstance(version, int) and OLDEST_LOADABLE <= version <= OBS_VERSION
    if version != OBS_VERSION and not readable:
        raise ValueError(
            f"{label}: trained with observation layout version {meta.get('obs_version')}, "
            f"this Tonk RL uses version {OBS_VERSION}; retrain or use a matching release"
        )
    return meta
