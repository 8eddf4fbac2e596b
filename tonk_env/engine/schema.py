"""Settings declared once: dataclass fields with their allowed values, checked by one validator.

Every settings object of Tonk RL is a dataclass whose annotations give the
types and whose :func:`setting` fields give the allowed values, in words and
as a range, a set of choices or a pattern:

.. code-block:: python

    gamma: float = setting(0.995, "a number in (0, 1]", low=0, low_open=True, high=1)

The rules options (:class:`tonk_env.engine.TonkRules`), the env settings
(:mod:`tonk_env.settings`), the training config (:mod:`train.config`), the
tournament config (:mod:`eval.tournament.config`), the server's limits
(:mod:`frontends.server.limits`) and the zoo cards (:mod:`agents.zoo.card`)
are declared this way. :func:`build` makes one from a mapping (YAML, JSON,
keyword arguments): an unknown key is refused with the nearest known one, a
missing required field is named, every value's type is checked and nested
dataclasses are built in turn. :func:`check` checks a built object's values
against its declarations; :func:`check_value` checks one keyword argument.
Every refusal is a :class:`SettingError`, a ``ValueError`` of one line that
names the setting, its value and what is allowed::

    config ppo.gamma=2.0 is invalid; allowed: a number in (0, 1]

It lives in the engine, the lowest layer, so every layer (the engine's rules
included) validates through it; it needs only the standard library. That is
why it is not pydantic: the engine imports no third-party package but numpy,
and the rules must validate here like every other setting.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import math
import numbers
import re
import reprlib
import types
import typing
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

__all__ = [
    "Allowed",
    "SettingError",
    "build",
    "check",
    "check_value",
    "invalid",
    "setting",
    "show",
    "unknown",
]

#: Shows a value in a message, cut short (a YAML alias can make a huge structure of a few lines).
_SHORT = reprlib.Repr()
_SHORT.maxlevel, _SHORT.maxlist, _SHORT.maxdict = 3, 12, 12
_SHORT.maxstring, _SHORT.maxother, _SHORT.maxlong = 120, 120, 40


class SettingError(ValueError):
    """A setting outside its allowed values: one line naming it, its value and what is allowed."""


def show(value: Any) -> str:
    """``repr(value)``, cut short past a length or a depth."""
    text = _SHORT.repr(value)
    return text if len(text) <= 200 else text[:200] + "..."


def invalid(what: str, key: str, value: Any, allowed: str) -> NoReturn:
    """Raise the :class:`SettingError` of ``key=value`` (``what``: whose setting, e.g. ``config``)."""
    lead = f"{what} " if what else ""
    raise SettingError(f"{lead}{key}={show(value)} is invalid; allowed: {allowed}")


@dataclass(frozen=True)
class Allowed:
    """The allowed values of a setting: the words of its messages and what they say, to check."""

    words: str = ""
    """What is allowed, as the message says it (``a number in (0, 1]``); empty: the type's words."""
    low: float | None = None
    """Smallest number allowed (None: no bound); ``low_open`` excludes it."""
    high: float | None = None
    """Largest number allowed (None: no bound); ``high_open`` excludes it."""
    low_open: bool = False
    high_open: bool = False
    finite: bool = True
    """Numbers must be finite (no nan, no inf)."""
    choices: tuple[Any, ...] | None = None
    """The only values allowed (None: any of the type)."""
    pattern: str | None = None
    """A regular expression a string must match whole; ``max_len`` bounds its length."""
    max_len: int | None = None
    """Longest string, or most items of a list."""
    each: Allowed | None = None
    """What each item of a list, or each value of a mapping, may be."""

    def accepts(self, value: Any) -> bool:
        """Whether ``value`` (of the right type) is within these bounds."""
        if self.choices is not None and value not in self.choices:
            return False
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return self._in_range(value)
        if isinstance(value, str):
            if self.pattern is not None and not re.fullmatch(self.pattern, value):
                return False
            return self.max_len is None or len(value) <= self.max_len
        if isinstance(value, (list, tuple)):
            if self.max_len is not None and len(value) > self.max_len:
                return False
            return self.each is None or all(self.each.accepts(v) for v in value)
        return True

    def _in_range(self, v: float) -> bool:
        if self.finite and not math.isfinite(v):
            return False
        if self.low is not None and (v < self.low or (v == self.low and self.low_open)):
            return False
        return self.high is None or not (v > self.high or (v == self.high and self.high_open))


def setting(
    default: Any = dataclasses.MISSING,
    words: str = "",
    *,
    factory: Any = None,
    **bounds: Any,
) -> Any:
    """A dataclass field with its allowed values (:class:`Allowed`'s fields as keywords)."""
    meta = {"allowed": Allowed(words, **bounds)}
    if factory is not None:
        return dataclasses.field(default_factory=factory, metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    """The resolved annotations of the dataclass ``cls`` (resolved once: a ruleset is made often)."""
    return typing.get_type_hints(cls)


def _allowed(f: dataclasses.Field[Any]) -> Allowed:
    return f.metadata.get("allowed") or Allowed()


#: The words of a type, for a message about a field that declares none.
_TYPE_WORDS = {float: "a number", int: "an integer", bool: "true or false", str: "a string"}


def _words(tp: Any) -> str:
    """What a value of the annotation ``tp`` is, in words."""
    if tp in _TYPE_WORDS:
        return _TYPE_WORDS[tp]
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        return ", or ".join("null" if a is type(None) else _words(a) for a in typing.get_args(tp))
    if origin in (list, tuple):
        return "a list"
    if origin is dict or tp is dict:
        return "a mapping"
    return "a mapping" if dataclasses.is_dataclass(tp) else str(tp)


class _Wrong(Exception):
    """A value of another type than its annotation (internal: becomes a :class:`SettingError`)."""


def _typed(value: Any, tp: Any, lenient: bool) -> Any:
    """``value`` as the annotation ``tp`` allows it, or :class:`_Wrong`.

    ``lenient`` (YAML files): a whole float is taken for an int, a number
    written as a string (YAML 1.1 reads ``1e-4`` so) for a float.
    """
    if tp is Any:
        return value
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(tp)
        if value is None and type(None) in args:
            return None
        for a in args:
            if a is not type(None):
                try:
                    return _typed(value, a, lenient)
                except _Wrong:
                    continue
        raise _Wrong
    if tp is bool:
        if not isinstance(value, bool):
            raise _Wrong
        return value
    if tp is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if lenient and isinstance(value, float) and value.is_integer():
            return int(value)
        raise _Wrong
    if tp is float:
        return _number(value, lenient)
    if tp is str:
        if not isinstance(value, str):
            raise _Wrong
        return value
    return _container(value, tp, origin, lenient)


def _number(value: Any, lenient: bool) -> float:
    """A real number (not a bool; numpy's scalars too) as a float."""
    if lenient and isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            raise _Wrong from None
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise _Wrong
    try:
        return float(value)
    except OverflowError:  # an integer past float's range
        raise _Wrong from None


def _container(value: Any, tp: Any, origin: Any, lenient: bool) -> Any:
    """A list, tuple, mapping or dataclass value of the annotation ``tp``."""
    args = typing.get_args(tp)
    if origin is list:
        if not isinstance(value, list):
            raise _Wrong
        return [_typed(v, args[0], lenient) for v in value]
    if origin is tuple:
        if not isinstance(value, (list, tuple)):
            raise _Wrong
        return tuple(_typed(v, args[0], lenient) for v in value)
    if origin is dict or tp is dict:
        if not isinstance(value, dict):
            raise _Wrong
        item = args[1] if args else Any
        return {str(k): _typed(v, item, lenient) for k, v in value.items()}
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        if not isinstance(value, (dict, tp)):
            raise _Wrong
        return value  # built by build(), which knows the path
    return value


def unknown(
    lead: str, key: str, names: Sequence[str], known: str = "known keys", prefix: str = ""
) -> NoReturn:
    """Refuse an unknown key: ``LEAD 'prefix.key' (did you mean 'near'?); KNOWN: a, b, c``."""
    near = difflib.get_close_matches(key, names, n=1)
    hint = f" (did you mean {near[0]!r}?)" if near else ""
    raise SettingError(f"{lead} {show(_join(prefix, key))}{hint}; {known}: {', '.join(names)}")


def _join(prefix: str, key: Any) -> str:
    return f"{prefix}.{key}" if prefix else str(key)


def build(
    cls: type,
    data: Any,
    what: str = "",
    *,
    lenient: bool = False,
    extra: bool = False,
    prefix: str = "",
) -> Any:
    """The dataclass ``cls`` made from the mapping ``data``: keys known, types right, values in range.

    ``what`` names whose settings these are in messages (``config``); ``lenient``
    reads numbers as YAML writes them (see :func:`_typed`); ``extra`` keeps
    unknown keys out of the object instead of refusing them (a record with
    fields of its own).
    """
    if not isinstance(data, dict):
        where = f" {prefix}" if prefix else ""
        raise SettingError(f"{what}{where}: expected a mapping, got {show(data)}".strip())
    hints = _hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    kwargs = {}
    for key, value in data.items():
        if key not in fields:
            if extra:
                continue
            lead = f"{what} unknown key" if what.endswith(":") else f"unknown {what} key".replace("  ", " ")
            known = f"known keys of {prefix}" if prefix else "known keys"
            unknown(lead, str(key), list(fields), known, prefix)
        kwargs[key] = _field_value(what, fields[key], hints[key], value, lenient, extra, _join(prefix, key))
    for name, f in fields.items():
        missing = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        if missing and name not in kwargs:
            raise SettingError(f"{what} missing the field {_join(prefix, name)!r}".strip())
    obj = cls(**kwargs)
    check(obj, what, prefix=prefix, types=False)
    return obj


def _field_value(
    what: str, f: dataclasses.Field[Any], tp: Any, value: Any, lenient: bool, extra: bool, path: str
) -> Any:
    """One field's value from a mapping: typed, nested dataclasses (alone or in a list) built."""
    try:
        out = _typed(value, tp, lenient)
    except _Wrong:
        invalid(what, *_first_wrong(path, value, tp, _allowed(f), lenient))
    inner = _dataclass_in(tp)
    if inner is None:
        return out
    if isinstance(out, dict):
        return build(inner, out, what, lenient=lenient, extra=extra, prefix=path)
    if isinstance(out, list):
        return [
            build(inner, v, what, lenient=lenient, extra=extra, prefix=f"{path}[{i}]")
            if isinstance(v, dict)
            else v
            for i, v in enumerate(out)
        ]
    return out


def _first_wrong(path: str, value: Any, tp: Any, allowed: Allowed, lenient: bool) -> tuple[str, Any, str]:
    """The item of a list or mapping whose type is wrong, as ``(key, value, words)``; else the whole value."""
    args = typing.get_args(tp)
    items: list[tuple[str, Any]] = []
    if typing.get_origin(tp) in (list, tuple) and isinstance(value, (list, tuple)):
        items = [(f"{path}[{i}]", v) for i, v in enumerate(value)]
    elif typing.get_origin(tp) is dict and isinstance(value, dict):
        items = [(f"{path}.{k}", v) for k, v in value.items()]
    for key, v in items:
        try:
            _typed(v, args[-1], lenient)
        except _Wrong:
            return key, v, allowed.each.words if allowed.each and allowed.each.words else _words(args[-1])
    return path, value, allowed.words or _words(tp)


def _dataclass_in(tp: Any) -> type | None:
    """The dataclass that ``tp`` is, or holds in a list or an optional (None: none)."""
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return tp
    for a in typing.get_args(tp):
        if isinstance(a, type) and dataclasses.is_dataclass(a):
            return a
    return None


@functools.cache
def _plan(cls: type) -> tuple[tuple[str, Any, Allowed, bool], ...]:
    """``(name, annotation, allowed, holds dataclasses)`` of each init field of ``cls``, found once."""
    hints = _hints(cls)
    return tuple(
        (f.name, hints[f.name], _allowed(f), _dataclass_in(hints[f.name]) is not None)
        for f in dataclasses.fields(cls)
        if f.init
    )


def check(obj: Any, what: str = "", *, prefix: str = "", types: bool = True, flag: bool = False) -> None:
    """Check every field of the dataclass ``obj`` (nested ones too) against its declared type and values.

    The first field out of bounds, in declaration order, raises
    :class:`SettingError`. ``flag`` names fields as command-line flags
    (``--max-budget``) in messages.
    """
    cls: type = obj.__class__
    for name, tp, allowed, nested in _plan(cls):
        value = getattr(obj, name)
        label = "--" + name.replace("_", "-") if flag else name
        check_value(what, _join(prefix, label), value, tp, allowed, types=types)
        if not nested:
            continue
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            check(value, what, prefix=_join(prefix, name), types=types)
        elif isinstance(value, list):
            for i, v in enumerate(value):
                if dataclasses.is_dataclass(v) and not isinstance(v, type):
                    check(v, what, prefix=f"{_join(prefix, name)}[{i}]", types=types)


#: The scalar annotations whose values :func:`check_value` checks without conversion.
_EXACT = {int: int, bool: bool, str: str}


def check_value(what: str, key: str, value: Any, tp: Any, allowed: Allowed, *, types: bool = True) -> Any:
    """``value`` of the setting ``key`` if its type is ``tp`` and ``allowed`` takes it; else SettingError.

    Returns the value as its type has it (an int given for a float, as a float).
    """
    given = value
    if types and not (tp in _EXACT and type(value) is _EXACT[tp]):  # the common case needs no conversion
        try:
            value = _typed(value, tp, lenient=False)
        except _Wrong:
            invalid(what, key, given, allowed.words or _words(tp))
    if value is None:
        return value
    if not allowed.accepts(value):
        invalid(what, key, given, allowed.words or _words(tp))
    if isinstance(value, dict) and allowed.each is not None:
        for k, v in value.items():
            if not allowed.each.accepts(v):
                invalid(what, f"{key}.{k}", v, allowed.each.words or allowed.words or _words(tp))
    return value


def field_allowed(cls: type, name: str) -> Allowed:
    """The declared :class:`Allowed` of the field ``name`` of the dataclass ``cls``."""
    return _allowed(next(f for f in dataclasses.fields(cls) if f.name == name))
