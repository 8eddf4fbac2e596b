"""The compiled core against the engine: same deals and random actions, same masks, observations, payoffs."""

from __future__ import annotations

import numpy as np
import pytest

from tonk_env.core import BatchGames, exact_check
from tonk_env.engine import new_game
from tonk_env.engine.rules import PRESETS, make_rules
from tonk_env.engine.state import legal_actions, payoffs
from tonk_env.obs import observation

HANDS = 2000  # per preset and player count: 10,000 hands per preset over 2-6 players


@pytest.mark.parametrize("num_players", [2, 3, 4, 5, 6])
@pytest.mark.parametrize("preset", list(PRESETS))
def test_core_matches_engine(preset: str, num_players: int) -> None:
    result = exact_check(HANDS, preset, num_players, seed=num_players)
    assert result["hands"] == HANDS
    assert result["decisions"] > HANDS


@pytest.mark.parametrize(
    "options",
    [
        {"ace_high": True},
        {"may_discard_taken": False},
        {"caught_pay": "double_to_lowest_only"},
        {"caught_pay": "everyone_double", "stock_out_tie": "split"},
        {"spread_wait": 2, "hit_wait": 3, "wait_cumulative": False},
        {"max_turns": 6, "stock_out_tie": "split"},
        {"instant_win_totals": (20, 30, 49), "instant_win_tie": "rank", "instant_win_pay": 1.5},
        {"tonk_out_pay": 3.5, "run_out_pay": 0.25, "hand_size": 7, "instant_win_totals": ()},
    ],
)
def test_core_matches_engine_options(options: dict[str, object]) -> None:
    rules = make_rules("standard", **options)
    for n in (2, 4, 6):
        assert exact_check(300, rules, n, seed=11)["hands"] == 300


def test_batch_seeded_deals_replay_in_the_engine() -> None:
    core = BatchGames("standard", 3, 8, seed=5)
    masks = core.legal_masks()
    obs = core.observe()
    states = [new_game("standard", 3, deck=core.deck_of(g, int(core.counters[g]) - 1)) for g in range(8)]
    rng = np.random.default_rng(0)
    seen = core.counters.copy()
    for _ in range(200):
        core.legal_masks(masks)
        core.observe(obs)
        acts = np.zeros(8, dtype=np.int64)
        for g, s in enumerate(states):
            assert np.flatnonzero(masks[g]).tolist() == sorted(legal_actions(s))
            assert np.array_equal(obs[g], observation(s, s.cur))
            legal = np.flatnonzero(masks[g])
            acts[g] = legal[rng.integers(len(legal))]
            s.play(int(acts[g]))
        rewards, dones = core.step(acts)
        for g in range(8):
            s = states[g]
            assert bool(dones[g]) == (s.result is not None)
            if dones[g]:
                got = rewards[g].tolist()
                want = list(payoffs(s))
                for k in range(int(seen[g]), int(core.counters[g])):  # the deals this step dealt
                    s = new_game("standard", 3, deck=core.deck_of(g, k))
                    if s.result is not None:  # deals that end at once add their payoffs to the same step
                        want = [x + y for x, y in zip(want, payoffs(s), strict=True)]
                seen[g] = core.counters[g]
                states[g] = s
                assert got == [float(x) for x in want]
            else:
                assert rewards[g].tolist() == [0.0, 0.0, 0.0]


def test_unsupported_player_count_is_refused() -> None:
    with pytest.raises(ValueError, match="num_players"):
        BatchGames("standard", 7, 4)


@pytest.mark.parametrize("preset", list(PRESETS))
def test_loaded_positions_play_on_as_the_engine(preset: str) -> None:
    """``BatchGames.load``: a mid-hand engine state, loaded into a row, goes on exactly as the engine."""
    rng = np.random.default_rng(7)
    for n in (2, 3, 6):
        core = BatchGames(preset, n, 1, deal=False)
        masks = np.zeros((1, core.num_actions), np.int8)
        obs = np.zeros((1, core.obs_size), np.float32)
        loaded = 0
        for _ in range(60):
            s = new_game(preset, n, seed=int(rng.integers(1 << 30)))
            for _ in range(int(rng.integers(0, 14))):
                if s.result is not None:
                    break
                legal = legal_actions(s)
                s.play(legal[int(rng.integers(len(legal)))])
            if s.result is not None:
                continue
            core.load(0, s)
            loaded += 1
            while True:
                core.legal_masks(masks)
                core.observe(obs)
                assert np.flatnonzero(masks[0]).tolist() == sorted(legal_actions(s))
                np.testing.assert_array_equal(obs[0], observation(s, s.cur))
                legal = legal_actions(s)
                a = legal[int(rng.integers(len(legal)))]
                s.play(a)
                if core.step_rows(np.array([0]), np.array([a]))[0]:
                    assert s.result is not None
                    assert core.payoffs[0, :n].tolist() == [float(x) for x in payoffs(s)]
                    break
                assert s.result is None
        assert loaded >= 8  # random play drops often: many hands end within a few moves
    with pytest.raises(ValueError, match="load: a 2-player state"):
        BatchGames(preset, 3, 1, deal=False).load(0, new_game(preset, 2, seed=0))


def test_step_observe_steps_as_step_does() -> None:
    """The fused kernel (step, re-deal, masks, observations) moves the games exactly as ``step``."""
    a = BatchGames("standard", 3, 128, seed=5)
    b = BatchGames("standard", 3, 128, seed=5)
    masks, fused_masks, fused_obs = a.legal_masks(), b.legal_masks(), b.observe()
    rng = np.random.default_rng(0)
    rows = np.arange(128)
    ended = 0
    for _ in range(200):
        a.legal_masks(masks)
        actions = a.legal_ids[rows, (rng.random(128) * a.legal_counts).astype(np.int64)]
        rewards, dones = a.step(actions)
        fused_rewards, fused_dones = b.step_observe(actions, fused_masks, fused_obs)
        np.testing.assert_array_equal(rewards, fused_rewards)
        np.testing.assert_array_equal(dones, fused_dones)
        np.testing.assert_array_equal(a.state, b.state)
        ended += int(dones.sum())
    np.testing.assert_array_equal(fused_masks, a.legal_masks())
    np.testing.assert_array_equal(fused_obs, a.observe())
    assert ended > 100
