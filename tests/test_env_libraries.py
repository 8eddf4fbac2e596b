"""What the RL libraries tripped on (issue 32), fixed in the envs and checked here.

- the AEC env's ``early_end="redeal"``: no hand is over right after ``reset()``;
- the same info keys, never None, on every step of both envs (the AEC env's ``infos="every_step"``);
- agent spec strings wherever an agent is accepted (``gymnasium.make(..., opponents="heuristic:greedy")``);
- the mask through ``gymnasium.make``'s wrappers, and ``MultiInputPolicy``'s error naming ``MlpPolicy``;
- the registered id passes Gymnasium's and SB3's ``check_env`` as made; the strict mode stays available.
"""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env as gym_check_env
from pettingzoo.test import api_test, seed_test
from stable_baselines3.common.env_checker import check_env as sb3_check_env

import agents.registry  # noqa: F401  # installs the spec resolver (an installed tonk-rl has the entry point)
import tonk_env
import tonk_env.agent as agent_module
from tonk_env import env
from tonk_env.engine import IllegalActionError
from tonk_env.outcome import STEP_INFO_KEYS, neutral_info
from tonk_env.single import TonkSingleAgentEnv


def _instant_deck() -> str:
    """Seat 0 holds K Q J T 9 (49), seat 1 2 3 4 5 6; the upcard 7C (deals alternate from seat 0)."""
    a, b = "KS QH JD TC 9S".split(), "2C 3C 4D 5H 6S".split()
    return " ".join(c for pair in zip(a, b, strict=True) for c in pair) + " 7C"


def test_aec_redeal_leaves_an_agent_to_act_after_every_reset() -> None:
    e = env(2, early_end="redeal")
    deliver = env(2)
    ended_at_deal = 0
    for seed in range(300):
        e.reset(seed=seed)
        assert not any(e.terminations.values()) and e.last()[1:3] == (0.0, False)
        assert e.observe(e.agent_selection)["action_mask"].any()
        deliver.reset(seed=seed)
        ended_at_deal += all(deliver.terminations.values())
    assert ended_at_deal > 0 and e.skipped_hands_total >= ended_at_deal


def test_aec_redeal_refuses_a_stacked_deck_that_ends_at_the_deal() -> None:
    deck = _instant_deck()
    d = env(2)
    d.reset(seed=0, options={"deck": deck})
    assert all(d.terminations.values()) and d.infos["player_0"]["result_kind"] == "instant_win"
    with pytest.raises(ValueError, match=r"stacked deck's hand ends at the deal \(instant_win\)"):
        env(2, early_end="redeal").reset(seed=0, options={"deck": deck})
    with pytest.raises(ValueError, match="early_end='skip' is invalid; allowed: 'deliver' or 'redeal'"):
        env(2, early_end="skip")
    with pytest.raises(ValueError, match="max_redeals=-1 is invalid; allowed: an int >= 0"):
        env(2, max_redeals=-1)


def test_aec_redeal_passes_pettingzoo_api_and_seed_tests() -> None:
    api_test(env(2, early_end="redeal", infos="every_step"), num_cycles=300)
    seed_test(lambda: env(3, early_end="redeal", infos="every_step"), num_cycles=300)


def _check_info(info: dict, n: int) -> None:
    assert set(STEP_INFO_KEYS) <= set(info)
    assert all(v is not None for v in info.values())
    assert len(info["payoffs"]) == n and len(info["counts"]) == n


@pytest.mark.parametrize("illegal_action", ["raise", "penalize"])
def test_aec_infos_have_the_same_keys_on_every_step(illegal_action: str) -> None:
    e = env(3, illegal_action=illegal_action, infos="every_step")
    ends = set()
    for seed in range(20):
        e.reset(seed=seed)
        rng = np.random.default_rng(seed)
        for _agent in e.agent_iter():
            obs, _, term, trunc, info = e.last()
            assert set(info) == set(STEP_INFO_KEYS)
            _check_info(info, 3)
            if term or trunc:
                ends.add(info["result_kind"])
                e.step(None)
                continue
            assert info == neutral_info(3)
            legal = np.flatnonzero(obs["action_mask"])
            if illegal_action == "penalize" and seed % 5 == 0:
                e.step(int(np.flatnonzero(obs["action_mask"] == 0)[0]))  # an illegal action ends the hand
            else:
                e.step(int(rng.choice(legal)))
    assert "" not in ends and (illegal_action == "raise" or "illegal_action" in ends)


def test_aec_infos_default_to_the_end_only_for_torchrl() -> None:
    e = env(2)
    e.reset(seed=1)
    assert e.infos == {"player_0": {}, "player_1": {}}
    with pytest.raises(ValueError, match="infos='always' is invalid; allowed: 'end' or 'every_step'"):
        env(2, infos="always")


def test_single_env_infos_have_the_same_keys_on_every_step() -> None:
    e = TonkSingleAgentEnv(2, illegal_action="penalize")
    keys = None
    rng = np.random.default_rng(0)
    for seed in range(20):
        e.reset(seed=seed)
        done = False
        while not done:
            mask = e.action_masks()
            a = int(rng.choice(np.flatnonzero(mask))) if seed % 4 else int(np.flatnonzero(mask == 0)[0])
            _, _, done, _, info = e.step(a)
            _check_info(info, 2)
            keys = keys or set(info)
            assert set(info) == keys == {*STEP_INFO_KEYS, "learner_seat", "acknowledged"}


def test_spec_strings_are_agents_everywhere() -> None:
    e = gymnasium.make(tonk_env.ENV_ID, num_players=3, opponents="heuristic:greedy")
    e.reset(seed=0)
    opp = e.unwrapped.policies
    assert [a.spec for a in opp.values()] == ["heuristic:greedy"] * 2
    assert opp[1] is not opp[2]  # one agent per seat
    mixed = TonkSingleAgentEnv(3, opponents=["random", agent_module.random_policy(0)])
    mixed.reset(seed=0)
    assert mixed.policies[1].spec == "random"
    assert agent_module.as_agent("heuristic:expert").spec == "heuristic:expert"
    with pytest.raises(ValueError, match="unknown agent kind|unknown"):
        TonkSingleAgentEnv(2, opponents="nosuchagent")
    vec = gymnasium.make_vec(
        tonk_env.ENV_ID, num_envs=2, vectorization_mode="vector_entry_point", opponents="heuristic:greedy"
    )
    vec.reset(seed=0)
    fixed = vec.unwrapped._fixed  # built once, one per opponent seat, not per hand
    assert [a.spec for a in fixed] == ["heuristic:greedy"]


def test_spec_opponents_are_deterministic_under_a_seeded_reset() -> None:
    def trajectory() -> list[int]:
        e = TonkSingleAgentEnv(2, opponents="random")
        out = []
        for seed in (5, 6):
            obs, _ = e.reset(seed=seed)
            rng = np.random.default_rng(seed)
            done = False
            while not done:
                a = int(rng.choice(np.flatnonzero(e.action_masks())))
                obs, _, done, _, _ = e.step(a)
                out.append(a)
            out.append(int(obs.sum() * 1000))
        return out

    assert trajectory() == trajectory()


def test_a_missing_spec_resolver_is_one_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(agent_module, "_spec_resolver", None)
    monkeypatch.setattr(agent_module.metadata, "entry_points", lambda group: [])
    with pytest.raises(ValueError, match=r"agent spec 'heuristic:greedy': no spec resolver is installed"):
        TonkSingleAgentEnv(2, opponents="heuristic:greedy")


def test_the_mask_is_reachable_through_make_wrappers() -> None:
    e = gymnasium.make(tonk_env.ENV_ID)
    e.reset(seed=0)
    mask = e.get_wrapper_attr("action_masks")()
    assert mask.dtype == np.int8 and np.array_equal(mask, e.unwrapped.action_masks()) and mask.sum() > 0


def test_multi_input_policy_names_mlp_policy() -> None:
    from sb3_contrib import MaskablePPO

    with pytest.raises(AttributeError, match="use SB3's 'MlpPolicy', not 'MultiInputPolicy'"):
        MaskablePPO("MultiInputPolicy", gymnasium.make(tonk_env.ENV_ID))
    assert not hasattr(gymnasium.make(tonk_env.ENV_ID).observation_space, "spaces")


def test_the_registered_id_passes_check_env_as_made() -> None:
    gym_check_env(gymnasium.make(tonk_env.ENV_ID))
    sb3_check_env(gymnasium.make(tonk_env.ENV_ID))
    e = gymnasium.make(tonk_env.ENV_ID)
    e.reset(seed=0)
    illegal = int(np.flatnonzero(e.get_wrapper_attr("action_masks")() == 0)[0])
    _, reward, terminated, _, info = e.step(illegal)
    assert (
        terminated
        and reward == -1.0
        and info["result_kind"] == "illegal_action"
        and info["action"] == illegal
    )
    strict = gymnasium.make(tonk_env.ENV_ID, illegal_action="raise")
    strict.reset(seed=0)
    with pytest.raises(IllegalActionError):
        strict.step(illegal)
    plain = TonkSingleAgentEnv(2)  # the class keeps raising
    plain.reset(seed=0)
    with pytest.raises(IllegalActionError):
        plain.step(illegal)
