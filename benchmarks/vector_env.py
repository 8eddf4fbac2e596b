"""Learner decisions per second of ``TonkVectorEnv`` with random opponents (played in the kernel).

    python benchmarks/vector_env.py [--games 1024] [--steps 300] [--players 2] [--trials 3] [--api gym|arrays]

Each step draws one uniformly random legal action per game from the batch's
masks with numpy and steps the env: ``--api gym`` through ``step()`` (with
Gymnasium's info dicts), ``--api arrays`` through ``step_arrays()`` (what the
training VecEnv calls). It prints each trial and the median of the trials.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np

from tonk_env.vector import TonkVectorEnv


def decisions_per_s(games: int, steps: int, players: int, api: str, seed: int = 0) -> float:
    """Learner decisions per second of one run (after a warm-up of 20 steps)."""
    env = TonkVectorEnv(num_envs=games, num_players=players)
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


def main() -> None:
    """Parse the options, run the trials, print the figures."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--games", type=int, default=1024)
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--players", type=int, default=2)
    p.add_argument("--trials", type=int, default=3)
    p.add_argument("--api", choices=("gym", "arrays"), default="gym")
    a = p.parse_args()
    rates = []
    for t in range(a.trials):
        rates.append(decisions_per_s(a.games, a.steps, a.players, a.api, seed=t))
        print(f"trial {t}: {rates[-1]:,.0f} decisions/s")
    print(json.dumps({**vars(a), "median_decisions_per_s": round(statistics.median(rates))}))


if __name__ == "__main__":
    main()
