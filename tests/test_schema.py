"""The settings schema (tonk_env/engine/schema.py): bounds, types, unknown and missing keys, messages."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from tonk_env.engine.schema import SettingError, build, check, setting


@dataclass
class Inner:
    rate: float = setting(0.5, "a number in (0, 1]", low=0, low_open=True, high=1)
    sizes: list[int] = field(default_factory=list)


@dataclass
class Outer:
    needed: str
    count: int = setting(1, "an integer >= 1", low=1)
    mode: str = setting("a", "a or b", choices=("a", "b"))
    name: str = setting("x", "a short word", pattern=r"[a-z]+", max_len=5)
    inner: Inner = field(default_factory=Inner)
    last: float | None = setting(None, "a finite number, or null")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"needed": "n", "count": 0}, "cfg count=0 is invalid; allowed: an integer >= 1"),
        ({"needed": "n", "count": True}, "cfg count=True is invalid; allowed: an integer >= 1"),
        ({"needed": "n", "mode": "c"}, "cfg mode='c' is invalid; allowed: a or b"),
        ({"needed": "n", "name": "abcdef"}, "cfg name='abcdef' is invalid; allowed: a short word"),
        ({"needed": "n", "inner": {"rate": 0}}, "cfg inner.rate=0.0 is invalid; allowed: a number in (0, 1]"),
        ({"needed": "n", "inner": {"rate": float("nan")}}, "cfg inner.rate=nan is invalid"),
        (
            {"needed": "n", "inner": {"sizes": [1, "x"]}},
            "cfg inner.sizes[1]='x' is invalid; allowed: an integer",
        ),
        ({"needed": "n", "inner": 3}, "cfg inner=3 is invalid; allowed: a mapping"),
        ({"needed": "n", "last": "y"}, "cfg last='y' is invalid; allowed: a finite number, or null"),
        ({"count": 2}, "cfg missing the field 'needed'"),
        ({"needed": "n", "cuont": 2}, "unknown cfg key 'cuont' (did you mean 'count'?); known keys: needed,"),
        (
            {"needed": "n", "inner": {"rat": 1}},
            "unknown cfg key 'inner.rat' (did you mean 'rate'?); known keys of",
        ),
    ],
)
def test_a_bad_value_is_one_line_naming_it_and_what_is_allowed(data: dict[str, object], message: str) -> None:
    with pytest.raises(SettingError) as e:
        build(Outer, data, "cfg", lenient=True)
    assert message in str(e.value) and "\n" not in str(e.value)


def test_bounds_types_and_yaml_numbers() -> None:
    made = build(Outer, {"needed": "n", "count": 3.0, "inner": {"rate": "1e-1"}, "last": 2}, lenient=True)
    assert made.count == 3 and isinstance(made.count, int) and made.inner.rate == 0.1 and made.last == 2.0
    assert build(Outer, {"needed": "n", "inner": {"rate": 1}}).inner.rate == 1  # the closed end
    with pytest.raises(SettingError, match="count=3.0 is invalid"):
        build(Outer, {"needed": "n", "count": 3.0})  # a whole float is an int only when reading YAML
    with pytest.raises(SettingError, match="unknown key"):
        build(Outer, {"needed": "n", "other": 1})
    assert (
        build(Outer, {"needed": "n", "other": 1}, extra=True).needed == "n"
    )  # a record keeps its own fields


def test_check_names_flags_and_checks_a_built_object() -> None:
    @dataclass(frozen=True)
    class Limits:
        max_body: int = setting(10, "a whole number >= 1", low=1)

        def __post_init__(self) -> None:
            check(self, flag=True)

    with pytest.raises(SettingError, match=r"^--max-body=0 is invalid; allowed: a whole number >= 1$"):
        Limits(max_body=0)
    assert Limits(max_body=1).max_body == 1
