"""Tonk as an RLlib ``MultiAgentEnv``: the learner's seats are agents, the pool plays the others.

One episode is one hand. Each hand, one seat (drawn uniformly) belongs to the
learner; every other seat is drawn from the opponent pool by its weights
(:class:`train.pool.OpponentPool`): a *latest* draw seats the learner itself
there too (live self-play: that seat's moves are trained on as well), a
*snapshot* draw a frozen numpy copy of the learner (:class:`agents.mlp.MLPPolicy`,
pushed to the env runners on the pool's schedule), a *baseline* draw the named
agent. Every learner seat is an agent ``seat_<i>``; the trainer maps them all
to one shared policy.

Turn-based, as RLlib's own turn-based examples: ``reset`` and ``step`` return
the observation of the learner seat to act next only; the frozen opponents'
moves are played inside ``step`` through the one hand loop
(:func:`tonk_env.play.play`). Rewards are 0 until the hand ends; then every
learner seat that has acted gets its final observation and its payoff in
stakes times ``reward_scale`` and ``terminateds["__all__"]`` is True. A hand
that ends before any learner seat acts (an instant win, an opponent's
first-turn drop) is dealt again: nothing of it depends on the policy.

An observation is ``{"observations": float32 tensor, "action_mask": float32 0/1}``
(the masking module, :mod:`train.rllib.module`, reads the mask). Each step's
infos carry, at the end of a hand, ``result_kind`` and the payoffs under the
acting agent, for the trainer's outcome counts.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import gymnasium as gym
import numpy as np
from ray.rllib.env.multi_agent_env import MultiAgentEnv
from ray.rllib.utils.typing import MultiAgentDict

from tonk_env.agent import Agent
from tonk_env.engine import GameState, legal_mask, make_rules, new_game
from tonk_env.engine.state import OVER
from tonk_env.obs import observation
from tonk_env.play import play, start_hand
from tonk_env.spaces import action_space, observation_box

from ..config import config_from_dict
from ..pool import Layers, OpponentPool

__all__ = ["LEARNER", "TonkMultiAgentEnv", "agent_id"]


class _LearnerSeat:
    """Stands for the learner itself in the pool's *latest* draws; never asked to act."""

    reads_info = False

    def act(self, obs: Any, info: Any) -> int:
        """Not called: the env hands learner seats to RLlib."""
        raise RuntimeError("the learner's seat is played by RLlib, not by the hand loop")


#: The pool's *latest* member in the RLlib env: the learner plays that seat live.
LEARNER = _LearnerSeat()


def agent_id(seat: int) -> str:
    """The RLlib agent id of a seat (``seat_0``, ...)."""
    return f"seat_{seat}"


class _Stats:
    """What an env counted since the trainer last asked (:meth:`TonkMultiAgentEnv.take_stats`)."""

    def __init__(self) -> None:
        self.steps = 0
        self.kinds: Counter[str] = Counter()
        self.stakes_sum = 0.0

    def add_hand(self, kind: str, stakes: float) -> None:
        self.kinds[kind] += 1
        self.stakes_sum += stakes

    def as_dict(self) -> dict[str, Any]:
        return {"steps": self.steps, "kinds": dict(self.kinds), "stakes_sum": self.stakes_sum}


class TonkMultiAgentEnv(MultiAgentEnv):
    """One hand per episode; the learner's seats are the agents (see the module docstring).

    ``config`` holds ``train_config`` (a :class:`~train.config.TrainConfig` as a
    dict) and optionally ``seed``; RLlib passes an ``EnvContext`` whose
    ``worker_index`` and ``vector_index`` make each env's streams its own.
    """

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        super().__init__()
        config = config or {}
        cfg = config_from_dict(dict(config["train_config"]))
        self.cfg = cfg
        self.rules = make_rules(cfg.rules, **cfg.rule_options)
        n = self.num_players = cfg.players
        worker = int(getattr(config, "worker_index", 0))
        vector = int(getattr(config, "vector_index", 0))
        self.stream = int(config.get("seed", cfg.seed)) * 1000 + worker * 64 + vector
        self.pool = OpponentPool(cfg.pool, seed=self.stream, live_latest=LEARNER)
        self.rng = np.random.default_rng(self.stream)
        self.agents = self.possible_agents = [agent_id(i) for i in range(n)]
        space = gym.spaces.Dict(
            {
                "observations": observation_box(self.rules, n),
                "action_mask": gym.spaces.Box(0.0, 1.0, (int(action_space(self.rules).n),), np.float32),
            }
        )
        self.observation_spaces = dict.fromkeys(self.agents, space)
        self.action_spaces = dict.fromkeys(self.agents, action_space(self.rules))
        self.game: GameState | None = None
        self.learner_seats: set[int] = set()
        self.seats: dict[int, Agent] = {}
        self.acted: set[int] = set()
        self.main = 0  # the seat drawn for the learner this hand (the others are the pool's draws)
        self.hands = 0
        self.redealt = 0
        self._stats = _Stats()

    # -- the pool, updated by the trainer ---------------------------------------------------
    def update_pool(self, snapshot: Layers | None = None, activation: str = "tanh", step: int = 0) -> None:
        """Add a frozen snapshot of the learner to the pool's window."""
        if snapshot is not None:
            self.pool.add_snapshot(snapshot, activation, step)

    def pool_counts(self) -> dict[str, int]:
        """How often each pool member has been drawn in this env."""
        return dict(self.pool.counts)

    def take_stats(self) -> dict[str, Any]:
        """Decisions, hands, outcomes and the drawn learner seat's stakes since the last call; resets them."""
        out, self._stats = self._stats.as_dict(), _Stats()
        return out

    # -- MultiAgentEnv -----------------------------------------------------------------------
    def reset(  # type: ignore[override]  # gymnasium's Env.reset is single-agent
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[Any, Any], dict[Any, Any]]:
        """Deal a hand and play the opponents until a learner seat is to act."""
        if seed is not None:
            self.rng = np.random.default_rng([self.stream, seed])
        n = self.num_players
        while True:
            main = self.main = int(self.rng.integers(n))
            drawn = self.pool.sample(self.rng, n, main)
            others = [seat for seat in range(n) if seat != main]
            self.learner_seats = {main} | {
                seat for seat, a in zip(others, drawn, strict=True) if a is LEARNER
            }
            self.seats = {seat: a for seat, a in zip(others, drawn, strict=True) if a is not LEARNER}
            s = self.game = new_game(self.rules, n, seed=self.rng)
            self.acted = set()
            start_hand(self.seats, n, self.rules)
            self._advance()
            if s.phase != OVER:
                break
            self.redealt += 1
        return {agent_id(s.cur): self._observe(s, s.cur)}, {}

    def step(  # type: ignore[override]  # gymnasium's Env.step is single-agent
        self, action_dict: MultiAgentDict
    ) -> tuple[dict[Any, Any], dict[Any, Any], dict[Any, Any], dict[Any, Any], dict[Any, Any]]:
        """Play the acting learner seat's move, then the opponents' until a learner seat acts again."""
        s = self.game
        if s is None or s.phase == OVER:
            raise RuntimeError("the hand is over (or was never dealt); call reset()")
        seat = s.cur
        me = agent_id(seat)
        if me not in action_dict:
            raise ValueError(f"expected an action of {me} (the seat to act), got {list(action_dict)}")
        action = int(action_dict[me])
        if not legal_mask(s)[action]:
            raise ValueError(f"illegal action {action} of {me}: the masking module let it through")
        self.acted.add(seat)
        self._stats.steps += 1
        s.play(action)
        self._advance()
        if s.phase != OVER:
            nxt = agent_id(s.cur)
            return {nxt: self._observe(s, s.cur)}, {me: 0.0}, {"__all__": False}, {"__all__": False}, {}
        self.hands += 1
        pay = s.result.payoffs if s.result is not None else [0.0] * self.num_players
        self._stats.add_hand(s.result.kind if s.result is not None else "", float(pay[self.main]))
        scale = self.cfg.reward_scale
        obs = {agent_id(p): self._observe(s, p) for p in sorted(self.acted)}
        rewards = {agent_id(p): float(pay[p]) * scale for p in sorted(self.acted)}
        info = {"result_kind": s.result.kind if s.result is not None else "", "payoffs": list(pay)}
        infos = {agent_id(p): dict(info, seat=p) for p in sorted(self.acted)}
        done: dict[Any, Any] = dict.fromkeys(obs, True)
        return obs, rewards, {**done, "__all__": True}, {"__all__": False}, infos

    # -- internals ---------------------------------------------------------------------------
    def _advance(self) -> None:
        """Let the frozen opponents play until a learner seat is to act or the hand is over."""
        s = self.game
        assert s is not None
        play(s, self.seats, until=lambda g: g.cur in self.learner_seats)

    def _observe(self, s: GameState, seat: int) -> dict[str, np.ndarray]:
        mask = legal_mask(s) if s.phase != OVER and s.cur == seat else np.zeros(s.table.size, np.int8)
        return {"observations": observation(s, seat), "action_mask": mask.astype(np.float32)}
