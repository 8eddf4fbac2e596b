"""Speed benchmarks: random legal play through the engine (and, later, the envs).

Each benchmark runs several timed trials and reports the median, since the
machines are shared and noisy. Benchmarks measure; tests never assert times.
"""

from __future__ import annotations

import random
import statistics
import time
from typing import Any

from .engine import legal_actions, make_rules, new_game, observation
from .engine.rules import TonkRules
from .engine.view import obs_layout

import numpy as np


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
        while s.phase != 2:
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
