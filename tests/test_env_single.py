"""The Gymnasium single-agent env: the checkers, the policy contract, early endings, SB3 and sb3-contrib."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.utils.env_checker import check_env as gym_check_env
from stable_baselines3.common.env_checker import check_env as sb3_check_env

from tonk_env.agent import Agent, RandomPolicy, as_agent, random_policy
from tonk_env.engine import (
    OVER,
    PRESETS,
    RESULT_KINDS,
    IllegalActionError,
    SeatInfo,
    action_table,
    legal_mask,
    make_rules,
)
from tonk_env.obs import obs_layout, observation
from tonk_env.single import ACKNOWLEDGE, TonkSingleAgentEnv

NAMES = {action_table(False).name(a): a for a in range(action_table(False).size)}


def stack(hands: list[str], upcard: str, stock: str = "") -> str:
    """A stacked deck for the default dealer (seat 0 first): hands dealt one card a seat at a time."""
    cards = [h.split() for h in hands]
    order = [cards[p][i] for i in range(len(cards[0])) for p in range(len(cards))]
    return " ".join(order + [upcard] + stock.split())


class Scripted:
    """A policy that plays a fixed list of action strings, then draws and discards at random."""

    def __init__(self, script: list[str]) -> None:
        self.script = list(script)
        self.hands: list[tuple[int, int]] = []
        self.rng = np.random.default_rng(0)

    def reset_hand(self, seat: int, num_players: int, rules: Any) -> None:
        self.hands.append((seat, num_players))

    def act(self, obs: dict[str, np.ndarray], info: SeatInfo) -> int:
        assert isinstance(info, SeatInfo) and info.my_turn
        np.testing.assert_array_equal(obs["observation"][:52] != 0, [(info.hand >> c) & 1 for c in range(52)])
        if self.script:
            return NAMES[self.script.pop(0)]
        return int(self.rng.choice(np.flatnonzero(obs["action_mask"][1:]) + 1))  # never drops


# -- the ecosystem's checkers --------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("preset", list(PRESETS))
@pytest.mark.parametrize("n", [2, 3, 4])
def test_gymnasium_and_sb3_check_env(preset: str, n: int) -> None:
    # Both checkers step with unmasked action_space.sample(), which is almost always
    # illegal; "penalize" turns that into a terminal penalty instead of an error.
    env = TonkSingleAgentEnv(n, preset, illegal_action="penalize", learner_seat="random", render_mode="ansi")
    gym_check_env(env, skip_render_check=False)
    sb3_check_env(TonkSingleAgentEnv(n, preset, illegal_action="penalize"))


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_check_env_with_redeal_and_with_hands_over_at_reset() -> None:
    redeal = TonkSingleAgentEnv(2, illegal_action="penalize", learner_seat="random", early_end="redeal")
    gym_check_env(redeal, skip_render_check=False)
    sb3_check_env(TonkSingleAgentEnv(2, illegal_action="penalize", early_end="redeal"))
    # An opponent that always drops ends every hand before the learner (seat 1) acts.
    always = TonkSingleAgentEnv(2, opponents=drop_always, learner_seat=1, illegal_action="penalize")
    gym_check_env(always, skip_render_check=True)
    sb3_check_env(TonkSingleAgentEnv(2, opponents=drop_always, learner_seat=1, illegal_action="penalize"))


def drop_always(obs: dict[str, np.ndarray], info: SeatInfo) -> int:
    return 0


def test_spaces_and_masks() -> None:
    env = TonkSingleAgentEnv(3, "seven_card")
    assert isinstance(env.observation_space, spaces.Box)
    assert env.observation_space.shape == (obs_layout(3).size,)
    assert env.observation_space.high[obs_layout(3)["hand_count"]][0] == pytest.approx(1.6)
    assert env.action_space == spaces.Discrete(540)
    obs, info = env.reset(seed=0)
    assert env.observation_space.contains(obs)
    mask = env.action_masks()
    assert mask.dtype == np.int8 and mask.any()
    np.testing.assert_array_equal(mask, legal_mask(env.game))
    assert env.game.cur == env.learner_seat == info["learner_seat"] == 0


def test_illegal_learner_action_raises() -> None:
    env = TonkSingleAgentEnv(2)
    env.reset(seed=0)
    with pytest.raises(IllegalActionError) as err:
        env.step(NAMES["spread AC 2C 3C"])
    msg = str(err.value)
    assert "the learner" in msg and "'spread AC 2C 3C'" in msg and "legal actions: drop, draw" in msg
    assert isinstance(err.value, ValueError)
    with pytest.raises(IllegalActionError, match="integer"):
        env.step("draw")


def test_step_after_the_end_needs_reset() -> None:
    env = TonkSingleAgentEnv(2)
    env.reset(seed=0)
    *_, term, _, _ = env.step(0)  # drop
    assert term and not env.action_masks().any()
    with pytest.raises(RuntimeError, match="reset"):
        env.step(1)


# -- opponents -------------------------------------------------------------------------------------


def test_policy_contract_objects_and_callables() -> None:
    seen: list[int] = []

    def fn(obs: dict[str, np.ndarray], info: SeatInfo) -> int:
        seen.append(info.seat)
        legal = np.flatnonzero(obs["action_mask"])
        return int(legal[-1])  # never 0 (drop) unless it is the only action

    obj = Scripted([])
    assert isinstance(obj, Agent) and isinstance(random_policy(1), Agent)
    env = TonkSingleAgentEnv(3, opponents=[fn, obj], learner_seat=1)
    for seed in range(10):
        env.reset(seed=seed)
        done = False
        while not done:
            legal = np.flatnonzero(env.action_masks())
            *_, done, _, _ = env.step(int(legal[-1]))
    assert set(seen) == {0}
    assert {s for s, _ in obj.hands} == {2} and len(obj.hands) >= 10
    rp = RandomPolicy(np.random.default_rng(3))
    mask = np.zeros(540, np.int8)
    mask[[1, 2, 40]] = 1
    obs = {"observation": np.zeros(1, np.float32), "action_mask": mask}
    assert {as_agent(rp).act(obs, None) for _ in range(60)} == {1, 2, 40}


def test_a_single_policy_plays_every_opponent_seat_and_hears_each_seat() -> None:
    pol = Scripted([])
    env = TonkSingleAgentEnv(4, opponents=pol, learner_seat=2)
    env.reset(seed=1)
    assert sorted(pol.hands) == [(0, 4), (1, 4), (3, 4)]
    assert set(env.policies) == {0, 1, 3} and all(p is pol for p in env.policies.values())


def test_opponent_sampler_is_called_per_hand_with_the_env_rng() -> None:
    calls: list[tuple[int, int]] = []

    def sampler(rng: np.random.Generator, n: int, learner: int) -> list[Any]:
        assert isinstance(rng, np.random.Generator)
        calls.append((n, learner))
        return [random_policy(int(rng.integers(1 << 30))) for _ in range(n - 1)]

    env = TonkSingleAgentEnv(3, opponent_sampler=sampler, learner_seat="random")
    for seed in range(20):
        env.reset(seed=seed)
    assert len(calls) >= 20 and {n for n, _ in calls} == {3}
    assert {s for _, s in calls} == {0, 1, 2}
    with pytest.raises(ValueError, match="not both"):
        TonkSingleAgentEnv(2, opponents=fn_policy, opponent_sampler=sampler)
    with pytest.raises(ValueError, match="policies"):
        TonkSingleAgentEnv(3, opponents=[fn_policy])
    with pytest.raises(TypeError, match="policy"):
        TonkSingleAgentEnv(2, opponents=42)


def fn_policy(obs: dict[str, np.ndarray], info: SeatInfo) -> int:
    return int(np.flatnonzero(obs["action_mask"])[0])


def test_an_opponent_that_plays_illegally_is_named() -> None:
    env = TonkSingleAgentEnv(2, opponents=lambda obs, info: 3, learner_seat=1)  # "discard AC" at the start
    with pytest.raises(IllegalActionError, match=r"opponent .*\(seat 0\)"):
        env.reset(seed=0)


def test_learner_seat_random_and_observation_from_the_learner() -> None:
    env = TonkSingleAgentEnv(3, learner_seat="random", dealer="random")
    seats, dealers = set(), set()
    for seed in range(40):
        obs, info = env.reset(seed=seed)
        seats.add(info["learner_seat"])
        dealers.add(env.game.dealer)
        assert env.game.cur == env.learner_seat or info["hand_over"]  # or the hand ended first
        np.testing.assert_array_equal(obs, observation(env.game, env.learner_seat))
    assert seats == {0, 1, 2} and dealers == {0, 1, 2}


# -- hands that end before the learner acts ------------------------------------------------------------


def test_hands_ending_before_the_learner_acts_are_dealt_again() -> None:
    class DropFirst:
        """Drops at its first turn of every other hand."""

        def __init__(self) -> None:
            self.hand = 0

        def reset_hand(self, seat: int, num_players: int, rules: Any) -> None:
            self.hand += 1

        def act(self, obs: dict[str, np.ndarray], info: SeatInfo) -> int:
            if self.hand % 2 == 1 and obs["action_mask"][0]:
                return 0
            return int(np.flatnonzero(obs["action_mask"])[-1])

    env = TonkSingleAgentEnv(2, opponents=DropFirst(), learner_seat=1, early_end="redeal")
    obs, info = env.reset(seed=0)
    assert info["skipped_hands"] >= 1
    assert info["skipped_payoff"] in (-1.0, 2.0) or info["skipped_hands"] > 1
    assert env.game.cur == 1 and env.game.phase != OVER and env.action_masks().any()
    assert env.skipped_hands_total == info["skipped_hands"]
    assert env.skipped_payoff_total == info["skipped_payoff"]

    always = TonkSingleAgentEnv(2, opponents=drop_always, learner_seat=1, max_redeals=5, early_end="redeal")
    with pytest.raises(RuntimeError, match="ended before the learner"):
        always.reset(seed=0)


def test_instant_wins_are_dealt_again_and_counted() -> None:
    # about a third of deals end at once
    env = TonkSingleAgentEnv(2, "low_tonk", instant_win_low_max=25, early_end="redeal")
    skipped = 0
    for seed in range(40):
        _, info = env.reset(seed=seed)
        skipped += info["skipped_hands"]
        assert env.game.phase != OVER and env.game.cur == 0
    assert skipped > 0 and env.skipped_hands_total == skipped


INSTANT = stack(["KS QH JD TC 9S", "2C 3C 4D 5H 6S"], "7C")  # seat 0 is dealt 49: an instant win


def test_a_stacked_deck_that_ends_before_the_learner_acts_is_an_error_with_redeal() -> None:
    env = TonkSingleAgentEnv(2, early_end="redeal")
    with pytest.raises(ValueError, match="before the learner"):
        env.reset(options={"deck": INSTANT})
    with pytest.raises(ValueError, match="unknown reset options"):
        env.reset(options={"decks": INSTANT})


def test_early_end_is_validated_and_defaults_to_deliver() -> None:
    assert TonkSingleAgentEnv(2).early_end == "deliver"
    for bad in ("skip", "", None, 1):
        with pytest.raises(ValueError, match=r"early_end=.* is invalid; allowed: 'deliver' or 'redeal'"):
            TonkSingleAgentEnv(2, early_end=bad)  # type: ignore[arg-type]  # a wrong type on purpose
    env = TonkSingleAgentEnv(2)
    _, info = env.reset(seed=0)
    assert info == {"learner_seat": 0, "hand_over": False, "skipped_hands": 0, "skipped_payoff": 0.0}
    assert env.action_masks().sum() > 1


@pytest.mark.parametrize(("seat", "payoff"), [(0, 2.0), (1, -2.0)])
def test_an_instant_win_is_delivered_in_one_acknowledgement_step(seat: int, payoff: float) -> None:
    env = TonkSingleAgentEnv(2, learner_seat=seat, reward_scale=0.5, render_mode="ansi")
    obs, info = env.reset(options={"deck": INSTANT})
    assert ACKNOWLEDGE == 1 == NAMES["draw"]
    assert info["learner_seat"] == seat and info["hand_over"] is True
    assert info["result_kind"] == "instant_win" and info["payoffs"] == [2, -2] and info["ended_by"] == 0
    assert env.game.phase == OVER and env.observation_space.contains(obs)
    np.testing.assert_array_equal(obs, observation(env.game, seat))
    mask = env.action_masks()
    assert mask.dtype == np.int8 and mask.shape == (540,) and mask.sum() == 1 and mask[1] == 1
    # the conveniences keep working on the finished hand
    assert "instant_win" in env.render() and "acknowledge" in env.render()
    assert env.view()["phase"] == "over" and env.view()["seat"] == seat
    assert env.record()["result"]["kind"] == "instant_win"
    assert env.action_from_string("acknowledge") == ACKNOWLEDGE and env.action_to_string(1) == "acknowledge"
    with pytest.raises(IllegalActionError, match="acknowledge"):
        env.action_from_string("draw")
    obs2, reward, term, trunc, info2 = env.step(np.int64(ACKNOWLEDGE))
    assert (reward, term, trunc) == (payoff * 0.5, True, False)
    assert info2["acknowledged"] is True and info2["learner_seat"] == seat
    assert info2["result_kind"] == "instant_win" and info2["payoffs"][seat] == payoff
    np.testing.assert_array_equal(obs2, obs)
    assert not env.action_masks().any()
    with pytest.raises(RuntimeError, match="reset"):
        env.step(ACKNOWLEDGE)


def test_any_other_action_on_a_finished_hand_follows_illegal_action() -> None:
    env = TonkSingleAgentEnv(2, learner_seat=1)
    env.reset(options={"deck": INSTANT})
    for bad in (0, 2, 539, 10_000):
        with pytest.raises(IllegalActionError) as err:
            env.step(bad)
        msg = str(err.value)
        assert "ended before the learner acted" in msg and "only legal action is 1 (acknowledge)" in msg
        assert env.action_masks()[1] == 1  # still waiting for the acknowledgement
    assert env.step(ACKNOWLEDGE)[1] == -2.0
    pen = TonkSingleAgentEnv(2, learner_seat=1, illegal_action="penalize", illegal_penalty=-3.0)
    pen.reset(options={"deck": INSTANT})
    _, reward, term, trunc, info = pen.step(0)
    assert (reward, term, trunc) == (-3.0, True, False)
    assert info["result_kind"] == "illegal_action" and info["learner_seat"] == 1
    assert not pen.action_masks().any()


def test_an_opponent_drop_before_the_learner_acts_is_delivered() -> None:
    from stable_baselines3.common.monitor import Monitor

    env = TonkSingleAgentEnv(2, opponents=drop_always, learner_seat=1, max_redeals=0)
    mon = Monitor(
        TonkSingleAgentEnv(2, opponents=drop_always, learner_seat=1), info_keywords=("result_kind",)
    )
    mon.reset(seed=0)
    _, _, _, _, minfo = mon.step(ACKNOWLEDGE)
    assert minfo["episode"]["result_kind"] in ("drop_won", "caught")
    for seed in range(20):
        _, info = env.reset(seed=seed)
        assert info["hand_over"] is True and info["ended_by"] == 0
        assert info["result_kind"] in ("drop_won", "caught")
        assert np.flatnonzero(env.action_masks()).tolist() == [ACKNOWLEDGE]
        _, reward, term, trunc, info2 = env.step(ACKNOWLEDGE)
        assert term and not trunc and info2["acknowledged"]
        assert reward == info2["payoffs"][1] == -info2["payoffs"][0] != 0
    assert env.skipped_hands_total == 0


def test_deliver_returns_the_first_deal_that_redeal_would_skip() -> None:
    # about a third of these deals end at once
    kw: dict[str, Any] = {"instant_win_low_max": 25, "reward_scale": 0.5}
    deliver = TonkSingleAgentEnv(2, "low_tonk", **kw)
    redeal = TonkSingleAgentEnv(2, "low_tonk", early_end="redeal", **kw)
    over = 0
    for seed in range(40):
        obs_d, info_d = deliver.reset(seed=seed)
        _, info_r = redeal.reset(seed=seed)
        assert info_d["hand_over"] == (info_r["skipped_hands"] > 0)
        if not info_d["hand_over"]:
            assert deliver.record() == redeal.record()
            continue
        over += 1
        assert info_d["result_kind"] == "instant_win"
        _, reward, term, _, _ = deliver.step(ACKNOWLEDGE)
        assert term and reward == info_d["payoffs"][0] * 0.5
        if info_r["skipped_hands"] == 1:
            assert reward == info_r["skipped_payoff"]
    assert over > 5 and deliver.skipped_hands_total == 0


# -- vectorised envs and sb3-contrib -------------------------------------------------------------------


def _make(seat: Any = "random") -> TonkSingleAgentEnv:
    return TonkSingleAgentEnv(2, learner_seat=seat)


@pytest.mark.parametrize("kind", ["dummy", "subproc"])
def test_vec_envs_step_with_masks(kind: str) -> None:
    from sb3_contrib.common.maskable.utils import get_action_masks
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    fns = [_make, _make]
    venv = DummyVecEnv(fns) if kind == "dummy" else SubprocVecEnv(fns, start_method="fork")
    try:
        venv.seed(3)
        venv.reset()
        rng = np.random.default_rng(0)
        ends = acks = 0
        for _ in range(300):
            masks = get_action_masks(venv)
            assert masks.shape == (2, 540) and masks.any(axis=1).all()
            actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
            _, rewards, dones, infos = venv.step(actions)
            for r, d, info in zip(rewards, dones, infos, strict=True):
                if d:
                    ends += 1
                    assert r == info["payoffs"][info["learner_seat"]]
                    assert info["result_kind"] in RESULT_KINDS
                    acks += bool(info.get("acknowledged"))
                else:
                    assert r == 0
        assert ends > 20 and acks > 0  # random opponents drop on their first turn now and then
    finally:
        venv.close()


def test_maskable_ppo_learns_a_few_steps_and_predicts_with_masks() -> None:
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv

    torch.set_num_threads(1)
    venv = DummyVecEnv([_make, _make])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = MaskablePPO("MlpPolicy", venv, n_steps=32, batch_size=32, n_epochs=1, seed=0, device="cpu")
        model.learn(128)
    env = _make(1)
    obs, _ = env.reset(options={"deck": INSTANT})  # over at the deal: only the acknowledgement is legal
    action, _ = model.predict(obs, action_masks=env.action_masks(), deterministic=True)
    assert int(action) == ACKNOWLEDGE and env.step(action)[1] == -2.0
    env = _make(0)
    obs, _ = env.reset(seed=5)
    for _ in range(20):
        action, _ = model.predict(obs, action_masks=env.action_masks(), deterministic=True)
        assert env.action_masks()[int(action)] == 1
        obs, _, done, _, _ = env.step(action)
        if done:
            obs, _ = env.reset()


def test_rules_and_reward_scale_and_render() -> None:
    env = TonkSingleAgentEnv(2, "full_waiting", reward_scale=0.25, hit_wait=3, render_mode="ansi")
    assert env.rules == make_rules("full_waiting", hit_wait=3)
    env.reset(seed=9)
    assert env.game.rules == env.rules
    assert "(you)" in env.render()
    assert env.action_to_string(1) == "draw" and env.action_from_string("drop") == 0
    assert env.view()["seat"] == env.learner_seat
    assert env.record()["rules"]["hit_wait"] == 3
    _, reward, term, _, info = env.step(0)
    assert term and reward == info["payoffs"][0] * 0.25
    with pytest.raises(ValueError, match="learner_seat"):
        TonkSingleAgentEnv(2, learner_seat=2)
    with pytest.raises(ValueError, match="dealer"):
        TonkSingleAgentEnv(2, dealer="left")


def test_a_sampler_may_be_passed_as_opponents() -> None:
    class Pool:
        def __init__(self) -> None:
            self.calls = 0

        def sample(self, rng: np.random.Generator, num_players: int, learner_seat: int) -> list[Any]:
            self.calls += 1
            return [Scripted([]) for _ in range(num_players - 1)]

        __call__ = sample

    pool = Pool()
    env = TonkSingleAgentEnv(3, opponents=pool, learner_seat="random")
    env.reset(seed=0)
    assert pool.calls >= 1 and all(isinstance(p, Scripted) for p in env.policies.values())
    three = TonkSingleAgentEnv(2, opponents=lambda rng, n, seat: [last_legal], learner_seat=1)
    three.reset(seed=0)
    assert three.policies == {0: last_legal}
    two = TonkSingleAgentEnv(2, opponents=last_legal, learner_seat=1)  # two parameters: a policy
    two.reset(seed=0)
    assert two.policies == {0: last_legal}


def last_legal(obs: dict[str, np.ndarray], info: SeatInfo) -> int:
    return int(np.flatnonzero(obs["action_mask"])[-1])  # never drops unless it must


def test_sb3_monitor_reads_result_kind() -> None:
    from stable_baselines3.common.monitor import Monitor

    env = Monitor(TonkSingleAgentEnv(2), info_keywords=("result_kind",))
    env.reset(seed=0)
    _, _, term, _, info = env.step(0)  # drop
    assert term and info["episode"]["result_kind"] in ("drop_won", "caught")
