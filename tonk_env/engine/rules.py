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
from typing import Any, NoReturn

from .numbers import parse_float, parse_int
from .schema import check, check_value, field_allowed, invalid, setting, unknown

MIN_PLAYERS = 2
MAX_PLAYERS = 6

CAUGHT_PAY = ("standard", "double_to_lowest_only", "everyone_double")
INSTANT_WIN_TIE = ("void", "rank")
STOCK_OUT_TIE = ("void", "split")
#: The largest payment option (stakes): every payoff, and a running total over 10**12 hands, stays exact.
MAX_PAY = 1000
#: The largest ``max_turns`` (a hand of more turns than this is not a game of Tonk).
MAX_TURNS = 10_000
#: Whose settings the messages name, and the words of a payment option.
WHAT = "rules option"
_PAY = f"a number of stakes 0..{MAX_PAY}"


@dataclass(frozen=True)
class TonkRules:
    """A complete, validated Tonk ruleset (see ``docs/RULES.md``)."""

    hand_size: int = setting(5, "5 or 7", choices=(5, 7))
    """Cards dealt to each player: 5 or 7."""
    upcard: bool = setting(True, "true or false")
    """Turn the card after the deal face up to start the discard pile."""
    instant_win_totals: tuple[int, ...] = (49, 50)
    """Dealt counts that win at once; empty turns the 49/50 instant win off."""
    instant_win_pay: float = setting(2, _PAY, low=0, high=MAX_PAY)
    """Stakes an instant winner receives from every other player."""
    instant_win_tie: str = setting("void", " or ".join(map(repr, INSTANT_WIN_TIE)), choices=INSTANT_WIN_TIE)
    """Several instant winners: ``void`` the hand, or ``rank`` them (a low count beats 50 beats 49)."""
    instant_win_low_max: int | None = setting(None, "null (off) or an int 0..50", low=0, high=50)
    """A dealt count at or below this also wins at once (None = off)."""
    ace_high: bool = setting(False, "true or false")
    """Allow Q-K-A runs (never K-A-2)."""
    may_discard_taken: bool = setting(True, "true or false")
    """A player may discard the card just taken from the pile."""
    max_turns: int = setting(200, f"an int 1..{MAX_TURNS}", low=1, high=MAX_TURNS)
    """The hand is scored as stock exhausted after this many turns (all seats)."""
    tonk_out_pay: float = setting(2, _PAY, low=0, high=MAX_PAY)
    """Stakes from each other player for emptying the hand by a spread or hit."""
    run_out_pay: float = setting(1, _PAY, low=0, high=MAX_PAY)
    """Stakes from each other player for emptying the hand by the discard."""
    caught_pay: str = setting("standard", ", ".join(map(repr, CAUGHT_PAY)), choices=CAUGHT_PAY)
    """How a caught dropper pays: ``standard``, ``double_to_lowest_only``, ``everyone_double``."""
    stock_out_tie: str = setting("void", " or ".join(map(repr, STOCK_OUT_TIE)), choices=STOCK_OUT_TIE)
    """A tie for lowest when the stock runs out: ``void`` or ``split``."""
    spread_wait: int = setting(0, "an int 0..20", low=0, high=20)
    """Own turns a player may not drop after laying a new spread."""
    hit_wait: int = setting(0, "an int 0..20", low=0, high=20)
    """Own turns a player may not drop after one of their spreads is hit."""
    wait_cumulative: bool = setting(True, "true or false")
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
                unknown("unknown rules option", name, OPTION_NAMES, "known options")
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


def _fail(name: str, value: Any, allowed: str) -> NoReturn:
    invalid(WHAT, name, value, allowed)


def _validate(r: TonkRules) -> None:
    """Raise ``ValueError`` for the first invalid option; normalise the rest.

    ``hand_size`` first (the instant-win counts depend on it), then the
    instant-win counts, then every option against its declaration
    (:mod:`tonk_env.engine.schema`).
    """
    check_value(WHAT, "hand_size", r.hand_size, int, field_allowed(TonkRules, "hand_size"))
    _validate_instant_win(r)
    check(r, WHAT)
    if (
        r.instant_win_low_max is not None
        and r.instant_win_totals
        and r.instant_win_low_max >= min(r.instant_win_totals)
    ):
        _fail(
            "instant_win_low_max",
            r.instant_win_low_max,
            f"below the lowest instant_win_totals value {min(r.instant_win_totals)}",
        )
    for name in ("instant_win_pay", "tonk_out_pay", "run_out_pay"):
        v = float(getattr(r, name))
        object.__setattr__(r, name, int(v) if v.is_integer() else v)  # 2.0 and 2 are one ruleset, one hash


def _validate_instant_win(r: TonkRules) -> None:
    """``instant_win_totals``: distinct counts the hand size can make, stored sorted, as a tuple."""
    totals = r.instant_win_totals
    if isinstance(totals, (list, tuple, set, frozenset)) and all(_is_int(t) for t in totals):
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
    if not options:  # a preset is made once (rules are frozen): games dealt by preset name stay cheap
        made = _MADE.get(preset)
        if made is None:
            made = _MADE[preset] = TonkRules().replace(**PRESETS[preset])
        return made
    return TonkRules().replace(**{**PRESETS[preset], **options})


#: The presets made so far, by name.
_MADE: dict[str, TonkRules] = {}


def parse_option(name: str, text: str) -> Any:
    """Convert a command-line value (``on``, ``7``, ``49,50``, ``none``) for option ``name``."""
    if name not in OPTION_NAMES:
        unknown("unknown rules option", name, OPTION_NAMES, "known options")
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
