"""The vector env's opponents: who sits in each game's seats, and how those outside the kernel play.

:class:`SeatedOpponents` is the part of :class:`tonk_env.vector.TonkVectorEnv`
that seats a hand's opponents and plays the ones the compiled kernel does not
(see the opponents section of :mod:`tonk_env.vector`). The kernel itself plays
random opponents and greedy ones: an agent whose ``core_policy`` is
``("greedy", drop_at)`` (``heuristic:greedy``) is seated in ``greedy_at`` and
never leaves the compiled step; under ``check=True`` each of its moves is
compared with ``act`` on the game's engine mirror as the mirror replays it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .agent import Agent, AgentLike, RandomPolicy, as_agent
from .core.batch import BatchGames
from .core.learner import LOG_SIZE
from .engine import IllegalActionError, TonkRules
from .engine.state import GameState
from .play import decide

__all__ = ["KERNEL_RANDOM", "CoreMirrorError", "SeatedOpponents", "core_greedy"]

#: Stands for the kernel's random opponents in a game's seat list (its own generator is never used).
KERNEL_RANDOM = RandomPolicy(0)


class CoreMirrorError(AssertionError):
    """With ``check=True``: the compiled core and its engine mirror disagree."""


def core_greedy(agent: Any) -> int | None:
    """The drop count of an agent that the kernel plays as ``heuristic:greedy`` (``core_policy``), or None."""
    policy = getattr(agent, "core_policy", None)
    if policy is None:
        return None
    if (
        not isinstance(policy, tuple)
        or len(policy) != 2
        or policy[0] != "greedy"
        or isinstance(policy[1], bool)
        or not isinstance(policy[1], int)
        or policy[1] < 0
    ):
        raise ValueError(
            f"{agent!r}: core_policy must be ('greedy', drop_at) with drop_at an int >= 0, got {policy!r}"
        )
    return policy[1]


def _route(agent: Agent) -> tuple[str, Any] | None:
    """How the vector env asks an agent outside the kernel for its moves (None: on the engine mirror).

    Agents with equal routes decide in one call per round: ``("arrays", arrays_key)``
    from the observation arrays, ``("key", batch_key)`` copies of one network in one
    matrix product, ``("agent", id)`` one agent's batch.
    """
    if hasattr(agent, "act_arrays"):
        return ("arrays", getattr(agent, "arrays_key", id(agent)))
    if getattr(agent, "reads_info", True):
        return None
    key = getattr(agent, "batch_key", None)
    return ("key", key) if key is not None else ("agent", id(agent))


class SeatedOpponents:
    """The opponents' seats and moves of :class:`~tonk_env.vector.TonkVectorEnv` (a mixin; see the module)."""

    num_players: int
    num_actions: int
    obs_size: int
    rules: TonkRules
    check: bool
    _core: BatchGames
    _table: Any
    _seat_choice: int | str
    _dealer_choice: int | str | None
    _samplers: list[Any] | None
    _fixed: list[AgentLike] | None
    _gens: list[np.random.Generator]
    _learner: np.ndarray
    _dealers: np.ndarray
    _external: np.ndarray
    _greedy_at: np.ndarray
    _log: np.ndarray
    _log_len: np.ndarray
    _mirrors: list[GameState | None]
    _mirrored: np.ndarray
    _seated: list[dict[int, Agent]]
    _policies: list[dict[int, AgentLike]]
    _routes: list[dict[int, tuple[str, Any] | None]]
    _needs_mirror: np.ndarray

    def _choose_table(self, g: int) -> None:
        """Game ``g``'s learner seat, dealer and opponents for its next hand (in the single env's order)."""
        n = self.num_players
        gen = self._gens[g] if self._gens else None
        seat_choice, dealer_choice = self._seat_choice, self._dealer_choice
        seat = int(gen.integers(n)) if seat_choice == "random" and gen is not None else int(seat_choice)
        dealer = int(gen.integers(n)) if dealer_choice == "random" and gen is not None else dealer_choice
        self._learner[g] = seat
        self._dealers[g] = n - 1 if dealer is None else int(dealer)
        chosen: list[AgentLike]
        if self._samplers is not None:
            assert gen is not None
            chosen = list(self._samplers[g](gen, n, seat))
            if len(chosen) != n - 1:
                raise ValueError(f"opponent_sampler returned {len(chosen)} policies; need {n - 1}")
        elif self._fixed is not None:
            chosen = self._fixed
        else:
            chosen = [KERNEL_RANDOM] * (n - 1)
        others = [p for p in range(n) if p != seat]
        self._external[g, :] = False
        self._greedy_at[g, :] = -1
        policies: dict[int, AgentLike] = {}
        seated: dict[int, Agent] = {}
        routes: dict[int, tuple[str, Any] | None] = {}
        for p, agent in zip(others, chosen, strict=True):
            if isinstance(agent, RandomPolicy):
                continue  # played inside the compiled step
            policies[p] = agent
            seated[p] = as_agent(agent)
            drop_at = core_greedy(agent)
            if drop_at is None:
                self._external[g, p] = True
                routes[p] = _route(seated[p])
            else:  # played inside the compiled step too
                self._greedy_at[g, p] = drop_at
        self._policies[g] = policies
        self._seated[g] = seated
        self._routes[g] = routes
        # an agent that reads info and decides neither in the kernel nor from arrays plays on a mirror
        self._needs_mirror[g] = any(r is None for r in routes.values())

    def _sync_mirrors(self, games: np.ndarray) -> None:
        """Replay the moves the kernel logged into the engine mirrors of ``games``."""
        for g in games[self._mirrored[games]].tolist():
            m = self._mirrors[g]
            k = int(self._log_len[g])
            if m is None or k == 0:
                continue
            if k > LOG_SIZE:
                raise RuntimeError(f"game {g}: {k} moves in one step overflow the move log ({LOG_SIZE})")
            for a in self._log[g, :k].tolist():
                if self.check and self._greedy_at[g, m.cur] >= 0:
                    want = decide(self._seated[g][m.cur], m, self._who(g))
                    if want != a:
                        raise CoreMirrorError(f"game {g}: the core's greedy played {a}, act chose {want}")
                m.play(a)
            self._log_len[g] = 0

    def _who(self, g: int) -> Callable[[int], str]:
        """Names the opponent of a seat of game ``g`` in error messages."""
        return lambda seat: f"opponent {self._policies[g][seat]!r} in game {g}"

    def _external_moves(self, waiting: np.ndarray) -> np.ndarray:
        """The moves of the opponents waiting in ``waiting``: engine agents one by one, the others batched."""
        moves = np.empty(waiting.size, dtype=np.int64)
        batched: dict[tuple[str, Any], list[int]] = {}
        seats = self._core.acting_seats(waiting)
        for i, g in enumerate(waiting.tolist()):
            route = self._routes[g][seats[i]]
            if route is None:
                m = self._mirrors[g]
                assert m is not None  # a game with an agent that reads info has a mirror
                moves[i] = decide(self._seated[g][seats[i]], m, self._who(g))
            else:
                batched.setdefault(route, []).append(i)
        for (kind, _), rows in batched.items():
            self._decide_batch(waiting, rows, [seats[i] for i in rows], moves, kind)
        return moves

    def _decide_batch(
        self, waiting: np.ndarray, rows: list[int], seats: list[int], moves: np.ndarray, kind: str
    ) -> None:
        """The moves of games ``waiting[rows]``, whose opponents are one agent (or copies of one network)."""
        games = waiting[rows]
        obs = np.zeros((games.size, self.obs_size), dtype=np.float32)
        masks = np.zeros((games.size, self.num_actions), dtype=np.int8)
        self._core.observe_rows(games, obs, masks)
        agents: list[Any] = [self._seated[g][s] for g, s in zip(games.tolist(), seats, strict=True)]
        first = agents[0]
        picks: list[Any]
        if kind == "arrays":  # an agent that decides from the arrays (heuristic:greedy)
            picks = list(first.act_arrays(obs, masks, self.rules, self.num_players))
            for k, g in enumerate(games.tolist() if self.check else ()):  # the engine mirror's choice
                want = decide(first, self._mirrors[g], self._who(g))  # type: ignore[arg-type]
                if int(picks[k]) != want:
                    raise CoreMirrorError(
                        f"game {g}: {first!r} chose {picks[k]} from the arrays, {want} by act"
                    )
        elif kind == "key":  # copies of one network: one matrix product, each row picked by its own copy
            logits = first.logits(obs)
            if hasattr(first, "pick_many"):  # all rows at once, as each copy's pick would choose
                picks = first.pick_many(logits, masks, agents)
            else:
                picks = [agent.pick(logits[k], masks[k]) for k, agent in enumerate(agents)]
        elif hasattr(first, "act_batch"):
            picks = list(first.act_batch({"observation": obs, "action_mask": masks}, [None] * games.size))
        else:
            picks = [
                first.act({"observation": obs[k], "action_mask": masks[k]}, None) for k in range(games.size)
            ]
        got = np.asarray(picks)
        if got.shape == (games.size,) and got.dtype.kind in "iu":  # all legal: the common case, at once
            inside = (got >= 0) & (got < self.num_actions)
            if inside.all() and masks[np.arange(games.size), got].all():
                moves[rows] = got
                return
        for k, g in enumerate(games.tolist()):  # name the first illegal answer
            a = picks[k]
            ok = isinstance(a, (int, np.integer)) and not isinstance(a, bool) and 0 <= a < self.num_actions
            if not ok or not masks[k, int(a)]:
                seat = self._core.acting_seat(g)
                name = repr(self._table.name(int(a))) if ok else "not an action id"
                legal = ", ".join(self._table.name(x) for x in np.flatnonzero(masks[k]).tolist())
                raise IllegalActionError(
                    f"illegal action {a!r} ({name}) for {self._who(g)(seat)} (seat {seat}); "
                    f"legal actions: {legal}"
                )
            moves[rows[k]] = int(a)
