"""The run: play the matches of a tournament not yet in its folder, then rate everyone and write the reports.

:func:`run_tournament` expands the entrants, checks them against the rules and
table size, takes the folder's lock, schedules the tables (keeping those of a
previous run), plays the missing matches on the configured backend (each
result appended to ``results.jsonl`` as it finishes, its first
``sample_hands`` hands written to ``hands/<table>__<id>.jsonl``), records the run's timing
in ``tournament.json``, and writes the standings, reports and plots.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from agents.peek import refuse_peek
from agents.registry import check_spec
from eval.report import write_hands
from tonk_env.engine import TonkRules
from tonk_env.progress import progress_bar

from .backends import run_backend
from .config import TournamentConfig, default_out
from .entrants import EntrantInfo, check_entrants, entrant_info, expand_specs
from .matches import hands_file_name, match_cost, match_task
from .plots import plot_crosstable, plot_ratings_by_step
from .report import write_reports
from .schedule import schedule
from .standings import TournamentResult, compute_standings
from .store import (
    HANDS,
    RESULTS,
    SAVED,
    SAVED_VERSION,
    append_result,
    check_folder,
    folder_lock,
    read_results,
    read_saved,
    repair_results,
    write_json_atomic,
)

#: the settings a tournament folder keeps for good (the rules too, by their hash)
_SAME_ON_RESUME = ("hands", "players", "seed")

Progress = bool | Callable[[int, int], None]


@dataclass
class _Field:
    """The expanded entrants of a tournament and what is known about each."""

    entrants: list[str]
    fixed: list[str]
    names: list[str]
    infos: dict[str, EntrantInfo]
    anchor: str | None


def _field(cfg: TournamentConfig, rules: TonkRules) -> _Field:
    """Expand and check the entrants (and the anchor) of ``cfg``, before any folder is made."""
    fixed = expand_specs(cfg.fixed) if cfg.fixed else []
    entrants = expand_specs(cfg.entrants)
    names = list(dict.fromkeys([*fixed, *entrants] if cfg.format == "gauntlet" else entrants))
    if not cfg.allow_peek:
        refuse_peek(names, "a tournament", "--allow-peek (config key allow_peek: true)")
    infos = {s: entrant_info(s) for s in names}
    anchor = cfg.anchor
    if anchor not in (None, "auto"):
        anchor = check_spec(anchor)
        if anchor not in names:
            raise ValueError(f"anchor {cfg.anchor!r} is not an entrant")
    check_entrants(infos, cfg.players, rules, cfg.rules_name)
    schedule(entrants, cfg.players, cfg.format, fixed, cfg.max_tables)  # errors before a folder is made
    return _Field(entrants, fixed, names, infos, anchor)


def _tasks(
    tables: Sequence[tuple[str, ...]], cfg: TournamentConfig, rules: TonkRules, fld: _Field
) -> list[dict[str, Any]]:
    """The match task of every table, in schedule order."""
    return [
        match_task(
            t,
            cfg.players,
            cfg.hands,
            cfg.seed,
            rules,
            cfg.rules_name,
            [fld.infos[s].fingerprint for s in t],
            cfg.sample_hands,
            cfg.allow_peek,
        )
        for t in tables
    ]


def _check_resume(folder: Path, saved: dict[str, Any], cfg: TournamentConfig, rules: TonkRules) -> None:
    """Refuse to play into a folder whose tournament has other hands, players, seed or rules."""
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


def _saved_state(
    cfg: TournamentConfig,
    rules: TonkRules,
    fld: _Field,
    tables: Sequence[tuple[str, ...]],
    saved: dict[str, Any],
    now: str,
) -> dict[str, Any]:
    """The ``tournament.json`` contents: settings, entrants, schedule and the runs so far."""
    cfg_dict = asdict(cfg)
    cfg_dict["out"] = None
    return {
        "format_version": SAVED_VERSION,
        "config": cfg_dict,
        "entrants": fld.entrants,
        "fixed": fld.fixed,
        "rules_name": cfg.rules_name,
        "rules_hash": rules.hash,
        "rules_options": rules.to_dict(),
        "schedule": [list(t) for t in tables],
        "created": saved.get("created", now),
        "updated": now,
        "runs": list(saved.get("runs", [])),
    }


class _Recorder:
    """The ``on_done`` of a backend: appends each finished match to ``results.jsonl`` and shows progress."""

    def __init__(
        self,
        path: Path,
        done: dict[str, dict[str, Any]],
        backend: str,
        progress: Progress,
        reused: int,
        total: int,
        to_play: int,
    ) -> None:
        self.path = path
        self.done = done
        self.backend = backend
        self.reused = reused
        self.total = total
        self.played = 0
        self.bar: Any = None
        self.tick: Callable[[int, int], None] | None = None
        if progress is True and to_play:
            self.bar = progress_bar(
                total=total,
                initial=reused,
                unit="match",
                desc="tonk tournament",
                leave=False,
                mininterval=0.5,
            )
        elif callable(progress):
            self.tick = progress

    def __call__(self, rec: dict[str, Any]) -> None:
        """Record one finished match (its sample hands to ``hands/``, the rest to ``results.jsonl``)."""
        hands = rec.pop("sample_hands", None)
        rec["backend"] = self.backend
        rec["finished_at"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
        self.done.setdefault(rec["key"], append_result(self.path, rec))
        if hands:  # after the result, so that a full disk here loses no match
            write_hands(self.path.parent / HANDS / hands_file_name(rec["table"], rec["key"]), hands)
        self.played += 1
        if self.bar is not None:
            self.bar.update(1)
        if self.tick is not None:
            self.tick(self.reused + self.played, self.total)

    def close(self) -> None:
        """Close the progress bar."""
        if self.bar is not None:
            self.bar.close()


def _run_entry(
    started: str,
    wall: float,
    played: int,
    cfg: TournamentConfig,
    pending: Sequence[dict[str, Any]],
    done: dict[str, dict[str, Any]],
) -> dict[str, Any]:
    """The ``tournament.json`` record of one run: when, how long, how many matches and where."""
    return {
        "started": started,
        "wall_s": round(wall, 3),
        "matches_played": played,
        "workers": cfg.workers,
        "backend": cfg.backend,
        "match_seconds": round(
            sum(done[t["key"]].get("elapsed_s", 0.0) for t in pending if t["key"] in done), 3
        ),
    }


def _plan_line(
    folder: Path, cfg: TournamentConfig, names: int, tables: int, reused: int, pending: int
) -> str:
    """The log line that says what this run will play."""
    local = f" with {min(cfg.workers, max(pending, 1))} worker(s)"  # a process per pending match at most
    where = local if cfg.backend == "local" else f" on Ray ({cfg.address or 'local'})"
    return (
        f"tournament {folder}: {names} agents, {tables} matches of {cfg.hands} hands "
        f"({cfg.players} players, {cfg.format}); {reused} already played, {pending} to play" + where
    )


def _pending(
    results_path: Path, tasks: list[dict[str, Any]], stop_after: int | None, log: Callable[[str], None]
) -> tuple[dict[str, dict[str, Any]], int, list[dict[str, Any]]]:
    """Results already played (a torn last line repaired), their bad-line count, and the tasks to play."""
    cut = repair_results(results_path)
    if cut:
        log(f"{results_path}: cut a torn last line ({cut} bytes) left by an interrupted run")
    done, bad = read_results(results_path, warn=log)
    pending = [t for t in tasks if t["key"] not in done]
    # the slowest matches first, so that no long match starts last (the order changes no result)
    pending.sort(key=lambda t: -match_cost(t))
    if stop_after is not None:
        pending = pending[:stop_after]
    return done, bad, pending


def run_tournament(
    cfg: TournamentConfig,
    out: str | Path | None = None,
    progress: Progress = False,
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
    fld = _field(cfg, rules)
    check_folder(folder)
    with folder_lock(folder):
        saved = read_saved(folder)
        _check_resume(folder, saved, cfg, rules)
        tables = schedule(
            fld.entrants,
            cfg.players,
            cfg.format,
            fld.fixed,
            cfg.max_tables,
            previous=saved.get("schedule", ()),
        )
        tasks = _tasks(tables, cfg, rules, fld)
        results_path = folder / RESULTS
        done, bad, pending = _pending(results_path, tasks, stop_after, log)
        reused = sum(t["key"] in done for t in tasks)
        now = datetime.now(timezone.utc).isoformat(timespec="seconds")
        state = _saved_state(cfg, rules, fld, tables, saved, now)
        write_json_atomic(folder / SAVED, state)
        log(_plan_line(folder, cfg, len(fld.names), len(tables), reused, len(pending)))
        recorder = _Recorder(results_path, done, cfg.backend, progress, reused, len(tasks), len(pending))
        t0 = time.perf_counter()
        try:
            run_backend(cfg.backend, pending, cfg.workers, cfg.address, recorder)
        finally:
            recorder.close()
            wall = time.perf_counter() - t0
            if recorder.played:
                state["runs"].append(_run_entry(now, wall, recorder.played, cfg, pending, done))
                write_json_atomic(folder / SAVED, state)
        records = [done[t["key"]] for t in tasks if t["key"] in done]
        standings, cross, anchor = compute_standings(
            fld.names, fld.infos, records, cfg.bootstrap, cfg.seed, fld.anchor
        )
        result = TournamentResult(
            folder,
            cfg,
            fld.names,
            standings,
            cross,
            len(tasks),
            recorder.played,
            reused,
            wall,
            bad,
            matches_done=len(records),
            rules_hash=rules.hash,
            anchor=anchor,
        )
        write_reports(result)
        if plots:
            plot_ratings_by_step(result, folder / "ratings_by_step.png")
            plot_crosstable(result, folder / "crosstable.png")
        return result
