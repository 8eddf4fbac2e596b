"""Tournaments between agents and checkpoints: scheduled duplicate matches, resumable results, ratings.

A tournament lives in one folder:

- ``tournament.json``: the settings, the entrants (globs expanded), the
  schedule of tables and the timing of each run. ``tonk tournament --resume
  DIR`` reads it back.
- ``results.jsonl``: one line per finished match, appended (flushed and
  fsynced) as each match completes. A killed run loses only the matches in
  flight; a torn last line is cut off before new lines are appended; lines
  are deduplicated by match key when read, so no match is ever counted twice.
- ``ratings.json``, ``leaderboard.md``, ``leaderboard.csv``,
  ``crosstable.csv`` and the plots ``ratings_by_step.png`` and
  ``crosstable.png``, rewritten at the end of every run.

Matches
-------

A match is one :func:`eval.duplicate.evaluate` call over a *table* of
distinct entrants (2 for ``players: 2``; K for K players), specs in sorted
order, ``workers=1``. Its seed comes from the tournament seed, the number of
players, the rules hash and the table (never from the order matches are
played in), so a match's result is the same on any backend, with any number
of workers, before or after a resume. Its *key* adds the hands and a
fingerprint of every checkpoint file at the table: if a checkpoint file is
replaced, its matches are played again.

Schedules
---------

- ``round-robin``, 2 players: every pair once.
- ``round-robin``, K = 3..4 players: every K-subset of the entrants (each
  pair then meets equally often); when there are more than ``max_tables``
  subsets, a greedy balanced design: tables are added, keeping the tables
  already scheduled, until every pair has met ``ceil(max_tables * C(K,2) /
  C(N,2))`` times.
- ``gauntlet``: every entrant against the ``fixed`` set: with 2 players one
  match against each fixed agent; with K players every (K-1)-subset of the
  fixed set joins it.

Adding an entrant adds only the tables it sits at; the other matches are
found in ``results.jsonl`` and not played again.
"""

from __future__ import annotations

import contextlib
import csv
import glob
import hashlib
import itertools
import json
import math
import os
import re
import socket
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from .report import _clean

FORMATS = ("round-robin", "gauntlet")
BACKENDS = ("local", "ray")
RESULTS = "results.jsonl"
SAVED = "tournament.json"
SAVED_VERSION = 1
PATH_KINDS = ("ppo", "npz")


# --- configuration ------------------------------------------------------------------------------


@dataclass
class TournamentConfig:
    """What a tournament plays; the YAML keys of ``tonk tournament CONFIG.yaml``."""

    entrants: list[str] = field(default_factory=list)
    hands: int = 200
    players: int = 2
    format: str = "round-robin"
    fixed: list[str] = field(default_factory=list)
    rules: str = "standard"
    rule_options: dict[str, Any] = field(default_factory=dict)
    seed: int = 0
    out: str | None = None
    workers: int = 1
    backend: str = "local"
    address: str | None = None
    bootstrap: int = 1000
    anchor: str | None = "auto"
    max_tables: int = 1000

    @classmethod
    def from_dict(cls, data: dict[str, Any], where: str = "tournament config") -> TournamentConfig:
        """Build and check a config; an unknown key is an error naming it."""
        if not isinstance(data, dict):
            raise ValueError(f"{where}: expected a mapping of keys, got {type(data).__name__}")
        known = [f for f in cls.__dataclass_fields__]
        for k in data:
            if k not in known:
                raise ValueError(f"{where}: unknown key {k!r}; known keys: {', '.join(known)}")
        cfg = cls(**data)
        cfg.check(where)
        return cfg

    def check(self, where: str = "tournament config") -> None:
        """Raise ``ValueError`` naming the first bad value."""

        def need(ok: bool, key: str, what: str) -> None:
            if not ok:
                raise ValueError(f"{where}: {key} must be {what}, got {getattr(self, key)!r}")

        def is_int(x: Any) -> bool:
            return isinstance(x, int) and not isinstance(x, bool)

        if isinstance(self.entrants, str):
            self.entrants = [self.entrants]
        if isinstance(self.fixed, str):
            self.fixed = [self.fixed]
        need(
            isinstance(self.entrants, list) and all(isinstance(s, str) and s.strip() for s in self.entrants),
            "entrants",
            "a list of agent specs or globs",
        )
        need(
            isinstance(self.fixed, list) and all(isinstance(s, str) and s.strip() for s in self.fixed),
            "fixed",
            "a list of agent specs or globs",
        )
        need(is_int(self.hands) and self.hands >= 1, "hands", "a positive int")
        need(is_int(self.players) and 2 <= self.players <= 4, "players", "2, 3 or 4")
        need(self.format in FORMATS, "format", " or ".join(FORMATS))
        need(isinstance(self.rules, str), "rules", "a rules preset name")
        need(isinstance(self.rule_options, dict), "rule_options", "a mapping of rules options")
        need(is_int(self.seed), "seed", "an int")
        need(self.out is None or isinstance(self.out, str), "out", "a folder")
        need(is_int(self.workers) and self.workers >= 1, "workers", "a positive int")
        need(self.backend in BACKENDS, "backend", " or ".join(BACKENDS))
        need(self.address is None or isinstance(self.address, str), "address", "a Ray address (HOST:PORT)")
        need(is_int(self.bootstrap) and self.bootstrap >= 0, "bootstrap", "an int >= 0 (0: no intervals)")
        need(self.anchor is None or isinstance(self.anchor, str), "anchor", "an entrant's spec, auto or null")
        need(is_int(self.max_tables) and self.max_tables >= 1, "max_tables", "a positive int")
        if self.format == "round-robin" and self.fixed:
            raise ValueError(f"{where}: `fixed` is for format gauntlet; a round robin plays every entrant")
        if self.format == "gauntlet" and not self.fixed:
            raise ValueError(f"{where}: format gauntlet needs `fixed`, the agents every entrant plays")
        if not self.entrants:
            raise ValueError(f"{where}: no entrants")

    def make_rules(self):  # noqa: ANN201
        """The :class:`TonkRules` of the tournament."""
        from tonk_env.engine import make_rules

        return make_rules(self.rules, **self.rule_options)

    @property
    def rules_name(self) -> str:
        """The preset plus its changed options, as the reports show it."""
        return self.rules + "".join(f" --set {k}={v}" for k, v in self.rule_options.items())


def load_config(path: str | Path) -> TournamentConfig:
    """Read a tournament YAML file."""
    import yaml

    p = Path(path)
    if not p.is_file():
        raise ValueError(f"{p}: no such config file")
    try:
        data = yaml.safe_load(p.read_text()) or {}
    except yaml.YAMLError as e:
        raise ValueError(f"{p}: not valid YAML ({e})") from None
    return TournamentConfig.from_dict(data, where=str(p))


# --- entrants -----------------------------------------------------------------------------------


def _natural_key(s: str) -> list[Any]:
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", s)]


def expand_specs(patterns: Sequence[str]) -> list[str]:
    """Specs with globs in their path expanded (``ppo:runs/x/checkpoints/*.zip``), checked, deduplicated."""
    from agents.registry import canonical_spec, check_spec, parse_spec

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


def entrant_info(spec: str) -> EntrantInfo:
    """The checkpoint file behind a spec (if any): its content fingerprint, step, run and table size."""
    from agents.registry import parse_spec

    sp = parse_spec(spec)
    if sp.kind not in PATH_KINDS or sp.name is None:
        return EntrantInfo(spec, checkpoint=False)
    p = Path(sp.name)
    if p.is_dir():
        from train.checkpoint import resolve_checkpoint

        p = resolve_checkpoint(p)
    if not p.is_file():
        raise ValueError(f"agent {spec}: no such file {str(p)!r}")
    fp = hashlib.sha256(p.read_bytes()).hexdigest()[:16]
    meta: dict[str, Any] = {}
    if sp.kind == "ppo" or p.suffix == ".zip":
        from train.checkpoint import read_meta

        meta = read_meta(p)  # a wrong or outdated checkpoint fails here, before any match is played
    elif p.suffix == ".npz":
        import numpy as np

        try:
            with np.load(p, allow_pickle=False) as data:
                meta = json.loads(str(data["meta"])) if "meta" in data.files else {}
        except (OSError, ValueError, KeyError) as e:
            raise ValueError(f"agent {spec}: not a Tonk policy .npz file ({e})") from None
    step = meta.get("step")
    if step is None:
        m = re.search(r"step_(\d+)", p.name)
        step = int(m.group(1)) if m else None
    run_dir = p.parent.parent if p.parent.name == "checkpoints" else p.parent
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


# --- the schedule -------------------------------------------------------------------------------


def schedule(
    entrants: Sequence[str],
    players: int,
    fmt: str = "round-robin",
    fixed: Sequence[str] = (),
    max_tables: int = 1000,
    previous: Sequence[Sequence[str]] = (),
) -> list[tuple[str, ...]]:
    """The tables (sorted spec tuples) of a tournament, in a fixed order."""
    if fmt == "gauntlet":
        fixed = list(dict.fromkeys(fixed))
        challengers = [e for e in entrants if e not in fixed]
        if len(fixed) < players - 1:
            raise ValueError(
                f"a {players}-player gauntlet needs at least {players - 1} fixed agents, got {len(fixed)}"
            )
        if not challengers:
            raise ValueError("the gauntlet has no entrant outside the fixed set")
        tables = [
            tuple(sorted((e, *opp)))
            for e in challengers
            for opp in itertools.combinations(fixed, players - 1)
        ]
        return list(dict.fromkeys(tables))
    if fmt != "round-robin":
        raise ValueError(f"unknown format {fmt!r}; known: {', '.join(FORMATS)}")
    if len(entrants) < players:
        raise ValueError(
            f"a {players}-player round robin needs at least {players} entrants, got {len(entrants)}"
        )
    if math.comb(len(entrants), players) <= max_tables:
        return [tuple(sorted(t)) for t in itertools.combinations(entrants, players)]
    return balanced_tables(entrants, players, max_tables, previous)


def balanced_tables(
    entrants: Sequence[str], players: int, max_tables: int, previous: Sequence[Sequence[str]] = ()
) -> list[tuple[str, ...]]:
    """A greedy design of tables of ``players`` where every pair meets about equally often.

    Starts from the ``previous`` tables whose agents are all entrants (so a
    resumed or extended tournament keeps its tables), then adds tables around
    the pair that met least until every pair met ``lambda`` times.
    """
    n = len(entrants)
    pos = {e: i for i, e in enumerate(entrants)}
    lam = max(1, math.ceil(max_tables * math.comb(players, 2) / math.comb(n, 2)))
    count = [[0] * n for _ in range(n)]
    seats = [0] * n
    tables: list[tuple[str, ...]] = []
    seen: set[tuple[str, ...]] = set()

    def add(t: tuple[str, ...]) -> None:
        tables.append(t)
        seen.add(t)
        for a, b in itertools.combinations([pos[x] for x in t], 2):
            count[a][b] += 1
            count[b][a] += 1
        for x in t:
            seats[pos[x]] += 1

    for t in previous:
        tt = tuple(sorted(t))
        if len(tt) == players and all(x in pos for x in tt) and tt not in seen:
            add(tt)
    while True:
        a, b = min(itertools.combinations(range(n), 2), key=lambda p: (count[p[0]][p[1]], p))
        if count[a][b] >= lam:
            break
        # complete the table around (a, b) with the agents that met its members least
        best: tuple[str, ...] | None = None
        members = [a, b]
        while len(members) < players:
            cands = sorted(
                (x for x in range(n) if x not in members),
                key=lambda x: (sum(count[x][y] for y in members), seats[x], x),
            )
            for x in cands:
                trial = tuple(sorted(entrants[i] for i in (*members, x)))
                if len(members) + 1 < players or trial not in seen:
                    members.append(x)
                    break
            else:
                break
        if len(members) == players:
            best = tuple(sorted(entrants[i] for i in members))
        if best is None or best in seen:
            # every completion of this pair is already a table: fall back to any unused table with the pair
            rest = [x for x in range(n) if x not in (a, b)]
            for extra in itertools.combinations(rest, players - 2):
                t = tuple(sorted(entrants[i] for i in (a, b, *extra)))
                if t not in seen:
                    best = t
                    break
            else:
                count[a][b] = count[b][a] = lam  # the pair cannot meet more often: give up on it
                continue
        add(best)
    return tables


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


# --- playing a match (local process or Ray task) ------------------------------------------------


def play_match(task: dict[str, Any]) -> dict[str, Any]:
    """Play one match (``evaluate`` with ``workers=1``) and return its ``results.jsonl`` record."""
    from eval.duplicate import evaluate

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
    }


def run_local(
    tasks: Sequence[dict[str, Any]], workers: int, on_done: Callable[[dict[str, Any]], None]
) -> None:
    """Play tasks here: in this process (1 worker) or a ``multiprocessing`` pool, one match a task."""
    if workers <= 1 or len(tasks) <= 1:
        for t in tasks:
            on_done(play_match(t))
        return
    import multiprocessing as mp

    ctx = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")
    with ctx.Pool(min(workers, len(tasks))) as pool:
        for rec in pool.imap_unordered(play_match, tasks):
            on_done(rec)


def run_ray(
    tasks: Sequence[dict[str, Any]],
    address: str | None,
    workers: int,
    on_done: Callable[[dict[str, Any]], None],
) -> None:
    """Play tasks as Ray tasks (one CPU each) on the cluster at ``address``.

    Without an address, a local Ray with ``workers`` CPUs is started for the run.

    An already initialised Ray (``ray.init`` in this process) is used as it is.
    """
    try:
        import ray
    except ImportError:
        raise ValueError(
            "the ray backend needs Ray: pip install 'tonk-rl[ray]' (or pip install 'ray>=2.9')"
        ) from None
    started = False
    if not ray.is_initialized():
        import logging

        kwargs: dict[str, Any] = {"logging_level": logging.WARNING}
        if address:
            ray.init(address=address, **kwargs)
        else:
            ray.init(num_cpus=workers, include_dashboard=False, **kwargs)
        started = True
    try:
        remote = ray.remote(num_cpus=1, max_retries=2)(play_match)
        pending = [remote.remote(t) for t in tasks]
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            for ref in done:
                on_done(ray.get(ref))
    finally:
        if started:
            ray.shutdown()


# --- results.jsonl ------------------------------------------------------------------------------


def read_results(path: str | Path) -> tuple[dict[str, dict[str, Any]], int]:
    """Records by key (the first of duplicate keys wins) and the number of unreadable lines skipped."""
    p = Path(path)
    out: dict[str, dict[str, Any]] = {}
    bad = 0
    if not p.is_file():
        return out, 0
    with p.open("rb") as f:
        for raw in f:
            try:
                rec = json.loads(raw)
                key = rec["key"]
            except (json.JSONDecodeError, UnicodeDecodeError, KeyError, TypeError):
                bad += 1
                continue
            out.setdefault(key, rec)
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
    line = json.dumps(_clean(record), separators=(",", ":"))
    with open(path, "ab") as f:
        f.write(line.encode() + b"\n")
        f.flush()
        os.fsync(f.fileno())
    return json.loads(line)


@contextlib.contextmanager
def folder_lock(folder: Path) -> Iterator[None]:
    """Hold ``folder/.lock`` so two runs never play into the same tournament at once."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not on POSIX
        yield
        return
    f = open(folder / ".lock", "a")
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


# --- standings ----------------------------------------------------------------------------------


@dataclass
class Standing:
    """One leaderboard line (``ratings.json`` entry)."""

    rank: int
    spec: str
    rating: float
    ci95: tuple[float, float]
    mean_stakes: float
    stakes_ci95: tuple[float, float]
    win_rate: float
    matches: int
    hands: int
    checkpoint: bool
    run: str | None
    step: int | None

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["ci95"] = list(self.ci95)
        d["stakes_ci95"] = list(self.stakes_ci95)
        return _clean(d)


@dataclass
class TournamentResult:
    """The standings, the crosstable and what this run did."""

    folder: Path
    config: TournamentConfig
    names: list[str]
    standings: list[Standing]
    crosstable: list[list[Any]]  # names x names: eval.ratings.Cell or None
    matches_total: int
    matches_played: int
    matches_reused: int
    wall_s: float
    skipped_lines: int = 0
    matches_done: int = 0
    rules_hash: str = ""
    anchor: str | None = None

    @property
    def complete(self) -> bool:
        """Every scheduled match has been played."""
        return self.matches_done == self.matches_total

    def ratings_json(self) -> list[dict[str, Any]]:
        """The ``ratings.json`` list."""
        return [s.to_dict() for s in self.standings]


def compute_standings(
    names: Sequence[str],
    infos: dict[str, EntrantInfo],
    records: Sequence[dict[str, Any]],
    samples: int,
    seed: int,
    anchor: str | None,
) -> tuple[list[Standing], list[list[Any]], str | None]:
    """Ratings, per-entrant totals and the crosstable from match records (in schedule order)."""
    from eval.duplicate import mean_ci
    from eval.ratings import MatchData, crosstable, fit_ratings

    idx = {n: i for i, n in enumerate(names)}
    matches = [MatchData([idx[s] for s in r["table"]], r["group_payoffs"]) for r in records]
    rat = fit_ratings(list(names), matches, samples=samples, seed=seed, anchor=anchor)
    samples_by: list[list[float]] = [[] for _ in names]
    wins = [0.0] * len(names)
    seat_hands = [0] * len(names)
    hands = [0] * len(names)
    nmatch = [0] * len(names)
    for r in records:
        for col, a in enumerate(r["agents"]):
            i = idx[a["spec"]]
            samples_by[i].extend(g[col] for g in r["group_payoffs"])
            wins[i] += a["win_rate"] * a["seat_hands"]
            seat_hands[i] += a["seat_hands"]
            hands[i] += a["hands"]
            nmatch[i] += 1
    rows = []
    for i, name in enumerate(names):
        mean, ci = mean_ci(samples_by[i])
        info = infos[name]
        rows.append(
            Standing(
                0,
                name,
                rat.rating[i],
                rat.ci95[i],
                mean,
                ci,
                wins[i] / seat_hands[i] if seat_hands[i] else math.nan,
                nmatch[i],
                hands[i],
                info.checkpoint,
                info.run,
                info.step,
            )
        )
    order = sorted(
        range(len(names)),
        key=lambda i: (-(rows[i].rating if rows[i].rating == rows[i].rating else -math.inf), names[i]),
    )
    standings = []
    for rank, i in enumerate(order, 1):
        rows[i].rank = rank
        standings.append(rows[i])
    return standings, crosstable(len(names), matches), rat.anchor


# --- the run ------------------------------------------------------------------------------------


def default_out(cfg: TournamentConfig, config_path: str | Path | None = None) -> Path:
    """``tournaments/<config name>``, or ``tournaments/t-<settings hash>`` for specs on the command line."""
    if config_path is not None:
        return Path("tournaments") / Path(config_path).stem
    text = json.dumps(
        [
            sorted(cfg.entrants),
            cfg.hands,
            cfg.players,
            cfg.format,
            sorted(cfg.fixed),
            cfg.rules,
            cfg.rule_options,
            cfg.seed,
        ],
        sort_keys=True,
    )
    return Path("tournaments") / ("t-" + hashlib.sha256(text.encode()).hexdigest()[:8])


def load_saved(folder: str | Path) -> TournamentConfig:
    """The config saved in ``folder/tournament.json`` (for ``--resume``)."""
    p = Path(folder) / SAVED
    if not p.is_file():
        raise ValueError(f"{folder}: no {SAVED}; not a tournament folder")
    try:
        saved = json.loads(p.read_text())
    except json.JSONDecodeError as e:
        raise ValueError(f"{p}: not valid JSON ({e})") from None
    cfg = TournamentConfig.from_dict(saved["config"], where=str(p))
    cfg.out = str(folder)
    return cfg


def _write_json_atomic(path: Path, data: Any) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(_clean(data), indent=1) + "\n")
    tmp.replace(path)


_SAME_ON_RESUME = ("hands", "players", "seed")

#: rough thinking time per decision of each kind (ms), to start the slow matches first
_COSTS = {"search": 40.0, "heuristic:expert": 15.0, "ppo": 0.3, "npz": 0.3}


def _cost(spec: str) -> float:
    kind, _, rest = spec.partition(":")
    name = rest.partition("?")[0]
    return _COSTS.get(f"{kind}:{name}", _COSTS.get(kind, 0.05))


def run_tournament(
    cfg: TournamentConfig,
    out: str | Path | None = None,
    progress: bool | Callable[[int, int], None] = False,
    log: Callable[[str], None] | None = None,
    stop_after: int | None = None,
    plots: bool = True,
) -> TournamentResult:
    """Play the matches of ``cfg`` not yet in ``out/results.jsonl``, then rate everyone and write the reports.

    ``progress``: ``True`` for a tqdm bar on stderr, or a callable ``(done, total)``.
    ``stop_after``: play at most this many new matches (then stop as if interrupted; for tests).
    """
    cfg.check()
    log = log or (lambda s: None)
    folder = Path(out or cfg.out or default_out(cfg))
    rules = cfg.make_rules()
    rules.check_players(cfg.players)
    fixed = expand_specs(cfg.fixed) if cfg.fixed else []
    entrants = expand_specs(cfg.entrants)
    names = list(dict.fromkeys([*fixed, *entrants] if cfg.format == "gauntlet" else entrants))
    infos = {s: entrant_info(s) for s in names}
    anchor = cfg.anchor
    if anchor not in (None, "auto"):
        from agents.registry import check_spec

        anchor = check_spec(anchor)
        if anchor not in names:
            raise ValueError(f"anchor {cfg.anchor!r} is not an entrant")
    for s, info in infos.items():
        if info.num_players is not None and info.num_players != cfg.players:
            raise ValueError(
                f"agent {s}: trained for {info.num_players} players; this tournament seats {cfg.players}"
            )
        if info.rules_hash is not None and info.rules_hash != rules.hash:
            raise ValueError(
                f"agent {s}: trained with rules hash {info.rules_hash}; "
                f"this tournament plays rules {cfg.rules_name} (hash {rules.hash})"
            )
    schedule(entrants, cfg.players, cfg.format, fixed, cfg.max_tables)  # errors before a folder is made
    folder.mkdir(parents=True, exist_ok=True)
    with folder_lock(folder):
        saved_path = folder / SAVED
        saved: dict[str, Any] = {}
        if saved_path.is_file():
            try:
                saved = json.loads(saved_path.read_text())
            except json.JSONDecodeError as e:
                raise ValueError(f"{saved_path}: not valid JSON ({e})") from None
            old = saved.get("config", {})
            for k in _SAME_ON_RESUME:
                if k in old and old[k] != getattr(cfg, k):
                    raise ValueError(
                        f"{folder} holds a tournament with {k}={old[k]!r}, not {getattr(cfg, k)!r}; "
                        f"use another --out folder or the same {k}"
                    )
            if saved.get("rules_hash") not in (None, rules.hash):
                raise ValueError(
                    f"{folder} holds a tournament with rules hash {saved['rules_hash']}, not "
                    f"{rules.hash} ({cfg.rules_name}); use another --out folder or the same rules"
                )
        tables = schedule(
            entrants, cfg.players, cfg.format, fixed, cfg.max_tables, previous=saved.get("schedule", ())
        )
        tasks = []
        for t in tables:
            ms = match_seed(cfg.seed, t, cfg.players, rules.hash)
            fps = [infos[s].fingerprint for s in t]
            tasks.append(
                {
                    "key": match_key(t, cfg.players, cfg.hands, ms, rules.hash, fps),
                    "table": list(t),
                    "players": cfg.players,
                    "hands": cfg.hands,
                    "match_seed": ms,
                    "rules": rules,
                    "rules_name": cfg.rules_name,
                    "fingerprints": fps,
                }
            )
        results_path = folder / RESULTS
        cut = repair_results(results_path)
        if cut:
            log(f"{results_path}: cut a torn last line ({cut} bytes) left by an interrupted run")
        done, bad = read_results(results_path)
        pending = [t for t in tasks if t["key"] not in done]
        reused = len(tasks) - len(pending)
        # the slowest matches first, so that no long match starts last (the order changes no result)
        pending.sort(key=lambda t: -sum(_cost(s) for s in t["table"]))
        if stop_after is not None:
            pending = pending[:stop_after]
        now = datetime.now(timezone.utc).isoformat(timespec="seconds")
        cfg_dict = asdict(cfg)
        cfg_dict["out"] = None
        runs = list(saved.get("runs", []))
        state = {
            "format_version": SAVED_VERSION,
            "config": cfg_dict,
            "entrants": entrants,
            "fixed": fixed,
            "rules_name": cfg.rules_name,
            "rules_hash": rules.hash,
            "rules_options": rules.to_dict(),
            "schedule": [list(t) for t in tables],
            "created": saved.get("created", now),
            "updated": now,
            "runs": runs,
        }
        _write_json_atomic(saved_path, state)
        log(
            f"tournament {folder}: {len(names)} agents, {len(tables)} matches of {cfg.hands} hands "
            f"({cfg.players} players, {cfg.format}); {reused} already played, {len(pending)} to play"
            + (
                f" with {cfg.workers} worker(s)"
                if cfg.backend == "local"
                else f" on Ray ({cfg.address or 'local'})"
            )
        )

        bar = None
        tick: Callable[[int, int], None] | None = None
        if progress is True and pending:
            from tqdm import tqdm

            bar = tqdm(
                total=len(tasks),
                initial=reused,
                unit="match",
                desc="tonk tournament",
                leave=False,
                mininterval=0.5,
            )
        elif callable(progress):
            tick = progress
        played = 0

        def on_done(rec: dict[str, Any]) -> None:
            nonlocal played
            rec["backend"] = cfg.backend
            rec["finished_at"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
            done.setdefault(rec["key"], append_result(results_path, rec))
            played += 1
            if bar is not None:
                bar.update(1)
            if tick is not None:
                tick(reused + played, len(tasks))

        t0 = time.perf_counter()
        try:
            if pending:
                if cfg.backend == "ray":
                    run_ray(pending, cfg.address, cfg.workers, on_done)
                else:
                    run_local(pending, cfg.workers, on_done)
        finally:
            if bar is not None:
                bar.close()
            wall = time.perf_counter() - t0
            if played:
                runs.append(
                    {
                        "started": now,
                        "wall_s": round(wall, 3),
                        "matches_played": played,
                        "workers": cfg.workers,
                        "backend": cfg.backend,
                        "match_seconds": round(
                            sum(done[t["key"]].get("elapsed_s", 0.0) for t in pending if t["key"] in done), 3
                        ),
                    }
                )
                _write_json_atomic(saved_path, state)

        records = [done[t["key"]] for t in tasks if t["key"] in done]
        standings, cross, anchor = compute_standings(names, infos, records, cfg.bootstrap, cfg.seed, anchor)
        result = TournamentResult(
            folder,
            cfg,
            names,
            standings,
            cross,
            len(tasks),
            played,
            reused,
            wall,
            bad,
            matches_done=len(records),
            rules_hash=rules.hash,
            anchor=anchor,
        )
        write_reports(result)
        if plots:
            from eval.tournament_plots import plot_crosstable, plot_ratings_by_step

            plot_ratings_by_step(result, folder / "ratings_by_step.png")
            plot_crosstable(result, folder / "crosstable.png")
        return result


# --- reports ------------------------------------------------------------------------------------


def _f(x: float, fmt: str) -> str:
    return "nan" if x is None or x != x else format(x, fmt)


def short_label(spec: str, width: int = 40) -> str:
    """A compact name: checkpoints as ``kind:RUN/FILE``, long specs cut in the middle."""
    from agents.registry import parse_spec

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


def _header(res: TournamentResult) -> str:
    cfg = res.config
    anchor = f"{res.anchor} = 1000" if res.anchor else "mean = 1500"
    return (
        f"{cfg.players}-player {cfg.format}, {len(res.names)} agents, "
        f"{res.matches_total} matches x {cfg.hands} "
        f"hands (duplicate deals), rules {cfg.rules_name} ({res.rules_hash}), seed {cfg.seed}; "
        f"ratings: Elo scale, {anchor}, 95% bootstrap interval ({cfg.bootstrap} resamples)"
    )


def format_leaderboard(res: TournamentResult, crosstable: bool = True) -> str:
    """The standings (and the crosstable) as plain text for the terminal."""
    labels = {s.spec: short_label(s.spec) for s in res.standings}
    w = max(len("agent"), *(len(v) for v in labels.values()))
    cols = (
        f"{'#':>3s}  {'agent':{w}s}  {'rating':>6s}  {'95% CI':>13s}  {'stakes/hand':>11s}  {'95% CI':>17s}  "
        f"{'win%':>5s}  {'matches':>7s}"
    )
    lines = [_header(res), "", cols, "-" * len(cols)]
    for s in res.standings:
        ci = f"[{_f(s.ci95[0], '.0f')}, {_f(s.ci95[1], '.0f')}]"
        sci = f"[{_f(s.stakes_ci95[0], '+.3f')}, {_f(s.stakes_ci95[1], '+.3f')}]"
        lines.append(
            f"{s.rank:3d}  {labels[s.spec]:{w}s}  {_f(s.rating, '6.0f')}  {ci:>13s}  "
            f"{_f(s.mean_stakes, '+.3f'):>11s}  {sci:>17s}  {_f(100 * s.win_rate, '5.1f')}  {s.matches:7d}"
        )
    if crosstable and len(res.standings) <= 12:
        lines += ["", "crosstable: mean stakes per hand of the row agent against the column agent"]
        order = [res.names.index(s.spec) for s in res.standings]
        head = f"{'':>3s}  {'':{w}s}  " + "  ".join(f"{s.rank:>6d}" for s in res.standings)
        lines.append(head)
        for s, i in zip(res.standings, order, strict=True):
            cells = []
            for j in order:
                c = res.crosstable[i][j]
                cells.append(f"{'':>6s}" if c is None else f"{_f(c.mean, '+6.2f')}")
            lines.append(f"{s.rank:3d}  {labels[s.spec]:{w}s}  " + "  ".join(cells))
    if not res.complete:
        lines.append(
            f"\n(incomplete: {res.matches_done} of {res.matches_total} matches played; "
            f"run again or --resume to finish)"
        )
    return "\n".join(lines)


def write_reports(res: TournamentResult) -> None:
    """``ratings.json``, ``leaderboard.md``, ``leaderboard.csv``, ``crosstable.csv``."""
    folder = res.folder
    _write_json_atomic(folder / "ratings.json", res.ratings_json())
    with open(folder / "leaderboard.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(
            [
                "rank",
                "spec",
                "rating",
                "ci95_low",
                "ci95_high",
                "mean_stakes",
                "stakes_ci95_low",
                "stakes_ci95_high",
                "win_rate",
                "matches",
                "hands",
                "run",
                "step",
            ]
        )
        for s in res.standings:
            w.writerow(
                [
                    s.rank,
                    s.spec,
                    _num(s.rating),
                    _num(s.ci95[0]),
                    _num(s.ci95[1]),
                    _num(s.mean_stakes),
                    _num(s.stakes_ci95[0]),
                    _num(s.stakes_ci95[1]),
                    _num(s.win_rate),
                    s.matches,
                    s.hands,
                    s.run or "",
                    "" if s.step is None else s.step,
                ]
            )
    with open(folder / "crosstable.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["row", "column", "mean_stakes", "ci95_low", "ci95_high", "deal_groups"])
        for i, a in enumerate(res.names):
            for j, b in enumerate(res.names):
                c = res.crosstable[i][j]
                if c is not None:
                    w.writerow([a, b, _num(c.mean), _num(c.ci95[0]), _num(c.ci95[1]), c.groups])
    (folder / "leaderboard.md").write_text(format_markdown(res))


def _num(x: float | None) -> str:
    return "" if x is None or x != x else repr(float(x))


def format_markdown(res: TournamentResult) -> str:
    """``leaderboard.md``: the standings, then the crosstable."""
    lines = [
        f"# Tournament `{res.folder.name}`",
        "",
        _header(res) + ".",
        "",
        "| # | agent | rating | 95% CI | stakes/hand | 95% CI | win % | matches | hands |",
        "|--:|:--|--:|:--:|--:|:--:|--:|--:|--:|",
    ]
    for s in res.standings:
        lines.append(
            f"| {s.rank} | `{s.spec}` | {_f(s.rating, '.0f')} | {_f(s.ci95[0], '.0f')} – "
            f"{_f(s.ci95[1], '.0f')} | {_f(s.mean_stakes, '+.3f')} | {_f(s.stakes_ci95[0], '+.3f')} – "
            f"{_f(s.stakes_ci95[1], '+.3f')} | {_f(100 * s.win_rate, '.1f')} | {s.matches} | {s.hands} |"
        )
    order = [res.names.index(s.spec) for s in res.standings]
    lines += [
        "",
        "## Crosstable",
        "",
        "Mean stakes per hand of the row agent against the column agent (95% interval over deal groups; "
        "with more than 2 players: half the payoff difference, over the tables where both sat).",
        "",
        "| | " + " | ".join(f"{s.rank}" for s in res.standings) + " |",
        "|:--|" + "--:|" * len(order),
    ]
    for s, i in zip(res.standings, order, strict=True):
        cells = []
        for j in order:
            c = res.crosstable[i][j]
            cells.append(
                ""
                if c is None
                else f"{_f(c.mean, '+.3f')} [{_f(c.ci95[0], '+.2f')}, {_f(c.ci95[1], '+.2f')}]"
            )
        lines.append(f"| {s.rank}. `{short_label(s.spec)}` | " + " | ".join(cells) + " |")
    if not res.complete:
        lines += ["", "**Incomplete**: not every scheduled match has been played yet."]
    return "\n".join(lines) + "\n"


def print_err(msg: str) -> None:
    """Log lines on stderr (the leaderboard goes to stdout)."""
    print(msg, file=sys.stderr, flush=True)


__all__ = [
    "EntrantInfo", "Standing", "TournamentConfig", "TournamentResult", "append_result", "balanced_tables",
    "compute_standings", "entrant_info", "expand_specs", "format_leaderboard", "load_config", "load_saved",
    "match_key", "match_seed", "play_match", "read_results", "repair_results", "run_local", "run_ray",
    "run_tournament", "schedule", "short_label",
]  # fmt: skip
