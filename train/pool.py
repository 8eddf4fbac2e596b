"""The self-play opponent pool.

Each hand, every opponent seat is drawn independently from the pool by
weight: the *latest* policy (a frozen copy of the learner, refreshed every
``refresh_every`` steps), a *snapshot* drawn uniformly from a window of past
copies (one added every ``snapshot_every`` steps, the oldest dropped past
``window``), or a named *baseline* agent (``random``, ``heuristic:greedy``,
...). This follows the conventions of Unity ML-Agents (a window of ~10
snapshots, the latest model half the time) and keeps the learner from
over-fitting to itself.

Frozen copies are :class:`agents.mlp.MLPPolicy` objects evaluated with numpy,
so an opponent decision costs microseconds and no torch call. Under
``SubprocVecEnv`` each process holds its own pool; the training callback
pushes new weights to all of them with ``env_method("update_pool", ...)``.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Mapping
from itertools import accumulate
from typing import Any

import gymnasium as gym
import numpy as np

from agents.mlp import MLPPolicy
from agents.random_agent import RandomAgent
from agents.registry import make_agent
from tonk_env.agent import Agent
from tonk_env.vector_seats import KERNEL_RANDOM

from .config import PoolConfig
from .rngstate import rng_state, set_rng_state

Layers = list[tuple[np.ndarray, np.ndarray]]


class OpponentPool:
    """Samples the opponents of one hand; callable as the env's opponent sampler."""

    def __init__(self, cfg: PoolConfig, seed: int = 0, baseline_factory: Any = None) -> None:
        self.cfg = cfg
        self.seed = seed
        self.latest: Agent | None = None
        self.latest_version = 0
        self.snapshots: list[MLPPolicy] = []
        self.snapshot_steps: list[int] = []
        if baseline_factory is None:
            baseline_factory = make_agent
        self.baselines = [
            (spec, weight, baseline_factory(spec, seed=seed + 1000 + i))
            for i, (spec, weight) in enumerate(cfg.baselines.items())
            if weight > 0
        ]
        self._by_spec = {spec: agent for spec, _, agent in self.baselines}
        self._tables: dict[tuple[bool, bool], tuple[list[str], list[float]]] = {}
        self.counts: dict[str, int] = {}
        self._uniform = _Uniform(seed + 99)

    def _frozen(self, layers: Layers, activation: str, name: str, key: Any) -> MLPPolicy:
        pol = MLPPolicy(
            layers,
            activation=activation,
            deterministic=not self.cfg.sample_opponents,
            seed=self.seed + 7 + len(self.snapshots),
            name=name,
        )
        # The trainer pushes the same weights to every env's pool at once, so the
        # copies in all envs share this key and a vectorised env may batch them.
        pol.batch_key = key
        return pol

    def set_latest(self, layers: Layers, activation: str) -> None:
        """Replace the frozen copy of the learner."""
        self.latest_version += 1
        self.latest = self._frozen(layers, activation, "latest", ("latest", self.latest_version))

    def add_snapshot(self, layers: Layers, activation: str, step: int) -> None:
        """Add a snapshot to the window (dropping the oldest past ``window``)."""
        self.snapshots.append(self._frozen(layers, activation, f"snapshot@{step}", ("snapshot", step)))
        self.snapshot_steps.append(step)
        if len(self.snapshots) > self.cfg.window:
            self.snapshots.pop(0)
            self.snapshot_steps.pop(0)

    def _choices(self) -> tuple[list[str], np.ndarray]:
        names, weights = [], []
        if self.latest is not None and self.cfg.latest > 0:
            names.append("latest")
            weights.append(self.cfg.latest)
        if self.snapshots and self.cfg.snapshots > 0:
            names.append("snapshot")
            weights.append(self.cfg.snapshots)
        for spec, w, _ in self.baselines:
            names.append(spec)
            weights.append(w)
        if not names:  # nothing to play yet: the frozen copy arrives at the first refresh
            names, weights = ["random"], [1.0]
        p = np.asarray(weights, dtype=np.float64)
        return names, p / p.sum()

    def _table(self) -> tuple[list[str], list[float]]:
        """The names and cumulative weights of :meth:`_choices`, kept while the same kinds are offered."""
        key = (self.latest is not None, bool(self.snapshots))
        table = self._tables.get(key)
        if table is None:
            names, p = self._choices()
            table = self._tables[key] = (names, list(accumulate(p.tolist())))
        return table

    def sample(self, rng: np.random.Generator, num_players: int, learner_seat: int) -> list[Agent]:
        """One policy for every non-learner seat, in seat order."""
        names, cum = self._table()
        out: list[Agent] = []
        for _ in range(num_players - 1):
            # inverse CDF of one uniform: what Generator.choice(p=...) does, at a tenth of its cost
            name = names[min(bisect_right(cum, rng.random() * cum[-1]), len(names) - 1)]
            self.counts[name] = self.counts.get(name, 0) + 1
            if name == "latest":
                assert self.latest is not None  # _choices offers it only once it exists
                out.append(self.latest)
            elif name == "snapshot":
                out.append(self.snapshots[int(rng.integers(len(self.snapshots)))])
            elif name == "random" and "random" not in self._by_spec:
                out.append(self._uniform)
            else:
                out.append(self._by_spec[name])
        return out

    __call__ = sample

    def random_state(self) -> dict[str, Any]:
        """Every random stream of the pool's draws (its agents' generators) and its counts, as JSON data."""
        return {
            "counts": dict(self.counts),
            "uniform": rng_state(self._uniform.rng),
            "baselines": [rng_state(getattr(agent, "rng", None)) for _, _, agent in self.baselines],
            # a frozen copy draws only when opponents sample (sample_opponents); else nothing to keep
            "latest": _sampling_state(self.latest),
            "snapshots": [_sampling_state(p) for p in self.snapshots],
        }

    def set_random_state(self, state: dict[str, Any]) -> None:
        """Restore :meth:`random_state` (after the same latest copy and snapshots were pushed again)."""
        what = "opponent pool"
        if not isinstance(state, dict) or len(state.get("snapshots", ())) != len(self.snapshots):
            raise ValueError(
                f"{what}: the saved state does not match the pool's {len(self.snapshots)} snapshot(s)"
            )
        if len(state.get("baselines", ())) != len(self.baselines):
            raise ValueError(f"{what}: the saved state does not match the pool's baselines")
        self.counts = {str(k): int(v) for k, v in state["counts"].items()}
        set_rng_state(self._uniform.rng, state["uniform"], f"{what} (uniform)")
        for (spec, _, agent), saved in zip(self.baselines, state["baselines"], strict=True):
            set_rng_state(getattr(agent, "rng", None), saved, f"{what} ({spec})")
        if state["latest"] is not None:
            set_rng_state(getattr(self.latest, "rng", None), state["latest"], f"{what} (latest)")
        for pol, saved in zip(self.snapshots, state["snapshots"], strict=True):
            if saved is not None:
                set_rng_state(pol.rng, saved, f"{what} ({pol.name})")


class PoolSampler:
    """One game's opponent sampler: its pool's draw, with random baselines played in the kernel."""

    def __init__(self, pool: OpponentPool) -> None:
        self.pool = pool

    def __call__(self, rng: np.random.Generator, num_players: int, learner_seat: int) -> list[Agent]:
        """The pool's opponents for one hand (``RandomAgent`` replaced by the kernel's random play)."""
        chosen = self.pool.sample(rng, num_players, learner_seat)
        return [KERNEL_RANDOM if isinstance(a, RandomAgent) else a for a in chosen]


def _sampling_state(policy: Any) -> dict[str, Any] | None:
    """A frozen copy's generator state when it samples its moves, else None (it draws nothing)."""
    if policy is None or getattr(policy, "deterministic", True):
        return None
    return rng_state(getattr(policy, "rng", None))


class _Uniform:
    """Fallback opponent before the first frozen copy exists: uniform over the mask."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def act(self, obs: Mapping[str, Any], info: Any = None) -> int:
        """A legal action drawn uniformly."""
        legal = np.flatnonzero(obs["action_mask"])
        return int(legal[self.rng.integers(len(legal))])


class PoolWrapper(gym.Wrapper):
    """Lets the trainer update the pool inside each (sub)process env."""

    def __init__(self, env: gym.Env, pool: OpponentPool) -> None:
        super().__init__(env)
        self.pool = pool

    def update_pool(
        self,
        latest: Layers | None = None,
        snapshot: Layers | None = None,
        activation: str = "tanh",
        step: int = 0,
    ) -> None:
        """Set the latest frozen copy and/or add a snapshot."""
        if latest is not None:
            self.pool.set_latest(latest, activation)
        if snapshot is not None:
            self.pool.add_snapshot(snapshot, activation, step)

    def random_state(self) -> dict[str, Any]:
        """The env's generator (deals, seats, pool draws) and the pool's streams, as JSON data."""
        return {"env": rng_state(self.env.unwrapped.np_random), "pool": self.pool.random_state()}

    def set_random_state(self, state: dict[str, Any]) -> None:
        """Restore :meth:`random_state`; the next ``reset`` deals what the saved env would have dealt."""
        set_rng_state(self.env.unwrapped.np_random, state["env"], "training env")
        self.pool.set_random_state(state["pool"])

    def pool_counts(self) -> dict[str, int]:
        """How often each pool member has been drawn in this env."""
        return dict(self.pool.counts)

    def action_masks(self) -> np.ndarray:
        """Forward the mask (sb3-contrib reads it from the outermost env)."""
        return self.env.get_wrapper_attr("action_masks")()
