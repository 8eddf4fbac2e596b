"""The tournament config: what a tournament plays (the YAML keys of ``tonk tournament CONFIG.yaml``)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from eval.duplicate import MAX_HANDS
from tonk_env import engine
from tonk_env.engine.numbers import MAX_SEED
from tonk_env.errors import yaml_message
from tonk_env.runtime import MAX_WORKERS

FORMATS = ("round-robin", "gauntlet")
BACKENDS = ("local", "ray")
#: hands of each match a tournament records at most (``sample_hands``)
MAX_SAMPLE_HANDS = 1000


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
    sample_hands: int = 4
    #: Seat peek agents (``peek:*``, cheats that read the hidden cards; :mod:`agents.peek`).
    allow_peek: bool = False

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
        need(is_int(self.hands) and 1 <= self.hands <= MAX_HANDS, "hands", f"an int 1..{MAX_HANDS:,}")
        need(is_int(self.players) and 2 <= self.players <= 4, "players", "2, 3 or 4")
        need(self.format in FORMATS, "format", " or ".join(FORMATS))
        need(isinstance(self.rules, str), "rules", "a rules preset name")
        need(isinstance(self.rule_options, dict), "rule_options", "a mapping of rules options")
        need(is_int(self.seed) and 0 <= self.seed <= MAX_SEED, "seed", f"an int 0..{MAX_SEED} (2**32 - 1)")
        need(self.out is None or isinstance(self.out, str), "out", "a folder")
        need(is_int(self.workers) and 1 <= self.workers <= MAX_WORKERS, "workers", f"an int 1..{MAX_WORKERS}")
        need(self.backend in BACKENDS, "backend", " or ".join(BACKENDS))
        need(self.address is None or isinstance(self.address, str), "address", "a Ray address (HOST:PORT)")
        need(
            is_int(self.bootstrap) and 0 <= self.bootstrap <= 1_000_000,
            "bootstrap",
            "an int 0..1,000,000 (0: no intervals)",
        )
        need(self.anchor is None or isinstance(self.anchor, str), "anchor", "an entrant's spec, auto or null")
        need(is_int(self.max_tables) and 1 <= self.max_tables <= 10_000, "max_tables", "an int 1..10,000")
        need(
            is_int(self.sample_hands) and 0 <= self.sample_hands <= MAX_SAMPLE_HANDS,
            "sample_hands",
            f"an int 0..{MAX_SAMPLE_HANDS} (hands of each match recorded in hands/)",
        )
        need(isinstance(self.allow_peek, bool), "allow_peek", "true or false")
        if self.format == "round-robin" and self.fixed:
            raise ValueError(f"{where}: `fixed` is for format gauntlet; a round robin plays every entrant")
        if self.format == "gauntlet" and not self.fixed:
            raise ValueError(f"{where}: format gauntlet needs `fixed`, the agents every entrant plays")
        if not self.entrants:
            raise ValueError(f"{where}: no entrants")

    def make_rules(self) -> engine.TonkRules:
        """The :class:`TonkRules` of the tournament."""
        return engine.make_rules(self.rules, **self.rule_options)

    @property
    def rules_name(self) -> str:
        """The preset plus its changed options, as the reports show it."""
        return self.rules + "".join(f" --set {k}={v}" for k, v in self.rule_options.items())


def load_config(path: str | Path) -> TournamentConfig:
    """Read a tournament YAML file."""
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"{p}: no such config file")
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8")) or {}
    except (yaml.YAMLError, UnicodeDecodeError, ValueError) as e:  # ValueError: a bad date, !!int abc
        raise ValueError(f"{p}: not valid YAML ({yaml_message(e)})") from None
    except RecursionError:
        raise ValueError(f"{p}: not valid YAML (nested too deeply)") from None
    return TournamentConfig.from_dict(data, where=str(p))


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
