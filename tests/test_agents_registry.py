"""Spec strings, typed parameters and the registry of agents."""

from __future__ import annotations

import pytest

from agents import registry
from agents.registry import (
    Param,
    canonical,
    describe_agents,
    list_agents,
    make_agent,
    parse_spec,
    register_agent,
    register_kind,
)
from tonk_env.agent import Agent, act_batch
from tonk_env.engine import make_rules, new_game, seat_info
from tonk_env.obs import LazyObs, obs_layout

BUILTIN = ["random", "heuristic:greedy", "heuristic:expert", "heuristic:fast", "search:ismcts"]


def test_parse_spec() -> None:
    sp = parse_spec("heuristic:greedy?drop_at=10&x=y")
    assert (sp.kind, sp.name, sp.params) == ("heuristic", "greedy", {"drop_at": "10", "x": "y"})
    assert parse_spec("random").name is None and parse_spec("random").params == {}
    assert parse_spec(" search:ismcts?budget=5 ").params == {"budget": "5"}
    assert parse_spec("ppo:runs/a b/best.zip?deterministic=false").name == "runs/a b/best.zip"
    for bad in ["", "  ", ":greedy", "heuristic:", "heuristic:greedy?drop_at", "x?a=1&a=2"]:
        with pytest.raises(ValueError):
            parse_spec(bad)


@pytest.mark.parametrize("spec", BUILTIN)
def test_builtin_agents_build_and_carry_their_spec(spec: str) -> None:
    agent = make_agent(spec, seed=1)
    assert isinstance(agent, Agent)
    assert agent.spec == spec


def test_params_are_typed_and_canonical() -> None:
    a = make_agent("heuristic:greedy?drop_at= 12", seed=0)
    assert a.drop_at == 12 and a.spec == "heuristic:greedy?drop_at=12"
    b = make_agent("search:ismcts?budget=7&takes=all", seed=0)
    assert b.budget == 7 and b.takes == "all"
    assert canonical("heuristic:expert?drop_margin=0.50") == "heuristic:expert?drop_margin=0.5"
    assert canonical("heuristic:expert?drop_margin=1.0") == "heuristic:expert?drop_margin=1"


@pytest.mark.parametrize(
    "spec,words",
    [
        ("nosuch", ["unknown agent kind 'nosuch'", "random", "heuristic:greedy", "search:ismcts"]),
        ("heuristic:nosuch", ["unknown agent 'heuristic:nosuch'", "heuristic:greedy", "heuristic:expert"]),
        ("heuristic", ["unknown agent 'heuristic'", "heuristic:greedy"]),
        ("heuristic:greedy?drop=3", ["no parameter 'drop'", "drop_at"]),
        ("heuristic:greedy?drop_at=ten", ["drop_at='ten'", "an int"]),
        ("heuristic:greedy?drop_at=99", ["above its maximum 50"]),
        ("search:ismcts?budget=-1", ["below its minimum 0"]),
        ("search:ismcts?takes=none", ["allowed: all, some"]),
        ("random?x=1", ["no parameter 'x'", "none"]),
    ],
)
def test_unknown_specs_and_parameters_are_errors_that_list_what_is_known(spec: str, words: list[str]) -> None:
    with pytest.raises(ValueError) as e:
        make_agent(spec)
    for w in words:
        assert w in str(e.value)


def test_bool_params() -> None:
    p = Param("x", bool, False, "a flag")
    assert p.parse("on", "t") is True and p.parse("False", "t") is False
    with pytest.raises(ValueError, match="on/off"):
        p.parse("maybe", "t")
    assert "x=false (on/off)" in p.describe()


def test_registering_agents_and_lazy_path_kinds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "_AGENTS", dict(registry._AGENTS))
    monkeypatch.setattr(registry, "_KINDS", dict(registry._KINDS))

    register_agent("test", "first", "agents.random_agent:RandomAgent", "a random agent under another name")
    assert make_agent("test:first", seed=3).spec == "test:first"
    with pytest.raises(ValueError, match="already registered"):
        register_agent("test", "first", "agents.random_agent:RandomAgent", "again")

    calls = []

    def loader(path: str, seed: int | None = None, **params: str) -> Agent:
        calls.append((path, seed, params))
        return make_agent("random", seed=seed)

    register_kind("mykind", loader, "loads PATH")
    a = make_agent("mykind:some/file.zip?deterministic=false", seed=9)
    assert calls == [("some/file.zip", 9, {"deterministic": "false"})]
    assert a.spec == "mykind:some/file.zip?deterministic=false"
    with pytest.raises(ValueError, match="needs a path"):
        make_agent("mykind")

    # a loader named by import path is imported only when an agent is built
    register_kind("lazy", "no_such_module_xyz:load", "never importable")
    assert any(e.key == "lazy:PATH" for e in list_agents())
    with pytest.raises(ValueError, match="cannot load"):
        make_agent("lazy:x")


def test_describe_agents_one_line_each() -> None:
    lines = describe_agents()
    keys = [e.key for e in list_agents()]
    assert len(lines) == len(keys)
    for key, line in zip(keys, lines, strict=True):
        assert line.startswith(key)
    verbose = "\n".join(describe_agents(verbose=True))
    assert "drop_at=10 (an int 0..50)" in verbose and "budget=" in verbose


def test_act_batch_falls_back_to_rows() -> None:
    s = new_game(make_rules(), 2, seed=4)
    info = seat_info(s, 0)
    obs = LazyObs(s, 0)
    batch = {
        "observation": obs["observation"][None].repeat(3, 0),
        "action_mask": obs["action_mask"][None].repeat(3, 0),
    }
    assert batch["observation"].shape == (3, obs_layout(2).size)
    agent = make_agent("heuristic:greedy")
    assert act_batch(agent, batch, [info] * 3) == [agent.act(obs, info)] * 3

    class Plain:
        def act(self, obs, info):
            return info.legal[-1]

    assert act_batch(Plain(), batch, [info, info]) == [info.legal[-1]] * 2
