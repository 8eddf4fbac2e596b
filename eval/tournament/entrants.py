"""Entrants: agent specs with their globs expanded, the checkpoint file behind each, and short labels.

A spec whose path holds a glob (``ppo:runs/x/checkpoints/*.zip``) becomes one
spec per matching file, in natural order (``step_200000`` before
``step_1000000``). A checkpoint entrant carries a fingerprint of its file's
content (a replaced file makes new match keys), its training step, its run
and the table size and rules it was trained for.
"""

from __future__ import annotations

import glob
import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agents.checkpoint import read_meta, resolve_checkpoint
from agents.registry import canonical_spec, check_spec, parse_spec
from agents.rllib_agent import resolve_rllib_checkpoint
from tonk_env.engine import TonkRules
from tonk_env.safe_arrays import load_npz

#: agent kinds whose spec names a checkpoint file or folder
PATH_KINDS = ("ppo", "npz", "rllib")


def _natural_key(s: str) -> list[Any]:
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", s)]


def expand_specs(patterns: Sequence[str]) -> list[str]:
    """Specs with globs in their path expanded (``ppo:runs/x/checkpoints/*.zip``), checked, deduplicated."""
    out: list[str] = []
    for pat in patterns:
        sp = parse_spec(pat)
        if sp.name is not None and any(ch in sp.name for ch in "*["):
            paths = sorted(glob.glob(sp.name), key=_natural_key)
            if not paths:
                raise ValueError(f"agent spec {pat!r}: the pattern {sp.name!r} matches no file")
            specs = [canonical_spec(sp.kind, p, sp.params) for p in paths]
        else:
            specs = [pat]
        for s in specs:
            c = check_spec(s)
            sp2 = parse_spec(c)
            if sp2.kind in PATH_KINDS and sp2.name is not None and not Path(sp2.name).exists():
                raise ValueError(f"agent spec {s!r}: no such file or folder {sp2.name!r}")
            if c not in out:
                out.append(c)
    return out


@dataclass
class EntrantInfo:
    """What the tournament knows about an entrant besides its spec."""

    spec: str
    checkpoint: bool
    file: str | None = None
    fingerprint: str = ""
    step: int | None = None
    run: str | None = None
    num_players: int | None = None
    rules_hash: str | None = None


def _npz_meta(spec: str, p: Path) -> dict[str, Any]:
    """The ``meta`` record of a policy ``.npz`` file (empty when it has none)."""
    try:
        data = load_npz(p)  # sizes checked before anything is decompressed
        return json.loads(str(data["meta"])) if "meta" in data else {}
    except (OSError, ValueError, KeyError) as e:
        raise ValueError(f"agent {spec}: not a Tonk policy .npz file ({e})") from None


def entrant_info(spec: str) -> EntrantInfo:
    """The checkpoint file behind a spec (if any): its content fingerprint, step, run and table size."""
    sp = parse_spec(spec)
    if sp.kind not in PATH_KINDS or sp.name is None:
        return EntrantInfo(spec, checkpoint=False)
    p = Path(sp.name)
    if sp.kind == "rllib":  # a checkpoint folder of the RLlib backend: its policy.npz is the agent
        p = resolve_rllib_checkpoint(p) / "policy.npz"
    elif p.is_dir():
        p = resolve_checkpoint(p)
    if not p.is_file():
        raise ValueError(f"agent {spec}: no such file {str(p)!r}")
    fp = hashlib.sha256(p.read_bytes()).hexdigest()[:16]
    meta: dict[str, Any] = {}
    if sp.kind == "ppo" or p.suffix == ".zip":
        # a wrong or outdated checkpoint fails here, before any match is played
        meta = read_meta(p, older=True)
    elif p.suffix == ".npz":
        meta = _npz_meta(spec, p)
    step = meta.get("step")
    if step is None:
        m = re.search(r"step_(\d+)", p.name)
        step = int(m.group(1)) if m else None
    at = p.parent if sp.kind == "rllib" else p  # an RLlib checkpoint is the folder around policy.npz
    run_dir = at.parent.parent if at.parent.name == "checkpoints" else at.parent
    return EntrantInfo(
        spec,
        True,
        str(p),
        fp,
        step,
        run_dir.name or meta.get("run"),
        meta.get("num_players"),
        meta.get("rules_hash"),
    )


def check_entrants(infos: Mapping[str, EntrantInfo], players: int, rules: TonkRules, rules_name: str) -> None:
    """Refuse checkpoints trained for another table size or other rules, before anything is played."""
    for s, info in infos.items():
        if info.num_players is not None and info.num_players != players:
            raise ValueError(
                f"agent {s}: trained for {info.num_players} players; this tournament seats {players}"
            )
        if info.rules_hash is not None and info.rules_hash != rules.hash:
            raise ValueError(
                f"agent {s}: trained with rules hash {info.rules_hash}; "
                f"this tournament plays rules {rules_name} (hash {rules.hash})"
            )


def short_label(spec: str, width: int = 40) -> str:
    """A compact name: checkpoints as ``kind:RUN/FILE``, long specs cut in the middle."""
    try:
        sp = parse_spec(spec)
    except ValueError:
        sp = None
    label = spec
    if sp is not None and sp.kind in PATH_KINDS and sp.name:
        p = Path(sp.name)
        parts = [x for x in p.parts if x != "checkpoints"]
        tail = ("?" + "&".join(f"{k}={v}" for k, v in sp.params.items())) if sp.params else ""
        file = parts[-1].removesuffix(".zip") if parts else ""
        run = parts[-2] if len(parts) > 1 else ""
        room = width - len(sp.kind) - len(file) - len(tail) - 2
        if run and room >= 4:
            run = run if len(run) <= room else run[: room - 1] + "…"
            label = f"{sp.kind}:{run}/{file}{tail}"
        else:
            label = f"{sp.kind}:{file}{tail}"
    if len(label) > width:
        keep = width - 1
        label = label[: keep // 2] + "…" + label[-(keep - keep // 2) :]
    return label
