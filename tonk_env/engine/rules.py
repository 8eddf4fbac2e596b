"""The rules configuration: one frozen, validated dataclass with named presets.

Option names are public API and match ``docs/RULES.md`` exactly. Build a
ruleset with :func:`make_rules` (a preset changed option by option) or
:meth:`TonkRules.replace`. Every invalid name, value or combination raises
``ValueError`` naming the option and what is allowed; nothing falls back to a
default silently.

=====================  ==========  ===========================================
option                 standard    allowed
=====================  ==========  ===========================================
hand_size              5           5 or 7
upcard                 True        bool
instant_win_totals     (49, 50)    tuple of distinct counts (empty = off)
instant_win_pay        2           number 0..1000 (stakes from each other player)
instant_win_tie        "void"      "void" or "rank"
instant_win_low_max    None        None (off) or an int 0..50
ace_high               False       bool (Q-K-A allowed; never a wrap-around)
may_discard_taken      True        bool
max_turns              200         int 1..10000 (all players' turns together)
tonk_out_pay           2           number 0..1000
run_out_pay            1           number 0..1000
caught_pay             "standard"  "standard", "double_to_lowest_only",
                                   "everyone_double"
stock_out_tie          "void"      "void" or "split"
spread_wait            0           int 0..20 (own turns without dropping)
hit_wait               0           int 0..20
wait_cumulative        True        bool
=====================  ==========  ===========================================
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from .numbers import parse_float, parse_int

MIN_PLAYERS = 2
MAX_PLAYERS = 6

CAUGHT_PAY = ("standard", "double_to_lowest_only", "everyone_double")
INSTANT_WIN_TIE = ("void", "rank")
STOCK_OUT_TIE = ("void", "split")
#: The largest payment option (stakes): every payoff, and a running total over 10**12 hands, stays exact.
MAX_PAY = 1000
#: The largest ``max_turns`` (a hand of more turns than this is not a game of Tonk).
MAX_TURNS = 10_000


@dataclass(frozen=True)
class TonkRules:
    """A complete, validated Tonk ruleset (see ``docs/RULES.md``)."""

    hand_size: int = 5
    """Cards dealt to each player: 5 or 7."""
    upcard: bool = True
    """Turn the card after the deal face up to start the discard pile."""
    instant_win_totals: tuple[int, ...] = (49, 50)
    """Dealt counts that win at once; empty turns the 49/50 instant win off."""
    instant_win_pay: float = 2
    """Stakes an instant winner receives from every other player."""
    instant_win_tie: str = "void"
    """Several instant winners: ``void`` the hand, or ``rank`` them (a low count beats 50 beats 49)."""
    instant_win_low_max: int | None = None
    """A dealt count at or below this also wins at once (None = off)."""
    ace_high: bool = False
    """Allow Q-K-A runs (never K-A-2)."""
    may_discard_taken: bool = True
    """A player may discard the card just taken from the pile."""
    max_turns: int = 200
    """The hand is scored as stock exhausted after this many turns (all seats)."""
    tonk_out_pay: float = 2
    """Stakes from each other player for emptying the hand by a spread or hit."""
    run_out_pay: float = 1
    """Stakes from each other player for emptying the hand by the discard."""
    caught_pay: str = "standard"
    """How a caught dropper pays: ``standard``, ``double_to_lowest_only``, ``everyone_double``."""
    stock_out_tie: str = "void"
    """A tie for lowest when the stock runs out: ``void`` or ``split``."""
    spread_wait: int = 0
    """Own turns a player may not drop after laying a new spread."""
    hit_wait: int = 0
    """Own turns a player may not drop after one of their spreads is hit."""
    wait_cumulative: bool = True
    """Waits add up; off = a new wait replaces a shorter one."""

    _hash: str = field(default="", init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        _validate(self)
        digest = hashlib.sha256(json.dumps(self.to_dict(), sort_keys=True).encode()).hexdigest()[:12]
        object.__setattr__(self, "_hash", digest)

    @property
    def hash(self) -> str:
        """A short stable hash of the options, for records and checkpoints."""
        return self._hash

    def to_dict(self) -> dict[str, Any]:
        """Return the options as a JSON-ready dict (tuples become lists)."""
        d = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.init}
        d["instant_win_totals"] = list(self.instant_win_totals)
        return d

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TonkRules:
        """Build rules from a dict of options; unknown names are errors."""
        return TonkRules().replace(**data)

    @classmethod
    def preset(cls, name: str, **options: Any) -> TonkRules:
        """Return a named preset, changed option by option."""
        return make_rules(name, **options)

    def replace(self, **options: Any) -> TonkRules:
        """Return a copy with some options changed; unknown names are errors."""
        for name in options:
            if name not in OPTION_NAMES:
                raise ValueError(f"unknown rules option {name!r}; known options: {', '.join(OPTION_NAMES)}")
        return dataclasses.replace(self, **options)

    def check_players(self, num_players: int) -> None:
        """Raise ``ValueError`` unless this ruleset can be dealt to ``num_players``."""
        if isinstance(num_players, bool) or not isinstance(num_players, int):
            raise ValueError(f"num_players must be an int {MIN_PLAYERS}..{MAX_PLAYERS}, got {num_players!r}")
        if not MIN_PLAYERS <= num_players <= MAX_PLAYERS:
            raise ValueError(f"num_players must be {MIN_PLAYERS}..{MAX_PLAYERS}, got {num_players}")
        needed = num_players * self.hand_size + (1 if self.upcard else 0)
        if needed > 52:
            raise ValueError(
                f"hand_size={self.hand_size} with num_players={num_players} needs {needed} cards; "
                "the deck has 52"
            )


OPTION_NAMES: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(TonkRules) if f.init)


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _fail(name: str, value: Any, allowed: str) -> None:
    shown = repr(value)
    if len(shown) > 60:  # a 300-digit number or a long list: the start says enough
        shown = shown[:57] + "..."
    raise ValueError(f"rules option {name}={shown} is invalid; allowed: {allowed}")


def _validate(r: TonkRules) -> None:
    """Raise ``ValueError`` for the first invalid option (checked in this order); normalise the rest."""
    if r.hand_size not in (5, 7) or not _is_int(r.hand_size):
        _fail("hand_size", r.hand_size, "5 or 7")
    for name in ("upcard", "ace_high", "may_discard_taken", "wait_cumulative"):
        if not isinstance(getattr(r, name), bool):
            _fail(name, getattr(r, name), "true or false")
    _validate_instant_win(r)
    _validate_pays(r)
    _validate_choices(r)
    _validate_turns(r)


def _validate_instant_win(r: TonkRules) -> None:
    """``instant_win_totals`` (stored sorted, as a tuple) and ``instant_win_low_max``."""
    totals = r.instant_win_totals
    if isinstance(totals, (list, tuple, set, frozenset)):
        totals = tuple(sorted(totals))
        object.__setattr__(r, "instant_win_totals", totals)
    max_count = 10 * r.hand_size
    if (
        not isinstance(totals, tuple)
        or not all(_is_int(t) and 1 <= t <= max_count for t in totals)
        or len(set(totals)) != len(totals)
    ):
        _fail(
            "instant_win_totals",
            r.instant_win_totals,
            f"a list of distinct counts 1..{max_count} (empty = off)",
        )
    low = r.instant_win_low_max
    if low is not None and not (_is_int(low) and 0 <= low <= 50):
        _fail("instant_win_low_max", low, "null (off) or an int 0..50")
    if low is not None and totals and low >= min(totals):
        _fail("instant_win_low_max", low, f"below the lowest instant_win_totals value {min(totals)}")


def _validate_pays(r: TonkRules) -> None:
    """The stakes options: numbers 0..``MAX_PAY``, a whole float stored as an int."""
    for name in ("instant_win_pay", "tonk_out_pay", "run_out_pay"):
        v = getattr(r, name)
        if not _is_number(v) or not 0 <= v <= MAX_PAY:  # NaN fails the comparison too
            _fail(name, v, f"a number of stakes 0..{MAX_PAY}")
        if isinstance(v, float) and v.is_integer():
            object.__setattr__(r, name, int(v))  # 2.0 and 2 are one ruleset, one hash


def _validate_choices(r: TonkRules) -> None:
    """The options that name one of a few choices."""
    if r.instant_win_tie not in INSTANT_WIN_TIE:
        _fail("instant_win_tie", r.instant_win_tie, " or ".join(map(repr, INSTANT_WIN_TIE)))
    if r.caught_pay not in CAUGHT_PAY:
        _fail("caught_pay", r.caught_pay, ", ".join(map(repr, CAUGHT_PAY)))
    if r.stock_out_tie not in STOCK_OUT_TIE:
        _fail("stock_out_tie", r.stock_out_tie, " or ".join(map(repr, STOCK_OUT_TIE)))


def _validate_turns(r: TonkRules) -> None:
    """``max_turns`` and the waits (counts of turns)."""
    if not _is_int(r.max_turns) or not 1 <= r.max_turns <= MAX_TURNS:
        _fail("max_turns", r.max_turns, f"an int 1..{MAX_TURNS}")
    for name in ("spread_wait", "hit_wait"):
        v = getattr(r, name)
        if not _is_int(v) or not 0 <= v <= 20:
            _fail(name, v, "an int 0..20")


PRESETS: dict[str, dict[str, Any]] = {
    "standard": {},
    "hit_penalty": {"hit_wait": 1, "wait_cumulative": True},
    "full_waiting": {"spread_wait": 3, "hit_wait": 1, "wait_cumulative": True},
    "seven_card": {"hand_size": 7, "instant_win_totals": ()},
    "low_tonk": {"instant_win_low_max": 11, "instant_win_tie": "rank"},
    "no_upcard": {"upcard": False},
}


def make_rules(preset: str | TonkRules = "standard", **options: Any) -> TonkRules:
    """Return the named preset (or a rules object) with ``options`` changed."""
    if isinstance(preset, TonkRules):
        return preset.replace(**options) if options else preset
    if preset not in PRESETS:
        raise ValueError(f"unknown rules preset {preset!r}; known presets: {', '.join(PRESETS)}")
    return TonkRules().replace(**{**PRESETS[preset], **options})


def parse_option(name: str, text: str) -> Any:
    """Convert a command-line value (``on``, ``7``, ``49,50``, ``none``) for option ``name``."""
    if name not in OPTION_NAMES:
        raise ValueError(f"unknown rules option {name!r}; known options: {', '.join(OPTION_NAMES)}")
    t = text.strip()
    low = t.lower()
    default = getattr(TonkRules(), name)
    if name == "instant_win_totals":
        if low in ("", "none", "off", "[]"):
            return ()
        try:
            return tuple(parse_int(x) for x in t.strip("[]()").replace(",", " ").split())
        except ValueError:
            _fail(name, text, "a comma separated list of counts, e.g. 49,50, or off")
    if name == "instant_win_low_max":
        if low in ("none", "null", "off"):
            return None
        try:
            return parse_int(t)
        except ValueError:
            _fail(name, text, "an int or off")
    if isinstance(default, bool):
        if low in ("1", "true", "on", "yes"):
            return True
        if low in ("0", "false", "off", "no"):
            return False
        _fail(name, text, "on/off, true/false")
    if isinstance(default, int) and name in ("hand_size", "max_turns", "spread_wait", "hit_wait"):
        try:
            return parse_int(t)
        except ValueError:
            _fail(name, text, "an int")
    if isinstance(default, (int, float)):
        try:
            v = parse_float(t)
        except ValueError:
            _fail(name, text, "a number")
        return int(v) if v.is_integer() and abs(v) < 2**53 else v  # 1e308 stays 1e308 in messages
    return t


def parse_assignments(items: list[str]) -> dict[str, Any]:
    """Parse ``["option=value", ...]`` into a dict of typed options."""
    out: dict[str, Any] = {}
    for item in items:
        if "=" not in item:
            raise ValueError(f"expected option=value, got {item!r}")
        name, _, value = item.partition("=")
        out[name.strip()] = parse_option(name.strip(), value)
    return out
