"""Training run configuration: nested dataclasses loaded from YAML.

Every field has a docstring; unknown keys are errors that name the key and
list the known ones, and every value is checked (type, range, agent specs, the
run name) before anything is written, with the allowed values in the message.
Command-line overrides are ``key=value`` with dotted paths
(``ppo.learning_rate=1e-4``, ``pool.baselines={heuristic:greedy: 1}``); values
are read as YAML.
"""

from __future__ import annotations

import dataclasses
import math
import re
import reprlib
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

import yaml

from agents.registry import check_spec
from tonk_env.engine import make_rules
from tonk_env.engine.numbers import MAX_SEED
from tonk_env.errors import yaml_message

#: The most processes one setting may start (``eval.workers``, ``pretrain.workers``, ``n_envs`` with
#: ``subproc``); the same cap as ``eval.duplicate.MAX_WORKERS`` (``train`` does not import ``eval``).
MAX_WORKERS = 256
#: The widest hidden layer, and the most hidden layers, of ``net.pi`` and ``net.vf``.
MAX_LAYER_SIZE = 8192
MAX_LAYERS = 32
#: Torch devices a run may name (``auto``: SB3's choice, a GPU if there is one).
_DEVICE = re.compile(r"auto|cpu|mps|cuda(:[0-9]{1,3})?")

#: Shows a value in a message, cut short (a YAML alias can make a huge structure of a few lines).
_SHORT = reprlib.Repr()
_SHORT.maxlevel, _SHORT.maxlist, _SHORT.maxdict = 3, 12, 12
_SHORT.maxstring, _SHORT.maxother, _SHORT.maxlong = 120, 120, 40


def _show(value: Any) -> str:
    """``repr(value)``, cut short past a length or a depth."""
    text = _SHORT.repr(value)
    return text if len(text) <= 200 else text[:200] + "..."


@dataclass
class PPOConfig:
    """MaskablePPO hyperparameters (sb3-contrib names)."""

    learning_rate: float = 3e-4
    """Adam step size (linearly decayed to ``learning_rate_end`` if that is set)."""
    learning_rate_end: float | None = None
    """Final learning rate of a linear schedule; None keeps it constant."""
    n_steps: int = 256
    """Steps per env per rollout."""
    batch_size: int = 512
    """Minibatch size."""
    n_epochs: int = 4
    """Passes over each rollout."""
    gamma: float = 0.995
    """Discount factor."""
    gae_lambda: float = 0.95
    """GAE lambda."""
    clip_range: float = 0.2
    """PPO clip range."""
    ent_coef: float = 0.01
    """Entropy bonus coefficient at the start."""
    ent_coef_end: float | None = None
    """Entropy coefficient at the end of a linear schedule; None keeps it constant."""
    vf_coef: float = 0.5
    """Value loss coefficient."""
    max_grad_norm: float = 0.5
    """Gradient clipping norm."""
    target_kl: float | None = None
    """Stop an update early past this KL (None = off)."""


@dataclass
class NetConfig:
    """Policy and value network sizes."""

    pi: list[int] = field(default_factory=lambda: [256, 256])
    """Hidden layer sizes of the policy network (each 1..``MAX_LAYER_SIZE``, at most ``MAX_LAYERS``)."""
    vf: list[int] = field(default_factory=lambda: [256, 256])
    """Hidden layer sizes of the value network."""
    activation: str = "tanh"
    """Hidden activation: tanh or relu."""
    critic: str = "public"
    """What the value network reads: ``public`` (the learner's observation, like the policy) or
    ``oracle`` (also the opponents' hands and the next stock card; the policy still reads only
    the observation; see train/oracle.py)."""


@dataclass
class PoolConfig:
    """Who sits in the opponent seats: self-play snapshots and baselines."""

    latest: float = 0.5
    """Weight of the latest policy (a frozen copy refreshed every ``refresh_every`` steps)."""
    snapshots: float = 0.2
    """Weight of a past snapshot drawn uniformly from the window."""
    baselines: dict[str, float] = field(default_factory=lambda: {"heuristic:greedy": 0.15, "random": 0.15})
    """Baseline agent specs and their weights."""
    window: int = 10
    """How many past snapshots to keep."""
    snapshot_every: int = 50_000
    """Steps between snapshots added to the window."""
    refresh_every: int = 10_000
    """Steps between refreshes of the latest-policy copy."""
    sample_opponents: bool = True
    """Frozen policies sample from their distribution (True) or play the argmax."""


@dataclass
class EvalConfig:
    """Periodic duplicate-deal evaluation against fixed baselines."""

    every: int = 50_000
    """Steps between evaluations (0 = only at the end)."""
    hands: int = 400
    """Duplicate hands per opponent per evaluation."""
    opponents: list[str] = field(default_factory=lambda: ["random", "heuristic:greedy"])
    """Agent specs to evaluate against."""
    seed: int = 12345
    """Seed of the evaluation deals (the same deals every time)."""
    workers: int = 1
    """Processes for evaluation (1..``MAX_WORKERS``)."""


@dataclass
class PretrainConfig:
    """Behaviour cloning from a teacher agent before PPO (see train/pretrain.py)."""

    teacher: str = ""
    """Agent spec of the teacher (``heuristic:fast``, ``heuristic:expert``, ...); empty = no pretraining."""
    hands: int = 50_000
    """Hands the teacher plays in the learner's seat to make the data."""
    epochs: int = 6
    """Passes over the data."""
    batch_size: int = 1024
    """Minibatch size."""
    learning_rate: float = 1e-3
    """Adam step size of the cloning fit."""
    value: bool = True
    """Also fit the value head to the teacher's discounted payoffs."""
    smoothing: float = 0.0
    """Label smoothing: the target puts ``1 - smoothing`` on the teacher's action and spreads
    ``smoothing`` evenly over the legal actions, so the cloned policy keeps exploring (its
    argmax is still the teacher's action)."""
    workers: int = 2
    """Processes that play the teacher's hands (1..``MAX_WORKERS``; the data do not depend on it)."""
    improve_rollouts: int = 0
    """One step of policy improvement before cloning (0 = off): at each start-of-turn
    decision of the data, every legal start action (drop, draw, take) is valued by this
    many playouts of the true position with ``heuristic:fast`` for every seat (a drop
    exactly); a value network fitted to those values replaces the teacher's start action
    where another is worth more than ``improve_margin`` (see train/pretrain.py)."""
    improve_margin: float = 0.05
    """Stakes by which the fitted value of another start action must beat the teacher's."""
    improve_epochs: int = 6
    """Passes of the value network's fit (the epoch with the lowest held-out error is kept)."""


@dataclass
class RllibConfig:
    """Settings of ``backend: rllib``: RLlib's PPO on a Ray instance or cluster (train/rllib_backend.py)."""

    env_runners: int = 1
    """Ray actors that play the envs, each on a CPU of any node of the cluster (0: in the driver)."""
    envs_per_runner: int = 4
    """Envs each runner steps together (one policy batch per step)."""
    learners: int = 0
    """Learner actors for the PPO update (0: the update runs in the driver process)."""
    address: str = ""
    """Ray cluster to join (``HOST:PORT`` of its head, or ``auto``); empty: start a local Ray instance
    (``tonk train --address`` sets it too)."""
    num_cpus: int = 0
    """CPUs of a local Ray instance (0: every core); not used with ``address``."""
    cpus_per_runner: float = 1.0
    """CPUs Ray reserves for each env runner (fractions pack several on a core)."""


#: The settings only the SB3 backend reads: with ``backend: rllib`` each must keep its default.
SB3_ONLY = (
    "n_envs", "vec_env", "device", "shaping_coef", "init_from", "net.critic", "pool.refresh_every",
    "ppo.learning_rate_end", "ppo.ent_coef_end", "ppo.target_kl", "pretrain.teacher",
)  # fmt: skip


@dataclass
class TrainConfig:
    """One training run."""

    backend: str = "sb3"
    """Trainer: ``sb3`` (sb3-contrib's MaskablePPO in this process) or ``rllib`` (RLlib's PPO on the
    new API stack, on a local Ray instance or a cluster; the ``rllib`` section; needs
    ``pip install 'tonk-rl[rllib]'``)."""
    name: str = "run"
    """Run name: 1-100 letters, digits, ``.``, ``_``, ``-``, not starting with ``.``; the run folder is
    ``<out_dir>/<name>__<seed>__<time>``."""
    seed: int = 0
    """One seed for python, numpy, torch and the envs (0..``MAX_SEED``)."""
    players: int = 2
    """Players at the table."""
    rules: str = "standard"
    """Rules preset."""
    rule_options: dict[str, Any] = field(default_factory=dict)
    """Rules options changed from the preset (names as in docs/RULES.md)."""
    total_steps: int = 200_000
    """Learner steps (decisions) to train for."""
    n_envs: int = 8
    """Parallel environments."""
    vec_env: str = "core"
    """``core`` (the default: all envs as one :class:`tonk_env.vector.TonkVectorEnv` on the compiled
    core, :mod:`train.core_vec`; network opponents batched, heuristics and search through engine
    mirrors, the random baseline inside the kernel; it runs every pool member and option ``dummy``
    runs), ``dummy`` (one process; :class:`train.vec.BatchedOpponentsVecEnv` over Python envs: the
    random streams of runs recorded before ``core`` became the default) or ``subproc`` (one process
    per env, ``SubprocVecEnv``: spreads slow Python opponents over many cores; slower on 2 cores).
    The same game either way, with other deals and random streams: docs/TRAINING.md, "The envs"."""
    reward_scale: float = 1.0
    """Rewards are stakes times this."""
    shaping_coef: float = 0.0
    """Potential-based shaping ``Φ = -coef * count`` (policy-invariant; 0 = off), see train/shaping.py."""
    checkpoint_every: int = 50_000
    """Steps between checkpoints in ``checkpoints/``."""
    out_dir: str = "runs"
    """Folder that holds run folders."""
    device: str = "cpu"
    """Torch device: ``cpu``, ``cuda``, ``cuda:N``, ``mps`` or ``auto``."""
    torch_threads: int = 2
    """Torch intra-op threads of the PPO update (on 2 cores 2 beat 1: docs/RESULTS.md, "Torch threads")."""
    ppo: PPOConfig = field(default_factory=PPOConfig)
    """PPO hyperparameters."""
    net: NetConfig = field(default_factory=NetConfig)
    """Network sizes."""
    pool: PoolConfig = field(default_factory=PoolConfig)
    """Opponent pool."""
    eval: EvalConfig = field(default_factory=EvalConfig)
    """Periodic evaluation."""
    init_from: str = ""
    """Start from this checkpoint's weights (a run folder or .zip; same rules, players, net sizes)."""
    pretrain: PretrainConfig = field(default_factory=PretrainConfig)
    """Optional behaviour-cloning warm start (off unless ``pretrain.teacher`` is set)."""
    rllib: RllibConfig = field(default_factory=RllibConfig)
    """Settings of ``backend: rllib`` (only that backend reads them)."""

    def to_dict(self) -> dict[str, Any]:
        """Plain dict, for YAML/JSON."""
        return dataclasses.asdict(self)


def _check_union(path: str, value: Any, tp: Any) -> Any:
    """Check ``value`` against the first member of the union ``tp`` that accepts it."""
    args = typing.get_args(tp)
    if value is None and type(None) in args:
        return None
    for a in args:
        if a is type(None):
            continue
        try:
            return _check_type(path, value, a)
        except ValueError:
            continue
    raise ValueError(f"config {path}={_show(value)}: expected {tp}")


def _check_float(path: str, value: Any) -> float:
    """A number (an integer or YAML's string form of ``1e-4``) as a float."""
    if isinstance(value, str):  # YAML 1.1 reads 1e-4 (no dot) as a string
        try:
            value = float(value)
        except ValueError:
            pass
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"config {path}={_show(value)}: expected a number")
    try:
        return float(value)
    except OverflowError:  # an integer past float's range
        raise ValueError(f"config {path}={_show(value)}: expected a number, this one is too large") from None


def _check_int(path: str, value: Any) -> int:
    """An integer (or a float with an integer value)."""
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, float) and value.is_integer():
            return int(value)
        raise ValueError(f"config {path}={_show(value)}: expected an integer")
    return value


def _check_bool(path: str, value: Any) -> bool:
    """``true`` or ``false``."""
    if not isinstance(value, bool):
        raise ValueError(f"config {path}={_show(value)}: expected true or false")
    return value


def _check_str(path: str, value: Any) -> str:
    """A string."""
    if not isinstance(value, str):
        raise ValueError(f"config {path}={_show(value)}: expected a string")
    return value


#: Checkers of the scalar field types, by type.
_SCALARS: dict[type, Callable[[str, Any], Any]] = {
    float: _check_float,
    int: _check_int,
    bool: _check_bool,
    str: _check_str,
}


def _check_list(path: str, value: Any, item: Any) -> list[Any]:
    """A list whose items are checked against ``item``."""
    if not isinstance(value, list):
        raise ValueError(f"config {path}={_show(value)}: expected a list")
    return [_check_type(f"{path}[{i}]", v, item) for i, v in enumerate(value)]


def _check_dict(path: str, value: Any, item: Any) -> dict[str, Any]:
    """A mapping with string keys whose values are checked against ``item``."""
    if not isinstance(value, dict):
        raise ValueError(f"config {path}={_show(value)}: expected a mapping")
    return {str(k): _check_type(f"{path}.{k}", v, item) for k, v in value.items()}


def _check_type(path: str, value: Any, tp: Any) -> Any:
    """``value`` checked against (and converted to) the annotation ``tp``; ValueError names ``path``."""
    if tp is Any:
        return value
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        return _check_union(path, value, tp)
    scalar = _SCALARS.get(tp) if isinstance(tp, type) else None
    if scalar is not None:
        return scalar(path, value)
    if origin is list:
        return _check_list(path, value, typing.get_args(tp)[0])
    if origin is dict:
        return _check_dict(path, value, typing.get_args(tp)[1])
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return _build(tp, value, path)
    return value


def _build(cls: type, data: Any, prefix: str = "") -> Any:
    """An instance of the dataclass ``cls`` from the mapping ``data``, every field checked."""
    if not isinstance(data, dict):
        raise ValueError(f"config {prefix or '(top)'}: expected a mapping, got {_show(data)}")
    hints = typing.get_type_hints(cls)
    names = [f.name for f in dataclasses.fields(cls)]
    kwargs = {}
    for key, value in data.items():
        path = f"{prefix}.{key}" if prefix else str(key)
        if key not in names:
            raise ValueError(
                f"unknown config key {_show(path)}; "
                f"known keys{' of ' + prefix if prefix else ''}: {', '.join(names)}"
            )
        kwargs[key] = _check_type(path, value, hints[key])
    obj = cls(**kwargs)
    return obj


#: Integer settings that must be at least 1, in the order they are checked.
_COUNTS = (
    "total_steps",
    "n_envs",
    "checkpoint_every",
    "ppo.n_steps",
    "ppo.batch_size",
    "ppo.n_epochs",
    "pool.window",
    "pool.snapshot_every",
    "pool.refresh_every",
    "eval.hands",
    "eval.workers",
    "torch_threads",
    "pretrain.hands",
    "pretrain.epochs",
    "pretrain.batch_size",
    "pretrain.workers",
    "pretrain.improve_epochs",
)


#: Integer settings with an upper bound too: ``key: (most, why)``.
_CAPS: dict[str, tuple[int, str]] = {
    "eval.workers": (MAX_WORKERS, "a process each"),
    "pretrain.workers": (MAX_WORKERS, "a process each"),
    "torch_threads": (MAX_WORKERS, "a thread each"),
}


def _get(cfg: TrainConfig, key: str) -> Any:
    """The setting at the dotted path ``key`` (``ppo.gamma``)."""
    obj: Any = cfg
    for part in key.split("."):
        obj = getattr(obj, part)
    return obj


def _invalid(key: str, value: Any, allowed: str) -> NoReturn:
    """Raise the ValueError of a setting outside its allowed values."""
    raise ValueError(f"config {key}={_show(value)} is invalid; allowed: {allowed}")


def _validate_choices(cfg: TrainConfig) -> None:
    """Rules, players and the settings chosen from a list of names."""
    rules = make_rules(cfg.rules, **cfg.rule_options)  # raises ValueError naming the option
    rules.check_players(cfg.players)
    if cfg.backend not in ("sb3", "rllib"):
        _invalid("backend", cfg.backend, "sb3 or rllib")
    if cfg.vec_env not in ("dummy", "subproc", "core"):
        _invalid("vec_env", cfg.vec_env, "dummy, subproc or core")
    if cfg.net.activation not in ("tanh", "relu"):
        _invalid("net.activation", cfg.net.activation, "tanh or relu")
    if cfg.net.critic not in ("public", "oracle"):
        _invalid("net.critic", cfg.net.critic, "public or oracle")
    if not _DEVICE.fullmatch(cfg.device):
        _invalid("device", cfg.device, "auto, cpu, mps, cuda or cuda:N (a torch device)")


def _validate_counts(cfg: TrainConfig) -> None:
    """Step counts, sizes and intervals (all sections), and the PPO batch against the rollout."""
    for key in _COUNTS:
        if _get(cfg, key) < 1:
            _invalid(key, _get(cfg, key), "an integer >= 1")
    for key, (most, why) in _CAPS.items():
        if _get(cfg, key) > most:
            _invalid(key, _get(cfg, key), f"an integer in [1, {most}] ({why})")
    if cfg.vec_env == "subproc" and cfg.n_envs > MAX_WORKERS:
        _invalid(
            "n_envs", cfg.n_envs, f"an integer in [1, {MAX_WORKERS}] with vec_env=subproc (a process each)"
        )
    if not 0 <= cfg.seed <= MAX_SEED:
        _invalid("seed", cfg.seed, f"an integer in [0, {MAX_SEED}] (2**32 - 1)")
    if cfg.eval.every < 0:
        _invalid("eval.every", cfg.eval.every, "an integer >= 0 (0 = only at the end)")
    if cfg.backend == "rllib":
        envs = rollout_envs(cfg)
        if cfg.ppo.batch_size > cfg.ppo.n_steps * envs:
            _invalid(
                "ppo.batch_size",
                cfg.ppo.batch_size,
                f"at most ppo.n_steps * max(rllib.env_runners, 1) * rllib.envs_per_runner = "
                f"{cfg.ppo.n_steps * envs}",
            )
    elif cfg.ppo.batch_size > cfg.ppo.n_steps * cfg.n_envs:
        _invalid(
            "ppo.batch_size", cfg.ppo.batch_size, f"at most n_steps * n_envs = {cfg.ppo.n_steps * cfg.n_envs}"
        )


def rollout_envs(cfg: TrainConfig) -> int:
    """The envs that fill one RLlib rollout: ``max(env_runners, 1) * envs_per_runner``."""
    return max(cfg.rllib.env_runners, 1) * cfg.rllib.envs_per_runner


#: An address of a Ray cluster: ``auto``, or ``HOST:PORT`` (a name or an IPv4/IPv6 address).
_ADDRESS = re.compile(r"auto|(ray://)?[A-Za-z0-9_.\-\[\]:]+:[0-9]{1,5}")


def _validate_backend(cfg: TrainConfig) -> None:
    """The ``rllib`` section's ranges, and no setting of one backend given to the other."""
    r = cfg.rllib
    for key, low, high, why in (
        ("rllib.env_runners", 0, MAX_WORKERS, "0: in the driver; a process each"),
        ("rllib.envs_per_runner", 1, 1024, "envs per runner"),
        ("rllib.learners", 0, MAX_WORKERS, "0: in the driver; a process each"),
        ("rllib.num_cpus", 0, 4096, "0: every core"),
    ):
        value = _get(cfg, key)
        if not low <= value <= high:
            _invalid(key, value, f"an integer in [{low}, {high}] ({why})")
    if not (math.isfinite(r.cpus_per_runner) and 0 < r.cpus_per_runner <= 64):
        _invalid("rllib.cpus_per_runner", r.cpus_per_runner, "a number in (0, 64]")
    if r.address and not _ADDRESS.fullmatch(r.address):
        _invalid("rllib.address", r.address, "empty (a local Ray), auto, or HOST:PORT of a Ray head node")
    default = TrainConfig()
    if cfg.backend == "rllib":
        for key in SB3_ONLY:
            if _get(cfg, key) != _get(default, key):
                raise ValueError(
                    f"config {key}={_show(_get(cfg, key))} is a setting of backend sb3 only; with "
                    f"backend: rllib remove it (default {_show(_get(default, key))}; the rllib section sets "
                    "env runners, envs per runner and learners)"
                )
    elif r != default.rllib:
        key = next(
            f"rllib.{f.name}"
            for f in dataclasses.fields(r)
            if getattr(r, f.name) != getattr(default.rllib, f.name)
        )
        raise ValueError(
            f"config {key}={_show(_get(cfg, key))} is a setting of backend rllib; add backend: rllib "
            "to train with RLlib, or remove the rllib section"
        )


def _validate_run(cfg: TrainConfig) -> None:
    """Pool weights, reward scale and the choice of warm start."""
    weights = [cfg.pool.latest, cfg.pool.snapshots, *cfg.pool.baselines.values()]
    if any(w < 0 for w in weights) or sum(weights) <= 0:
        _invalid("pool", weights, "non-negative weights with a positive sum")
    if cfg.reward_scale <= 0:
        _invalid("reward_scale", cfg.reward_scale, "a number > 0")
    if cfg.init_from and cfg.pretrain.teacher:
        _invalid("init_from", cfg.init_from, "empty when pretrain.teacher is set (choose one warm start)")


def _validate_pretrain(cfg: TrainConfig) -> None:
    """The behaviour-cloning section."""
    pre = cfg.pretrain
    if pre.learning_rate <= 0:
        _invalid("pretrain.learning_rate", pre.learning_rate, "a number > 0")
    if not 0 <= pre.smoothing < 1:
        _invalid("pretrain.smoothing", pre.smoothing, "a number >= 0 and < 1")
    if pre.improve_rollouts < 0:
        _invalid("pretrain.improve_rollouts", pre.improve_rollouts, "an integer >= 0 (0 = off)")
    if pre.improve_margin < 0:
        _invalid("pretrain.improve_margin", pre.improve_margin, "a number >= 0")
    if pre.teacher:
        try:
            check_spec(pre.teacher)
        except ValueError as e:
            raise ValueError(f"config pretrain.teacher={_show(pre.teacher)} is invalid: {e}") from None


#: Ranges of the numeric settings: ``(low, low inclusive, high, high inclusive, words)``; None = unbounded.
_RANGES: dict[str, tuple[float | None, bool, float | None, bool, str]] = {
    "ppo.learning_rate": (0, False, None, False, "a finite number > 0"),
    "ppo.learning_rate_end": (0, False, None, False, "a finite number > 0, or null"),
    "ppo.gamma": (0, False, 1, True, "a number in (0, 1]"),
    "ppo.gae_lambda": (0, True, 1, True, "a number in [0, 1]"),
    "ppo.clip_range": (0, False, None, False, "a finite number > 0"),
    "ppo.ent_coef": (0, True, None, False, "a finite number >= 0"),
    "ppo.ent_coef_end": (0, True, None, False, "a finite number >= 0, or null"),
    "ppo.vf_coef": (0, True, None, False, "a finite number >= 0"),
    "ppo.max_grad_norm": (0, False, None, False, "a finite number > 0"),
    "ppo.target_kl": (0, False, None, False, "a finite number > 0, or null"),
    "reward_scale": (None, False, None, False, "a finite number > 0"),
    "shaping_coef": (None, False, None, False, "a finite number"),
    "pool.latest": (None, False, None, False, "a finite number >= 0"),
    "pool.snapshots": (None, False, None, False, "a finite number >= 0"),
    "pretrain.learning_rate": (None, False, None, False, "a finite number > 0"),
    "pretrain.smoothing": (None, False, None, False, "a number >= 0 and < 1"),
    "pretrain.improve_margin": (None, False, None, False, "a finite number >= 0"),
}

#: What a run name may hold: it names a folder under ``out_dir``.
_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]*")


def _validate_numbers(cfg: TrainConfig) -> None:
    """Every number finite and within its range (the range in the message)."""
    for key, (low, low_in, high, high_in, words) in _RANGES.items():
        v = _get(cfg, key)
        if v is None:
            continue
        if not math.isfinite(v):
            _invalid(key, v, words)
        if low is not None and (v < low or (v == low and not low_in)):
            _invalid(key, v, words)
        if high is not None and (v > high or (v == high and not high_in)):
            _invalid(key, v, words)
    for spec, weight in cfg.pool.baselines.items():
        if not math.isfinite(weight):
            _invalid(f"pool.baselines.{spec}", weight, "a finite number >= 0")
    for key in ("net.pi", "net.vf"):
        sizes = _get(cfg, key)
        if len(sizes) > MAX_LAYERS or any(not 1 <= size <= MAX_LAYER_SIZE for size in sizes):
            _invalid(
                key,
                sizes,
                f"layer sizes >= 1 and <= {MAX_LAYER_SIZE}, at most {MAX_LAYERS} of them "
                "(an empty list: no hidden layer)",
            )


def _validate_names(cfg: TrainConfig) -> None:
    """The run name is a safe folder name; every agent spec in the config is known."""
    if not _NAME.fullmatch(cfg.name) or len(cfg.name) > 100:
        _invalid(
            "name", cfg.name, "1-100 letters, digits, '.', '_' or '-', not starting with '.' (a folder name)"
        )
    specs = [(f"pool.baselines.{spec}", spec) for spec in cfg.pool.baselines]
    specs += [(f"eval.opponents[{i}]", spec) for i, spec in enumerate(cfg.eval.opponents)]
    for key, spec in specs:
        try:
            check_spec(spec)
        except ValueError as e:
            raise ValueError(f"config {key} is invalid: {e}") from None


def _validate(cfg: TrainConfig) -> None:
    """Check the values of a built config; the first problem found raises ValueError."""
    _validate_choices(cfg)
    _validate_backend(cfg)
    _validate_counts(cfg)
    _validate_run(cfg)
    _validate_pretrain(cfg)
    _validate_numbers(cfg)
    _validate_names(cfg)


def set_path(data: dict[str, Any], dotted: str, value: Any) -> None:
    """Set ``a.b.c`` in a nested dict, creating mappings as needed."""
    parts = dotted.split(".")
    node = data
    for p in parts[:-1]:
        node = node.setdefault(p, {})
        if not isinstance(node, dict):
            raise ValueError(f"config override {dotted!r}: {p} is not a mapping")
    node[parts[-1]] = value


def parse_overrides(items: list[str]) -> dict[str, Any]:
    """``["ppo.learning_rate=1e-4", ...]`` → nested dict of YAML-typed values."""
    out: dict[str, Any] = {}
    for item in items:
        if "=" not in item:
            raise ValueError(f"config override {item!r}: expected key=value")
        key, _, text = item.partition("=")
        try:
            value = yaml.safe_load(text)
        except yaml.YAMLError as e:
            raise ValueError(f"config override {item!r}: cannot read the value ({yaml_message(e)})") from None
        set_path(out, key.strip(), value)
    return out


def merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    """Deep-merge ``extra`` into a copy of ``base``."""
    out = dict(base)
    for k, v in extra.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict) and k not in ("baselines", "rule_options"):
            out[k] = merge(out[k], v)
        else:
            out[k] = v
    return out


def config_from_dict(data: dict[str, Any]) -> TrainConfig:
    """Build and validate a config from a (possibly partial) dict."""
    cfg = _build(TrainConfig, data)
    _validate(cfg)
    return cfg


def read_config_file(path: str | Path, defaults: bool = False) -> dict[str, Any]:
    """The mapping of options in a YAML config file; ``ValueError`` names the file (and the line).

    An empty file (nothing, only comments, ``null`` or ``{}``) is an error unless
    ``defaults`` (``tonk train --defaults``): a run of 200k steps on defaults is
    rarely what an empty file meant.
    """
    p = Path(path)
    if not p.exists():
        raise ValueError(f"config file {p} does not exist")
    if not p.is_file():
        raise ValueError(f"config file {p} is not a file")
    try:
        with p.open(encoding="utf-8") as f:  # the file's name goes into YAML's "line N" marks
            data = yaml.safe_load(f)
    except (yaml.YAMLError, UnicodeDecodeError, ValueError) as e:  # ValueError: a bad date, !!int abc
        raise ValueError(f"config file {p} is not valid YAML: {yaml_message(e)}") from None
    except RecursionError:
        raise ValueError(f"config file {p} is not valid YAML: nested too deeply") from None
    except OSError as e:
        raise ValueError(f"config file {p} cannot be read: {e.strerror or e}") from None
    if data is None or data == {}:
        if not defaults:
            raise ValueError(
                f"config file {p} is empty; give at least one option, "
                "or pass --defaults to train on the defaults"
            )
        return {}
    if not isinstance(data, dict):
        raise ValueError(
            f"config file {p}: expected a mapping at the top level (key: value lines), "
            f"got {type(data).__name__} {_show(data)}"
        )
    return data


def _check_paths(cfg: TrainConfig) -> None:
    """The warm start exists and the run folder can be made under ``out_dir`` (a new run only)."""
    if cfg.init_from and not Path(cfg.init_from).exists():
        _invalid("init_from", cfg.init_from, "a checkpoint .zip or run folder that exists, or empty")
    folder = Path(cfg.out_dir)
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if folder.exists() and not folder.is_dir():
        _invalid("out_dir", cfg.out_dir, f"a folder, or a path to make one ({folder} is a file)")


def load_config(
    path: str | Path | None, overrides: list[str] | None = None, defaults: bool = False
) -> TrainConfig:
    """Load a YAML config (None = defaults) and apply ``key=value`` overrides, for a new run.

    Every value is checked (:func:`config_from_dict`), and so are the paths a
    new run uses (``init_from``, ``out_dir``); an empty file is an error unless
    ``defaults`` (:func:`read_config_file`).
    """
    data = {} if path is None else read_config_file(path, defaults)
    data = merge(data, parse_overrides(overrides or []))
    cfg = config_from_dict(data)
    _check_paths(cfg)
    return cfg
