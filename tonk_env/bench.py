"""Speed benchmarks: random legal play through the engine, the envs and the compiled core.

:func:`bench_engine` times the rules engine alone (optionally with the
observation tensor and the legal mask); :func:`bench_env` times the PettingZoo
AEC env with the usual loop, next to OpenSpiel's gin rummy with the same loop
shape (when ``open_spiel`` is installed) and a do-nothing env behind
PettingZoo's standard wrappers, the Gymnasium single-agent env, and the
compiled core stepping 1,024 games as one batch (:func:`batch_decisions_per_s`)
at 2, 4 and 6 players; :func:`vector_env_decisions_per_s` times the learner's
steps of :class:`~tonk_env.vector.TonkVectorEnv` (``benchmarks/vector_env.py``
runs it). Each benchmark runs several timed trials and reports the median,
since the machines are shared and noisy. Benchmarks measure; tests never
assert times.

This module is the home of the env layer's benchmarks (``tonk bench``);
``benchmarks/`` holds scripts: command lines over these functions and the
load tests of the server (``frontends``), which this layer may not import.
"""

from __future__ import annotations

import random
import statistics
import time
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from .aec import env as make_env
from .aec import raw_env
from .core.batch import BatchGames
from .engine import OVER, legal_actions, make_rules, new_game
from .engine.rules import TonkRules
from .obs import obs_layout, observation
from .single import TonkSingleAgentEnv
from .vector import TonkVectorEnv


def engine_trial(
    rules: TonkRules, num_players: int, seconds: float, with_obs: bool, with_mask: bool, seed: int
) -> tuple[int, int, float]:
    """Play random legal hands for ``seconds``; return (decisions, hands, elapsed)."""
    rng = random.Random(seed)
    rr = rng.random
    deal_rng = np.random.default_rng(seed)
    buf = np.empty(obs_layout(num_players).size, dtype=np.float32)
    mask = np.zeros(new_game(rules, num_players, seed=0).table.size, dtype=np.int8)
    decisions = hands = 0
    t0 = time.perf_counter()
    deadline = t0 + seconds
    while True:
        s = new_game(rules, num_players, seed=deal_rng)
        while s.phase != OVER:
            legal = legal_actions(s)
            if with_mask:
                mask[:] = 0
                mask[legal] = 1
            if with_obs:
                observation(s, s.cur, out=buf)
            s.play(legal[int(rr() * len(legal))])
            decisions += 1
        hands += 1
        if hands % 64 == 0 and time.perf_counter() >= deadline:
            break
    return decisions, hands, time.perf_counter() - t0


def bench_engine(
    rules: str = "standard",
    num_players: int = 2,
    trials: int = 5,
    seconds: float = 1.0,
    with_obs: bool = False,
    mask: bool = True,
    seed: int = 0,
) -> dict[str, Any]:
    """Median decisions/s and hands/s of random play over ``trials`` trials."""
    r = make_rules(rules)
    dps, hps, lens = [], [], []
    for i in range(trials):
        d, h, el = engine_trial(r, num_players, seconds, with_obs, mask, seed + i)
        dps.append(d / el)
        hps.append(h / el)
        lens.append(d / h)
    return {
        "benchmark": "engine",
        "rules": rules,
        "num_players": num_players,
        "with_obs": with_obs,
        "with_mask": mask,
        "trials": trials,
        "seconds_per_trial": seconds,
        "decisions_per_s": statistics.median(dps),
        "hands_per_s": statistics.median(hps),
        "decisions_per_hand": statistics.median(lens),
        "decisions_per_s_trials": [round(x) for x in dps],
    }


def _nop_aec_env(num_players: int, table_size: int, obs_size: int, decisions: int) -> Any:
    """A PettingZoo AEC env whose ``step`` does nothing but pass the turn and end after ``decisions``.

    It has the Tonk env's spaces and the same wrappers, so timing it measures
    what PettingZoo's wrappers and the ``agent_iter``/``last``/``step`` loop
    cost by themselves on this machine (the ceiling for any wrapped env).
    """

    class NopEnv(AECEnv):
        metadata = {"name": "nop_v0"}

        def __init__(self) -> None:
            super().__init__()
            self.possible_agents = [f"player_{i}" for i in range(num_players)]
            self._act: spaces.Discrete = spaces.Discrete(table_size)
            self._obs_space = spaces.Dict(
                {
                    "observation": spaces.Box(0, 1, (obs_size,), np.float32),
                    "action_mask": spaces.Box(0, 1, (table_size,), np.int8),
                }
            )
            self._obs = {
                "observation": np.zeros(obs_size, np.float32),
                "action_mask": np.ones(table_size, np.int8),
            }

        def observation_space(self, agent: str) -> Any:
            return self._obs_space

        def action_space(self, agent: str) -> Any:
            return self._act

        def reset(self, seed: int | None = None, options: dict | None = None) -> None:
            self.agents = self.possible_agents[:]
            self.rewards = {a: 0.0 for a in self.agents}
            self._cumulative_rewards = {a: 0.0 for a in self.agents}
            self.terminations = {a: False for a in self.agents}
            self.truncations = {a: False for a in self.agents}
            self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
            self.agent_selection = self.agents[0]
            self._left = decisions

        def observe(self, agent: str) -> Any:
            return self._obs

        def step(self, action: Any) -> None:
            if self.terminations[self.agent_selection]:
                self._was_dead_step(action)
                return
            self._left -= 1
            if self._left <= 0:
                for a in self.agents:
                    self.terminations[a] = True
            i = self.possible_agents.index(self.agent_selection)
            self.agent_selection = self.possible_agents[(i + 1) % num_players]

    return wrappers.OrderEnforcingWrapper(wrappers.AssertOutOfBoundsWrapper(NopEnv()))


def aec_loop(e: Any, seconds: float, seed: int) -> tuple[int, int, int, float]:
    """Random masked play with the usual ``agent_iter``/``last``/``step`` loop for ``seconds``.

    Returns (steps, decisions, hands, elapsed): ``steps`` counts every ``step()``
    call as PettingZoo's ``performance_benchmark`` does (the ``None`` steps of
    terminated agents included), ``decisions`` only the real actions.
    """
    rr = random.Random(seed).random
    flatnonzero = np.flatnonzero
    steps = decisions = hands = 0
    e.reset(seed=seed)
    t0 = time.perf_counter()
    deadline = t0 + seconds
    while True:
        for _agent in e.agent_iter():
            obs, _reward, termination, truncation, _info = e.last()
            if termination or truncation:
                action = None
            else:
                legal = flatnonzero(obs["action_mask"])
                action = int(legal[int(rr() * len(legal))])
                decisions += 1
            e.step(action)
            steps += 1
        hands += 1
        if hands % 16 == 0 and time.perf_counter() >= deadline:
            break
        e.reset()
    return steps, decisions, hands, time.perf_counter() - t0


def single_agent_trial(
    rules: TonkRules, num_players: int, seconds: float, seed: int
) -> tuple[int, int, float]:
    """Random masked play of the learner in the single-agent env against random opponents.

    Returns (learner steps, hands, elapsed).
    """
    e = TonkSingleAgentEnv(num_players, rules)
    rr = random.Random(seed).random
    flatnonzero = np.flatnonzero
    steps = hands = 0
    e.reset(seed=seed)
    t0 = time.perf_counter()
    deadline = t0 + seconds
    while True:
        legal = flatnonzero(e.action_masks())
        _obs, _reward, terminated, truncated, _info = e.step(int(legal[int(rr() * len(legal))]))
        steps += 1
        if terminated or truncated:
            hands += 1
            if hands % 16 == 0 and time.perf_counter() >= deadline:
                break
            e.reset()
    return steps, hands, time.perf_counter() - t0


def openspiel_trial(seconds: float, seed: int) -> tuple[int, int, float] | None:
    """OpenSpiel's gin rummy (C++ through pyspiel), random legal play, the same loop shape as the AEC loop.

    At each decision: the acting player's observation tensor as a float32
    array, the legal actions, one drawn at random, applied; chance nodes draw
    from their outcomes. Returns (decisions, hands, elapsed), or None when
    ``open_spiel`` is not installed.
    """
    try:
        import pyspiel  # optional (the test extra); only this benchmark needs it
    except ImportError:
        return None
    game = pyspiel.load_game("gin_rummy")
    rr = random.Random(seed).random
    asarray, float32 = np.asarray, np.float32
    decisions = hands = 0
    t0 = time.perf_counter()
    deadline = t0 + seconds
    while True:
        st = game.new_initial_state()
        while not st.is_terminal():
            if st.is_chance_node():
                outcomes = st.chance_outcomes()
                st.apply_action(outcomes[int(rr() * len(outcomes))][0])
                continue
            asarray(st.observation_tensor(st.current_player()), dtype=float32)
            legal = st.legal_actions()
            st.apply_action(legal[int(rr() * len(legal))])
            decisions += 1
        hands += 1
        if time.perf_counter() >= deadline:
            break
    return decisions, hands, time.perf_counter() - t0


VECTOR_PLAYERS = (2, 4, 6)
VECTOR_BATCH = 1024


def bench_env(
    rules: str = "standard",
    num_players: int = 2,
    trials: int = 5,
    seconds: float = 1.0,
    seed: int = 0,
    vector_steps: int = 1000,
) -> dict[str, Any]:
    """Median speeds of random masked play through the envs, OpenSpiel and the compiled core.

    ``aec_decisions_per_s``: ``env()`` with the usual ``agent_iter``/``last``/
    ``step`` loop, observation and mask every decision (``aec_steps_per_s``
    also counts the ``None`` steps of terminated agents);
    ``openspiel_gin_decisions_per_s`` and ``aec_vs_openspiel``: OpenSpiel's gin
    rummy in the same loop shape, trial by trial in the same run (None without
    ``open_spiel``); ``wrapped_nop_steps_per_s``: a do-nothing env behind
    PettingZoo's standard wrappers (what those alone allow);
    ``single_agent_steps_per_s``: learner steps against random opponents;
    ``vector_decisions_per_s``: :data:`VECTOR_BATCH` games stepped as one batch
    on one core, every decision of every seat, at ``num_players`` and in
    ``vector_decisions_per_s_by_players`` at 2, 4 and 6 players.
    """
    r = make_rules(rules)
    keys = ("aec", "aec_decisions", "aec_hands", "nop", "single", "single_hands", "os", "ratio")
    runs: dict[str, list[float]] = {k: [] for k in keys}
    probe = raw_env(num_players, r)
    # the env's action space is a Discrete, but AECEnv types it as a plain Space
    table_size = int(probe.action_space(probe.possible_agents[0]).n)  # type: ignore[attr-defined]  # PettingZoo types it as a Space; ours is Discrete
    obs_size = obs_layout(num_players).size
    aec_loop(make_env(num_players, r), min(seconds, 0.2), seed)  # warm up: the core's compiled code loads
    for i in range(trials):
        st, d, h, el = aec_loop(make_env(num_players, r), seconds, seed + i)
        runs["aec"].append(st / el)
        runs["aec_decisions"].append(d / el)
        runs["aec_hands"].append(h / el)
        spiel = openspiel_trial(seconds, seed + i)
        if spiel is not None:
            runs["os"].append(spiel[0] / spiel[2])
            runs["ratio"].append(runs["aec_decisions"][-1] / runs["os"][-1])
        st, d, h, el = aec_loop(_nop_aec_env(num_players, table_size, obs_size, 5), seconds / 2, seed + i)
        runs["nop"].append(st / el)
        st, h, el = single_agent_trial(r, num_players, seconds, seed + i)
        runs["single"].append(st / el)
        runs["single_hands"].append(h / el)
    med = {k: (statistics.median(v) if v else None) for k, v in runs.items()}
    vector = {}
    for n in sorted({num_players, *VECTOR_PLAYERS}):
        try:
            r.check_players(n)
        except ValueError:
            continue  # e.g. seven_card cannot be dealt to 6 players
        trial_runs = [
            batch_decisions_per_s(n, VECTOR_BATCH, vector_steps, r, seed + i)["decisions_per_s"]
            for i in range(max(1, min(trials, 3)))
        ]
        vector[n] = statistics.median(trial_runs)
    cost = {n: 1e9 / v for n, v in vector.items()}  # ns per decision
    return {
        "benchmark": "env",
        "rules": rules,
        "num_players": num_players,
        "trials": trials,
        "seconds_per_trial": seconds,
        "aec_steps_per_s": med["aec"],
        "aec_decisions_per_s": med["aec_decisions"],
        "aec_hands_per_s": med["aec_hands"],
        "openspiel_gin_decisions_per_s": med["os"],
        "aec_vs_openspiel": med["ratio"],
        "wrapped_nop_steps_per_s": med["nop"],
        "single_agent_steps_per_s": med["single"],
        "single_agent_hands_per_s": med["single_hands"],
        "vector_batch": VECTOR_BATCH,
        "vector_decisions_per_s": vector.get(num_players),
        "vector_decisions_per_s_by_players": {str(n): v for n, v in vector.items()},
        "vector_cost_6p_vs_2p": cost[6] / cost[2] if 2 in cost and 6 in cost else None,
        "aec_steps_per_s_trials": [round(x) for x in runs["aec"]],
        "aec_vs_openspiel_trials": [round(x, 2) for x in runs["ratio"]],
        "single_agent_steps_per_s_trials": [round(x) for x in runs["single"]],
    }


def batch_decisions_per_s(
    num_players: int = 2,
    batch: int = 1024,
    steps: int = 2000,
    rules: TonkRules | str = "standard",
    seed: int = 0,
) -> dict[str, Any]:
    """Decisions per second of ``batch`` games: masks, acting-seat observations, numpy draws, one step.

    Each round draws one legal action per game with numpy (``rng.random``
    scaled by each game's legal count, an index into its legal ids) and steps
    the batch with :meth:`BatchGames.step_observe`, which deals finished games
    again and writes every game's next legal mask, legal ids and acting-seat
    observation. Every decision of every seat counts.
    """
    core = BatchGames(rules, num_players, batch, seed=seed)
    masks = core.legal_masks()
    obs = core.observe()
    rng = np.random.default_rng(seed)
    rows = np.arange(batch)
    ids, counts = core.legal_ids, core.legal_counts

    def one_step() -> None:
        pick = (rng.random(batch) * counts).astype(np.int64)
        core.step_observe(ids[rows, pick], masks, obs)

    for _ in range(20):  # warm up (compilation, caches)
        one_step()
    hands = 0
    t0 = time.perf_counter()
    for _ in range(steps):
        one_step()
        hands += int(np.count_nonzero(core.dones))
    dt = time.perf_counter() - t0
    return {
        "num_players": num_players,
        "batch": batch,
        "decisions": steps * batch,
        "hands": hands,
        "seconds": dt,
        "decisions_per_s": steps * batch / dt,
    }


def vector_env_decisions_per_s(
    games: int, steps: int, players: int, api: str, seed: int = 0, opponents: Any = None
) -> float:
    """Learner decisions per second of ``TonkVectorEnv`` (after 20 warm-up steps).

    Each step draws one uniformly random legal action per game from the masks
    with numpy and steps the env: ``api="gym"`` through ``step()`` (with
    Gymnasium's info dicts), ``"arrays"`` through ``step_arrays()`` (what the
    training VecEnv calls). ``opponents``: as the env takes them (default: random,
    played in the kernel).
    """
    env = TonkVectorEnv(num_envs=games, num_players=players, opponents=opponents)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    row_base = np.arange(games, dtype=np.int64) * env.num_actions
    step = env.step if api == "gym" else env.step_arrays

    def one() -> None:
        masks = env.action_masks()
        legal = np.flatnonzero(masks)
        counts = np.count_nonzero(masks, axis=1)
        starts = np.cumsum(counts) - counts
        step(legal[starts + (rng.random(games) * counts).astype(np.int64)] - row_base)

    for _ in range(20):
        one()
    t0 = time.perf_counter()
    for _ in range(steps):
        one()
    return steps * games / (time.perf_counter() - t0)
