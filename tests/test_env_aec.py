"""The PettingZoo AEC env: PettingZoo's own checkers, spaces, options, unwrapped helpers, errors."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium import spaces
from pettingzoo.test import api_test, seed_test

from tonk_env import env, raw_env
from tonk_env.engine import (
    PLAY,
    PRESETS,
    START,
    IllegalActionError,
    action_table,
    legal_mask,
    make_rules,
    replay,
)
from tonk_env.obs import obs_layout, observation

PLAYERS = (2, 3, 4)


def stack(hands: list[str], upcard: str, stock: str = "") -> str:
    """A stacked deck for the default dealer (seat 0 first): hands dealt one card a seat at a time."""
    cards = [h.split() for h in hands]
    order = [cards[p][i] for i in range(len(cards[0])) for p in range(len(cards))]
    return " ".join(order + [upcard] + stock.split())


DECK = stack(["KS QS JH 8S 9C", "AC 2C 3D 4H 5S"], "7C", "KC")


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("preset", list(PRESETS))
@pytest.mark.parametrize("n", PLAYERS)
def test_pettingzoo_api_test(preset: str, n: int) -> None:
    api_test(env(n, preset), num_cycles=1000)


@pytest.mark.parametrize("preset", list(PRESETS))
@pytest.mark.parametrize("n", PLAYERS)
def test_pettingzoo_seed_test(preset: str, n: int) -> None:
    seed_test(lambda: env(n, preset), num_cycles=500)


def test_metadata_agents_and_spaces() -> None:
    e = env(3)
    assert e.metadata["name"] == "tonk_v0"
    assert e.possible_agents == ["player_0", "player_1", "player_2"]
    size = obs_layout(3).size
    for agent in e.possible_agents:
        act = e.action_space(agent)
        assert isinstance(act, spaces.Discrete) and act.n == 540
        obs = e.observation_space(agent)
        assert isinstance(obs, spaces.Dict)
        assert obs["observation"].shape == (size,) and obs["observation"].dtype == np.float32
        assert obs["action_mask"].shape == (540,) and obs["action_mask"].dtype == np.int8
    assert env(2, ace_high=True).action_space("player_0").n == action_table(True).size > 540


def test_env_has_the_wrappers_checks_built_in() -> None:
    e = env(2)
    assert isinstance(e, raw_env) and e.unwrapped is e
    with pytest.raises(AssertionError, match="reset"):
        e.step(1)
    with pytest.raises(AssertionError, match="reset"):
        e.observe("player_0")
    with pytest.raises(AssertionError, match="reset"):
        e.agent_iter()
    for name in ("rewards", "terminations", "truncations", "infos", "agent_selection", "agents"):
        with pytest.raises(AttributeError):
            getattr(e, name)
    e.reset(seed=0)
    for bad in (540, -1, 1.5, "draw", np.array([1, 2])):
        with pytest.raises(AssertionError, match="action"):  # as AssertOutOfBoundsWrapper
            e.step(bad)
    assert e.unwrapped.game.phase == START  # nothing was played
    with pytest.raises(IllegalActionError, match=r"outside the action space Discrete\(540\)"):
        e.step(540)


def test_env_unwrapped_helpers() -> None:
    e = env(2)
    e.reset(seed=1, options={"deck": DECK})
    u = e.unwrapped
    assert u.action_from_string("draw") == 1
    assert u.action_to_string(0) == "drop"
    assert e.action_from_string("take") == 2  # reachable through the wrappers too
    v = u.view("player_0")
    assert v["seat"] == 0 and v["hand"] == ["8S", "9C", "JH", "QS", "KS"]
    assert v["legal_actions"] == ["drop", "draw", "take"]
    assert u.view("player_1")["legal_actions"] == []
    e.step(u.action_from_string("draw"))
    e.step(u.action_from_string("discard KC"))
    rec = u.record()
    assert rec["actions"] == ["draw", "discard KC"]
    s = replay(rec, check=False)
    assert s.hands == u.game.hands


def test_options_override_preset_and_survive_seeded_reset() -> None:
    e = env(2, "hit_penalty", max_turns=7, tonk_out_pay=3)
    u = e.unwrapped
    want = make_rules("hit_penalty", max_turns=7, tonk_out_pay=3)
    for seed in (None, 0, 5, None):
        e.reset(seed=seed)
        assert u.rules == want and u.game.rules == want
        assert u.record()["rules"]["max_turns"] == 7
    rules_obj = make_rules("seven_card", hit_wait=2)
    e2 = env(3, rules_obj)
    e2.reset(seed=3)
    assert e2.unwrapped.game.rules == rules_obj
    assert env(2, rules_obj, hit_wait=0).unwrapped.rules.hit_wait == 0


def test_bad_arguments_are_errors() -> None:
    with pytest.raises(ValueError, match="unknown rules option"):
        env(2, no_such_option=1)
    with pytest.raises(ValueError, match="unknown rules preset"):
        env(2, "no_such_preset")
    with pytest.raises(ValueError, match="num_players"):
        env(7)
    with pytest.raises(ValueError, match="render_mode"):
        env(2, render_mode="rgb_array")
    with pytest.raises(ValueError, match="illegal_action"):
        env(2, illegal_action="ignore")
    with pytest.raises(ValueError, match="reward_scale"):
        env(2, reward_scale=float("nan"))


def test_seeded_deals_repeat_and_differ() -> None:
    a, b = env(2), env(2)
    a.reset(seed=11)
    b.reset(seed=11)
    assert a.unwrapped.game.deck == b.unwrapped.game.deck
    decks = set()
    for seed in range(5):
        a.reset(seed=seed)
        decks.add(tuple(a.unwrapped.game.deck))
    assert len(decks) == 5
    a.reset(seed=11)
    a.reset()
    b.reset(seed=11)
    b.reset()
    assert a.unwrapped.game.deck == b.unwrapped.game.deck  # unseeded resets continue the stream


def test_reset_options_deck_and_dealer() -> None:
    e = env(3)
    e.reset(seed=0, options={"deck": ["AC", "2C", "3C"], "dealer": 0})
    g = e.unwrapped.game
    assert g.dealer == 0 and e.agent_selection == "player_1"
    assert g.deck[:3] == [0, 1, 2]
    assert g.hands[1] >> 0 & 1 and g.hands[2] >> 1 & 1 and g.hands[0] >> 2 & 1
    with pytest.warns(UserWarning, match="unknown options"):
        e.reset(options={"dealr": 1})
    with pytest.raises(ValueError, match="appears twice"):
        e.reset(options={"deck": "AC AC"})


def test_observe_returns_fresh_arrays_and_masks() -> None:
    e = env(2)
    e.reset(seed=4)
    o1 = e.observe("player_0")
    o2 = e.observe("player_0")
    assert o1["observation"] is not o2["observation"] and o1["action_mask"] is not o2["action_mask"]
    g = e.unwrapped.game
    np.testing.assert_array_equal(o1["observation"], observation(g, 0))
    np.testing.assert_array_equal(o1["action_mask"], legal_mask(g))
    assert not e.observe("player_1")["action_mask"].any()
    kept = o1["observation"].copy()
    e.step(1)  # draw
    np.testing.assert_array_equal(o1["observation"], kept)  # what a user kept is not overwritten


def test_illegal_action_raises_a_clear_error() -> None:
    e = env(2)
    e.reset(seed=1, options={"deck": DECK})
    with pytest.raises(IllegalActionError) as err:
        e.step(3 + 12)  # discard KC: not legal at the start of a turn
    msg = str(err.value)
    assert "player_0" in msg and "'discard KC'" in msg and "legal actions: drop, draw, take" in msg
    assert isinstance(err.value, ValueError)
    with pytest.raises(IllegalActionError, match="integer"):
        e.unwrapped.step(1.5)
    with pytest.raises(AssertionError):  # AssertOutOfBoundsWrapper
        e.step(540)
    e.step(np.int64(1))  # NumPy integers are fine
    assert e.unwrapped.game.phase == PLAY


@pytest.mark.parametrize("penalty", [-1.0, -5.0])
def test_illegal_action_penalize_ends_the_hand(penalty: float) -> None:
    e = env(3, illegal_action="penalize", illegal_penalty=penalty, reward_scale=2.0)
    e.reset(seed=2)
    e.step(1)  # player_0 draws
    e.step(1)  # drawing again is illegal in the play phase
    assert all(e.terminations.values()) and not any(e.truncations.values())
    assert e.rewards == {"player_0": penalty * 2, "player_1": 0.0, "player_2": 0.0}
    info = e.infos["player_1"]
    assert info["result_kind"] == "illegal_action" and info["ended_by"] == 0 and info["action"] == 1
    got = {}
    for agent in e.agent_iter():
        obs, reward, term, trunc, _ = e.last()
        assert term and not obs["action_mask"].any()
        got[agent] = reward
        e.step(None)
    assert got == {"player_0": penalty * 2, "player_1": 0.0, "player_2": 0.0}


def test_render_modes(capsys: pytest.CaptureFixture[str]) -> None:
    e = env(2, render_mode="ansi")
    e.reset(seed=0)
    text = e.render()
    assert isinstance(text, str) and "Seat 0" in text and "Seat 1" in text
    h = env(2, render_mode="human")
    h.reset(seed=0)
    assert "Seat 0" in capsys.readouterr().out
    assert h.render() is None


def test_rewards_and_infos_reach_every_agent_once() -> None:
    e = env(3, reward_scale=0.5)
    for seed in range(30):
        e.reset(seed=seed)
        finals: dict[str, float] = {}
        for agent in e.agent_iter():
            obs, reward, term, trunc, info = e.last()
            if term:
                assert agent not in finals
                finals[agent] = reward
                assert info["payoffs"][e.unwrapped.seat(agent)] * 0.5 == reward
                e.step(None)
            else:
                assert reward == 0 and info == {}
                e.step(int(np.flatnonzero(obs["action_mask"])[0 if seed % 2 else -1]))
        assert set(finals) == set(e.possible_agents)
        assert abs(sum(finals.values())) < 1e-9
