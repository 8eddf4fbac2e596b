"""Matches: the seed, key and task of a table, and playing one (in any process, or as a Ray task).

A match is one :func:`eval.duplicate.evaluate` call over a *table* of
distinct entrants (2 for ``players: 2``; K for K players), specs in sorted
order, ``workers=1``. Its seed comes from the tournament seed, the number of
players, the rules hash and the table (never from the order matches are
played in), so a match's result is the same on any backend, with any number
of workers, before or after a resume. Its *key* adds the hands and a
fingerprint of every checkpoint file at the table: if a checkpoint file is
replaced, its matches are played again.

A *task* is the plain dict a worker needs to play a match (it is pickled to
pool processes and Ray workers); :func:`play_match` turns it into the
``results.jsonl`` record (its ``sample_hands``, the records of the match's
first hands, go to the tournament's ``hands/`` folder instead).
"""

from __future__ import annotations

import hashlib
import os
import re
import socket
import time
from collections.abc import Sequence
from typing import Any

from eval.duplicate import evaluate
from tonk_env.engine import TonkRules

#: rough thinking time per decision of each kind (ms), to start the slow matches first
_COSTS = {"search": 40.0, "heuristic:expert": 15.0, "ppo": 0.3, "npz": 0.3}


def match_seed(seed: int, table: Sequence[str], players: int, rules_hash: str) -> int:
    """The deal seed of a table: from the tournament seed and the sorted specs only."""
    text = f"match:{seed}:{players}:{rules_hash}:" + "|".join(sorted(table))
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little") >> 1


def match_key(
    table: Sequence[str], players: int, hands: int, seed: int, rules_hash: str, fingerprints: Sequence[str]
) -> str:
    """The identity of a match: same key, same result."""
    fps = ",".join(fingerprints)
    return f"{'|'.join(table)}#players={players}#hands={hands}#seed={seed}#rules={rules_hash}#files={fps}"


def match_task(
    table: Sequence[str],
    players: int,
    hands: int,
    seed: int,
    rules: TonkRules,
    rules_name: str,
    fingerprints: Sequence[str],
    sample_hands: int = 0,
    allow_peek: bool = False,
) -> dict[str, Any]:
    """The task of one table in a tournament with seed ``seed``: what :func:`play_match` needs.

    ``sample_hands``: the first hands to record (they change no result, so not the key).
    """
    ms = match_seed(seed, table, players, rules.hash)
    fps = list(fingerprints)
    return {
        "key": match_key(table, players, hands, ms, rules.hash, fps),
        "table": list(table),
        "players": players,
        "hands": hands,
        "match_seed": ms,
        "rules": rules,
        "rules_name": rules_name,
        "fingerprints": fps,
        "sample_hands": sample_hands,
        "allow_peek": allow_peek,
    }


def _spec_cost(spec: str) -> float:
    kind, _, rest = spec.partition(":")
    name = rest.partition("?")[0]
    return _COSTS.get(f"{kind}:{name}", _COSTS.get(kind, 0.05))


def match_cost(task: dict[str, Any]) -> float:
    """A rough relative cost of a task's match (the thinking time of its agents), to play slow ones first."""
    return sum(_spec_cost(s) for s in task["table"])


def play_match(task: dict[str, Any]) -> dict[str, Any]:
    """Play one match (``evaluate`` with ``workers=1``) and return its ``results.jsonl`` record."""
    t0 = time.perf_counter()
    try:
        res = evaluate(
            list(task["table"]),
            hands=task["hands"],
            players=task["players"],
            rules=task["rules"],
            seed=task["match_seed"],
            workers=1,
            rules_name=task["rules_name"],
            record=task.get("sample_hands", 0),
            allow_peek=bool(task.get("allow_peek", False)),
        )
    except ValueError as e:
        raise ValueError(f"match {' vs '.join(task['table'])}: {e}") from None
    return {
        "key": task["key"],
        "table": list(task["table"]),
        "players": task["players"],
        "hands": task["hands"],
        "match_seed": task["match_seed"],
        "rules_hash": task["rules"].hash,
        "fingerprints": list(task["fingerprints"]),
        "agents": [
            {
                "spec": a.spec,
                "mean_stakes": a.mean_stakes,
                "ci95": list(a.ci95),
                "win_rate": a.win_rate,
                "hands": a.hands,
                "seat_hands": a.seat_hands,
            }
            for a in res.agents
        ],
        "deal_groups": res.groups,
        "hands_played": res.hands,
        "group_payoffs": res.group_payoffs,
        "elapsed_s": time.perf_counter() - t0,
        "host": socket.gethostname(),
        "pid": os.getpid(),
        "sample_hands": res.records,
    }


def hands_file_name(table: Sequence[str], key: str) -> str:
    """The file in a tournament's ``hands/`` folder holding a match's sample hands (a safe, unique name)."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", "__vs__".join(table)).strip("._")[:120]
    return f"{slug}__{hashlib.blake2b(key.encode(), digest_size=4).hexdigest()}.jsonl"
