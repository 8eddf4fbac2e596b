"""Low-level utilities that evaluation and training share: worker caps, atomic files, the Ray start-up.

``eval`` and ``train`` never import each other, so what both need lives here,
once:

- :data:`MAX_WORKERS`, the most worker processes of one command, and
  :data:`MAX_HANDS`, the most hands of one evaluation or match;
- :func:`write_atomic` and :func:`write_json` (through a temporary file, so a
  reader never sees half a file), :func:`append_jsonl` (one JSON line,
  optionally flushed to disk);
- :func:`start_ray`: start a local Ray instance, or join a cluster at an
  address that answers, with one-line errors (``ray`` is an optional extra,
  imported only here and only when called).
"""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path
from typing import Any

__all__ = [
    "MAX_HANDS",
    "MAX_WORKERS",
    "append_jsonl",
    "check_address",
    "start_ray",
    "write_atomic",
    "write_json",
]

#: Worker processes at most (each is a process: more than this is a typo, not a machine).
MAX_WORKERS = 256
#: The most hands one evaluation or match plays (about a day of the slowest agents' play).
MAX_HANDS = 10_000_000


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through ``path.tmp`` and a rename, so a reader never sees half."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def write_json(
    path: Path,
    data: Any,
    *,
    indent: int | None = 1,
    separators: tuple[str, str] | None = None,
    end: str = "",
) -> None:
    """Write ``data`` as JSON (``indent`` and ``separators`` as ``json.dumps``), then ``end``, atomically."""
    write_atomic(path, json.dumps(data, indent=indent, separators=separators) + end)


def append_jsonl(path: Path, row: Any, *, compact: bool = False, sync: bool = False) -> str:
    """Append ``row`` as one JSON line to ``path`` (flushed and fsynced when ``sync``); return the line."""
    line = json.dumps(row, separators=(",", ":")) if compact else json.dumps(row)
    with open(path, "a", encoding="utf-8") as f:
        f.write(line + "\n")
        if sync:
            f.flush()
            os.fsync(f.fileno())
    return line


def check_address(address: str | None, setting: str, timeout: float = 5.0) -> None:
    """Raise ``ValueError`` unless a Ray head answers at ``HOST:PORT`` (``auto`` is left to Ray).

    ``setting`` names where the address came from (``rllib.address``, ``--address``).
    """
    if not address or address == "auto":
        return
    hostport = address.removeprefix("ray://")
    host, _, port = hostport.rpartition(":")
    host = host.strip("[]")
    try:
        with socket.create_connection((host, int(port)), timeout=timeout):
            pass
    except (OSError, ValueError) as e:
        raise ValueError(
            f"cannot reach a Ray cluster at {address} ({e}); start one with `ray start --head` and give the "
            f"address it prints (HOST:6379), or leave {setting} empty for a local Ray"
        ) from None


def start_ray(
    address: str | None,
    num_cpus: int | None,
    *,
    setting: str,
    install_hint: str,
    **options: Any,
) -> bool:
    """Start a local Ray instance (``num_cpus`` CPUs when given) or join the cluster at ``address``.

    Returns True when this call started or joined Ray (the caller shuts it
    down), False when Ray was already initialised in this process (used as
    it is). Without an address a *new* local instance starts, never a cluster
    that ``ray start`` (or a test's ``ray.cluster_utils.Cluster``) runs on
    this machine. ``options`` go to ``ray.init``. A missing install, an
    address that does not answer and a failed start are ``ValueError``\\ s
    with one line each.
    """
    try:
        import ray  # optional: the ray and rllib extras
    except ImportError as e:
        raise ValueError(f"Ray is not installed ({e}); install it with: {install_hint}") from None
    if ray.is_initialized():
        return False
    check_address(address, setting)
    kwargs: dict[str, Any] = {"include_dashboard": False, **options}
    if address:
        kwargs["address"] = address
    else:
        # "local": a new instance; without it ray.init joins a cluster that `ray start` (or a test's
        # ray.cluster_utils.Cluster) runs on this machine, which the address setting did not ask for
        kwargs["address"] = "local"
        if num_cpus:
            kwargs["num_cpus"] = num_cpus
    try:
        ray.init(**kwargs)
    except (ConnectionError, RuntimeError, ValueError) as e:
        where = f"the Ray cluster at {address}" if address else "a local Ray instance"
        raise ValueError(f"cannot start or join {where}: {e}") from None
    return True
