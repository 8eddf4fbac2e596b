"""Fuzzing the user-facing inputs: each must end in the project's own error or an HTTP 4xx, never a crash.

Random and mutated agent specs, rule option strings, training config YAML,
action strings, HTTP bodies and agent files (hypothesis, bounded in examples
and time). The project's errors are ``ValueError`` (and its subclass
``IllegalActionError``) with a message; anything else — ``KeyError``,
``TypeError``, ``BadZipFile``, a 5xx — is a bug. A rejected input must also
leave games, runs and folders as they were.
"""

from __future__ import annotations

import json
import random
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agents.mlp import MLPPolicy
from agents.registry import make_agent
from tonk_env.engine import action_from_string, make_rules, new_game, parse_assignments
from tonk_env.engine.state import OVER
from tonk_env.obs import obs_layout
from tonk_env.play import decide
from train.config import load_config

with warnings.catch_warnings():  # starlette's TestClient warns about httpx on import
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from frontends.server import create_app  # noqa: E402 - after TestClient's warning filter

FUZZ = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

WORDS = [
    "random", "heuristic", "greedy", "expert", "fast", "search", "ismcts", "ppo", "npz", "onnx", ":", "?",
    "&", "=", "budget", "drop_at", "deterministic", "true", "nan", "-1", "1e9", "0", "10", "/", "..", "%",
    " ", "",
]  # fmt: skip
OPTIONS = ["hand_size", "hit_wait", "ace_high", "instant_win", "drop_wait", "max_turns", "nope", "seven_card"]
VALUES = ["1", "0", "-3", "7", "true", "false", "maybe", "nan", "inf", "1e400", "", "[1]", "None", "2.5"]


def _ok_or_value_error(fn: Any, *args: Any) -> None:
    try:
        fn(*args)
    except ValueError as e:
        assert str(e), "an error without a message"


@FUZZ
@given(st.lists(st.sampled_from(WORDS), max_size=8).map("".join) | st.text(max_size=30))
def test_agent_specs(spec: str) -> None:
    _ok_or_value_error(make_agent, spec)


@FUZZ
@given(
    st.lists(st.tuples(st.sampled_from(OPTIONS) | st.text(max_size=8), st.sampled_from(VALUES)), max_size=4)
)
def test_rule_option_strings(pairs: list[tuple[str, str]]) -> None:
    def build() -> None:
        make_rules("standard", **parse_assignments([f"{k}={v}" for k, v in pairs]))

    _ok_or_value_error(build)


CONFIG_KEYS = [
    "players",
    "total_steps",
    "ppo",
    "net",
    "pool",
    "eval",
    "name",
    "seed",
    "rules",
    "bogus",
    "n_envs",
]
CONFIG_VALUES: list[Any] = [
    0,
    1,
    -1,
    2.5,
    "x",
    None,
    [],
    {},
    [0],
    {"gamma": 2},
    {"pi": [0]},
    float("nan"),
    True,
    "../../x",
    10**12,
]


@FUZZ
@given(
    st.dictionaries(st.sampled_from(CONFIG_KEYS), st.sampled_from(CONFIG_VALUES), max_size=5)
    | st.text(max_size=60).map(lambda t: {"__raw__": t})
)
def test_config_yaml(tmp_path: Path, data: dict[str, Any]) -> None:
    path = tmp_path / "fuzz.yaml"
    raw = data.get("__raw__")
    path.write_text(raw if raw is not None else json.dumps(data))  # JSON is YAML
    before = sorted(p.name for p in tmp_path.iterdir())
    _ok_or_value_error(load_config, str(path))
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # loading writes nothing


ACTION_WORDS = [
    "draw",
    "take",
    "drop",
    "discard",
    "x",
    "s",
    "spread",
    "h",
    "hit",
    "on",
    "4S",
    "AC",
    "KH",
    "10D",
]


@FUZZ
@given(
    st.integers(0, 50),
    st.integers(0, 6),
    st.lists(st.sampled_from(ACTION_WORDS) | st.text(max_size=4), max_size=5).map(" ".join),
)
def test_action_strings(seed: int, moves: int, text: str) -> None:
    s = new_game(make_rules(), 2, seed=seed)
    rng = random.Random(seed)
    for _ in range(moves):
        if s.phase == OVER:
            break
        s.play(rng.choice(s.legal_actions()))
    before = repr(s), s.hands, s.pile, s.stock
    _ok_or_value_error(action_from_string, s, text)
    assert (repr(s), s.hands, s.pile, s.stock) == before


@pytest.fixture(scope="module")
def server() -> TestClient:
    return TestClient(create_app(max_games=100_000, idle_timeout=600))


BODY_VALUES: list[Any] = [
    None, True, 0, -1, 3, 10**9, "draw", "", "x" * 300, [], {}, {"seat": 0}, [1, 2], 1.5, "heuristic:expert",
]  # fmt: skip
BODY_KEYS = ["players", "rules", "options", "seat", "agents", "seed", "action", "record", "agent", "bogus"]


@FUZZ
@given(
    st.sampled_from(["/api/games", "/api/agent-action", "/api/games/{gid}/actions", "/api/games/{gid}/next"]),
    st.dictionaries(st.sampled_from(BODY_KEYS), st.sampled_from(BODY_VALUES), max_size=4)
    | st.sampled_from(BODY_VALUES),
)
def test_http_bodies(server: TestClient, route: str, body: Any) -> None:
    made = server.post("/api/games", json={"players": 2, "agents": ["random"], "seed": 1})
    assert made.status_code == 201, made.text
    gid = made.json()["game_id"]
    before = server.get(f"/api/games/{gid}").json()
    r = server.post(route.format(gid=gid), json=body)
    assert r.status_code < 500, r.text
    if r.status_code == 201 and route == "/api/games":
        server.delete(f"/api/games/{r.json()['game_id']}")
    if r.status_code >= 400:
        assert r.json().get("detail") is not None
        if "{gid}" in route:
            assert server.get(f"/api/games/{gid}").json() == before  # a rejected request changes nothing
        assert len(r.text) < 5000  # no unbounded echo
    server.delete(f"/api/games/{gid}")


def _net_file(tmp_path: Path) -> bytes:
    rng = np.random.default_rng(0)
    size, actions = obs_layout(2).size, 540
    layers = [
        (rng.standard_normal((8, size)).astype(np.float32), np.zeros(8, np.float32)),
        (rng.standard_normal((actions, 8)).astype(np.float32), np.zeros(actions, np.float32)),
    ]
    p = tmp_path / "good.npz"
    MLPPolicy(layers, meta={"num_players": 2, "rules_hash": make_rules().hash}).save_npz(p)
    return p.read_bytes()


@FUZZ
@given(st.data())
def test_agent_files(tmp_path: Path, data: st.DataObject) -> None:
    good = _net_file(tmp_path)
    kind = data.draw(st.sampled_from(["truncate", "flip", "empty", "garbage"]))
    if kind == "truncate":
        blob = good[: data.draw(st.integers(0, len(good) - 1))]
    elif kind == "flip":
        b = bytearray(good)
        for i in data.draw(st.lists(st.integers(0, len(b) - 1), min_size=1, max_size=20)):
            b[i] ^= 0xFF
        blob = bytes(b)
    elif kind == "empty":
        blob = b""
    else:
        blob = data.draw(st.binary(max_size=200))
    path = tmp_path / "fuzz.npz"
    path.write_bytes(blob)

    def load_and_play() -> None:
        agent = make_agent(f"npz:{path}")
        agent.reset_hand(0, 2, make_rules())
        decide(agent, new_game(make_rules(), 2, seed=0))

    _ok_or_value_error(load_and_play)
