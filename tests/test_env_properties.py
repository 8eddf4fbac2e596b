"""Properties of both envs: no hidden-card leaks, determinism under disturbed global RNGs, random play."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest
import torch

from tonk_env import env
from tonk_env.engine import OVER, PRESETS, RESULT_KINDS, check_invariants, legal_mask
from tonk_env.single import TonkSingleAgentEnv


def stack(hands: list[str], upcard: str, stock: str = "") -> str:
    """A stacked deck for the default dealer (seat 0 first): hands dealt one card a seat at a time."""
    cards = [h.split() for h in hands]
    order = [cards[p][i] for i in range(len(cards[0])) for p in range(len(cards))]
    return " ".join(order + [upcard] + stock.split())


# -- leaks ---------------------------------------------------------------------------------------


def test_swapping_an_opponents_hidden_cards_changes_nothing_i_see_scripted() -> None:
    """Two decks that differ only in player_1's hidden cards (swapped with deep stock cards)."""
    stock = "2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS 2H 3H"  # the top of the stock, same in both
    deck_a = stack(["AC 2C 3C 9D TD", "KD QD JD 8D 7D"], "5C", stock + " AH 4H 5H 6H 7H")
    deck_b = stack(["AC 2C 3C 9D TD", "AH 4H 5H 6H 7H"], "5C", stock + " KD QD JD 8D 7D")
    script = ["draw", "discard 2S", "draw", "discard 3S", "take", "discard TD", "draw", "discard 4S",
              "draw", "discard 5S", "take", "discard 5S", "draw", "discard 6S"]  # fmt: skip
    ea, eb = env(2), env(2)
    ea.reset(seed=0, options={"deck": deck_a})
    eb.reset(seed=99, options={"deck": deck_b})
    for text in script:
        for me in ("player_0",):
            oa, ob = ea.observe(me), eb.observe(me)
            np.testing.assert_array_equal(oa["observation"], ob["observation"])
            np.testing.assert_array_equal(oa["action_mask"], ob["action_mask"])
            assert ea.unwrapped.view(me) == eb.unwrapped.view(me)
        assert ea.unwrapped.view("player_1") != eb.unwrapped.view("player_1")  # player_1 does see them
        ea.step(ea.unwrapped.action_from_string(text))
        eb.step(eb.unwrapped.action_from_string(text))


@pytest.mark.parametrize("n", [2, 3, 4])
def test_swapping_hidden_cards_in_random_play_changes_nothing_others_see(n: int) -> None:
    """At every step, swap one unknown card of each opponent with a stock card; nobody else's view moves."""
    e = env(n, "full_waiting")
    u = e.unwrapped
    rng = np.random.default_rng(n)
    checked = 0
    for seed in range(25):
        e.reset(seed=seed)
        for _agent in e.agent_iter():
            obs, _, term, trunc, _ = e.last()
            if term or trunc:
                e.step(None)
                continue
            s = u.game
            for me in range(n):
                for other in range(n):
                    hidden = s.hands[other] & ~s.known[other]
                    if other == me or not hidden or not s.stock:
                        continue
                    agent = f"player_{me}"
                    before_obs, before_view = e.observe(agent), u.view(agent)
                    hs = [c for c in range(52) if hidden >> c & 1]
                    c = hs[int(rng.integers(len(hs)))]
                    i = int(rng.integers(len(s.stock)))
                    d = s.stock[i]
                    s.hands[other] ^= (1 << c) | (1 << d)
                    s.stock[i] = c
                    try:
                        after_obs = e.observe(agent)
                        np.testing.assert_array_equal(before_obs["observation"], after_obs["observation"])
                        np.testing.assert_array_equal(before_obs["action_mask"], after_obs["action_mask"])
                        assert u.view(agent) == before_view
                        checked += 1
                    finally:
                        s.hands[other] ^= (1 << c) | (1 << d)
                        s.stock[i] = d
            e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert checked > 100


# -- determinism -----------------------------------------------------------------------------------


def disturb(k: int) -> None:
    """Move the global generators an env must not read."""
    random.seed(k)
    random.random()
    np.random.seed(k % 2**32)
    np.random.rand(3)
    torch.manual_seed(k)
    torch.rand(2)


def test_two_aec_envs_with_one_seed_stay_identical() -> None:
    e1, e2 = env(3, "hit_penalty"), env(3, "hit_penalty")
    e1.reset(seed=77)
    disturb(1)
    e2.reset(seed=77)
    pick1, pick2 = np.random.default_rng(5), np.random.default_rng(5)
    steps = hands = 0
    while hands < 40:
        for a1, a2 in zip(e1.agent_iter(), e2.agent_iter(), strict=True):
            assert a1 == a2
            disturb(steps)
            o1, r1, t1, tr1, i1 = e1.last()
            disturb(steps + 1)
            o2, r2, t2, tr2, i2 = e2.last()
            np.testing.assert_array_equal(o1["observation"], o2["observation"])
            np.testing.assert_array_equal(o1["action_mask"], o2["action_mask"])
            assert (r1, t1, tr1, i1) == (r2, t2, tr2, i2)
            if t1:
                e1.step(None)
                e2.step(None)
            else:
                e1.step(int(pick1.choice(np.flatnonzero(o1["action_mask"]))))
                disturb(steps + 2)
                e2.step(int(pick2.choice(np.flatnonzero(o2["action_mask"]))))
            steps += 1
        hands += 1
        e1.reset()
        disturb(hands)
        e2.reset()
    assert e1.unwrapped.record() == e2.unwrapped.record()


def test_two_single_agent_envs_with_one_seed_stay_identical() -> None:
    kw: dict[str, Any] = {"learner_seat": "random", "dealer": "random"}
    e1, e2 = TonkSingleAgentEnv(3, **kw), TonkSingleAgentEnv(3, **kw)
    o1, i1 = e1.reset(seed=123)
    disturb(9)
    o2, i2 = e2.reset(seed=123)
    pick1, pick2 = np.random.default_rng(1), np.random.default_rng(1)
    hands = 0
    for step in range(1500):
        np.testing.assert_array_equal(o1, o2)
        assert i1 == i2
        m1, m2 = e1.action_masks(), e2.action_masks()
        np.testing.assert_array_equal(m1, m2)
        disturb(step)
        o1, r1, t1, tr1, i1 = e1.step(int(pick1.choice(np.flatnonzero(m1))))
        disturb(step + 1)
        o2, r2, t2, tr2, i2 = e2.step(int(pick2.choice(np.flatnonzero(m2))))
        assert (r1, t1, tr1) == (r2, t2, tr2)
        if t1:
            assert i1 == i2
            hands += 1
            o1, i1 = e1.reset()
            disturb(step + 2)
            o2, i2 = e2.reset()
    assert hands > 50


# -- long random play --------------------------------------------------------------------------------


@pytest.mark.parametrize("preset", list(PRESETS))
def test_masked_random_agent_plays_10000_hands(preset: str) -> None:
    """10,000 hands per preset (2, 3, 4 players in turn) through the wrapped AEC env, checked at each end."""
    envs = {n: env(n, preset) for n in (2, 3, 4)}
    for n, e in envs.items():
        e.reset(seed=1000 + n)
    choose = random.Random(preset).random
    kinds: set[str] = set()
    for hand in range(10_000):
        n = 2 + hand % 3
        e = envs[n]
        if hand >= 3:
            e.reset()
        u = e.unwrapped
        finals: dict[str, float] = {}
        for agent in e.agent_iter():
            obs, reward, term, trunc, info = e.last()
            assert not trunc
            if term:
                finals[agent] = reward
                assert reward == info["payoffs"][u.seat(agent)]
                e.step(None)
                continue
            mask = obs["action_mask"]
            legal = np.flatnonzero(mask)
            assert len(legal) and reward == 0 and agent == e.agent_selection
            if hand % 50 == 0:  # the full mask comparison is slower; spot-check it
                np.testing.assert_array_equal(mask, legal_mask(u.game))
            e.step(int(legal[int(choose() * len(legal))]))
        g = u.game
        assert g.phase == OVER and g.result is not None
        assert set(finals) == set(e.possible_agents)
        assert abs(sum(finals.values())) < 1e-9
        assert [finals[f"player_{i}"] for i in range(n)] == list(g.result.payoffs)
        kinds.add(g.result.kind)
        if hand % 25 == 0:
            check_invariants(g)
    assert kinds <= set(RESULT_KINDS)
    assert {"drop_won", "caught"} <= kinds
