"""Learner decisions per second of ``TonkVectorEnv`` against random opponents or an agent.

    python benchmarks/vector_env.py [--games 1024] [--steps 300] [--players 2] [--trials 3]
        [--api gym|arrays] [--opponent SPEC [--mirror]]

The measurement is :func:`tonk_env.bench.vector_env_decisions_per_s`: each
step draws one uniformly random legal action per game from the batch's masks
with numpy and steps the env: ``--api gym`` through ``step()`` (with
Gymnasium's info dicts), ``--api arrays`` through ``step_arrays()`` (what the
training VecEnv calls). Without ``--opponent`` the opponents are random and
play inside the compiled step; ``--opponent heuristic:greedy`` seats the greedy,
which decides from the observation arrays (``act_arrays``), and ``--mirror``
hides that method, so the env plays it through an engine mirror of each game
(the path of every other hand-written agent). It prints each trial and the
median of the trials.
"""

from __future__ import annotations

import argparse
import json
import statistics

from agents.registry import make_agent
from tonk_env.agent import FunctionAgent
from tonk_env.bench import vector_env_decisions_per_s


def main() -> None:
    """Parse the options, run the trials, print the figures."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--games", type=int, default=1024)
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--players", type=int, default=2)
    p.add_argument("--trials", type=int, default=3)
    p.add_argument("--api", choices=("gym", "arrays"), default="gym")
    p.add_argument("--opponent", default=None, help="an agent spec for every opponent seat (default: random)")
    p.add_argument("--mirror", action="store_true", help="play the opponent through engine mirrors")
    a = p.parse_args()
    opponent = None if a.opponent is None else make_agent(a.opponent)
    if a.mirror and opponent is not None:
        opponent = FunctionAgent(opponent.act)  # no act_arrays: played through engine mirrors
    rates = []
    for t in range(a.trials):
        rates.append(
            vector_env_decisions_per_s(a.games, a.steps, a.players, a.api, seed=t, opponents=opponent)
        )
        print(f"trial {t}: {rates[-1]:,.0f} decisions/s")
    print(json.dumps({**vars(a), "median_decisions_per_s": round(statistics.median(rates))}))


if __name__ == "__main__":
    main()
