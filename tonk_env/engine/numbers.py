"""Numbers typed by a user: only ASCII digits, and seeds in one range everywhere.

Python's ``int()`` and ``float()`` accept any Unicode decimal digits
(``int("١٠٠") == 100``) and underscores (``"1_000"``); a spec, a rules option
or a flag written that way is a typo or a trick, so the parsers here accept
only ``[+-]`` and ASCII digits (with a decimal point and an exponent for
floats). Every seed in Tonk RL is an int ``0..MAX_SEED``: the range numpy's
seeding takes; a negative seed is refused by every command alike.
"""

from __future__ import annotations

import re

#: The largest seed (numpy's global generator takes ``0 .. 2**32 - 1``); seeds are never negative.
MAX_SEED = 2**32 - 1

_INT = re.compile(r"[+-]?[0-9]{1,40}")
_FLOAT = re.compile(r"[+-]?([0-9]{1,400}(\.[0-9]{0,400})?|\.[0-9]{1,400})([eE][+-]?[0-9]{1,4})?")


def _shown(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:37] + "...")


def parse_int(text: str, what: str = "value") -> int:
    """An int written in ASCII digits (an optional sign, at most 40 digits); ``ValueError`` otherwise."""
    t = text.strip()
    if not _INT.fullmatch(t):
        raise ValueError(f"{what} {_shown(text)} is not an integer (ASCII digits 0-9)")
    return int(t)


def parse_float(text: str, what: str = "value") -> float:
    """A finite number written in ASCII digits (``2``, ``0.5``, ``1e-3``); ``ValueError`` otherwise."""
    t = text.strip()
    if not _FLOAT.fullmatch(t):
        raise ValueError(f"{what} {_shown(text)} is not a number (ASCII digits 0-9)")
    v = float(t)
    if v in (float("inf"), float("-inf")):
        raise ValueError(f"{what} {_shown(text)} is too large a number")
    return v


#: The largest seed a library function takes from its caller (tournaments derive 63-bit match seeds).
MAX_DERIVED_SEED = 2**64 - 1


def check_seed(seed: object, what: str = "seed", high: int = MAX_SEED) -> int:
    """``seed`` if it is an int ``0..high``, else ``ValueError`` saying the range (never negative)."""
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= high:
        shown = seed if not isinstance(seed, int) or abs(seed) < 10**40 else f"{str(seed)[:20]}..."
        span = f"0..{high} (2**32 - 1)" if high == MAX_SEED else f"0..{high}"
        raise ValueError(f"{what} must be an integer {span}, got {shown!r}")
    return seed
