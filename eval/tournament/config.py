"""The tournament config: what a tournament plays (the YAML keys of ``tonk tournament CONFIG.yaml``)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tonk_env import engine
from tonk_env.engine import schema
from tonk_env.engine.numbers import MAX_SEED
from tonk_env.engine.schema import Allowed, build, setting
from tonk_env.errors import read_yaml
from tonk_env.runtime import MAX_HANDS, MAX_WORKERS

FORMATS = ("round-robin", "gauntlet")
BACKENDS = ("local", "ray")
#: hands of each match a tournament records at most (``sample_hands``)
MAX_SAMPLE_HANDS = 1000


#: An agent spec or glob: a string with something besides spaces.
_SPECS = Allowed("a list of agent specs or globs", each=Allowed(pattern=r"(?s).*\S.*"))


def _specs() -> Any:
    """A field of agent specs or globs."""
    return field(default_factory=list, metadata={"allowed": _SPECS})


@dataclass
class TournamentConfig:
    """What a tournament plays; the YAML keys of ``tonk tournament CONFIG.yaml``."""

    entrants: list[str] = _specs()
    """Agent specs or globs of the entrants."""
    hands: int = setting(200, f"an int 1..{MAX_HANDS:,}", low=1, high=MAX_HANDS)
    """Duplicate hands of each match."""
    players: int = setting(2, "2, 3 or 4", low=2, high=4)
    """Players at each table."""
    format: str = setting("round-robin", " or ".join(FORMATS), choices=FORMATS)
    """``round-robin`` (every entrant plays every other) or ``gauntlet`` (every entrant plays ``fixed``)."""
    fixed: list[str] = _specs()
    """The agents every entrant plays in a gauntlet."""
    rules: str = setting("standard", "a rules preset name")
    """Rules preset."""
    rule_options: dict[str, Any] = setting(factory=dict, words="a mapping of rules options")
    """Rules options changed from the preset."""
    seed: int = setting(0, f"an int 0..{MAX_SEED} (2**32 - 1)", low=0, high=MAX_SEED)
    """Seed of the deals."""
    out: str | None = setting(None, "a folder")
    """The tournament folder (None: ``tournaments/<config name>``)."""
    workers: int = setting(1, f"an int 1..{MAX_WORKERS}", low=1, high=MAX_WORKERS)
    """Processes that play matches."""
    backend: str = setting("local", " or ".join(BACKENDS), choices=BACKENDS)
    """Where matches run: ``local`` processes or a ``ray`` cluster."""
    address: str | None = setting(None, "a Ray address (HOST:PORT)")
    """The Ray cluster to join (``backend: ray``)."""
    bootstrap: int = setting(1000, "an int 0..1,000,000 (0: no intervals)", low=0, high=1_000_000)
    """Bootstrap resamples of the ratings' intervals."""
    anchor: str | None = setting("auto", "an entrant's spec, auto or null")
    """The entrant whose rating is fixed (auto: the first baseline; null: none)."""
    max_tables: int = setting(1000, "an int 1..10,000", low=1, high=10_000)
    """Matches a tournament may schedule at most."""
    sample_hands: int = setting(
        4,
        f"an int 0..{MAX_SAMPLE_HANDS} (hands of each match recorded in hands/)",
        low=0,
        high=MAX_SAMPLE_HANDS,
    )
    """Hands of each match recorded in ``hands/``."""
    allow_peek: bool = setting(False, "true or false")
    """Seat peek agents (``peek:*``, cheats that read the hidden cards; :mod:`agents.peek`)."""

    @classmethod
    def from_dict(cls, data: dict[str, Any], where: str = "tournament config") -> TournamentConfig:
        """Build and check a config; an unknown key is an error naming it (and the nearest known one)."""
        if not isinstance(data, dict):
            raise ValueError(f"{where}: expected a mapping of keys, got {type(data).__name__}")
        data = {k: [v] if k in ("entrants", "fixed") and isinstance(v, str) else v for k, v in data.items()}
        cfg: TournamentConfig = build(cls, data, f"{where}:")
        cfg.check(where)
        return cfg

    def check(self, where: str = "tournament config") -> None:
        """Raise ``ValueError`` naming the first bad value (one spec given for a list becomes the list)."""
        if isinstance(self.entrants, str):
            self.entrants = [self.entrants]
        if isinstance(self.fixed, str):
            self.fixed = [self.fixed]
        schema.check(self, f"{where}:")
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
    data = read_yaml(p) or {}
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
