"""Generations of policy improvement with the network playing its own playouts (``tonk improve``).

Each generation, from the current network:

1. **positions** of every decision type, from hands against ``positions.opponents``
   (:mod:`train.improve.positions`);
2. **values** of the network's choice and ``k - 1`` Gumbel top-k candidates by
   playouts the network plays for every seat, in worlds dealt by the opponent
   model (:mod:`train.improve.playouts`);
3. **targets** pi' = softmax(log pi + Q/tau), tau set by a KL budget
   (:mod:`train.improve.targets`);
4. **fit** of the next network to pi' and of a value network to the playout
   returns (:mod:`train.improve.fit`);
5. **acceptance**: the new network replaces the current one only if it beats it
   over ``accept.hands`` duplicate hands, or (``accept.rule: record``) only if it
   beats it against ``accept.record``'s opponents, paired on the same deals; every
   generation is also scored against ``accept.record``'s opponents.

The run folder holds ``config.yaml``, ``run.json``, ``gen_000/policy.npz``
(the start), ``gen_NNN/`` (``policy.npz``, ``value.npz``, ``generation.json``)
per generation, ``current.npz`` (the accepted network), ``generations.jsonl``
and ``state.json``. A generation is written whole before ``state.json`` names
it done, so a run killed at any moment (``kill -9``) resumes at the first
generation not done, and, every step being seeded from the run's seed and the
generation's number, ends as the uninterrupted run would. Its playouts, most
of its time, are kept as soon as they are made (``values.npz``, then
``play.json``), so a run stopped after them resumes at the targets and the fit.

Training does not import the evaluation package: whoever starts a run passes
the evaluator (:class:`train.evaluation.Evaluator`; ``tonk improve`` passes
:func:`eval.duplicate.evaluate`).
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
import yaml

from agents.beliefs import belief_param, check_belief_table
from agents.mlp import MLPPolicy, policy_network, read_npz
from tonk_env.engine.actions import ACTION_KINDS, action_kind, action_kind_index
from tonk_env.errors import one_line, read_yaml
from tonk_env.progress import progress_bar
from tonk_env.runtime import append_jsonl, write_atomic, write_json
from tonk_env.safe_arrays import write_sha256_sidecar

from ..evaluation import Evaluator
from ..run_folder import make_run_dir, policy_meta
from .config import ImproveConfig, config_from_dict
from .fit import fit_policy, fit_value, fresh_layers, held_out_rows
from .playouts import CandidateValues, PlayoutStats, value_positions
from .positions import Position, collect_positions
from .targets import KL_SWEEP, held_out_choice_gain, improved_targets

__all__ = ["ImproveReport", "check_table", "format_report", "format_row", "improve", "resume_improve"]


@dataclass
class ImproveReport:
    """A finished (or stopped) run: its folder and one row per generation."""

    run_dir: Path
    rows: list[dict[str, Any]] = field(default_factory=list)

    @property
    def current(self) -> Path:
        """The accepted network's file."""
        return self.run_dir / "current.npz"


def _write_npz(path: Path, save: Callable[[Path], object]) -> None:
    """``save(tmp)`` beside ``path``, then renamed over it: a reader never sees half a file."""
    tmp = path.with_name(path.stem + ".tmp.npz")
    save(tmp)
    tmp.replace(path)


def _save_policy(
    layers: list[tuple[np.ndarray, np.ndarray]], activation: str, meta: dict[str, Any], path: Path
) -> None:
    """Save a policy ``.npz`` atomically, and its ``.sha256`` sidecar naming it."""
    policy = MLPPolicy(layers, activation=activation, meta=meta)
    _write_npz(path, lambda tmp: policy.save_npz(tmp, sidecar=False))
    write_sha256_sidecar(path)


def _save_value(layers: list[tuple[np.ndarray, np.ndarray]], path: Path) -> None:
    """Save the value network's layers (``meta``, ``w0``, ``b0``, ...: no pickle) atomically."""
    arrays: dict[str, Any] = {"meta": np.array('{"kind": "value", "activation": "tanh"}')}
    for i, (w, b) in enumerate(layers):
        arrays[f"w{i}"], arrays[f"b{i}"] = w, b
    _write_npz(path, lambda tmp: np.savez(tmp, **arrays))


def _save_targets(
    path: Path, obs: np.ndarray, masks: np.ndarray, probs: np.ndarray, returns: np.ndarray
) -> None:
    """A generation's positions and targets (read again by the fits of ``fit.window`` generations)."""
    _write_npz(
        path,
        lambda tmp: np.savez_compressed(
            tmp, obs=obs, masks=masks, probs=probs.astype(np.float16), returns=returns
        ),
    )


def _save_values(path: Path, obs: np.ndarray, masks: np.ndarray, vals: CandidateValues) -> None:
    """A generation's positions, their candidates and values (``-1`` pads fewer candidates).

    ``obs`` and ``masks`` are the positions; ``actions`` and ``values`` (positions, most candidates);
    ``halves`` (positions, 2, most candidates) the values over the even and the odd worlds, when
    there were two worlds or more.
    """
    n, k = len(vals.actions), max((len(a) for a in vals.actions), default=0)
    actions = np.full((n, k), -1, np.int16)
    values = np.zeros((n, k), np.float32)
    halves = np.zeros((n, 2, k), np.float32)
    for i, (a, v) in enumerate(zip(vals.actions, vals.values, strict=True)):
        actions[i, : len(a)], values[i, : len(a)] = a, v
        if vals.halves:
            halves[i, :, : len(a)] = vals.halves[i]
    arrays = {"obs": obs, "masks": masks, "actions": actions, "values": values}
    if vals.halves:
        arrays["halves"] = halves
    _write_npz(path, lambda tmp: np.savez_compressed(tmp, **arrays))  # type: ignore[arg-type]


def _load_play(folder: Path) -> tuple[np.ndarray, np.ndarray, CandidateValues, dict[str, Any]] | None:
    """The playouts a stopped run made for this generation (``values.npz``, ``play.json``), or None.

    ``play.json`` is written after ``values.npz``, so its presence means both are whole.
    """
    if not (folder / "play.json").is_file():
        return None
    path = folder / "values.npz"
    try:
        play = json.loads((folder / "play.json").read_text(encoding="utf-8"))
        with np.load(path, allow_pickle=False) as data:
            obs, masks, actions, values = (data[k] for k in ("obs", "masks", "actions", "values"))
            halves = data["halves"] if "halves" in data.files else None
    except (OSError, KeyError, ValueError) as e:
        raise ValueError(f"{path}: cannot read a generation's playouts ({type(e).__name__}: {e})") from None
    keep = [a >= 0 for a in actions]
    vals = CandidateValues(
        [a[k].astype(np.int64) for a, k in zip(actions, keep, strict=True)],
        [v[k].astype(np.float64) for v, k in zip(values, keep, strict=True)],
        None if halves is None else [h[:, k].astype(np.float64) for h, k in zip(halves, keep, strict=True)],
    )
    return obs, masks, vals, play


def _gap_by_kind(vals: CandidateValues) -> dict[str, list[float]] | None:
    """Per decision type of the network's choice: the held-out gap, its standard error and positions."""
    if not vals.halves:
        return None
    gains = vals.held_out_gains()
    kinds = np.array([action_kind(int(a[0])) for a in vals.actions])
    out = {}
    for k in ACTION_KINDS:
        g = gains[kinds == k]
        if len(g):
            out[k] = [round(float(g.mean()), 4), round(float(g.std() / np.sqrt(len(g))), 4), len(g)]
    return out


def _gain_by_kl(
    logits: np.ndarray, masks: np.ndarray, vals: CandidateValues, kl: float, kept: np.ndarray | None
) -> dict[str, list[float]] | None:
    """Per KL budget (the sweep's and the run's): the held-out gain of argmax pi', its s.e., moves changed."""
    if not vals.halves:
        return None
    out = {}
    for k in sorted({*KL_SWEEP, kl}):
        gain, se, changed = held_out_choice_gain(logits, masks, vals, k, kept)
        out[f"{k:g}"] = [round(gain, 4), round(se, 4), round(changed, 4)]
    return out


def _realized_gain(
    layers: list[tuple[np.ndarray, np.ndarray]],
    current: MLPPolicy,
    obs: np.ndarray,
    masks: np.ndarray,
    vals: CandidateValues,
    rows: np.ndarray,
) -> dict[str, float] | None:
    """What the fitted network's moves gain on positions its fit never saw, by their playout values.

    On the rows of this generation that the fit held out, the fitted network's argmax is valued
    against the current network's choice by the candidates' values (all worlds; unbiased there, the
    fit having not read them): the part of the one-step gain that the fit carries to new positions.
    A move outside the candidates has no value and is counted apart (``outside``).
    """
    if not len(rows):
        return None
    new = MLPPolicy(layers, activation=current.activation, deterministic=True)
    moves = np.where(masks[rows] > 0, new.logits(obs[rows]), -np.inf).argmax(axis=1)
    gains, moved, outside = [], 0, 0
    for i, a in zip(rows, moves, strict=True):
        k = vals.index_of(int(i), int(a))
        moved += k != 0
        if k is None:
            outside += 1
        else:
            gains.append(float(vals.values[i][k] - vals.values[i][0]))
    g = np.asarray(gains) if gains else np.zeros(1)
    return {
        "gain": round(float(g.mean()), 4),
        "se": round(float(g.std() / np.sqrt(len(g))), 4),
        "moved": round(moved / len(rows), 4),
        "outside": round(outside / len(rows), 4),
        "positions": len(rows),
    }


def _kept_actions(masks: np.ndarray, kinds: list[str]) -> np.ndarray | None:
    """Per position and action: legal actions of a type not in ``fit.kinds`` (None when all are listed)."""
    if set(kinds) >= set(ACTION_KINDS):
        return None
    listed = np.isin(action_kind_index(np.arange(masks.shape[1])), [ACTION_KINDS.index(k) for k in kinds])
    return (masks > 0) & ~listed[None, :]


def _set_current(run_dir: Path, folder: Path) -> None:
    """Make ``folder``'s policy the run's ``current.npz`` (with its sidecar), atomically."""
    _write_npz(run_dir / "current.npz", lambda tmp: shutil.copyfile(folder / "policy.npz", tmp))
    write_sha256_sidecar(run_dir / "current.npz")


def _window(run_dir: Path, g: int, window: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The positions, masks, targets and returns of generations ``g - window + 1 .. g`` (oldest first)."""
    parts: list[list[np.ndarray]] = [[], [], [], []]
    for k in range(max(1, g - window + 1), g + 1):
        path = run_dir / f"gen_{k:03d}" / "targets.npz"
        try:
            with np.load(path, allow_pickle=False) as data:
                arrays = [data["obs"], data["masks"], data["probs"].astype(np.float32), data["returns"]]
        except (OSError, KeyError, ValueError) as e:
            raise ValueError(
                f"{path}: cannot read a generation's targets ({type(e).__name__}: {e})"
            ) from None
        for part, a in zip(parts, arrays, strict=True):
            part.append(a)
    obs, masks, probs, returns = (np.concatenate(p) for p in parts)
    probs /= probs.sum(axis=1, keepdims=True)  # float16 rounding
    return obs, masks, probs, returns


@contextmanager
def _phase(times: dict[str, float], name: str) -> Iterator[None]:
    t0 = time.perf_counter()
    yield
    times[name] = round(time.perf_counter() - t0, 2)


@contextmanager
def _bar(progress: bool, total: int, desc: str) -> Iterator[Callable[[int], None] | None]:
    """A progress bar's ``update`` over positions while the block runs (None without progress)."""
    if not progress:
        yield None
        return
    bar = progress_bar(total=total, desc=desc, unit="pos", dynamic_ncols=True, leave=False)
    try:
        yield bar.update
    finally:
        bar.close()


def _play_phase(
    cfg: ImproveConfig, g: int, current: MLPPolicy, seed: int, progress: bool, times: dict[str, float]
) -> tuple[list[Position], CandidateValues, PlayoutStats]:
    """A generation's positions and their candidates' playout values."""
    with _phase(times, "positions"), _bar(progress, cfg.positions.count, f"gen {g}: positions") as tick:
        positions = collect_positions(
            current,
            cfg.positions.opponents,
            cfg.make_rules(),
            cfg.players,
            cfg.positions.count,
            seed,
            cfg.workers,
            tick,
        )
    v = cfg.values
    rivals = _playout_opponents(cfg)
    with _phase(times, "values"), _bar(progress, len(positions), f"gen {g}: playouts") as tick:
        vals, stats = value_positions(
            current,
            positions,
            v.candidates,
            v.worlds,
            v.belief,
            seed,
            v.batch,
            cfg.workers,
            tick,
            rivals,
            v.opponents,
        )
    return positions, vals, stats


def _playout_opponents(cfg: ImproveConfig) -> dict[str, MLPPolicy]:
    """The networks ``values.opponents`` names besides ``self``, checked against the table."""
    what, rules = "improve config values.opponents:", cfg.make_rules()
    return {
        spec: policy_network(spec, f"{what} {spec!r}", 0, cfg.players, rules)
        for spec in cfg.values.opponents
        if spec != "self"
    }


def _score_phase(
    cfg: ImproveConfig, new: Path, current: Path, seed: int, evaluate: Evaluator, times: dict[str, float]
) -> tuple[dict[str, Any], bool, dict[str, Any]]:
    """The new network's margin over the current one, whether it is accepted, and its records.

    As the zoo's cards measure it: the new network in one seat, the other agent in every other.
    Under ``accept.rule: record`` the current network plays the records' deals too, and each
    record holds ``current`` (its mean) and ``paired`` (new minus current, paired by deal group).
    """

    def play(policy: Path, opponent: str, hands: int, s: int) -> Any:
        return evaluate(
            [
                f"npz:{policy}",
                *[opponent] * (cfg.players - 1),
            ],  # one seat against the opponent in every other
            hands=hands,
            players=cfg.players,
            rules=cfg.make_rules(),
            seed=s,
            workers=cfg.workers,
            progress=False,
            rules_name=cfg.rules,
        )

    with _phase(times, "accept"):
        margin = _score(play(new, f"npz:{current}", cfg.accept.hands, seed))
    record: dict[str, Any] = {}
    with _phase(times, "record"):
        for spec, hands in cfg.accept.record.items():
            res = play(new, spec, hands, seed + 1)
            record[spec] = _score(res)
            if cfg.accept.rule == "record":  # the same deals and random streams: paired by deal group
                old = play(current, spec, hands, seed + 1)
                record[spec]["current"] = round(old.agents[0].mean_stakes, 4)
                record[spec]["paired"] = _paired(res.group_payoffs, old.group_payoffs)
    if cfg.accept.rule == "record":
        accepted = float(np.mean([r["paired"]["mean"] for r in record.values()])) > 0
    else:
        accepted = margin["mean"] > 0 if cfg.accept.rule == "mean" else margin["ci95"][0] > 0
    return margin, bool(accepted), record


def _score(res: Any) -> dict[str, Any]:
    """The first agent's mean, 95% interval and hands, as a generation's row keeps them."""
    me = res.agents[0]
    return {"mean": round(me.mean_stakes, 4), "ci95": [round(x, 4) for x in me.ci95], "hands": me.hands}


def _paired(new: Any, old: Any) -> dict[str, Any]:
    """The first agent's mean payoff in ``new`` less in ``old`` by deal group, with its 95% interval."""
    d = np.asarray(new, np.float64)[:, 0] - np.asarray(old, np.float64)[:, 0]
    half = 1.96 * float(d.std(ddof=1)) / np.sqrt(len(d)) if len(d) > 1 else float("nan")
    mean = float(d.mean())
    return {"mean": round(mean, 4), "ci95": [round(mean - half, 4), round(mean + half, 4)]}


def _playouts(
    cfg: ImproveConfig, folder: Path, g: int, current: MLPPolicy, seed: int, progress: bool
) -> tuple[np.ndarray, np.ndarray, CandidateValues, dict[str, Any]]:
    """Generation ``g``'s positions, values and ``play.json``: those a stopped run kept, else played.

    Played ones are written at once, so a stop after them resumes at the fit, and read back, so
    the uninterrupted run reads the same (saved) numbers as a resumed one.
    """
    saved = _load_play(folder)
    if saved is not None:
        return saved
    times: dict[str, float] = {}
    positions, vals, stats = _play_phase(cfg, g, current, seed, progress, times)
    folder.mkdir(exist_ok=True)
    obs, masks = np.stack([p.obs for p in positions]), np.stack([p.mask for p in positions])
    _save_values(folder / "values.npz", obs, masks, vals)
    play = {
        "opponents": dict(Counter(p.opponent for p in positions)),
        "stats": dataclasses.asdict(stats),
        "seconds": times,
    }
    write_json(folder / "play.json", play)
    saved = _load_play(folder)
    assert saved is not None
    return saved


def _generation(
    cfg: ImproveConfig,
    run_dir: Path,
    g: int,
    current: MLPPolicy,
    value_layers: list[tuple[np.ndarray, np.ndarray]],
    evaluate: Evaluator,
    progress: bool,
) -> tuple[dict[str, Any], list[tuple[np.ndarray, np.ndarray]]]:
    """Run generation ``g`` from ``current``; write ``gen_NNN/``; return its row and the value layers."""
    seed = (cfg.seed * 1_000_003 + g * 7_919) % 2**31
    folder = run_dir / f"gen_{g:03d}"
    obs, masks, vals, play = _playouts(cfg, folder, g, current, seed, progress)
    stats, times = PlayoutStats(**play["stats"]), dict(play["seconds"])
    with _phase(times, "targets"):
        logits = current.logits(obs)
        kept = _kept_actions(masks, cfg.fit.kinds)
        tg = improved_targets(logits, masks, vals, cfg.fit.kl, kept)
        by_kl = _gain_by_kl(logits, masks, vals, cfg.fit.kl, kept)
    gaps = np.array([v.max() - v[0] for v in vals.values])
    kinds = Counter(action_kind(int(a[0])) for a in vals.actions)
    returns = np.array([v[0] for v in vals.values])  # the network's own move: the value network's target
    f = cfg.fit
    with _phase(times, "fit"):
        _save_targets(folder / "targets.npz", obs, masks, tg.probs, returns)
        gen_obs, gen_masks = obs, masks
        obs, masks, probs, returns = _window(run_dir, g, f.window)
        torch.set_num_threads(1)
        new_layers, pol = fit_policy(
            current.layers_for_export(),
            current.activation,
            obs,
            masks,
            probs,
            f,
            seed,
        )
        value_layers, val = fit_value(value_layers, obs, returns, f, seed)
        held = held_out_rows(len(obs), seed) - (len(obs) - len(gen_obs))  # this generation's rows
        realized = _realized_gain(new_layers, current, gen_obs, gen_masks, vals, held[held >= 0])
    meta = {**policy_meta(cfg.make_rules(), cfg.players), "generation": g}
    _save_policy(new_layers, current.activation, meta, folder / "policy.npz")
    _save_value(value_layers, folder / "value.npz")
    margin, accepted, record = _score_phase(
        cfg, folder / "policy.npz", run_dir / "current.npz", seed, evaluate, times
    )
    row = {
        "generation": g,
        "positions": len(obs),
        "opponents": play["opponents"],
        "kinds": {k: kinds.get(k, 0) for k in ACTION_KINDS},
        "candidates": round(float(np.mean([len(a) for a in vals.actions])), 3),
        "playouts": stats.playouts,
        "playout_decisions": stats.decisions,
        "playout_decisions_per_s": round(stats.decisions / max(stats.seconds, 1e-9)),
        "dealing_s": round(stats.dealing, 2),
        "gap": round(float(gaps.mean()), 4),
        "gap_se": round(float(gaps.std() / np.sqrt(len(gaps))), 4),
        "held_out_gap": [round(x, 4) for x in vals.held_out_gap()] if vals.halves else None,
        "held_out_gap_by_kind": _gap_by_kind(vals),
        "held_out_gain_by_kl": by_kl,
        "realized_gain": realized,
        "tau": round(tg.tau, 5),
        "kl": round(tg.kl, 4),
        "changed": round(tg.changed, 4),
        "policy_fit": {"held_out_ce": round(pol.held_out_loss, 4), "agreement": round(pol.agreement, 4)},
        "value_fit": {
            "held_out_mse": round(val.held_out_loss, 4),
            "return_variance": round(val.agreement, 4),
        },
        "margin": margin,
        "accepted": accepted,
        "record": record,
        "seconds": times,
    }
    write_json(folder / "generation.json", row)
    return row, value_layers


def _done_rows(run_dir: Path, done: int) -> list[dict[str, Any]]:
    """The rows of the generations done; a row written after the last ``state.json`` is dropped."""
    path = run_dir / "generations.jsonl"
    rows = []
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            row = json.loads(line)
            if isinstance(row, dict) and isinstance(row.get("generation"), int) and row["generation"] <= done:
                rows.append(row)
        write_atomic(path, "".join(_json_line(r) for r in rows))
    return rows


def _json_line(row: dict[str, Any]) -> str:
    return json.dumps(row) + "\n"


def _loop(
    cfg: ImproveConfig,
    run_dir: Path,
    evaluate: Evaluator,
    progress: bool,
    stop: Callable[[], bool] | None,
    on_row: Callable[[dict[str, Any]], None] | None,
) -> ImproveReport:
    """Run the generations not done yet (``state.json``), each written whole before the next."""
    state = json.loads((run_dir / "state.json").read_text(encoding="utf-8"))
    done = int(state["done"])
    report = ImproveReport(run_dir, _done_rows(run_dir, done))
    current = MLPPolicy.load_npz(run_dir / "current.npz")
    if done > 0:
        value_layers = read_npz(run_dir / f"gen_{done:03d}" / "value.npz", what="value network file")[1]
    else:
        size = current.obs_size
        value_layers = fresh_layers([size, *cfg.fit.value, 1], np.random.default_rng(cfg.seed))
    for g in range(done + 1, cfg.generations + 1):
        if stop is not None and stop():
            break
        row, value_layers = _generation(cfg, run_dir, g, current, value_layers, evaluate, progress)
        folder = run_dir / f"gen_{g:03d}"
        if row["accepted"]:
            _set_current(run_dir, folder)
            current = MLPPolicy.load_npz(run_dir / "current.npz")
        row["current"] = (folder if row["accepted"] else Path(state["current"])).name
        append_jsonl(run_dir / "generations.jsonl", row, sync=True)
        state = {"done": g, "current": row["current"]}
        write_json(run_dir / "state.json", state)
        report.rows.append(row)
        _write_summary(run_dir, report.rows)
        if on_row is not None:
            on_row(row)
    _write_summary(run_dir, report.rows)
    return report


def _write_summary(run_dir: Path, rows: list[dict[str, Any]]) -> None:
    """``summary.json``: generations done and accepted, their seconds in all, the current network."""
    summary = {
        "generations": len(rows),
        "accepted": sum(bool(r["accepted"]) for r in rows),
        "wall_seconds": round(sum(sum(r["seconds"].values()) for r in rows), 1),
        "current": rows[-1]["current"] if rows else "gen_000",
    }
    write_json(run_dir / "summary.json", summary)


def check_table(cfg: ImproveConfig) -> MLPPolicy:
    """The start network, once the start, the opponent model and the playouts' opponents fit the table.

    ``ValueError`` names the setting that does not.
    """
    rules = cfg.make_rules()
    start = policy_network(cfg.start, f"improve config start={cfg.start!r}", 0, cfg.players, rules)
    try:
        check_belief_table(belief_param(cfg.values.belief, "tonk improve"), cfg.players, rules)
    except ValueError as e:
        raise ValueError(f"improve config values.belief={cfg.values.belief!r} is invalid here: {e}") from None
    _playout_opponents(cfg)  # each fits this table
    return start


def improve(
    cfg: ImproveConfig,
    evaluate: Evaluator,
    progress: bool = True,
    stop: Callable[[], bool] | None = None,
    on_row: Callable[[dict[str, Any]], None] | None = None,
) -> ImproveReport:
    """Start a run of ``cfg`` in a new run folder and run its generations (module docstring).

    ``stop()`` true ends the run before the next generation; ``on_row(row)`` gets each finished one.
    """
    rules = cfg.make_rules()
    start = check_table(cfg)
    run_dir = make_run_dir(cfg)
    write_atomic(run_dir / "config.yaml", yaml.safe_dump(_to_dict(cfg), sort_keys=False))
    info = {**policy_meta(rules, cfg.players), "start": cfg.start}
    info["torch_cpu_capability"] = torch.backends.cpu.get_cpu_capability()  # the fits' kernels (as train's)
    write_json(run_dir / "run.json", info)
    (run_dir / "gen_000").mkdir()
    meta = {**policy_meta(rules, cfg.players), "generation": 0}
    _save_policy(start.layers_for_export(), start.activation, meta, run_dir / "gen_000" / "policy.npz")
    _set_current(run_dir, run_dir / "gen_000")
    write_json(run_dir / "state.json", {"done": 0, "current": "gen_000"})
    return _loop(cfg, run_dir, evaluate, progress, stop, on_row)


def _to_dict(cfg: ImproveConfig) -> dict[str, Any]:
    return dataclasses.asdict(cfg)


def resume_improve(
    run_dir: str | Path,
    evaluate: Evaluator,
    progress: bool = True,
    stop: Callable[[], bool] | None = None,
    generations: int | None = None,
    on_row: Callable[[dict[str, Any]], None] | None = None,
) -> ImproveReport:
    """Go on with a run folder from its first generation not done (``generations``: a new total)."""
    folder = Path(run_dir)
    for name in ("config.yaml", "state.json", "current.npz"):
        if not (folder / name).is_file():
            raise ValueError(f"{folder}: not a tonk improve run folder (no {name})")
    data = read_yaml(folder / "config.yaml")
    if not isinstance(data, dict):
        raise ValueError(f"{folder / 'config.yaml'}: expected the run's options, got {type(data).__name__}")
    try:
        json.loads((folder / "state.json").read_text(encoding="utf-8"))["done"]
    except (ValueError, KeyError, TypeError) as e:
        raise ValueError(f"{folder / 'state.json'} is broken ({type(e).__name__}: {one_line(e)})") from None
    if generations is not None:
        data["generations"] = generations
    cfg = config_from_dict(data)
    return _loop(cfg, folder, evaluate, progress, stop, on_row)


def format_row(row: dict[str, Any]) -> str:
    """One generation as a line: margin over the previous, acceptance, records, the gap and the fits."""
    m = row["margin"]
    rec = "  ".join(
        f"{spec} {r['mean']:+.3f} [{r['ci95'][0]:+.3f}, {r['ci95'][1]:+.3f}]"
        + (
            f" (vs current {r['paired']['mean']:+.4f} [{r['paired']['ci95'][0]:+.4f}, "
            f"{r['paired']['ci95'][1]:+.4f}])"
            if "paired" in r
            else ""
        )
        for spec, r in row["record"].items()
    )
    return (
        f"gen {row['generation']}: vs previous {m['mean']:+.3f} [{m['ci95'][0]:+.3f}, {m['ci95'][1]:+.3f}] "
        f"{'accepted' if row['accepted'] else 'rejected'}; {rec + '; ' if rec else ''}gap {row['gap']:+.4f}"
        + (f" (held out {row['held_out_gap'][0]:+.4f})" if row.get("held_out_gap") else "")
        + ", "
        f"tau {row['tau']:.4g}, changed {row['changed']:.1%}, "
        f"value mse {row['value_fit']['held_out_mse']:.3f}"
    )


def format_report(report: ImproveReport) -> str:
    """The generations table of a run."""
    lines = [f"run {report.run_dir}: {len(report.rows)} generation(s) done; current network {report.current}"]
    lines += [format_row(r) for r in report.rows]
    return "\n".join(lines)
