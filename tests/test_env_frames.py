"""``render_mode="rgb_array"``: pictures of the table that never show a hidden card before the hand ends."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium.wrappers import RenderCollection

import tonk_env
from agents.registry import make_agent
from tonk_env import env
from tonk_env.engine import action_from_string, is_over, make_rules, new_game, view
from tonk_env.frames import HEIGHT, WIDTH, frame_for

RULES = make_rules("standard")


def _twin_deals(seed: int) -> tuple[list[int], list[int]]:
    """Two 2-player deals (dealer seat 1) alike for seat 0 and in the stock's top, seat 1's hands unlike.

    Seat 1's five cards (deck positions 1, 3, 5, 7, 9) trade places with the
    stock's last five (positions 47..51), which nobody sees before they are drawn.
    """
    deck = list(new_game(RULES, 2, seed=seed).deck)
    twin = list(deck)
    for hand_pos, stock_pos in zip((1, 3, 5, 7, 9), range(47, 52), strict=True):
        twin[hand_pos], twin[stock_pos] = deck[stock_pos], deck[hand_pos]
    return deck, twin


def _play(deck: list[int], moves: list[str]):  # -> GameState
    s = new_game(RULES, 2, deck=deck, dealer=1)
    for m in moves:
        s.play(action_from_string(s, m))
    return s


@pytest.mark.parametrize("seed", [3, 11, 29])
def test_a_hidden_hand_is_never_drawn_before_the_hand_ends(seed: int) -> None:
    deck, twin = _twin_deals(seed)
    a0, b0 = _play(deck, []), _play(twin, [])
    if is_over(a0) or is_over(b0):
        pytest.skip("a deal that ends at once (instant win)")
    assert a0.hands[1] != b0.hands[1] and a0.hands[0] == b0.hands[0]
    first_discard = "discard " + view(a0, 0)["hand"][0]
    # seat 0 draws and discards, seat 1 draws: the same for seat 0 in both deals
    for moves in ([], ["draw"], ["draw", first_discard], ["draw", first_discard, "draw"]):
        a, b = _play(deck, moves), _play(twin, moves)
        assert view(a, 0) == view(b, 0)
        fa, fb = frame_for(a, 0), frame_for(b, 0)
        assert fa.shape == (HEIGHT, WIDTH, 3) and fa.dtype == np.uint8
        assert np.array_equal(fa, fb), f"seat 1's hidden cards changed seat 0's picture after {moves}"
        # seat 1's own picture shows its hand, so it does differ: the comparison can fail
        assert not np.array_equal(frame_for(a, 1), frame_for(b, 1))
    # the viewer's own cards are drawn: another hand for seat 0 is another picture
    other = list(deck)
    other[0], other[46] = deck[46], deck[0]
    if not is_over(_play(other, [])):
        assert not np.array_equal(frame_for(_play(other, []), 0), frame_for(a0, 0))
    # once the hand is over every hand is face up, so the two deals look different
    a, b = _play(deck, ["drop"]), _play(twin, ["drop"])
    assert is_over(a) and is_over(b)
    assert not np.array_equal(frame_for(a, 0), frame_for(b, 0))


def test_aec_env_frames_follow_render_seat() -> None:
    e = env(2, render_mode="rgb_array")
    e.reset(seed=5)
    f0 = e.render()
    assert isinstance(f0, np.ndarray) and f0.shape == (HEIGHT, WIDTH, 3) and f0.dtype == np.uint8
    assert np.array_equal(f0, frame_for(e.unwrapped.game, 0))
    e1 = env(2, render_mode="rgb_array", render_seat=1)
    e1.reset(seed=5)
    assert np.array_equal(e1.render(), frame_for(e1.unwrapped.game, 1))
    assert not np.array_equal(e1.render(), f0)
    with pytest.raises(ValueError, match="render_seat must be a seat 0..1"):
        env(2, render_mode="rgb_array", render_seat=2)
    with pytest.raises(
        ValueError, match="render_mode='png' is invalid; allowed: None, 'ansi', 'human' or 'rgb_array'"
    ):
        env(2, render_mode="png")


def test_pettingzoo_render_test_passes() -> None:
    from pettingzoo.test import render_test

    render_test(lambda render_mode=None: env(2, render_mode=render_mode))


def test_gymnasium_frames_of_a_whole_hand() -> None:
    opponent = make_agent("heuristic:greedy", seed=0)
    e = RenderCollection(gymnasium.make(tonk_env.ENV_ID, render_mode="rgb_array", opponents=opponent))
    obs, info = e.reset(seed=2)
    rng = np.random.default_rng(0)
    done, steps = False, 0
    while not done:
        mask = e.unwrapped.action_masks()
        obs, reward, term, trunc, info = e.step(int(rng.choice(np.flatnonzero(mask))))
        done, steps = term or trunc, steps + 1
    frames = e.render()
    assert len(frames) == steps + 1  # the reset's and every step's
    assert all(f.shape == (HEIGHT, WIDTH, 3) and f.dtype == np.uint8 for f in frames)
    game = e.unwrapped.game
    assert np.array_equal(frames[-1], frame_for(game, e.unwrapped.learner_seat))  # the end, all face up


def test_record_video_makes_a_clip(tmp_path) -> None:
    pytest.importorskip("moviepy", reason="Gymnasium's RecordVideo needs moviepy (pip install moviepy)")
    from gymnasium.wrappers import RecordVideo

    e = RecordVideo(
        gymnasium.make(tonk_env.ENV_ID, render_mode="rgb_array"),
        str(tmp_path / "videos"),
        episode_trigger=lambda i: True,
        disable_logger=True,
    )
    e.reset(seed=1)
    rng = np.random.default_rng(1)
    done = False
    while not done:
        _, _, term, trunc, _ = e.step(int(rng.choice(np.flatnonzero(e.unwrapped.action_masks()))))
        done = term or trunc
    e.close()
    clips = list((tmp_path / "videos").glob("*.mp4"))
    assert clips and clips[0].stat().st_size > 1000
