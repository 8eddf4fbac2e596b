"""``heuristic:greedy`` from arrays and inside the compiled core makes the choices of ``act`` on a SeatInfo.

``GreedyAgent.act_arrays`` decides from observation arrays; ``core_policy``
has the compiled kernel play it (``tonk_env.core.greedy``), which the vector
env's ``check=True`` compares with ``act`` move by move.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from agents.heuristic import GreedyAgent
from tonk_env.engine import legal_actions, make_rules, new_game, seat_info
from tonk_env.engine.actions import DISCARD, DRAW
from tonk_env.engine.state import OVER, legal_mask
from tonk_env.obs import observation
from tonk_env.vector import CoreMirrorError, TonkVectorEnv


class ArraysGreedy(GreedyAgent):
    """The greedy from arrays, not inside the kernel (the ``act_arrays`` path of the vector env)."""

    core_policy = None  # type: ignore[assignment]


#: Rule sets, table sizes and drop counts the greedy's forms are compared on (every action kind).
CASES = [
    ("standard", {}, 2, 10),
    ("standard", {"ace_high": True}, 3, 10),
    ("hit_penalty", {}, 2, 14),
    ("seven_card", {}, 4, 5),
]


def _positions(rules, n: int, hands: int, seed: int):
    """Every decision of ``hands`` hands played by a mix of greedy and random seats."""
    rng = random.Random(seed)
    greedy = GreedyAgent()
    out = []
    for h in range(hands):
        s = new_game(rules, n, seed=seed * 1000 + h)
        while s.phase != OVER:
            seat = s.cur
            info = seat_info(s, seat)
            out.append((observation(s, seat), legal_mask(s), info))
            legal = legal_actions(s)
            s.play(greedy.act({}, info) if rng.random() < 0.6 else rng.choice(legal))
    return out


@pytest.mark.parametrize(("preset", "options", "n", "drop_at"), CASES)
def test_act_arrays_chooses_as_act_does(preset: str, options: dict, n: int, drop_at: int) -> None:
    rules = make_rules(preset, **options)
    positions = _positions(rules, n, hands=60, seed=n + drop_at)
    agent = GreedyAgent(drop_at=drop_at)
    obs = np.stack([o for o, _, _ in positions])
    masks = np.stack([m for _, m, _ in positions])
    got = agent.act_arrays(obs, masks, rules, n)
    want = np.asarray([agent.act({}, info) for _, _, info in positions])
    kinds = {int(a) for a in want}
    assert len(positions) > 500 and len(kinds) > 20  # drops, takes, spreads, hits and discards
    bad = np.flatnonzero(got != want)
    assert not bad.size, (
        f"{bad.size} of {len(positions)} differ, first at {bad[0]}: {got[bad[0]]} != {want[bad[0]]}"
    )


def test_the_vector_env_plays_greedy_from_arrays_without_mirrors_and_as_the_engine_would() -> None:
    env = TonkVectorEnv(num_envs=16, opponents=ArraysGreedy(), check=True)
    env.reset(seed=3)
    rng = np.random.default_rng(0)
    for _ in range(200):  # check=True compares every game with its engine mirror, the greedy's moves too
        masks = env.action_masks()
        env.step(np.asarray([rng.choice(np.flatnonzero(m)) for m in masks]))
    fast = TonkVectorEnv(num_envs=16, opponents=ArraysGreedy())
    fast.reset(seed=3)
    assert fast.mirror(0) is None


def _random_steps(env: TonkVectorEnv, steps: int, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    seen = []
    for _ in range(steps):
        masks = env.action_masks()
        obs, rewards, ended, _, _ = env.step(np.asarray([rng.choice(np.flatnonzero(m)) for m in masks]))
        seen += [obs, rewards, ended]
    return seen


@pytest.mark.parametrize(("preset", "options", "n", "drop_at"), CASES)
def test_the_kernel_plays_greedy_as_act_does(
    preset: str, options: dict, n: int, drop_at: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tonk_env.vector_seats as seats

    compared: list[int] = []
    real = seats.decide

    def counted(agent, state, who):
        compared.append(real(agent, state, who))
        return compared[-1]

    monkeypatch.setattr(seats, "decide", counted)
    greedy = GreedyAgent(drop_at=drop_at)
    env = TonkVectorEnv(
        num_envs=16, num_players=n, rules=make_rules(preset, **options), opponents=greedy, check=True
    )
    env.reset(seed=n + drop_at)
    _random_steps(env, 150, seed=n)  # check=True: each kernel greedy move against act on the mirror
    assert len(compared) > 1000 and len(set(compared)) > 20  # drops, takes, spreads, hits and discards


def test_a_kernel_greedy_that_act_contradicts_is_caught_under_check() -> None:
    class Liar(GreedyAgent):
        def act(self, obs, info):  # not what the kernel's greedy plays at the start of a turn
            return DRAW if info.phase != 0 else max(info.legal)

    env = TonkVectorEnv(num_envs=8, opponents=Liar(), check=True)
    with pytest.raises(CoreMirrorError, match="greedy"):
        env.reset(seed=1)
        _random_steps(env, 20, seed=0)


def test_the_kernel_greedy_gives_the_arrays_greedys_stream_without_python(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import agents.heuristic as heuristic

    kernel = TonkVectorEnv(num_envs=32, num_players=3, opponents=GreedyAgent(), learner_seat="random")
    arrays = TonkVectorEnv(num_envs=32, num_players=3, opponents=ArraysGreedy(), learner_seat="random")
    kernel.reset(seed=9)
    arrays.reset(seed=9)
    monkeypatch.setattr(heuristic, "greedy_moves", None)  # the kernel's greedy never calls back into Python
    a = _random_steps(kernel, 100, seed=2)
    monkeypatch.undo()
    b = _random_steps(arrays, 100, seed=2)
    assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    assert kernel.mirror(0) is None


def test_a_malformed_core_policy_is_refused() -> None:
    class Odd(GreedyAgent):
        core_policy = ("greedy", "ten")  # type: ignore[assignment]

    with pytest.raises(ValueError, match="core_policy must be"):
        TonkVectorEnv(num_envs=2, opponents=Odd()).reset(seed=0)


def test_masks_of_another_table_are_refused() -> None:
    with pytest.raises(ValueError, match="580"):
        GreedyAgent().act_arrays(np.zeros((1, 338), np.float32), np.zeros((1, 580), np.int8), make_rules(), 2)


def test_greedies_of_every_game_decide_in_one_call_per_round(monkeypatch: pytest.MonkeyPatch) -> None:
    import agents.heuristic as heuristic

    calls: list[int] = []
    real = heuristic.greedy_moves

    def counted(obs, masks, *args):
        calls.append(len(obs))
        return real(obs, masks, *args)

    monkeypatch.setattr(heuristic, "greedy_moves", counted)
    per_game = [ArraysGreedy() for _ in range(32)]  # a pool per game: one greedy object each
    env = TonkVectorEnv(num_envs=32, opponent_sampler=[lambda gen, n, seat, a=a: [a] for a in per_game])
    env.reset(seed=5)  # the learner sits first
    env.step(np.full(32, DRAW))
    env.step(np.asarray([np.flatnonzero(m[DISCARD : DISCARD + 52])[0] + DISCARD for m in env.action_masks()]))
    assert calls[0] == 32 and len(calls) >= 2  # each round of the 32 greedies' moves in one call
    other = GreedyAgent(drop_at=4)
    assert other.arrays_key != per_game[0].arrays_key  # another threshold chooses otherwise: its own call
