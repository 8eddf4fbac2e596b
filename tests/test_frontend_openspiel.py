"""OpenSpiel interop: the ``python_tonk`` game passes pyspiel's checks; Tonk agents play as bots."""

from __future__ import annotations

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

from frontends.openspiel_game import TonkBot  # noqa: E402 - must follow importorskip (registers python_tonk)
from tonk_env.engine import make_rules, new_game, render  # noqa: E402 - must follow importorskip
from tonk_env.obs import observation  # noqa: E402 - must follow importorskip


@pytest.mark.parametrize("name", ["python_tonk", "python_tonk(players=3,rules=seven_card)",
                                  "python_tonk(players=4,rules=full_waiting)"])  # fmt: skip
def test_random_simulations_pass_pyspiel_checks(name: str) -> None:
    game = pyspiel.load_game(name)
    pyspiel.random_sim_test(game, num_sims=5, serialize=True, verbose=False)


def _dealt(game):
    state = game.new_initial_state()
    k = 0
    while state.is_chance_node():
        outcomes = state.chance_outcomes()
        assert abs(sum(p for _, p in outcomes) - 1) < 1e-9 and len(outcomes) == 52 - k
        state.apply_action(outcomes[(7 * k) % len(outcomes)][0])
        k += 1
    return state


def test_game_matches_the_engine() -> None:
    game = pyspiel.load_game("python_tonk(players=3,rules=hit_penalty)")
    assert game.num_players() == 3 and game.num_distinct_actions() == 540
    assert game.max_utility() == 4 and game.min_utility() == -4
    state = _dealt(game)
    deck = [int(a) for a in state.history()]
    s = new_game(make_rules("hit_penalty"), 3, deck=deck, dealer=2)
    assert state.current_player() == s.cur == 0
    assert state.legal_actions() == s.legal_actions()
    for seat in range(3):
        np.testing.assert_array_equal(
            np.array(state.observation_tensor(seat), np.float32), observation(s, seat)
        )
        assert state.observation_string(seat) == render(s, seat)
    clone = state.clone()
    clone.apply_action(1)  # draw
    assert state.legal_actions() == s.legal_actions()  # the original is untouched
    assert state.action_to_string(0, 1) == "draw"
    with pytest.raises(Exception, match="perfect-recall"):
        game.make_py_observer(pyspiel.IIGObservationType(perfect_recall=True))


def test_tonk_agents_play_as_openspiel_bots() -> None:
    from open_spiel.python.algorithms import evaluate_bots

    game = pyspiel.load_game("python_tonk")
    bots = [TonkBot("heuristic:greedy", 0, seed=1), pyspiel.make_uniform_random_bot(1, 5)]
    rng = np.random.RandomState(0)
    total = np.zeros(2)
    for _ in range(30):
        returns = evaluate_bots.evaluate_bots(game.new_initial_state(), bots, rng)
        assert sum(returns) == 0
        total += returns
    assert total[0] > 0  # the heuristic beats uniform random over 30 hands


def test_bad_parameters_are_refused() -> None:
    with pytest.raises(Exception, match="players"):
        pyspiel.load_game("python_tonk(players=7)")
    with pytest.raises(Exception, match="unknown rules preset"):
        pyspiel.load_game("python_tonk(rules=nope)")
