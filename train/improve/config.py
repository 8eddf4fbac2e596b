"""The policy-improvement recipe's settings: the YAML keys of ``tonk improve CONFIG.yaml``.

Declared like every other settings object (:mod:`tonk_env.engine.schema`): an
unknown key is refused with the nearest known one, every value is checked with
the allowed values in the message. ``key=value`` overrides on the command line
use dotted paths (``values.worlds=32``), read as YAML, as ``tonk train``'s do.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agents.registry import check_spec
from tonk_env.engine import make_rules
from tonk_env.engine.actions import ACTION_KINDS
from tonk_env.engine.numbers import MAX_SEED
from tonk_env.engine.schema import Allowed, build, invalid, setting
from tonk_env.runtime import MAX_WORKERS

from ..config import merge, parse_overrides, read_config_file

#: The decision types of the start of a turn: the choices of one decision, so one of them alone in
#: ``fit.kinds`` could only keep its probability.
START_KINDS = ("drop", "draw", "take")

__all__ = [
    "ACCEPT_RULES",
    "AcceptSettings",
    "FitSettings",
    "ImproveConfig",
    "PositionSettings",
    "ValueSettings",
    "config_from_dict",
    "load_improve_config",
]

#: Whose settings the messages name.
WHAT = "improve config"
#: How a generation is accepted: its mean margin over the previous one above 0, or its 95% interval,
#: or (``record``) its margins against ``accept.record``'s opponents above the previous one's, paired.
ACCEPT_RULES = ("mean", "interval", "record")
#: The most positions a generation may value (their states are held in memory).
MAX_POSITIONS = 1_000_000
#: The specs of policy networks, which alone can play the playouts (batched on the core).
NETWORK_PREFIXES = ("zoo:", "npz:", "ppo:")
_NAME = r"[A-Za-z0-9_.\-]{1,64}"
_WEIGHTS = Allowed("a mapping of agent specs (or `self`) to weights >= 0", each=Allowed(low=0), max_len=32)
_RECORD = Allowed(
    "a mapping of agent specs to duplicate hands (4..1,000,000)", each=Allowed(low=4, high=1_000_000)
)


@dataclass
class PositionSettings:
    """Where a generation's positions come from."""

    count: int = setting(20_000, f"an int 1..{MAX_POSITIONS:,}", low=1, high=MAX_POSITIONS)
    """Positions (decisions of the current network with more than one legal action) per generation."""
    opponents: dict[str, float] = field(
        default_factory=lambda: {"self": 0.6, "heuristic:expert": 0.3, "search:ismcts": 0.1},
        metadata={"allowed": _WEIGHTS},
    )
    """Who the network plays to reach them, by share of hands; ``self``: every seat is the network."""


@dataclass
class ValueSettings:
    """How the candidates of a position are valued."""

    candidates: int = setting(3, "an int 2..16", low=2, high=16)
    """Actions valued per position: the network's choice and Gumbel top-k samples of the others."""
    worlds: int = setting(16, "an int 1..1,024", low=1, high=1024)
    """Sampled deals of the hidden cards per position; every candidate meets the same ones."""
    belief: str = setting("2p", "a learned opponent model's name or file, or empty (the hand-written model)")
    """The opponent model that deals the worlds (``agents/beliefs``); empty: the search's selection model."""
    batch: int = setting(8192, "an int 64..262,144 (playouts advanced together)", low=64, high=262_144)
    """Playouts loaded into the compiled core at once."""
    opponents: dict[str, float] = field(
        default_factory=lambda: {"self": 1.0},
        metadata={
            "allowed": Allowed(
                "a mapping of `self` or policy networks' specs to weights >= 0",
                each=Allowed(low=0),
                max_len=8,
            )
        },
    )
    """Who plays the other seats of the playouts, by share of the worlds: ``self`` the network, or
    another policy network (``zoo:``, ``npz:``, ``ppo:``) for the table; the valued seat is always the
    network. Each half of the worlds is shared out the same way, and every candidate meets the same."""


@dataclass
class FitSettings:
    """The targets and the fit of the next generation's network."""

    kl: float = setting(0.05, "a number in (0, 10]", low=0, low_open=True, high=10)
    """Mean KL divergence of the target pi' from pi over the positions; sets the temperature tau."""
    kinds: list[str] = field(
        default_factory=lambda: list(ACTION_KINDS),
        metadata={
            "allowed": Allowed(
                f"a list of decision types from {', '.join(ACTION_KINDS)}",
                max_len=len(ACTION_KINDS),
                each=Allowed(choices=ACTION_KINDS),
            )
        },
    )
    """Decision types whose playout values move the targets; an action of another type keeps pi's
    probability, and the values move the choice only among the rest (``[draw, take, discard, hit,
    spread]`` leaves every drop as the network plays it). Drop, draw and take are the choices of
    one decision, so none or two or more of them are listed."""
    epochs: int = setting(4, "an int 1..1,000", low=1, high=1000)
    """Passes over the positions of the window."""
    window: int = setting(1, "an int 1..100 (this generation and the ones before it)", low=1, high=100)
    """Generations whose positions and targets the fit reads: 1 is this one's only; 3 adds the two before."""
    batch_size: int = setting(512, "an int 1..65,536", low=1, high=65_536)
    """Positions per gradient step."""
    learning_rate: float = setting(1.0e-4, "a number in (0, 1]", low=0, low_open=True, high=1)
    """Adam's step size (policy and value)."""
    value: list[int] = field(
        default_factory=lambda: [256, 256],
        metadata={
            "allowed": Allowed(
                "hidden layer sizes 1..4,096, at most 8", max_len=8, each=Allowed(low=1, high=4096)
            )
        },
    )
    """Hidden layers of the value network, regressed on the playout returns of the network's move."""


@dataclass
class AcceptSettings:
    """When a generation replaces the current network, and what is recorded of it."""

    hands: int = setting(10_000, "an even int 4..1,000,000 (two deals at least)", low=4, high=1_000_000)
    """Duplicate hands of the new network against the current one."""
    rule: str = setting("mean", " or ".join(ACCEPT_RULES), choices=ACCEPT_RULES)
    """``mean``: accepted when its mean margin is above 0; ``interval``: when its 95% interval is;
    ``record``: when, against ``record``'s opponents on the same deals, it beats the current network
    by a mean above 0 (each opponent's difference paired by deal group, then averaged)."""
    record: dict[str, int] = field(
        default_factory=lambda: {"heuristic:expert": 4000, "search:ismcts": 1000},
        metadata={"allowed": _RECORD},
    )
    """Opponents every generation's network is scored against, with their duplicate hands."""


@dataclass
class ImproveConfig:
    """Generations of policy improvement by network playouts (``tonk improve``; docs/TRAINING.md)."""

    name: str = setting("improve", "a name of letters, digits, _ . - (at most 64)", pattern=_NAME)
    """The run's name; the run folder is ``OUT_DIR/NAME__SEED__TIME``."""
    seed: int = setting(0, f"an int 0..{MAX_SEED}", low=0, high=MAX_SEED)
    """Seed of everything: deals, worlds, candidates, fits."""
    players: int = setting(2, "2, 3 or 4", low=2, high=4)
    """Players at the table."""
    rules: str = setting("standard", "a rules preset name")
    """Rules preset."""
    rule_options: dict[str, Any] = setting(factory=dict, words="a mapping of rules options")
    """Rules options changed from the preset."""
    start: str = setting("zoo:2p", "a policy network's spec (zoo:NAME, npz:FILE, ppo:RUN)")
    """The network of generation 0."""
    generations: int = setting(6, "an int 1..1,000", low=1, high=1000)
    """Generations to run (each: positions, values, targets, fit, acceptance)."""
    workers: int = setting(2, f"an int 1..{MAX_WORKERS}", low=1, high=MAX_WORKERS)
    """Processes that collect positions, play the playouts and evaluate."""
    out_dir: str = setting("runs", "a folder")
    """Where run folders are made."""
    positions: PositionSettings = field(default_factory=PositionSettings)
    values: ValueSettings = field(default_factory=ValueSettings)
    fit: FitSettings = field(default_factory=FitSettings)
    accept: AcceptSettings = field(default_factory=AcceptSettings)

    def make_rules(self) -> Any:
        """The :class:`~tonk_env.engine.TonkRules` of the table."""
        return make_rules(self.rules, **self.rule_options)


def config_from_dict(data: dict[str, Any]) -> ImproveConfig:
    """Build and check a config; every refusal one line naming the key, its value and what is allowed."""
    cfg: ImproveConfig = build(ImproveConfig, data, WHAT, lenient=True)
    try:
        cfg.make_rules()
    except ValueError as e:
        invalid(WHAT, "rules", cfg.rules, f"a preset with valid options ({e})")
    for spec in (cfg.start, *cfg.accept.record):
        try:
            check_spec(spec)
        except ValueError as e:
            invalid(WHAT, "start" if spec == cfg.start else "accept.record", spec, f"an agent spec ({e})")
    for spec in cfg.positions.opponents:
        if spec != "self":
            try:
                check_spec(spec)
            except ValueError as e:
                invalid(WHAT, "positions.opponents", spec, f"`self` or an agent spec ({e})")
    if sum(cfg.positions.opponents.values()) <= 0:
        invalid(WHAT, "positions.opponents", cfg.positions.opponents, "weights with a positive sum")
    for spec in cfg.values.opponents:
        if spec != "self" and not spec.startswith(NETWORK_PREFIXES):
            invalid(
                WHAT, "values.opponents", spec, f"`self` or a policy network ({', '.join(NETWORK_PREFIXES)})"
            )
    if sum(cfg.values.opponents.values()) <= 0:
        invalid(WHAT, "values.opponents", cfg.values.opponents, "weights with a positive sum")
    if not cfg.fit.kinds:
        invalid(WHAT, "fit.kinds", cfg.fit.kinds, "at least one decision type (else no value moves a target)")
    if len(set(cfg.fit.kinds) & set(START_KINDS)) == 1:  # the others of its decisions keep pi's: so does it
        invalid(
            WHAT,
            "fit.kinds",
            cfg.fit.kinds,
            f"none, or two or more, of {', '.join(START_KINDS)} (one alone moves nothing)",
        )
    if cfg.accept.hands % 2:
        invalid(WHAT, "accept.hands", cfg.accept.hands, "an even number (duplicate pairs)")
    if cfg.accept.rule == "record" and not cfg.accept.record:
        invalid(WHAT, "accept.rule", cfg.accept.rule, "mean or interval when accept.record names no opponent")
    return cfg


def load_improve_config(path: str | Path, overrides: list[str] | None = None) -> ImproveConfig:
    """Read ``path`` (YAML) and apply ``key=value`` overrides; ``ValueError`` naming the file or key."""
    data = read_config_file(path)
    extra = parse_overrides(overrides or [])
    data = merge(data, extra)
    for section, key in (
        ("positions", "opponents"),
        ("values", "opponents"),
        ("accept", "record"),
    ):  # a mapping given replaces
        given = extra.get(section, {}).get(key) if isinstance(extra.get(section), dict) else None
        if given is not None:
            data[section][key] = given
    return config_from_dict(data)
