"""Tournaments between agents and checkpoints: scheduled duplicate matches, resumable results, ratings.

``tonk tournament`` calls :func:`run_tournament`; a tournament lives in one
folder (``results.jsonl``, ``tournament.json`` and the reports). The modules,
each owning one concept, from the bottom up:

| module | owns |
|---|---|
| ``config`` | :class:`TournamentConfig` (the YAML keys), :func:`load_config`, :func:`default_out` |
| ``entrants`` | spec globs expanded, the checkpoint behind a spec (:class:`EntrantInfo`), short labels |
| ``schedule`` | the tables played: round robin, balanced designs for 3-4 players, gauntlet |
| ``matches`` | a table's seed, key and task, and :func:`play_match` |
| ``backends`` | where matches are played: this machine (:func:`run_local`) or Ray (:func:`run_ray`) |
| ``store`` | the folder: ``results.jsonl`` (append-only, crash-safe), ``tournament.json``, the lock |
| ``standings`` | ratings, totals and the crosstable (:class:`Standing`, :class:`TournamentResult`) |
| ``report`` | the terminal leaderboard, ``leaderboard.md``, the ``.csv`` files, ``ratings.json`` |
| ``plots`` | ``ratings_by_step.png`` and ``crosstable.png`` |
| ``run`` | :func:`run_tournament`: all of the above, in order |

A match's result depends only on the tournament seed, the rules, the table and
the checkpoint files, never on the backend, the number of workers or a resume;
adding an entrant plays only the tables it sits at.
"""

from __future__ import annotations

from .backends import run_backend, run_local, run_ray
from .config import BACKENDS, FORMATS, TournamentConfig, default_out, load_config
from .entrants import PATH_KINDS, EntrantInfo, check_entrants, entrant_info, expand_specs, short_label
from .matches import match_cost, match_key, match_seed, match_task, play_match
from .plots import plot_crosstable, plot_ratings_by_step
from .report import format_leaderboard, format_markdown, print_err, write_reports
from .run import run_tournament
from .schedule import balanced_tables, schedule
from .standings import Standing, TournamentResult, compute_standings
from .store import (
    RESULTS,
    SAVED,
    SAVED_VERSION,
    append_result,
    folder_lock,
    load_saved,
    read_results,
    read_saved,
    repair_results,
    write_json_atomic,
)

__all__ = [
    "BACKENDS", "FORMATS", "PATH_KINDS", "RESULTS", "SAVED", "SAVED_VERSION", "EntrantInfo", "Standing",
    "TournamentConfig", "TournamentResult", "append_result", "balanced_tables", "check_entrants",
    "compute_standings", "default_out", "entrant_info", "expand_specs", "folder_lock", "format_leaderboard",
    "format_markdown", "load_config", "load_saved", "match_cost", "match_key", "match_seed", "match_task",
    "play_match", "plot_crosstable", "plot_ratings_by_step", "print_err", "read_results", "read_saved",
    "repair_results", "run_backend", "run_local", "run_ray", "run_tournament", "schedule", "short_label",
    "write_json_atomic", "write_reports",
]  # fmt: skip
