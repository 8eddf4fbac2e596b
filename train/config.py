"""Training run configuration: nested dataclasses loaded from YAML.

Every field has a docstring and declares its allowed values
(:func:`tonk_env.engine.schema.setting`); :func:`tonk_env.engine.schema.build`
refuses unknown keys (naming the nearest and the known ones) and checks every
value's type and range before anything is written, with the allowed values in
the message. The checks across fields (the rules, the PPO batch against the
rollout, one backend's settings given to the other, agent specs) follow here.
Command-line overrides are ``key=value`` with dotted paths
(``ppo.learning_rate=1e-4``, ``pool.baselines={heuristic:greedy: 1}``); values
are read as YAML.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

import yaml

from agents.mlp import policy_network
from agents.registry import check_spec
from tonk_env.engine import make_rules
from tonk_env.engine.numbers import MAX_SEED
from tonk_env.engine.schema import Allowed, build, invalid, setting, show
from tonk_env.errors import read_yaml, yaml_message
from tonk_env.runtime import MAX_WORKERS  # the most processes a setting may start, as in eval

#: The widest hidden layer, and the most hidden layers, of ``net.pi`` and ``net.vf``.
MAX_LAYER_SIZE = 8192
MAX_LAYERS = 32

#: Whose settings the messages name.
WHAT = "config"
_show = show

#: The words of the common ranges.
_POSITIVE = {"low": 0, "low_open": True}
_COUNT = "an integer >= 1"
_PROCESSES = f"an integer in [1, {MAX_WORKERS}] (a process each)"
_LAYERS = Allowed(
    f"layer sizes >= 1 and <= {MAX_LAYER_SIZE}, at most {MAX_LAYERS} of them "
    "(an empty list: no hidden layer)",
    max_len=MAX_LAYERS,
    each=Allowed(low=1, high=MAX_LAYER_SIZE),
)
_WEIGHT = Allowed("a finite number >= 0", low=0)


def _layers(*sizes: int) -> Any:
    """A ``net.pi``/``net.vf`` field: hidden layer sizes."""
    return dataclasses.field(default_factory=lambda: list(sizes), metadata={"allowed": _LAYERS})


#: Torch devices a run may name (``auto``: SB3's choice, a GPU if there is one).
_DEVICE = r"auto|cpu|mps|cuda(:[0-9]{1,3})?"
#: An address of a Ray cluster: ``auto``, or ``HOST:PORT`` (a name or an IPv4/IPv6 address); empty: local.
_ADDRESS = r"(auto|(ray://)?[A-Za-z0-9_.\-\[\]:]+:[0-9]{1,5})?"
#: What a run name may hold: it names a folder under ``out_dir``.
_NAME = r"[A-Za-z0-9_-][A-Za-z0-9._-]*"
_NAME_WORDS = "1-100 letters, digits, '.', '_' or '-', not starting with '.' (a folder name)"


@dataclass
class PPOConfig:
    """MaskablePPO hyperparameters (sb3-contrib names)."""

    learning_rate: float = setting(3e-4, "a finite number > 0", **_POSITIVE)
    """Adam step size (linearly decayed to ``learning_rate_end`` if that is set)."""
    learning_rate_end: float | None = setting(None, "a finite number > 0, or null", **_POSITIVE)
    """Final learning rate of a linear schedule; None keeps it constant."""
    n_steps: int = setting(256, _COUNT, low=1)
    """Steps per env per rollout."""
    batch_size: int = setting(512, _COUNT, low=1)
    """Minibatch size."""
    n_epochs: int = setting(4, _COUNT, low=1)
    """Passes over each rollout."""
    gamma: float = setting(0.995, "a number in (0, 1]", low=0, low_open=True, high=1)
    """Discount factor."""
    gae_lambda: float = setting(0.95, "a number in [0, 1]", low=0, high=1)
    """GAE lambda."""
    clip_range: float = setting(0.2, "a finite number > 0", **_POSITIVE)
    """PPO clip range."""
    ent_coef: float = setting(0.01, "a finite number >= 0", low=0)
    """Entropy bonus coefficient at the start."""
    ent_coef_end: float | None = setting(None, "a finite number >= 0, or null", low=0)
    """Entropy coefficient at the end of a linear schedule; None keeps it constant."""
    vf_coef: float = setting(0.5, "a finite number >= 0", low=0)
    """Value loss coefficient."""
    max_grad_norm: float = setting(0.5, "a finite number > 0", **_POSITIVE)
    """Gradient clipping norm."""
    target_kl: float | None = setting(None, "a finite number > 0, or null", **_POSITIVE)
    """Stop an update early past this KL (None = off)."""
    update_dtype: str = setting("float32", "float32 or bfloat16", choices=("float32", "bfloat16"))
    """The precision of the update's matrix products: ``float32``, or ``bfloat16`` (torch's autocast:
    the weights, the optimizer and the losses stay float32; faster on a CPU with AVX-512 BF16 or AMX,
    maybe slower elsewhere: docs/RESULTS.md). Collection is float32 either way."""
    overlap: bool = False
    """Play the next rollout in a background thread while the update trains on this one
    (:mod:`train.sb3.overlap`): each rollout is then played by the weights one update behind, and
    collection and update run at once, on a core each with ``torch_threads: 1``."""


@dataclass
class NetConfig:
    """Policy and value network sizes."""

    pi: list[int] = _layers(256, 256)
    """Hidden layer sizes of the policy network (each 1..``MAX_LAYER_SIZE``, at most ``MAX_LAYERS``)."""
    vf: list[int] = _layers(256, 256)
    """Hidden layer sizes of the value network."""
    activation: str = setting("tanh", "tanh or relu", choices=("tanh", "relu"))
    """Hidden activation: tanh or relu."""
    critic: str = setting("public", "public or oracle", choices=("public", "oracle"))
    """What the value network reads: ``public`` (the learner's observation, like the policy) or
    ``oracle`` (also the opponents' hands and the next stock card; the policy still reads only
    the observation; see train/oracle.py)."""


@dataclass
class PoolConfig:
    """Who sits in the opponent seats: self-play snapshots and baselines."""

    latest: float = setting(0.5, "a finite number >= 0", low=0)
    """Weight of the latest policy (a frozen copy refreshed every ``refresh_every`` steps)."""
    snapshots: float = setting(0.2, "a finite number >= 0", low=0)
    """Weight of a past snapshot drawn uniformly from the window."""
    baselines: dict[str, float] = setting(
        factory=lambda: {"heuristic:greedy": 0.15, "random": 0.15},
        words="a mapping of agent specs to weights",
        each=_WEIGHT,
    )
    """Baseline agent specs and their weights."""
    window: int = setting(10, _COUNT, low=1)
    """How many past snapshots to keep."""
    snapshot_every: int = setting(50_000, _COUNT, low=1)
    """Steps between snapshots added to the window."""
    refresh_every: int = setting(10_000, _COUNT, low=1)
    """Steps between refreshes of the latest-policy copy."""
    sample_opponents: bool = True
    """Frozen policies sample from their distribution (True) or play the argmax."""


@dataclass
class EvalConfig:
    """Periodic duplicate-deal evaluation against fixed baselines."""

    every: int = setting(50_000, "an integer >= 0 (0 = only at the end)", low=0)
    """Steps between evaluations (0 = only at the end)."""
    hands: int = setting(400, _COUNT, low=1)
    """Duplicate hands per opponent per evaluation."""
    opponents: list[str] = field(default_factory=lambda: ["random", "heuristic:greedy"])
    """Agent specs to evaluate against."""
    seed: int = 12345
    """Seed of the evaluation deals (the same deals every time)."""
    workers: int = setting(1, _PROCESSES, low=1, high=MAX_WORKERS)
    """Processes for evaluation (1..``MAX_WORKERS``)."""


@dataclass
class PretrainConfig:
    """Behaviour cloning from a teacher agent before PPO (see train/pretrain.py)."""

    teacher: str = ""
    """Agent spec of the teacher (``heuristic:fast``, ``heuristic:expert``, ...); empty = no pretraining."""
    hands: int = setting(50_000, _COUNT, low=1)
    """Hands the teacher plays in the learner's seat to make the data."""
    epochs: int = setting(6, _COUNT, low=1)
    """Passes over the data."""
    batch_size: int = setting(1024, _COUNT, low=1)
    """Minibatch size."""
    learning_rate: float = setting(1e-3, "a finite number > 0", **_POSITIVE)
    """Adam step size of the cloning fit."""
    value: bool = True
    """Also fit the value head to the teacher's discounted payoffs."""
    smoothing: float = setting(0.0, "a number >= 0 and < 1", low=0, high=1, high_open=True)
    """Label smoothing: the target puts ``1 - smoothing`` on the teacher's action and spreads
    ``smoothing`` evenly over the legal actions, so the cloned policy keeps exploring (its
    argmax is still the teacher's action)."""
    workers: int = setting(2, _PROCESSES, low=1, high=MAX_WORKERS)
    """Processes that play the teacher's hands (1..``MAX_WORKERS``; the data do not depend on it)."""
    improve_rollouts: int = setting(0, "an integer >= 0 (0 = off)", low=0)
    """One step of policy improvement before cloning (0 = off): at each start-of-turn
    decision of the data, every legal start action (drop, draw, take) is valued by this
    many playouts of the true position with ``heuristic:fast`` for every seat (a drop
    exactly); a value network fitted to those values replaces the teacher's start action
    where another is worth more than ``improve_margin`` (see train/pretrain.py)."""
    improve_margin: float = setting(0.05, "a finite number >= 0", low=0)
    """Stakes by which the fitted value of another start action must beat the teacher's."""
    improve_epochs: int = setting(6, _COUNT, low=1)
    """Passes of the value network's fit (the epoch with the lowest held-out error is kept)."""


@dataclass
class RllibConfig:
    """Settings of ``backend: rllib``: RLlib's PPO or APPO on Ray (train/rllib/backend.py)."""

    algo: str = setting("ppo", "ppo or appo", choices=("ppo", "appo"))
    """``ppo`` (collection and update alternate) or ``appo`` (asynchronous PPO: the env runners sample
    while the learner updates; v-trace corrects for the weights' lag)."""
    env_runners: int = setting(
        1, f"an integer in [0, {MAX_WORKERS}] (0: in the driver; a process each)", low=0, high=MAX_WORKERS
    )
    """Ray actors that play the envs, each on a CPU of any node of the cluster (0: in the driver)."""
    envs_per_runner: int = setting(4, "an integer in [1, 1024] (envs per runner)", low=1, high=1024)
    """Envs each runner steps together (one policy batch per step)."""
    learners: int = setting(
        0, f"an integer in [0, {MAX_WORKERS}] (0: in the driver; a process each)", low=0, high=MAX_WORKERS
    )
    """Learner actors for the PPO update (0: the update runs in the driver process)."""
    address: str = setting("", "empty (a local Ray), auto, or HOST:PORT of a Ray head node", pattern=_ADDRESS)
    """Ray cluster to join (``HOST:PORT`` of its head, or ``auto``); empty: start a local Ray instance
    (``tonk train --address`` sets it too)."""
    num_cpus: int = setting(0, "an integer in [0, 4096] (0: every core)", low=0, high=4096)
    """CPUs of a local Ray instance (0: every core); not used with ``address``."""
    cpus_per_runner: float = setting(1.0, "a number in (0, 64]", low=0, low_open=True, high=64)
    """CPUs Ray reserves for each env runner (fractions pack several on a core)."""


#: The settings only the SB3 backend reads: with ``backend: rllib`` each must keep its default.
SB3_ONLY = (
    "n_envs", "vec_env", "device", "shaping_coef", "init_from", "net.critic",
    "ppo.learning_rate_end", "ppo.ent_coef_end", "ppo.target_kl", "ppo.overlap",
    "ppo.update_dtype", "pretrain.teacher",
)  # fmt: skip


@dataclass
class TrainConfig:
    """One training run."""

    backend: str = setting("sb3", "sb3 or rllib", choices=("sb3", "rllib"))
    """Trainer: ``sb3`` (sb3-contrib's MaskablePPO in this process) or ``rllib`` (RLlib's PPO on the
    new API stack, on a local Ray instance or a cluster; the ``rllib`` section; needs
    ``pip install 'tonk-rl[rllib]'``)."""
    name: str = setting("run", _NAME_WORDS, pattern=_NAME, max_len=100)
    """Run name: 1-100 letters, digits, ``.``, ``_``, ``-``, not starting with ``.``; the run folder is
    ``<out_dir>/<name>__<seed>__<time>``."""
    seed: int = setting(0, f"an integer in [0, {MAX_SEED}] (2**32 - 1)", low=0, high=MAX_SEED)
    """One seed for python, numpy, torch and the envs (0..``MAX_SEED``)."""
    players: int = 2
    """Players at the table."""
    rules: str = "standard"
    """Rules preset."""
    rule_options: dict[str, Any] = field(default_factory=dict)
    """Rules options changed from the preset (names as in docs/RULES.md)."""
    total_steps: int = setting(200_000, _COUNT, low=1)
    """Learner steps (decisions) to train for."""
    n_envs: int = setting(8, _COUNT, low=1)
    """Parallel environments."""
    vec_env: str = setting("core", "dummy, subproc or core", choices=("dummy", "subproc", "core"))
    """``core`` (the default: all envs as one :class:`tonk_env.vector.TonkVectorEnv` on the compiled
    core, :mod:`train.sb3.core_vec`; network opponents batched, heuristics and search through engine
    mirrors, the random baseline inside the kernel; it runs every pool member and option ``dummy``
    runs), ``dummy`` (one process; :class:`train.sb3.dummy_vec.BatchedOpponentsVecEnv` over Python
    envs: the random streams of runs recorded before ``core`` became the default) or ``subproc`` (one
    process per env, ``SubprocVecEnv``: spreads slow Python opponents over many cores; slower on 2
    cores). The same game either way, with other deals and random streams: docs/TRAINING.md, "The envs"."""
    reward_scale: float = setting(1.0, "a finite number > 0", **_POSITIVE)
    """Rewards are stakes times this."""
    shaping_coef: float = setting(0.0, "a finite number")
    """Potential-based shaping ``Φ = -coef * count`` (policy-invariant; 0 = off), see train/shaping.py."""
    checkpoint_every: int = setting(50_000, _COUNT, low=1)
    """Steps between checkpoints in ``checkpoints/``."""
    out_dir: str = "runs"
    """Folder that holds run folders."""
    device: str = setting("cpu", "auto, cpu, mps, cuda or cuda:N (a torch device)", pattern=_DEVICE)
    """Torch device: ``cpu``, ``cuda``, ``cuda:N``, ``mps`` or ``auto``."""
    torch_threads: int = setting(
        2, f"an integer in [1, {MAX_WORKERS}] (a thread each)", low=1, high=MAX_WORKERS
    )
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
    """Start from this checkpoint's weights (a run folder or .zip; same rules, players, net sizes), or
    from a policy network's (``zoo:NAME`` or ``npz:FILE``: its layers become the policy's, whose
    ``net.pi`` and ``net.activation`` must match; the value network starts fresh)."""
    pretrain: PretrainConfig = field(default_factory=PretrainConfig)
    """Optional behaviour-cloning warm start (off unless ``pretrain.teacher`` is set)."""
    rllib: RllibConfig = field(default_factory=RllibConfig)
    """Settings of ``backend: rllib`` (only that backend reads them)."""

    def to_dict(self) -> dict[str, Any]:
        """Plain dict, for YAML/JSON."""
        return dataclasses.asdict(self)


def _get(cfg: TrainConfig, key: str) -> Any:
    """The setting at the dotted path ``key`` (``ppo.gamma``)."""
    obj: Any = cfg
    for part in key.split("."):
        obj = getattr(obj, part)
    return obj


def _invalid(key: str, value: Any, allowed: str) -> NoReturn:
    """Raise the ValueError of a setting outside its allowed values."""
    invalid(WHAT, key, value, allowed)


def rollout_envs(cfg: TrainConfig) -> int:
    """The envs that fill one RLlib rollout: ``max(env_runners, 1) * envs_per_runner``."""
    return max(cfg.rllib.env_runners, 1) * cfg.rllib.envs_per_runner


def _validate_sizes(cfg: TrainConfig) -> None:
    """The rules and players; processes and the PPO batch against the rollout."""
    rules = make_rules(cfg.rules, **cfg.rule_options)  # raises ValueError naming the option
    rules.check_players(cfg.players)
    if cfg.vec_env == "subproc" and cfg.n_envs > MAX_WORKERS:
        _invalid(
            "n_envs", cfg.n_envs, f"an integer in [1, {MAX_WORKERS}] with vec_env=subproc (a process each)"
        )
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


def _validate_backend(cfg: TrainConfig) -> None:
    """No setting of one backend given to the other."""
    r = cfg.rllib
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
    """Pool weights, the choice of warm start and every agent spec in the config."""
    weights = [cfg.pool.latest, cfg.pool.snapshots, *cfg.pool.baselines.values()]
    if sum(weights) <= 0:
        _invalid("pool", weights, "non-negative weights with a positive sum")
    if cfg.init_from and cfg.pretrain.teacher:
        _invalid("init_from", cfg.init_from, "empty when pretrain.teacher is set (choose one warm start)")
    if cfg.pretrain.teacher:
        try:
            check_spec(cfg.pretrain.teacher)
        except ValueError as e:
            raise ValueError(
                f"config pretrain.teacher={_show(cfg.pretrain.teacher)} is invalid: {e}"
            ) from None
    specs = [(f"pool.baselines.{spec}", spec) for spec in cfg.pool.baselines]
    specs += [(f"eval.opponents[{i}]", spec) for i, spec in enumerate(cfg.eval.opponents)]
    for key, spec in specs:
        try:
            check_spec(spec)
        except ValueError as e:
            raise ValueError(f"config {key} is invalid: {e}") from None


def _validate(cfg: TrainConfig) -> None:
    """The checks across settings of a built config; the first problem found raises ValueError."""
    _validate_sizes(cfg)
    _validate_backend(cfg)
    _validate_run(cfg)


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
    cfg: TrainConfig = build(TrainConfig, data, WHAT, lenient=True)
    _validate(cfg)
    return cfg


def read_config_file(path: str | Path, defaults: bool = False) -> dict[str, Any]:
    """The mapping of options in a YAML config file; ``ValueError`` names the file (and the line).

    An empty file (nothing, only comments, ``null`` or ``{}``) is an error unless
    ``defaults`` (``tonk train --defaults``): a run of 200k steps on defaults is
    rarely what an empty file meant.
    """
    p = Path(path)
    data = read_yaml(p, f"config file {p}")  # its errors name the file and say why, in one line
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


#: The spec kinds ``init_from`` takes besides a checkpoint: a policy network's weights.
NETWORK_WARM_STARTS = ("zoo:", "npz:")


def is_network_warm_start(init_from: str) -> bool:
    """Whether ``init_from`` names a policy network (``zoo:NAME``, ``npz:FILE``), not a checkpoint."""
    return init_from.startswith(NETWORK_WARM_STARTS)


def _check_paths(cfg: TrainConfig) -> None:
    """The warm start exists and the run folder can be made under ``out_dir`` (a new run only)."""
    if cfg.init_from and is_network_warm_start(cfg.init_from):  # the file read, checked for this table
        policy_network(
            cfg.init_from,
            f"config init_from={cfg.init_from}",
            players=cfg.players,
            rules=make_rules(cfg.rules, **cfg.rule_options),
        )
    elif cfg.init_from and not Path(cfg.init_from).exists():
        _invalid(
            "init_from",
            cfg.init_from,
            "a checkpoint .zip or run folder that exists, zoo:NAME, npz:FILE, or empty",
        )
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
