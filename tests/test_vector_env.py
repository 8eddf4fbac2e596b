"""``TonkVectorEnv``: same seed same games, exact against the single env and the engine, the
acknowledgement, illegal actions, batched network opponents, the oracle features, registration."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import gymnasium
import numpy as np
import pytest

import tonk_env
from agents.mlp import MLPPolicy
from agents.registry import make_agent
from tonk_env.engine import IllegalActionError
from tonk_env.obs import obs_layout
from tonk_env.single import ACKNOWLEDGE, TonkSingleAgentEnv
from tonk_env.vector import TonkVectorEnv, privileged_size
from train.oracle import privileged_features
from train.oracle import privileged_size as oracle_size


def random_actions(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random legal action per row."""
    return np.array([rng.choice(np.flatnonzero(row)) for row in masks], dtype=np.int64)


def network(num_players: int, seed: int, key: Any = None, deterministic: bool = False) -> MLPPolicy:
    """A small random policy network (a frozen copy when ``key`` is set)."""
    r = np.random.default_rng(seed)
    size = obs_layout(num_players).size
    layers = [
        (r.normal(size=(16, size)).astype(np.float32) * 0.2, np.zeros(16, np.float32)),
        (r.normal(size=(540, 16)).astype(np.float32), np.zeros(540, np.float32)),
    ]
    pol = MLPPolicy(layers, deterministic=deterministic, seed=seed)
    pol.batch_key = key
    return pol


def play(env: TonkVectorEnv, steps: int, seed: int) -> list[Any]:
    """Observations, rewards, terminations and final infos of ``steps`` random learner steps."""
    rng = np.random.default_rng(seed)
    obs, info = env.reset(seed=seed)
    out: list[Any] = [obs, info["learner_seat"]]
    for _ in range(steps):
        obs, reward, term, trunc, infos = env.step(random_actions(env.action_masks(), rng))
        out += [obs, reward, term, trunc, list(infos.get("final_info", {}).get("result_kind", []))]
    return out


def same(a: list[Any], b: list[Any]) -> bool:
    return all(np.array_equal(np.asarray(x), np.asarray(y)) for x, y in zip(a, b, strict=True))


def test_same_seed_same_games() -> None:
    def make() -> TonkVectorEnv:
        return TonkVectorEnv(num_envs=4, num_players=3, learner_seat="random", dealer="random")

    assert same(play(make(), 60, seed=7), play(make(), 60, seed=7))
    assert not same(play(make(), 60, seed=7), play(make(), 60, seed=8))


def test_spaces_autoreset_and_final_observations() -> None:
    env = TonkVectorEnv(num_envs=5)
    assert env.metadata["autoreset_mode"] == gymnasium.vector.AutoresetMode.SAME_STEP
    obs, info = env.reset(seed=1)
    assert obs.dtype == np.float32 and obs.shape == (5, obs_layout(2).size)
    assert env.observation_space.contains(obs)
    assert env.action_space.shape == (5,)
    assert env.action_masks().dtype == np.int8 and env.action_masks().shape == (5, 540)
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(80):
        masks = env.action_masks()
        assert masks.sum(axis=1).min() >= 1  # never all zero
        obs, reward, term, trunc, infos = env.step(random_actions(masks, rng))
        assert env.observation_space.contains(obs) and not trunc.any()
        assert np.all(reward[~term] == 0)
        if term.any():
            ended += int(term.sum())
            assert np.array_equal(infos["_final_obs"], term) and np.array_equal(infos["_final_info"], term)
            for g in np.flatnonzero(term):
                assert env.single_observation_space.contains(infos["final_obs"][g])
                assert infos["final_info"]["payoffs"][g][infos["final_info"]["learner_seat"][g]] == reward[g]
                assert infos["_learner_seat"][g]  # the new hand's reset info
            assert all(x is None for x in infos["final_obs"][~term])
        else:
            assert "final_obs" not in infos
    assert ended > 20
    obs2, *_ = env.step(random_actions(env.action_masks(), rng))
    assert obs2 is not obs  # a fresh array each step


@pytest.mark.parametrize("num_players", [2, 3])
def test_equals_the_single_env_on_the_same_deals(num_players: int) -> None:
    """Heuristic opponents (through the engine mirror) on the vector env's seeded deals: same game."""
    B = 3
    greedy = make_agent("heuristic:greedy", seed=0)
    vec = TonkVectorEnv(num_envs=B, num_players=num_players, opponents=greedy, reward_scale=0.5)
    singles = [
        TonkSingleAgentEnv(num_players=num_players, opponents=greedy, reward_scale=0.5) for _ in range(B)
    ]
    obs, infos = vec.reset(seed=11)
    hand = [0] * B
    for g, env in enumerate(singles):
        o, i = env.reset(seed=g, options={"deck": vec.deck_of(g, 0)})
        assert np.array_equal(o, obs[g]) and i["hand_over"] == infos["hand_over"][g]
    rng = np.random.default_rng(3)
    hands = 0
    for _ in range(150):
        masks = vec.action_masks()
        for g, env in enumerate(singles):
            assert np.array_equal(env.action_masks(), masks[g])
        acts = random_actions(masks, rng)
        obs, reward, term, _, infos = vec.step(acts)
        for g, env in enumerate(singles):
            o, r, t, _, i = env.step(int(acts[g]))
            assert r == reward[g] and t == term[g]
            if not t:
                assert np.array_equal(o, obs[g])
                continue
            hands += 1
            assert np.array_equal(o, infos["final_obs"][g])
            final = {
                k: v[g] for k, v in infos["final_info"].items() if not k.startswith("_") and v is not None
            }
            # the single env's step info has every key on every step (ended_by -1 for None); the
            # vector env's final_info only the keys of that ending
            assert set(i) - set(final) <= {"action", "acknowledged"}
            shared = {k: final[k] for k in i if k in final}
            if shared.get("ended_by", 0) is None:
                shared["ended_by"] = -1
            assert shared == {k: i[k] for k in shared}
            hand[g] += 1
            o, i = env.reset(options={"deck": vec.deck_of(g, hand[g])})
            assert np.array_equal(o, obs[g])
            assert i["learner_seat"] == infos["learner_seat"][g] and i["hand_over"] == infos["hand_over"][g]
    assert hands > 10


def test_check_mode_random_networks_and_samplers() -> None:
    """``check=True`` compares every step with engine mirrors: kernel-random, network and mixed tables."""
    rng = np.random.default_rng(0)
    for env in (
        TonkVectorEnv(num_envs=4, learner_seat="random", dealer="random", check=True),
        TonkVectorEnv(num_envs=4, num_players=4, opponents=network(4, 1), check=True, oracle=True),
    ):
        env.reset(seed=2)
        for _ in range(60):
            env.step(random_actions(env.action_masks(), rng))
    copies = [network(3, s, key="latest") for s in range(4)]
    greedy = make_agent("heuristic:greedy", seed=0)

    def sampler(g: int) -> Any:
        return lambda r, n, seat: [copies[g], greedy if r.random() < 0.5 else copies[g]]

    env = TonkVectorEnv(
        num_envs=4,
        num_players=3,
        opponent_sampler=[sampler(g) for g in range(4)],
        learner_seat="random",
        check=True,
    )
    env.reset(seed=3)
    for _ in range(60):
        env.step(random_actions(env.action_masks(), rng))


def test_network_copies_are_batched_in_one_call_per_round() -> None:
    """Copies with one ``batch_key``: one ``logits`` call per round of opponent moves, each row picked
    by its own game's copy."""
    calls: list[int] = []
    picks: dict[int, int] = {}

    class Counting(MLPPolicy):
        def logits(self, obs: np.ndarray) -> np.ndarray:
            calls.append(len(obs))
            return super().logits(obs)

        @staticmethod
        def pick_many(z: np.ndarray, masks: np.ndarray, pickers: Any) -> list[int]:
            for p in pickers:  # each row is picked for its own game's copy
                picks[id(p)] = picks.get(id(p), 0) + 1
            return MLPPolicy.pick_many(z, masks, pickers)

    base = network(2, 5)
    copies = []
    for g in range(8):
        c = Counting(base.layers_for_export(), deterministic=False, seed=g)
        c.batch_key = "latest"
        copies.append(c)
    env = TonkVectorEnv(
        num_envs=8, opponent_sampler=[lambda r, n, s, c=c: [c] for c in copies], learner_seat=1
    )
    env.reset(seed=0)  # seat 0 moves first: every game's first opponent move in one call
    assert calls[0] == 8
    rng = np.random.default_rng(0)
    n_calls = n_picks = 0
    for _ in range(30):
        calls.clear()
        picks.clear()
        env.step(random_actions(env.action_masks(), rng))
        assert sum(calls) == sum(picks.values())  # every move of a copy went through a batched call
        # one call per round; a step has the rounds of its games, then those of the hands dealt again
        assert len(calls) <= 2 * max(picks.values(), default=0)
        n_calls, n_picks = n_calls + len(calls), n_picks + sum(calls)
    assert n_calls < n_picks / 2


def instant_win_deck() -> list[int]:
    """Seat 1 (dealt second) gets K, Q, J, 10 of clubs and K of diamonds: 50, an instant win."""
    faces = [12, 11, 10, 9, 25]
    low = [c for c in range(52) if c not in faces]
    deck = []
    for i in range(5):
        deck += [low[i], faces[i]]
    return deck + [c for c in low[5:]]


def test_a_hand_that_ends_at_the_deal_awaits_the_acknowledgement() -> None:
    env = TonkVectorEnv(num_envs=2, reward_scale=2.0)
    other = list(range(52))
    obs, info = env.reset(seed=0, options={"decks": [instant_win_deck(), other]})
    assert info["hand_over"].tolist() == [True, False]
    assert info["result_kind"][0] == "instant_win" and not info["_result_kind"][1]
    masks = env.action_masks()
    assert np.flatnonzero(masks[0]).tolist() == [ACKNOWLEDGE]
    legal = int(np.flatnonzero(masks[1])[0])
    with pytest.raises(IllegalActionError, match=r"game 0: .*acknowledge"):
        env.step(np.array([0, legal]))
    obs, reward, term, _, infos = env.step(np.array([ACKNOWLEDGE, legal]))
    assert term.tolist()[0] and reward[0] == -2 * 2.0  # the instant win's stakes x reward_scale
    assert infos["final_info"]["acknowledged"][0] and infos["final_info"]["result_kind"][0] == "instant_win"
    single = TonkSingleAgentEnv(reward_scale=2.0)
    o, i = single.reset(options={"deck": instant_win_deck()})
    assert np.array_equal(o, infos["final_obs"][0])
    assert single.step(ACKNOWLEDGE)[1] == reward[0]


def test_illegal_learner_actions() -> None:
    env = TonkVectorEnv(num_envs=3)
    env.reset(seed=0)
    acts = random_actions(env.action_masks(), np.random.default_rng(0))
    acts[2] = 300  # a hit: illegal at the start of a turn
    with pytest.raises(IllegalActionError, match=r"game 2: illegal action 300 .*legal actions: .*draw"):
        env.step(acts)
    with pytest.raises(IllegalActionError, match="3 integer action ids"):
        env.step(np.array([1, 1]))
    pen = TonkVectorEnv(num_envs=3, illegal_action="penalize", illegal_penalty=-5.0)
    pen.reset(seed=0)
    _, reward, term, _, infos = pen.step(acts)
    assert term[2] and reward[2] == -5.0 and infos["final_info"]["result_kind"][2] == "illegal_action"


def test_an_illegal_opponent_answer_names_the_opponent_and_game() -> None:
    class Bad:
        reads_info = False

        def act(self, obs: Any, info: Any) -> int:
            return 300

        def __repr__(self) -> str:
            return "Bad()"

    env = TonkVectorEnv(num_envs=2, opponents=Bad(), learner_seat=1)
    with pytest.raises(IllegalActionError, match=r"opponent Bad\(\) in game 0 \(seat 0\)"):
        env.reset(seed=0)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"early_end": "redeal"}, "early_end"),
        ({"render_mode": "ansi"}, "render_mode"),
        ({"num_players": 7}, "num_players"),
        ({"num_envs": 0}, "num_envs=0 is invalid; allowed: an int >= 1"),
        ({"num_envs": True}, "num_envs=True is invalid"),
        ({"oracle": 1}, "oracle=1 is invalid; allowed: True or False"),
        ({"check": "yes"}, "check='yes' is invalid"),
        ({"learner_seat": 5}, "learner_seat"),
        ({"opponent_sampler": [lambda r, n, s: []]}, "one sampler per game"),
    ],
)
def test_options_the_vector_env_cannot_do_are_refused(kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        TonkVectorEnv(**{"num_envs": 2, **kwargs})


@pytest.mark.parametrize("num_players", [2, 3, 5])
def test_oracle_features_equal_train_oracle(num_players: int) -> None:
    assert privileged_size(num_players) == oracle_size(num_players)
    env = TonkVectorEnv(num_envs=3, num_players=num_players, oracle=True, check=True, learner_seat="random")
    obs, _ = env.reset(seed=4)
    rng = np.random.default_rng(1)
    size = obs_layout(num_players).size
    for _ in range(40):
        feats = env.privileged_features()
        for g in range(3):
            m = env.mirror(g)
            assert m is not None
            want = privileged_features(m, int(env.learner_seats[g]))
            assert np.array_equal(feats[g], want) and np.array_equal(obs[g, size:], want)
        obs, *_ = env.step(random_actions(env.action_masks(), rng))


def test_registration_make_and_make_vec() -> None:
    env = gymnasium.make(tonk_env.ENV_ID, num_players=3)
    assert isinstance(env.unwrapped, TonkSingleAgentEnv) and env.unwrapped.num_players == 3
    vec = gymnasium.make_vec(
        tonk_env.ENV_ID, num_envs=4, vectorization_mode="vector_entry_point", num_players=3
    )
    assert isinstance(vec.unwrapped, TonkVectorEnv) and vec.num_envs == 4
    obs, _ = vec.reset(seed=0)
    assert obs.shape == (4, obs_layout(3).size)


def test_importing_the_engine_does_not_import_gymnasium_and_registration_waits_for_it() -> None:
    code = (
        "import sys, tonk_env.engine\n"
        "assert 'gymnasium' not in sys.modules\n"
        "import gymnasium\n"
        "env = gymnasium.make('tonk_env/TonkSingle-v0')\n"
        "print(type(env.unwrapped).__name__)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "TonkSingleAgentEnv"
