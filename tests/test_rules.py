"""The rules configuration: presets, options, validation, hashing, CLI values."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from tonk_env.engine import (
    OPTION_NAMES,
    PRESETS,
    TonkRules,
    action_table,
    make_rules,
    parse_assignments,
    parse_option,
)

# RULES.md §7, option by option
EXPECTED_PRESETS: dict[str, dict[str, Any]] = {
    "standard": {},
    "hit_penalty": {"hit_wait": 1, "wait_cumulative": True},
    "full_waiting": {"spread_wait": 3, "hit_wait": 1, "wait_cumulative": True},
    "seven_card": {"hand_size": 7, "instant_win_totals": ()},
    "low_tonk": {"instant_win_low_max": 11, "instant_win_tie": "rank"},
    "no_upcard": {"upcard": False},
}

STANDARD = {
    "hand_size": 5,
    "upcard": True,
    "instant_win_totals": (49, 50),
    "instant_win_pay": 2,
    "instant_win_tie": "void",
    "instant_win_low_max": None,
    "ace_high": False,
    "may_discard_taken": True,
    "max_turns": 200,
    "tonk_out_pay": 2,
    "run_out_pay": 1,
    "caught_pay": "standard",
    "stock_out_tie": "void",
    "spread_wait": 0,
    "hit_wait": 0,
    "wait_cumulative": True,
}


def test_standard_matches_the_spec() -> None:
    r = make_rules()
    assert set(OPTION_NAMES) == set(STANDARD)
    for name, value in STANDARD.items():
        assert getattr(r, name) == value, name
    assert r == TonkRules() == make_rules("standard") == TonkRules.preset("standard")


@pytest.mark.parametrize("preset", sorted(EXPECTED_PRESETS))
def test_every_preset(preset: str) -> None:
    assert set(PRESETS) == set(EXPECTED_PRESETS)
    r = make_rules(preset)
    want = {**STANDARD, **EXPECTED_PRESETS[preset]}
    for name in OPTION_NAMES:
        assert getattr(r, name) == want[name], (preset, name)
    assert TonkRules.preset(preset) == r


# (option, a non-default value) for every option
OVERRIDES = [
    ("hand_size", 7),
    ("upcard", False),
    ("instant_win_totals", (50,)),
    ("instant_win_pay", 3),
    ("instant_win_tie", "rank"),
    ("instant_win_low_max", 9),
    ("ace_high", True),
    ("may_discard_taken", False),
    ("max_turns", 7),
    ("tonk_out_pay", 2.5),
    ("run_out_pay", 0),
    ("caught_pay", "everyone_double"),
    ("stock_out_tie", "split"),
    ("spread_wait", 3),
    ("hit_wait", 20),
    ("wait_cumulative", False),
]


def test_overrides_cover_every_option() -> None:
    assert sorted(name for name, _ in OVERRIDES) == sorted(OPTION_NAMES)


@pytest.mark.parametrize("preset", sorted(EXPECTED_PRESETS))
@pytest.mark.parametrize("name, value", OVERRIDES)
def test_option_by_option_override(preset: str, name: str, value: Any) -> None:
    if preset == "low_tonk" and name == "instant_win_totals":
        value = (50,)  # still above the preset's low maximum of 11
    r = make_rules(preset, **{name: value})
    assert getattr(r, name) == value
    base = make_rules(preset)
    for other in OPTION_NAMES:
        if other != name:
            assert getattr(r, other) == getattr(base, other)
    assert make_rules(base, **{name: value}) == r == base.replace(**{name: value})
    if getattr(base, name) != value:
        assert r != base and r.hash != base.hash


@pytest.mark.parametrize(
    "options, names",
    [
        ({"hand_size": 6}, ["hand_size", "5 or 7"]),
        ({"hand_size": 5.0}, ["hand_size", "5 or 7"]),
        ({"hand_size": True}, ["hand_size"]),
        ({"upcard": "yes"}, ["upcard", "true or false"]),
        ({"upcard": 1}, ["upcard"]),
        ({"ace_high": None}, ["ace_high"]),
        ({"may_discard_taken": "off"}, ["may_discard_taken"]),
        ({"wait_cumulative": 0}, ["wait_cumulative"]),
        ({"instant_win_totals": (49, 49)}, ["instant_win_totals", "distinct"]),
        ({"instant_win_totals": (0,)}, ["instant_win_totals", "1..50"]),
        ({"instant_win_totals": (51,)}, ["instant_win_totals", "1..50"]),
        ({"instant_win_totals": "49,50"}, ["instant_win_totals"]),
        ({"instant_win_totals": (49.0,)}, ["instant_win_totals"]),
        ({"instant_win_pay": -1}, ["instant_win_pay", "0..1000"]),
        ({"instant_win_pay": float("nan")}, ["instant_win_pay"]),
        ({"instant_win_pay": float("inf")}, ["instant_win_pay"]),
        ({"tonk_out_pay": "2"}, ["tonk_out_pay"]),
        ({"run_out_pay": True}, ["run_out_pay"]),
        ({"instant_win_tie": "split"}, ["instant_win_tie", "'void'", "'rank'"]),
        ({"instant_win_low_max": 51}, ["instant_win_low_max", "0..50"]),
        ({"instant_win_low_max": -1}, ["instant_win_low_max"]),
        ({"instant_win_low_max": 49}, ["instant_win_low_max", "below", "49"]),
        ({"instant_win_low_max": 11.0}, ["instant_win_low_max"]),
        (
            {"caught_pay": "double"},
            ["caught_pay", "'standard'", "'double_to_lowest_only'", "'everyone_double'"],
        ),
        ({"stock_out_tie": "Split"}, ["stock_out_tie", "'void'", "'split'"]),
        ({"max_turns": 0}, ["max_turns", "1..10000"]),
        ({"max_turns": 10.0}, ["max_turns"]),
        ({"spread_wait": 21}, ["spread_wait", "0..20"]),
        ({"hit_wait": -1}, ["hit_wait", "0..20"]),
        ({"hit_wait": 1.5}, ["hit_wait"]),
    ],
)
def test_bad_values_name_the_option_and_what_is_allowed(options: dict[str, Any], names: list[str]) -> None:
    with pytest.raises(ValueError) as info:
        make_rules("standard", **options)
    for word in names:
        assert word in str(info.value), str(info.value)
    with pytest.raises(ValueError, match=names[0]):
        TonkRules(**options)


def test_unknown_option_and_preset() -> None:
    with pytest.raises(ValueError) as info:
        make_rules("standard", hand_sise=5)
    msg = str(info.value)
    assert "hand_sise" in msg and all(name in msg for name in OPTION_NAMES)
    with pytest.raises(ValueError, match="hand_sise"):
        make_rules().replace(hand_sise=5)
    with pytest.raises(ValueError, match="_hash"):
        TonkRules.from_dict({"_hash": "x"})
    with pytest.raises(ValueError) as info:
        make_rules("seven")
    msg = str(info.value)
    assert "'seven'" in msg and all(p in msg for p in PRESETS)


def test_rules_are_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        make_rules().hand_size = 7  # type: ignore[misc]  # assigning to a frozen field on purpose


def test_normalisation() -> None:
    assert make_rules(instant_win_totals=[50, 49]).instant_win_totals == (49, 50)
    assert make_rules(instant_win_totals=[50, 49]) == make_rules()
    r = make_rules(tonk_out_pay=2.0)
    assert r == make_rules() and r.hash == make_rules().hash and type(r.tonk_out_pay) is int
    assert make_rules(instant_win_totals=[]).instant_win_totals == ()


def test_hash_is_stable_and_differs_between_presets() -> None:
    # Pinned: checkpoints and records store this hash; changing it must be deliberate.
    assert make_rules().hash == "5b7726a0668f"
    assert make_rules().hash == TonkRules().hash
    hashes = {p: make_rules(p).hash for p in PRESETS}
    assert len(set(hashes.values())) == len(PRESETS)
    assert all(len(h) == 12 and int(h, 16) >= 0 for h in hashes.values())
    assert make_rules("hit_penalty").hash == make_rules(hit_wait=1).hash


@pytest.mark.parametrize("preset", sorted(EXPECTED_PRESETS))
def test_to_dict_from_dict_round_trip(preset: str) -> None:
    r = make_rules(preset, tonk_out_pay=1.5, max_turns=50)
    d = r.to_dict()
    assert set(d) == set(OPTION_NAMES)
    assert isinstance(d["instant_win_totals"], list)
    text = json.dumps(d)
    back = TonkRules.from_dict(json.loads(text))
    assert back == r and back.hash == r.hash and back.to_dict() == d
    with pytest.raises(ValueError, match="colour"):
        TonkRules.from_dict({**d, "colour": "red"})


@pytest.mark.parametrize(
    "name, text, value",
    [
        ("hand_size", "7", 7),
        ("hand_size", " 5 ", 5),
        ("upcard", "off", False),
        ("upcard", "ON", True),
        ("upcard", "true", True),
        ("upcard", "0", False),
        ("ace_high", "yes", True),
        ("wait_cumulative", "no", False),
        ("instant_win_totals", "49,50", (49, 50)),
        ("instant_win_totals", "[49, 50]", (49, 50)),
        ("instant_win_totals", "50", (50,)),
        ("instant_win_totals", "off", ()),
        ("instant_win_totals", "none", ()),
        ("instant_win_low_max", "11", 11),
        ("instant_win_low_max", "none", None),
        ("instant_win_low_max", "off", None),
        ("instant_win_pay", "3", 3),
        ("tonk_out_pay", "2.5", 2.5),
        ("run_out_pay", "1.0", 1),
        ("max_turns", "30", 30),
        ("spread_wait", "3", 3),
        ("caught_pay", "everyone_double", "everyone_double"),
        ("stock_out_tie", "split", "split"),
        ("instant_win_tie", "rank", "rank"),
    ],
)
def test_parse_option(name: str, text: str, value: Any) -> None:
    got = parse_option(name, text)
    assert got == value and type(got) is type(value)
    assert getattr(make_rules(**{name: got}), name) == value


@pytest.mark.parametrize(
    "name, text",
    [
        ("upcard", "maybe"),
        ("hand_size", "five"),
        ("max_turns", "1e3"),
        ("instant_win_totals", "49;50"),
        ("instant_win_low_max", "low"),
        ("tonk_out_pay", "two"),
        ("colour", "red"),
    ],
)
def test_parse_option_errors_name_the_option(name: str, text: str) -> None:
    with pytest.raises(ValueError, match=name):
        parse_option(name, text)


def test_parse_assignments() -> None:
    got = parse_assignments(
        ["hand_size=7", "upcard=off", " caught_pay = everyone_double", "instant_win_totals="]
    )
    assert got == {"hand_size": 7, "upcard": False, "caught_pay": "everyone_double", "instant_win_totals": ()}
    r = make_rules("standard", **got)
    assert (r.hand_size, r.upcard, r.caught_pay, r.instant_win_totals) == (7, False, "everyone_double", ())
    assert parse_assignments([]) == {}
    with pytest.raises(ValueError, match="option=value"):
        parse_assignments(["hand_size"])
    with pytest.raises(ValueError, match="hand_sise"):
        parse_assignments(["hand_sise=7"])
    # a value that parses but is out of range is refused when the rules are built
    with pytest.raises(ValueError, match="hand_size"):
        make_rules(**parse_assignments(["hand_size=6"]))


@pytest.mark.parametrize("preset", sorted(EXPECTED_PRESETS))
def test_check_players(preset: str) -> None:
    r = make_rules(preset)
    for n in range(2, 7):
        r.check_players(n)
    for bad in (1, 7, 0, -2):
        with pytest.raises(ValueError, match=f"num_players.*{bad}"):
            r.check_players(bad)
    for wrong in (2.0, "2", True, None):
        with pytest.raises(ValueError, match="num_players"):
            r.check_players(wrong)  # type: ignore[arg-type]  # a wrong type on purpose
    with pytest.raises(ValueError, match="num_players"):
        from tonk_env.engine import new_game

        new_game(r, 7)


def test_every_action_id_has_one_kind() -> None:
    import numpy as np

    from tonk_env.engine.actions import (
        ACTION_KINDS,
        DISCARD,
        HIT_BOOK,
        SPREAD,
        action_kind,
        action_kind_index,
    )

    table = action_table(False)
    kinds = [action_kind(a) for a in range(table.size)]
    assert set(kinds) == set(ACTION_KINDS) and kinds[:3] == ["drop", "draw", "take"]
    assert kinds[DISCARD] == kinds[HIT_BOOK - 1] == "discard"
    assert kinds[HIT_BOOK] == kinds[SPREAD - 1] == "hit" and kinds[SPREAD] == kinds[-1] == "spread"
    assert [ACTION_KINDS[k] for k in action_kind_index(np.arange(table.size))] == kinds
