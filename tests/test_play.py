"""The one hand loop (tonk_env.play) and the agent contract (tonk_env.agent)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

import numpy as np
import pytest

from agents.registry import make_agent
from eval.duplicate import evaluate
from tonk_env.agent import Agent, FunctionAgent, RandomPolicy, act_batch, as_agent
from tonk_env.engine import IllegalActionError, SeatInfo, make_rules, new_game
from tonk_env.engine.state import OVER
from tonk_env.obs import LazyObs, obs_layout
from tonk_env.play import decide, play, start_hand
from tonk_env.single import TonkSingleAgentEnv


class Recorder:
    """Plays the last legal action (never a drop while another move exists) and records what it was told."""

    def __init__(self, reads_info: bool = True) -> None:
        self.reads_info = reads_info
        self.calls: list[tuple[str, Any]] = []
        self.infos: list[SeatInfo | None] = []

    def reseed(self, seed: int) -> None:
        self.calls.append(("reseed", seed))

    def reset_hand(self, seat: int, num_players: int, rules: Any) -> None:
        self.calls.append(("reset_hand", seat))

    def act(self, obs: Mapping[str, Any], info: SeatInfo | None) -> int:
        self.infos.append(info)
        assert isinstance(obs, LazyObs)
        return int(np.flatnonzero(obs["action_mask"])[-1])


def test_start_hand_reseeds_then_resets_each_seat() -> None:
    a, b = Recorder(), Recorder()
    start_hand([a, b], 2, make_rules(), [11, 12])
    assert a.calls == [("reseed", 11), ("reset_hand", 0)] and b.calls == [("reseed", 12), ("reset_hand", 1)]
    c = Recorder()
    start_hand({2: c}, 3, make_rules())
    assert c.calls == [("reset_hand", 2)]


def test_play_runs_to_the_end_with_hooks() -> None:
    s = new_game(make_rules(), 2, seed=3)
    seats = [Recorder(), Recorder(reads_info=False)]
    moves: list[tuple[int, int]] = []
    times: list[int] = []
    play(s, seats, on_move=lambda st, a: moves.append((st.cur, a)), timer=lambda seat, t: times.append(seat))
    assert s.phase == OVER and moves and len(moves) == len(times)
    assert [seat for seat, _ in moves] == times
    assert all(isinstance(i, SeatInfo) for i in seats[0].infos) and seats[0].infos
    assert all(i is None for i in seats[1].infos) and seats[1].infos


def test_until_stops_before_a_decision() -> None:
    s = new_game(make_rules(), 3, seed=5)
    play(s, [Recorder()] * 3, until=lambda st: st.cur == 2)
    assert s.phase != OVER and s.cur == 2


def test_an_illegal_answer_names_the_agent_and_the_legal_actions() -> None:
    s = new_game(make_rules(), 2, seed=0)
    with pytest.raises(IllegalActionError, match=r"agent <.*> \(seat 0\).*legal actions: drop, draw"):
        decide(FunctionAgent(lambda obs, info: 3), s)
    bad = make_agent("random")
    bad.act = lambda obs, info: 3  # type: ignore[method-assign]  # a broken agent for the test
    with pytest.raises(IllegalActionError, match="for agent random"):
        play(s, [bad, bad])
    with pytest.raises(IllegalActionError, match="opponent x"):
        decide(bad, s, lambda seat: "opponent x")
    with pytest.raises(IllegalActionError, match="not an action id"):
        decide(FunctionAgent(lambda obs, info: "draw"), s)


def test_as_agent_and_the_batched_form() -> None:
    def fn(obs: Mapping[str, Any], info: Any) -> int:
        return int(np.flatnonzero(obs["action_mask"])[-1])

    agent = as_agent(fn)
    assert isinstance(agent, Agent) and as_agent(agent) is agent
    with pytest.raises(TypeError, match="act"):
        as_agent(42)  # type: ignore[arg-type]  # not an agent on purpose
    s = new_game(make_rules(), 2, seed=1)
    obs = LazyObs(s, 0)
    batch = {k: np.stack([obs[k], obs[k]]) for k in ("observation", "action_mask")}
    assert act_batch(agent, batch, [None, None]) == [fn(obs, None)] * 2
    rp = RandomPolicy(0)
    assert rp.reads_info is False and act_batch(rp, batch, [None])[0] in set(
        np.flatnonzero(obs["action_mask"])
    )


def _digest(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True).encode()).hexdigest()


def test_fixed_seeds_give_the_results_they_gave_before_the_one_loop() -> None:
    """Hashes recorded with the code before the hand loop was shared (its own loop in each consumer)."""
    r = evaluate(["heuristic:expert", "heuristic:greedy", "random"], hands=120, players=3, seed=9)
    out = r.to_dict(timing=False)
    for a in out["agents"]:  # the distinct labels (spec#1, spec#2) came later: a new key, the same results
        assert a.pop("label") == a["spec"]
    assert _digest(out) == "9dcf711a46dc157cd99f91bdf3e545ff6eaaccccca526d496baf40d725afef94"
    env = TonkSingleAgentEnv(3, learner_seat="random", dealer="random")
    v3 = obs_layout(3)["thrown"].start  # the digest was recorded on layout version 3, which ended there
    h = hashlib.sha256()
    rng = np.random.default_rng(0)
    for k in range(60):
        o, _ = env.reset(seed=k)
        h.update(o[:v3].tobytes())
        done = False
        while not done:
            legal = np.flatnonzero(env.action_masks())
            o, reward, done, _, _ = env.step(int(legal[rng.integers(len(legal))]))
            h.update(o[:v3].tobytes())
            h.update(repr(reward).encode())
    assert h.hexdigest() == "0343e75811cf443914a0d336ebf418523bdac4997e488f6842379117791dd390"
