"""Learner decisions per second of ``TonkVectorEnv`` against random opponents or an agent.

    python benchmarks/vector_env.py [--games 1024] [--steps 300] [--players 2] [--trials 3]
        [--api gym|arrays] [--opponent SPEC [--via kernel|arrays|mirror]]

The measurement is :func:`tonk_env.bench.vector_env_decisions_per_s`: each
step draws one uniformly random legal action per game from the batch's masks
with numpy and steps the env: ``--api gym`` through ``step()`` (with
Gymnasium's info dicts), ``--api arrays`` through ``step_arrays()`` (what the
training VecEnv calls). Without ``--opponent`` the opponents are random and
play inside the compiled step; ``--opponent heuristic:greedy`` seats the greedy,
which the compiled step plays too (its ``core_policy``; ``--via kernel``, the
default). ``--via arrays`` hides that, so the env asks the agent's
``act_arrays`` once a round, and ``--via mirror`` hides both, so the env plays
it through an engine mirror of each game (the path of every other hand-written
agent). It prints each trial and the median of the trials.
"""

from __future__ import annotations

import argparse
import json
import statistics
from typing import Any

from agents.registry import make_agent
from tonk_env.agent import FunctionAgent
from tonk_env.bench import vector_env_decisions_per_s


class FromArrays(FunctionAgent):
    """An agent's ``act`` and ``act_arrays`` without its ``core_policy``: asked once a round."""

    def __init__(self, agent: Any) -> None:
        super().__init__(agent.act)
        self.act_arrays = agent.act_arrays
        self.arrays_key = agent.arrays_key


def main() -> None:
    """Parse the options, run the trials, print the figures."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--games", type=int, default=1024)
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--players", type=int, default=2)
    p.add_argument("--trials", type=int, default=3)
    p.add_argument("--api", choices=("gym", "arrays"), default="gym")
    p.add_argument("--opponent", default=None, help="an agent spec for every opponent seat (default: random)")
    p.add_argument(
        "--via",
        choices=("kernel", "arrays", "mirror"),
        default="kernel",
        help="how the env plays the opponent: as it would (kernel), from its act_arrays, on engine mirrors",
    )
    p.add_argument("--mirror", action="store_true", help="the same as --via mirror")
    a = p.parse_args()
    if a.mirror:
        a.via = "mirror"
    opponent = None if a.opponent is None else make_agent(a.opponent)
    if opponent is not None and a.via == "arrays":
        if not hasattr(opponent, "act_arrays"):
            p.error(f"--via arrays: {a.opponent} has no act_arrays")
        opponent = FromArrays(opponent)
    elif opponent is not None and a.via == "mirror":
        opponent = FunctionAgent(opponent.act)  # neither core_policy nor act_arrays: engine mirrors
    rates = []
    for t in range(a.trials):
        rates.append(
            vector_env_decisions_per_s(a.games, a.steps, a.players, a.api, seed=t, opponents=opponent)
        )
        print(f"trial {t}: {rates[-1]:,.0f} decisions/s")
    print(json.dumps({**vars(a), "median_decisions_per_s": round(statistics.median(rates))}))


if __name__ == "__main__":
    main()
