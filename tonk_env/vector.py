"""Gymnasium vector Tonk: ``num_envs`` single-agent games stepped at once on the compiled core.

:class:`TonkVectorEnv` is the batched form of the single-agent env
(:mod:`tonk_env.single`, whose docstring defines the game seen from the
learner's seat): game ``g`` of the batch behaves as one
``TonkSingleAgentEnv``, the learner's seat against opponents that act inside
``step()``, a hand per episode, the payoff (× ``reward_scale``) as the reward
at the hand's end, ``early_end="deliver"`` with the :data:`ACKNOWLEDGE`
action for hands that end before the learner acts, and the end-of-hand info
of :mod:`tonk_env.outcome`. The rules, observations and masks run on the
compiled core (:mod:`tonk_env.core`), which equals the engine exactly.

=========================  ==================================================================
space / value              content
=========================  ==================================================================
``single_observation_      the learner's observation (``tonk_env.obs``); with ``oracle=True``
space``                    followed by :func:`privileged_size` floats of what the learner
                           cannot see (every opponent's hand and count, the next stock card:
                           ``train.oracle.privileged_features``)
``observation_space``      ``Box`` of shape ``(num_envs, size)``, float32
``action_space``           ``MultiDiscrete([A] * num_envs)``; ``A`` = 540 (580 with ``ace_high``)
``action_masks()``         int8 ``(num_envs, A)``: the learner's legal actions per game (only
                           :data:`ACKNOWLEDGE` in a hand that ended before the learner acted)
rewards                    float64 ``(num_envs,)``: the payoff × ``reward_scale`` at a hand's end
terminations               True where the hand ended; ``truncations`` are always False
=========================  ==================================================================

Autoreset is Gymnasium's *same-step* mode (``metadata["autoreset_mode"]``):
a game whose hand ends in a step is dealt its next hand in that step; the
step returns the new hand's observation, and ``infos`` holds the finished
hand's last observation under ``"final_obs"`` (an object array, ``None``
where no hand ended) and its end-of-hand info under ``"final_info"`` (a dict
of arrays), each with its boolean mask (``"_final_obs"``, ``"_final_info"``),
plus the new hand's reset info (``learner_seat``, ``hand_over``, ...) as the
single env's ``reset()`` gives it, for the games that were dealt again.

Deals: game ``g``'s ``k``-th hand after ``reset(seed=s)`` is dealt from
``seeded_deck(s, g, k)`` (:meth:`TonkVectorEnv.deck_of`), so a hand can be
replayed through the engine or the single env (``reset(options={"deck": ...})``);
the same seed gives the same games.

Opponents
---------
As in the single env: None (random), one agent for every opponent seat, one
per opponent seat, or an opponent sampler (:func:`~tonk_env.single.as_sampler`),
here also a list of ``num_envs`` samplers (one per game), called once per hand
with the game's own generator. How each opponent is played:

- a :class:`~tonk_env.agent.RandomPolicy` (the default) plays inside the compiled step,
  uniformly among the legal actions, from the game's own generator (not the policy's);
- an agent whose ``reads_info`` is false (a network) acts on the core's observation and
  mask: agents with a ``batch_key`` (copies with equal keys hold equal weights), ``logits``
  and ``pick`` in one matrix product per key and round, each row picked by its own copy (as
  :mod:`train.sb3.dummy_vec` does); others with ``act_batch`` in one call per agent and
  round; the rest row by row;
- an agent whose ``core_policy`` is ``("greedy", drop_at)`` (``heuristic:greedy``) plays inside
  the compiled step too (:mod:`tonk_env.core.greedy`);
- an agent with ``act_arrays`` from the same arrays, one call per ``arrays_key`` and round;
- any other agent (heuristics, search) plays through a reference-engine mirror of its game
  (``tonk_env.engine.new_game`` on the same deck, kept in step with the core), with
  ``LazyObs`` and ``seat_info`` as :func:`tonk_env.play.decide` gives them.

Every seated agent is told ``reset_hand`` at the start of each hand; one
object shared by many games is told each game's seats in turn (give
stateful agents through a sampler that returns one per game). An illegal
answer raises ``IllegalActionError`` naming the opponent and the game.

An illegal learner action raises ``IllegalActionError`` naming the game, the
action and the legal actions (``illegal_action="raise"``, the default), or
ends that game's hand with ``illegal_penalty`` × ``reward_scale``
(``"penalize"``). What the core cannot do is refused with a ``ValueError``:
``early_end="redeal"``, render modes, tables of more than six players.
With ``check=True`` every game keeps an engine mirror and every step is
compared with it (observations, masks, payoffs, infos): slow, for tests.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from .agent import Agent, AgentLike, agents_from_specs, as_agent
from .core.batch import BatchGames, check_decks
from .core.greedy import greedy_keys
from .core.layout import MAX_SEATS
from .core.learner import LOG_SIZE, ST_OVER, ST_WAIT, advance, learner_masks
from .core.seeding import seed_generators
from .engine import IllegalActionError, TonkRules, action_table, make_rules, new_game
from .engine.state import GameState, legal_mask
from .obs import obs_layout, observation, privileged_size
from .outcome import batch_infos, illegal_info, result_info
from .play import start_hand
from .settings import check_illegal_action, check_reward_scale, check_seats, check_vector
from .single import ACKNOWLEDGE, OpponentSampler, as_sampler
from .spaces import action_space, observation_box
from .vector_seats import CoreMirrorError, SeatedOpponents

__all__ = ["CoreMirrorError", "Finished", "TonkVectorEnv", "batch_infos", "privileged_size"]


Finished = list[tuple[int, np.ndarray, dict[str, Any]]]
"""``(game, final observation, final info)`` of each hand that ended in a step."""


class TonkVectorEnv(SeatedOpponents, gymnasium.vector.VectorEnv):
    """``num_envs`` learner-seat games of Tonk on the compiled core (see the module docstring).

    The options are the single env's (:class:`~tonk_env.single.TonkSingleAgentEnv`)
    plus ``num_envs``, ``oracle`` (append the privileged features to the
    observation, for an oracle critic) and ``check`` (compare with engine
    mirrors at every step).
    """

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": [], "name": "tonk_vector_v0"}

    def __init__(
        self,
        num_envs: int = 1,
        num_players: int = 2,
        rules: str | TonkRules = "standard",
        opponents: AgentLike | Sequence[AgentLike] | None = None,
        learner_seat: int | str = 0,
        reward_scale: float = 1.0,
        *,
        opponent_sampler: OpponentSampler | Sequence[OpponentSampler] | None = None,
        dealer: int | str | None = None,
        illegal_action: str = "raise",
        illegal_penalty: float = -1.0,
        render_mode: str | None = None,
        early_end: str = "deliver",
        oracle: bool = False,
        check: bool = False,
        **rule_options: Any,
    ) -> None:
        num_envs, oracle, check = check_vector(num_envs, oracle, check)
        if early_end != "deliver":
            raise ValueError(
                f"early_end={early_end!r}: the vector env only delivers hands that end before the "
                "learner acts (early_end='deliver'); use TonkSingleAgentEnv for 'redeal'"
            )
        if render_mode is not None:
            raise ValueError(f"render_mode={render_mode!r}: the vector env does not render; pass None")
        self.rules = make_rules(rules, **rule_options)
        n = self.num_players = num_players
        # the compiled core's host; it refuses what the core cannot do (tables of more than six players)
        core = self._core = BatchGames(self.rules, num_players, num_envs, deal=False)
        self.P, self.F, self.instant = core.P, core.F, core.instant
        self.shapes, self.suit_runs = core.shapes, core.suit_runs
        check_seats(learner_seat, dealer, n)
        self._seat_choice = learner_seat
        self._dealer_choice = dealer
        self.reward_scale = check_reward_scale(reward_scale)
        self.illegal_penalty = check_illegal_action(illegal_action, illegal_penalty)
        self.illegal_action = illegal_action
        self.render_mode = None
        self.early_end = early_end
        self.oracle = oracle
        self.check = check
        self.num_envs = num_envs
        self._samplers, self._fixed = self._opponent_setup(opponents, opponent_sampler)

        self._table = action_table(self.rules.ace_high)
        self.num_actions = self._table.size
        self.obs_size = obs_layout(n).size
        base = self._spaces()
        B = num_envs
        self._S, self._pay, self._counters = core.state, core.payoffs, core.counters
        self._rng = np.zeros(B, dtype=np.uint64)
        self._status = np.full(B, ST_OVER, dtype=np.int8)
        self._log = np.zeros((B, LOG_SIZE), dtype=np.int64)
        self._log_len = np.zeros(B, dtype=np.int64)
        self._scratch = np.zeros(self.num_actions, dtype=np.int8)
        self._learner = np.zeros(B, dtype=np.int64)
        self._dealers = np.full(B, n - 1, dtype=np.int64)
        self._external = np.zeros((B, MAX_SEATS), dtype=np.bool_)
        self._greedy_at = np.full((B, MAX_SEATS), -1, dtype=np.int64)  # the kernel's greedies' drop counts
        self._greedy_keys = greedy_keys(self.rules.ace_high)
        self._pending = np.zeros(B, dtype=np.bool_)
        self._obs = np.zeros((B, int(base.shape[0])), dtype=np.float32)
        self._masks = np.zeros((B, self.num_actions), dtype=np.int8)
        self._all = np.arange(B, dtype=np.int64)
        self._seated: list[dict[int, Agent]] = [{} for _ in range(B)]
        self._routes: list[dict[int, tuple[str, Any] | None]] = [{} for _ in range(B)]
        self._needs_mirror = np.zeros(B, dtype=np.bool_)
        self._policies: list[dict[int, AgentLike]] = [{} for _ in range(B)]
        self._mirrors: list[GameState | None] = [None] * B
        self._mirrored = np.zeros(B, dtype=np.bool_)
        self._gens: list[np.random.Generator] = []
        self._dealt = False

    def _spaces(self) -> gymnasium.spaces.Box:
        """Set the single and batched spaces; returns one game's observation space."""
        n = self.num_players
        base = observation_box(self.rules, n)
        if self.oracle:
            extra = privileged_size(n)
            base = gymnasium.spaces.Box(
                low=np.concatenate([base.low, np.zeros(extra, np.float32)]),
                high=np.concatenate([base.high, np.ones(extra, np.float32)]),
                dtype=np.float32,
            )
        self.single_observation_space = base
        self.single_action_space = action_space(self.rules)
        self.observation_space = batch_space(base, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        return base

    def _opponent_setup(
        self, opponents: Any, opponent_sampler: Any
    ) -> tuple[list[OpponentSampler] | None, list[AgentLike] | None]:
        """The per-game samplers, or the fixed opponents (both None: every opponent is random)."""
        n, B = self.num_players, self.num_envs
        if opponents is not None and opponent_sampler is not None:
            raise ValueError("give either opponents or opponent_sampler, not both")
        opponents = agents_from_specs(opponents, n - 1)  # spec strings: one agent per opponent seat
        if opponents is not None and not isinstance(opponents, (list, tuple)):
            sampler = as_sampler(opponents)
            if sampler is not None:
                opponents, opponent_sampler = None, sampler
        if opponent_sampler is not None:
            if isinstance(opponent_sampler, (list, tuple)):
                if len(opponent_sampler) != B:
                    raise ValueError(
                        "opponent_sampler: a list needs one sampler per game "
                        f"({B}), got {len(opponent_sampler)}"
                    )
                samplers = [as_sampler(s) or s for s in opponent_sampler]
            else:
                samplers = [opponent_sampler] * B
            for s in samplers:
                if not callable(s):
                    raise ValueError(f"opponent_sampler must be callable, got {s!r}")
            return samplers, None
        if opponents is None:
            return None, None
        if isinstance(opponents, (list, tuple)):
            if len(opponents) != n - 1:
                raise ValueError(
                    f"opponents: need {n - 1} policies (one per opponent seat), got {len(opponents)}"
                )
            fixed = list(opponents)
        else:
            fixed = [opponents] * (n - 1)
        for p in fixed:
            as_agent(p)  # raises TypeError early for a non-agent
        return None, fixed

    # -- gymnasium API ------------------------------------------------------------------------

    def reset(
        self, *, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Deal every game a hand and let the opponents play until each learner acts.

        ``seed`` (one int for all games) restarts the deals and every generator;
        without it the games go on with their next hands. ``options``: ``decks``,
        stacked decks ``(num_envs, 52)`` (top first) for these hands (the seeded
        deals go on after them).
        """
        if seed is not None:
            if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= seed < 2**63:
                raise ValueError(f"seed must be one int in 0..2**63-1 (for all games), got {seed!r}")
            self._seed_all(int(seed))
        elif not self._dealt:
            self._seed_all(int(np.random.default_rng().integers(2**63)))
        opts = dict(options or {})
        decks = opts.pop("decks", None)
        if opts:
            raise ValueError(f"unknown reset options {sorted(opts)}; known: decks")
        self._pending[:] = False
        self._start_hands(self._all, None if decks is None else check_decks(decks, self.num_envs))
        self._dealt = True
        self._refresh()
        infos = batch_infos([(g, self.reset_info(g)) for g in range(self.num_envs)], self.num_envs)
        return self._obs.copy(), infos

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Play each game's learner action and the opponents' moves; deal the finished games again."""
        obs, rewards, terminated, finished = self.step_arrays(actions)
        infos = batch_infos([(g, self.reset_info(g)) for g, _, _ in finished], self.num_envs)
        if finished:
            final_obs = np.full(self.num_envs, None, dtype=object)
            ended = np.zeros(self.num_envs, dtype=np.bool_)
            for g, o, _ in finished:
                final_obs[g] = o
                ended[g] = True
            infos["final_obs"], infos["_final_obs"] = final_obs, ended
            infos["final_info"] = batch_infos([(g, info) for g, _, info in finished], self.num_envs)
            infos["_final_info"] = ended.copy()
        return obs.copy(), rewards, terminated, np.zeros(self.num_envs, dtype=np.bool_), infos

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions of every game, int8 ``(num_envs, A)`` (a copy)."""
        return self._masks.copy()

    def close_extras(self, **kwargs: Any) -> None:
        """Nothing to release."""

    # -- the batched step ----------------------------------------------------------------------

    def step_arrays(
        self, actions: Any, active: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, Finished]:
        """The step as arrays: ``(obs, rewards, terminated, finished)``, without Gymnasium's info dicts.

        ``obs`` is the env's own buffer (copy it to keep it past the next step);
        ``finished`` lists ``(game, final observation, final info)`` of every hand
        that ended (the game has been dealt again: :meth:`reset_info` gives its
        new hand's reset info). ``active`` (bool ``(num_envs,)``, default all)
        selects the games to step: the others' actions are ignored and they stay
        as they are (an adapter to Gymnasium's next-step autoreset skips the
        games it is dealing again).
        """
        if not self._dealt:
            raise RuntimeError("call reset() before step()")
        B = self.num_envs
        acts = self._check_actions(actions)
        pending = self._pending.copy()
        inside = (acts >= 0) & (acts < self.num_actions)
        bad = ~inside | (self._masks[self._all, np.where(inside, acts, 0)] == 0)
        if active is not None:
            bad &= active
            pending &= active
        if self.illegal_action == "raise" and bad.any():
            g = int(np.flatnonzero(bad)[0])
            raise IllegalActionError(self._illegal_message(g, int(acts[g])))
        play = ~bad & ~pending if active is None else ~bad & ~pending & active
        games = np.flatnonzero(play).astype(np.int64)
        rewards = np.zeros(B, dtype=np.float64)
        finished: Finished = []
        ended = bad | pending
        fresh = np.zeros(B, dtype=np.bool_)  # dealt again in this step

        def finish(done: np.ndarray) -> None:  # the hands that ended: results, then the next hands
            ended[done] = True
            self._finish(done, acts, bad, pending, rewards, finished)
            self._deal(done, None)
            fresh[done] = True

        self._advance_kernel(games, acts[games])
        finish(np.flatnonzero(ended | (play & (self._status == ST_OVER))).astype(np.int64))
        # one round of opponents' moves for the hands going on and those just dealt, so that a batch of
        # copies of one network sees both; a hand that ends in the rounds is dealt again and joins them
        waiting = np.flatnonzero(play | fresh).astype(np.int64)
        waiting = waiting[self._status[waiting] == ST_WAIT]
        while waiting.size:
            self._round(waiting)
            over = waiting[(self._status[waiting] == ST_OVER) & ~fresh[waiting]]
            if over.size:
                finish(over)
            waiting = waiting[self._status[waiting] == ST_WAIT]
        dealt = np.flatnonzero(fresh)
        self._pending[dealt] = self._status[dealt] == ST_OVER
        finished.sort(key=lambda f: f[0])
        self._refresh()
        return self._obs, rewards, ended, finished

    def _finish(
        self,
        done: np.ndarray,
        acts: np.ndarray,
        bad: np.ndarray,
        pending: np.ndarray,
        rewards: np.ndarray,
        finished: Finished,
    ) -> None:
        """The rewards, final observations and infos of the hands that ended in ``done``."""
        if not done.size:
            return
        self._observe(done)
        for g in done.tolist():
            seat = int(self._learner[g])
            if bad[g]:
                info = illegal_info(seat, int(acts[g]), self.illegal_penalty, self.num_players)
                rewards[g] = self.illegal_penalty * self.reward_scale
            else:
                info = self.result_info(g)
                rewards[g] = self._pay[g, seat] * self.reward_scale
                if self.check:
                    self._check_finished(g, info)
            info["learner_seat"] = seat
            if pending[g] and not bad[g]:
                info["acknowledged"] = True
            finished.append((g, self._obs[g].copy(), info))
        self._pending[done] = False

    def _check_actions(self, actions: Any) -> np.ndarray:
        """The actions as int64 ``(num_envs,)``; ``IllegalActionError`` for another shape or type."""
        a = np.asarray(actions)
        if a.shape == (self.num_envs,) and a.dtype.kind in "iu":
            return a.astype(np.int64, copy=False)
        if a.shape == (self.num_envs,) and a.dtype.kind == "f" and bool(np.all(a == np.floor(a))):
            return a.astype(np.int64)
        raise IllegalActionError(
            f"actions must be {self.num_envs} integer action ids (one per game), "
            f"got {a.dtype} of shape {a.shape}"
        )

    def _illegal_message(self, g: int, a: int) -> str:
        """Why the learner's action ``a`` in game ``g`` is illegal, naming the legal actions."""
        name = repr(self._table.name(a)) if 0 <= a < self.num_actions else "out of the action table"
        seat = int(self._learner[g])
        if self._pending[g]:
            return (
                f"game {g}: the learner (seat {seat}) played action {a} ({name}), but the hand ended before "
                f"the learner acted; the only legal action is {ACKNOWLEDGE} (acknowledge), which plays "
                "nothing and delivers the payoff"
            )
        legal = ", ".join(f"{x} ({self._table.name(x)})" for x in np.flatnonzero(self._masks[g]).tolist())
        return f"game {g}: illegal action {a} ({name}) for the learner (seat {seat}); legal actions: {legal}"

    def _round(self, waiting: np.ndarray) -> None:
        """The moves of the opponents outside the kernel in ``waiting``, then the kernel's up to a stop."""
        self._advance_kernel(waiting, self._external_moves(waiting))

    def _advance_kernel(self, games: np.ndarray, actions: np.ndarray) -> None:
        """One compiled pass: ``actions`` in ``games``, then the kernel's opponents up to a stop.

        The moves it played are replayed into the games' engine mirrors (where there are any).
        """
        c = self._core
        self._log_len[games] = 0
        advance(
            c.state, c.payoffs, games, actions, self._learner, self._external, self._greedy_at,
            self._greedy_keys, self._rng, self._status, self._log, self._log_len, c.P, c.F, c.shapes,
            c.suit_runs, c.values, c.suit_value, self._scratch,
        )  # fmt: skip
        self._sync_mirrors(games)

    def _refresh(self) -> None:
        """Write every game's learner observation and mask (and compare with the mirrors under ``check``)."""
        self._observe(self._all)
        learner_masks(
            self._S,
            self._status,
            self._pending,
            ACKNOWLEDGE,
            self.P,
            self.shapes,
            self.suit_runs,
            self._masks,
        )
        if self.check:
            self._check_mirrors()

    def _observe(self, games: np.ndarray) -> None:
        """Write the learner observation of ``games`` into the buffer."""
        self._core.observe_seats(games, self._learner, self._obs)
        if self.oracle:
            self._core.privileged(games, self._learner, self._obs[:, self.obs_size :])

    def random_state(self) -> dict[str, Any]:
        """The deal counters and every generator of the games, as JSON data (for an exact resume).

        After :meth:`set_random_state` with it, ``reset()`` (without a seed)
        deals what this env's next ``reset()`` would have dealt.
        """
        return {
            "seed": int(self._core.seed),
            "dealt": bool(self._dealt),
            "counters": self._counters.tolist(),
            "kernel_rng": [int(x) for x in self._rng.tolist()],
            "gens": [g.bit_generator.state for g in self._gens],
            "np_random": self._np_random.bit_generator.state if self._np_random is not None else None,
        }

    def set_random_state(self, state: dict[str, Any]) -> None:
        """Restore :meth:`random_state`; ``ValueError`` if it is not this env's (another number of games)."""
        B = self.num_envs
        try:
            counters = np.asarray(state["counters"], dtype=np.int64)
            kernel = np.asarray([int(x) for x in state["kernel_rng"]], dtype=np.uint64)
            gens = list(state["gens"])
            if counters.shape != (B,) or kernel.shape != (B,) or len(gens) not in (0, B):
                raise ValueError(f"it holds {counters.shape[0]} games, this env {B}")
            self._seed_all(int(state["seed"]))
            self._counters[:] = counters
            self._rng[:] = kernel
            self._gens = [np.random.default_rng() for _ in gens]
            for gen, saved in zip(self._gens, gens, strict=True):
                gen.bit_generator.state = saved
            if state["np_random"] is not None and self._np_random is not None:
                self._np_random.bit_generator.state = state["np_random"]
            self._dealt = bool(state["dealt"])
        except (KeyError, TypeError, ValueError, OverflowError) as e:
            raise ValueError(f"vector env: the saved random state does not fit ({e})") from None

    # -- hands ---------------------------------------------------------------------------------

    def _seed_all(self, seed: int) -> None:
        """Restart the seeded deals and every game's generators from ``seed``."""
        self._core.reseed(seed)
        seed_generators(self._rng, seed)
        needs = self._needs_gens()
        self._gens = [np.random.default_rng([seed, g]) for g in range(self.num_envs)] if needs else []
        self._np_random, self._np_random_seed = np.random.default_rng(seed), seed

    def _needs_gens(self) -> bool:
        """Whether hands draw from per-game numpy generators (samplers, random seats or dealers)."""
        return self._samplers is not None or self._seat_choice == "random" or self._dealer_choice == "random"

    def deck_of(self, game: int, index: int) -> list[int]:
        """The deck (top first) of game ``game``'s ``index``-th seeded hand since the last seeded reset."""
        return self._core.deck_of(game, index)

    def _start_hands(self, games: np.ndarray, decks: np.ndarray | None) -> None:
        """Choose seats and opponents, deal ``games`` and play the opponents up to the learner."""
        self._deal(games, decks)
        waiting = games[self._status[games] == ST_WAIT]
        while waiting.size:
            self._round(waiting)
            waiting = waiting[self._status[waiting] == ST_WAIT]
        self._pending[games] = self._status[games] == ST_OVER

    def _deal(self, games: np.ndarray, decks: np.ndarray | None) -> None:
        """Choose seats and opponents, deal ``games``, and let the kernel play up to its first stop."""
        n = self.num_players
        if self._needs_gens() or self._fixed is not None:
            for g in games.tolist():
                self._choose_table(g)
        else:  # random opponents at a fixed seat: nothing to draw
            self._learner[games] = self._seat_choice
            self._dealers[games] = n - 1 if self._dealer_choice is None else self._dealer_choice
        if decks is None:
            self._core.deal_next(games, self._dealers)
        else:
            for g in games.tolist():
                self._core.deal(g, decks[g], int(self._dealers[g]))
        tables = games.tolist() if self.check or self._samplers is not None or self._fixed is not None else []
        for g in tables:  # engine mirrors for agents that read info; every seated agent told of the hand
            seated = self._seated[g]
            mirrored = self.check or bool(self._needs_mirror[g])
            if mirrored:
                deck = self.deck_of(g, int(self._counters[g]) - 1) if decks is None else decks[g].tolist()
                self._mirrors[g] = new_game(self.rules, n, deck=deck, dealer=int(self._dealers[g]))
            else:
                self._mirrors[g] = None
            self._mirrored[g] = mirrored
            if seated:
                start_hand(seated, n, self.rules)
        self._advance_kernel(games, np.full(games.size, -1, dtype=np.int64))

    # -- infos ---------------------------------------------------------------------------------

    def result_info(self, g: int) -> dict[str, Any]:
        """The end-of-hand info of game ``g``'s finished hand (``tonk_env.outcome.result_info``'s).

        The payoffs are the core's (floats); the kind, the seat and the detail are
        what the kernel recorded when the hand ended (``BatchGames.result_info``).
        """
        return self._core.result_info(g)

    def reset_info(self, g: int) -> dict[str, Any]:
        """The reset info of game ``g``'s current hand, as the single env's ``reset()`` gives it."""
        info: dict[str, Any] = {
            "learner_seat": int(self._learner[g]),
            "hand_over": bool(self._pending[g]),
            "skipped_hands": 0,
            "skipped_payoff": 0.0,
        }
        if self._pending[g]:
            info.update(self.result_info(g))
        return info

    def privileged_features(self) -> np.ndarray:
        """The oracle critic's features of every game from the learner's seat, float32 ``(num_envs, k)``."""
        out = np.zeros((self.num_envs, privileged_size(self.num_players)), dtype=np.float32)
        self._core.privileged(self._all, self._learner, out)
        return out

    @property
    def learner_seats(self) -> np.ndarray:
        """The learner's seat in each game's current hand."""
        return self._learner.copy()

    def opponents_of(self, g: int) -> dict[int, AgentLike]:
        """Game ``g``'s opponents played outside the kernel, by seat (random ones are not listed)."""
        return dict(self._policies[g])

    def mirror(self, g: int) -> GameState | None:
        """Game ``g``'s engine mirror (None unless an opponent reads info or ``check`` is on)."""
        return self._mirrors[g]

    # -- check=True ----------------------------------------------------------------------------

    def _check_finished(self, g: int, info: dict[str, Any]) -> None:
        """Compare game ``g``'s finished hand (final observation, info, payoffs) with its mirror."""
        m = self._mirrors[g]
        assert m is not None
        if m.result is None:
            raise CoreMirrorError(f"game {g}: the core's hand is over, the engine's is not")
        if info != result_info(m):
            raise CoreMirrorError(f"game {g}: end-of-hand info {info} != the engine's {result_info(m)}")
        if self._pay[g, : self.num_players].tolist() != [float(x) for x in m.result.payoffs]:
            raise CoreMirrorError(f"game {g}: payoffs {self._pay[g].tolist()} != {m.result.payoffs}")
        if not np.array_equal(self._obs[g, : self.obs_size], observation(m, int(self._learner[g]))):
            raise CoreMirrorError(f"game {g}: the final observation differs from the engine's")

    def _check_mirrors(self) -> None:
        """Compare every game's learner observation and mask with its engine mirror."""
        for g in range(self.num_envs):
            m = self._mirrors[g]
            assert m is not None
            want = observation(m, int(self._learner[g]))
            if not np.array_equal(self._obs[g, : self.obs_size], want):
                bad = np.flatnonzero(self._obs[g, : self.obs_size] != want)[:8]
                raise CoreMirrorError(f"game {g}: observation differs from the engine's at {bad.tolist()}")
            mask = legal_mask(m) if m.result is None else np.zeros(self.num_actions, dtype=np.int8)
            if self._pending[g]:
                mask[ACKNOWLEDGE] = 1
            if not np.array_equal(self._masks[g], mask):
                raise CoreMirrorError(f"game {g}: mask differs from the engine's legal actions")
            if self._pending[g] and self.result_info(g) != result_info(m):
                raise CoreMirrorError(f"game {g}: end-of-hand info {self.result_info(g)} != {result_info(m)}")
