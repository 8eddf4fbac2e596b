"""Learner decisions per second of ``TonkVectorEnv`` with random opponents (played in the kernel).

    python benchmarks/vector_env.py [--games 1024] [--steps 300] [--players 2] [--trials 3] [--api gym|arrays]

The measurement is :func:`tonk_env.bench.vector_env_decisions_per_s`: each
step draws one uniformly random legal action per game from the batch's masks
with numpy and steps the env: ``--api gym`` through ``step()`` (with
Gymnasium's info dicts), ``--api arrays`` through ``step_arrays()`` (what the
training VecEnv calls). It prints each trial and the median of the trials.
"""

from __future__ import annotations

import argparse
import json
import statistics

from tonk_env.bench import vector_env_decisions_per_s


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
        rates.append(vector_env_decisions_per_s(a.games, a.steps, a.players, a.api, seed=t))
        print(f"trial {t}: {rates[-1]:,.0f} decisions/s")
    print(json.dumps({**vars(a), "median_decisions_per_s": round(statistics.median(rates))}))


if __name__ == "__main__":
    main()
