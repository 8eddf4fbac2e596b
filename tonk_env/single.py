"""Gymnasium single-agent Tonk: one learner seat against opponent policies.

Every transition belongs to the learner. The opponents act inside ``step()``
(and inside ``reset()`` when they play before the learner), so an episode is
one hand seen from one seat, and its reward is that seat's payoff:

=====================  =======================================================
space / value          content
=====================  =======================================================
``observation_space``  ``Box(0, high, (size,), float32)``: the observation
                       tensor of the learner's seat (``tonk_env.obs``, whose
                       ``obs_layout(n).size`` is ``size``; bounds from
                       ``observation_bounds``: 1 except ``hand_count`` and
                       ``opp_estimate``, which reach ``(hand_size + 1) * 10 / 50``)
``action_space``       ``Discrete(540)`` (580 with ``ace_high``): the engine's
                       action table (``tonk_env.engine.actions``)
``action_masks()``     int8 0/1 over the action table, 1 = legal; never all zero
                       while the learner is to act, exactly one 1 (at
                       :data:`ACKNOWLEDGE`) in a hand that ended before the learner
                       acted (below), all zero once the episode is over
reward                 0 until the hand ends, then the learner's payoff in stakes
                       times ``reward_scale``, also when an opponent's move or the
                       deal ends it (with ``early_end="deliver"``, the default)
step info              the same keys on every step: ``result_kind``, ``payoffs``
                       (stakes, per seat), ``counts``, ``ended_by`` (seat, -1 when
                       none), ``detail``, ``turns``, ``action`` (an illegal action
                       under ``"penalize"``, else -1), ``learner_seat`` and
                       ``acknowledged`` (True on an acknowledgement step); before
                       the end the neutral values of ``tonk_env.outcome.neutral_info``
``terminated``         True when the hand ends (``max_turns`` scoring included:
                       it is a real ending with payoffs, and the turn is observed)
``truncated``          always False
=====================  =======================================================

The mask stays out of the observation (a flat ``Box`` suits SB3's
``MlpPolicy``; ``"MultiInputPolicy"`` is for ``Dict`` spaces and fails naming
``MlpPolicy``); sb3-contrib's ``MaskablePPO`` reads :meth:`TonkSingleAgentEnv.action_masks`
directly, so no ``ActionMasker`` wrapper is needed. Through ``gymnasium.make``'s
wrappers the mask is ``env.get_wrapper_attr("action_masks")()``.

Made with ``gymnasium.make("tonk_env/TonkSingle-v0")`` the env penalizes an
illegal action by default (``tonk_env.MAKE_DEFAULTS``), so the unmasked samples
of Gymnasium's and SB3's ``check_env`` end the hand with ``illegal_penalty``;
the class itself, and ``make(..., illegal_action="raise")``, raise
``IllegalActionError``.

Hands that end before the learner's first decision
---------------------------------------------------
An instant win or void deal, or an opponent who drops on their first turn
before the learner has acted, ends the hand before the learner can decide
anything. The constructor option ``early_end`` says what happens to such a hand.

``early_end="deliver"`` (the default) delivers its payoff, as the env's
reward definition requires ("the learner's payoff when the hand ends,
delivered even when the hand ends on an opponent's move or at the deal").
``reset()`` returns the learner's observation of the finished hand and info
``{"learner_seat", "hand_over": True, "skipped_hands": 0, "skipped_payoff": 0.0}``
plus the end-of-hand fields (``result_kind``, ``payoffs``, ...). In that state
the only legal action is the **acknowledgement**, :data:`ACKNOWLEDGE` (id 1,
the action table's ``draw`` id, reused because the table has no spare id); it
plays nothing. ``action_masks()`` has exactly one 1, at that id, so the mask is
never all zero, and ``step(ACKNOWLEDGE)`` returns the final observation, the
learner's payoff × ``reward_scale``, ``terminated=True``, ``truncated=False``
and the end-of-hand info with ``learner_seat`` and ``acknowledged: True``. Any
other action follows ``illegal_action``: ``IllegalActionError`` (the hand stays
waiting for the acknowledgement) or the penalty, which then replaces the
payoff. For ``MaskablePPO`` a single legal action has log-probability 0, so the
step adds nothing to the policy gradient (the outcome does not depend on the
policy) while the value function still learns the payoff. Such hands are rare
against reasonable opponents (about 0.9% of 2-player deals are instant wins,
plus opponents' first-turn drops), but they are part of the learner's true
score. ``action_from_string("acknowledge")`` and ``action_to_string(1)`` use
that name in this state; ``render()``, ``view()`` and ``record()`` show the
finished hand. A stacked deck whose hand ends at once is simply delivered.
Every other reset's info has ``hand_over: False`` (and zero ``skipped_*``).

``early_end="redeal"`` keeps the older behaviour: such hands are **dealt
again** and the learner never receives their reward, since ``reset()`` always
returns a state in which the learner acts. Their outcomes do not depend on the
learner's policy, so the policy gradient is unchanged, but the value function
never sees them. ``reset()``'s info reports them: ``skipped_hands`` (how many
were dealt again before this one) and ``skipped_payoff`` (the learner's summed
payoff in them, stakes × ``reward_scale``); ``env.skipped_hands_total`` /
``env.skipped_payoff_total`` keep the totals. After ``max_redeals`` re-deals in
a row ``reset()`` raises ``RuntimeError``. With a stacked deck
(``reset(options={"deck": ...})``) nothing is dealt again: a deck whose hand
ends before the learner acts is a ``ValueError``.

Opponents
---------
Opponents are agents (:mod:`tonk_env.agent`: an object with
``act(obs, info) -> int`` or a plain callable ``f(obs, info) -> int``); they
play through the one hand loop (:func:`tonk_env.play.play`), so they are
told ``reset_hand(seat, num_players, rules)`` at the start of every hand for
every seat they play (one object shared by several seats is told each seat
in turn: give stateful agents one object per seat), get ``info=None`` when
their ``reads_info`` is false, and an illegal answer raises
``IllegalActionError`` naming the opponent. An *opponent sampler* is
``sampler(rng, num_players, learner_seat) -> [agent per opponent seat]``
(seat order, learner excluded), called once per hand with the env's
``np_random``; an object with that ``sample`` method works too. Pass it as
``opponent_sampler=`` or as ``opponents=`` (an object with ``act`` or a
two-parameter callable is an agent; a ``sample`` method or a three-parameter
callable makes a sampler). A spec string (``"heuristic:greedy"``, see
:mod:`agents.registry`) is an agent too: ``opponents="heuristic:greedy"`` builds
one agent per opponent seat, and a list may mix strings and objects; a seeded
``reset()`` reseeds the agents built from strings.

:func:`~tonk_env.agent.random_policy` (uniform over the legal actions) is the
default opponent.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import gymnasium
import numpy as np

from .agent import Agent, AgentLike, RandomPolicy, action_id, agents_from_specs, as_agent
from .engine import (
    IllegalActionError,
    TonkRules,
    action_from_string,
    action_to_string,
    legal_actions,
    make_rules,
    new_game,
    payoffs,
    render,
    to_record,
    view,
)
from .engine.state import OVER, GameState, is_legal
from .frames import frame_for
from .obs import observation
from .outcome import illegal_info, result_info, step_info
from .play import illegal_message, play, start_hand
from .settings import (
    check_early_end,
    check_illegal_action,
    check_max_redeals,
    check_render_mode,
    check_reward_scale,
    check_seats,
)
from .spaces import action_space, observation_box

ACKNOWLEDGE = 1
"""The acknowledgement action: in a hand that ended before the learner acted
(``early_end="deliver"``) it is the only legal action and plays nothing; its
step delivers the learner's payoff. It reuses the action table's ``draw`` id."""


class OpponentSampler(Protocol):
    """Picks the opponents of one hand: one agent per non-learner seat, in seat order."""

    def __call__(self, rng: np.random.Generator, num_players: int, learner_seat: int) -> Sequence[AgentLike]:
        """Return ``num_players - 1`` agents."""
        ...


def as_sampler(x: Any) -> OpponentSampler | None:
    """``x`` as an opponent sampler, or None if it is an agent.

    A sampler is an object with a ``sample(rng, num_players, learner_seat)``
    method or a callable with exactly three positional parameters; anything
    with an ``act`` method, or a two-parameter callable, is an agent.
    """
    if callable(getattr(x, "act", None)):
        return None
    sample = getattr(x, "sample", None)
    if callable(sample):
        return sample
    if not callable(x):
        return None
    try:
        params = inspect.signature(x).parameters.values()
    except (TypeError, ValueError):
        return None
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return x if len(positional) == 3 else None


class TonkSingleAgentEnv(gymnasium.Env):
    """One learner seat against opponent policies that act inside ``step()`` (see the module docstring).

    ``opponents``: None (random opponents), one policy for every opponent seat,
    a list with one policy per opponent seat (seat order, learner excluded), or
    an opponent sampler (see :func:`as_sampler` for how one is told from a
    policy). ``opponent_sampler`` names a sampler explicitly.
    ``learner_seat``: a seat number or ``"random"`` (drawn per hand).
    ``dealer``: None (the engine's default, the last seat, so seat 0 plays
    first), a seat, or ``"random"`` (drawn per hand). ``rules`` is a preset
    name or a ``TonkRules``; ``rule_options`` override single options.
    ``early_end``: ``"deliver"`` (default) or ``"redeal"``, for hands that end
    before the learner's first decision; ``max_redeals`` bounds ``"redeal"``.
    """

    metadata = {"render_modes": ["ansi", "human", "rgb_array"], "render_fps": 4, "name": "tonk_single_v0"}

    def __init__(
        self,
        num_players: int = 2,
        rules: str | TonkRules = "standard",
        opponents: AgentLike | Sequence[AgentLike] | None = None,
        learner_seat: int | str = 0,
        reward_scale: float = 1.0,
        *,
        opponent_sampler: OpponentSampler | None = None,
        dealer: int | str | None = None,
        illegal_action: str = "raise",
        illegal_penalty: float = -1.0,
        render_mode: str | None = None,
        max_redeals: int = 1000,
        early_end: str = "deliver",
        **rule_options: Any,
    ) -> None:
        self.rules = make_rules(rules, **rule_options)
        self.rules.check_players(num_players)
        n = self.num_players = num_players
        check_seats(learner_seat, dealer, n)
        self._seat_choice = learner_seat
        self._dealer_choice = dealer
        self.reward_scale = check_reward_scale(reward_scale)
        self.illegal_penalty = check_illegal_action(illegal_action, illegal_penalty)
        self.illegal_action = illegal_action
        self.render_mode = check_render_mode(render_mode)
        self.max_redeals = check_max_redeals(max_redeals)
        self.early_end = check_early_end(early_end)

        self._default_random = RandomPolicy(self.np_random)
        self._seat_opponents(opponents, opponent_sampler)

        self.observation_space = observation_box(self.rules, n)
        self.action_space = action_space(self.rules)
        self._num_actions = int(self.action_space.n)

        self.game: GameState | None = None
        """The engine state of the current hand (read it; do not change it)."""
        self.learner_seat: int = learner_seat if isinstance(learner_seat, int) else 0
        """The learner's seat in the current hand."""
        self.policies: dict[int, AgentLike] = {}
        """The opponents of the current hand by seat, as given."""
        self._seated: dict[int, Agent] = {}  # the same as agents (plain functions wrapped)
        self._done = True
        self._pending = False  # the hand ended before the learner acted; awaiting ACKNOWLEDGE
        self.skipped_hands_total = 0
        self.skipped_payoff_total = 0.0

    def _seat_opponents(
        self, opponents: AgentLike | Sequence[AgentLike] | None, opponent_sampler: OpponentSampler | None
    ) -> None:
        """Build the opponents from spec strings, then keep either a sampler or a fixed list of agents."""
        n = self.num_players
        # agents this env builds from spec strings: a seeded reset() reseeds them
        self._built: list[Any] = []
        if isinstance(opponents, str):
            opponents = self._built = agents_from_specs(opponents, n - 1)
        elif isinstance(opponents, (list, tuple)):
            built = agents_from_specs(opponents, n - 1)
            self._built = [b for b, p in zip(built, opponents, strict=True) if isinstance(p, str)]
            opponents = built
        if opponents is not None and opponent_sampler is not None:
            raise ValueError("give either opponents or opponent_sampler, not both")
        if opponents is not None and not isinstance(opponents, (list, tuple)):
            sampler = as_sampler(opponents)
            if sampler is not None:
                opponents, opponent_sampler = None, sampler
        if opponent_sampler is not None and not callable(opponent_sampler):
            raise ValueError(f"opponent_sampler must be callable, got {opponent_sampler!r}")
        self._sampler = opponent_sampler
        self._fixed: list[AgentLike] | None = None
        if opponent_sampler is None:
            if opponents is None:
                self._fixed = [self._default_random] * (n - 1)
            elif isinstance(opponents, (list, tuple)):
                if len(opponents) != n - 1:
                    raise ValueError(
                        f"opponents: need {n - 1} policies (one per opponent seat), got {len(opponents)}"
                    )
                self._fixed = list(opponents)
            else:
                self._fixed = [opponents] * (n - 1)  # type: ignore[list-item]  # one agent, not a sequence
            for p in self._fixed:
                as_agent(p)  # raises TypeError early for a non-agent

    # -- gymnasium API -----------------------------------------------------------------------

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Deal a hand and let the opponents play until the learner acts.

        ``options``: ``deck`` (a stacked deck, as in the engine), ``dealer``
        and ``learner_seat`` for this hand. Hands that end before the learner's
        first decision are returned finished, awaiting :data:`ACKNOWLEDGE`
        (``early_end="deliver"``), or dealt again (``"redeal"``); see the module
        docstring.
        """
        super().reset(seed=seed)
        rng = self.np_random  # a seeded reset replaces it: deals, seats, opponents all draw from it
        if seed is not None:
            self._reseed_built(seed)
        self._default_random.rng = rng
        opts = dict(options or {})
        deck = opts.pop("deck", None)
        dealer_opt = opts.pop("dealer", self._dealer_choice)
        seat_opt = opts.pop("learner_seat", self._seat_choice)
        if opts:
            raise ValueError(f"unknown reset options {sorted(opts)}; known: deck, dealer, learner_seat")
        n = self.num_players
        deliver = self.early_end == "deliver"
        self._pending = False
        skipped = 0
        skipped_payoff = 0.0
        while True:
            seat = int(rng.integers(n)) if seat_opt == "random" else seat_opt
            if not (isinstance(seat, int) and 0 <= seat < n):
                raise ValueError(f"learner_seat must be a seat 0..{n - 1} or 'random', got {seat!r}")
            dealer = int(rng.integers(n)) if dealer_opt == "random" else dealer_opt
            self._set_opponents(seat)
            s = new_game(self.rules, n, seed=rng, deck=deck, dealer=dealer)
            self.game = s
            self.learner_seat = seat
            self._done = False
            start_hand(self._seated, n, self.rules)
            self._advance()
            if s.phase != OVER:
                break
            if deliver:
                self._pending = True
                break
            if deck is not None:
                raise ValueError(
                    f"the stacked deck's hand ends ({s.result.kind if s.result else ''}) before "
                    f"the learner (seat {seat}) acts; nothing to learn from it "
                    "(early_end='deliver' delivers such a hand)"
                )
            skipped += 1
            skipped_payoff += payoffs(s)[seat] * self.reward_scale
            if skipped > self.max_redeals:
                raise RuntimeError(
                    f"{skipped} hands in a row ended before the learner (seat {seat}) acted; "
                    "do the opponents always drop at once?"
                )
        self.skipped_hands_total += skipped
        self.skipped_payoff_total += skipped_payoff
        if self.render_mode == "human":
            self.render()
        return observation(s, self.learner_seat), self._reset_info(s, skipped, skipped_payoff)

    def _reseed_built(self, seed: int) -> None:
        """Reseed the agents this env built from spec strings, each from ``seed`` and its index."""
        for i, agent in enumerate(self._built):
            reseed = getattr(agent, "reseed", None)
            if reseed is not None:
                reseed(int(np.random.SeedSequence([seed, i]).generate_state(1)[0]))

    def _reset_info(self, s: GameState, skipped: int, skipped_payoff: float) -> dict[str, Any]:
        """``reset``'s info: the seat, and the hand's end (``deliver``) or the hands dealt again."""
        if self.early_end != "deliver":
            return {
                "learner_seat": self.learner_seat,
                "skipped_hands": skipped,
                "skipped_payoff": skipped_payoff,
            }
        info: dict[str, Any] = {
            "learner_seat": self.learner_seat,
            "hand_over": self._pending,
            "skipped_hands": 0,
            "skipped_payoff": 0.0,
        }
        if self._pending:
            info.update(result_info(s))
        return info

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """Play the learner's action, then the opponents' until the learner acts again or the hand ends."""
        out = self._play_learner(action)
        if out is not None:
            return out
        self._advance()
        return self._finish_step()

    def _play_learner(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]] | None:
        """Play the learner's move; the step's result when that ends the step without the opponents."""
        s = self.game
        if s is None or self._done:
            raise RuntimeError("the hand is over (or was never dealt); call reset()")
        a = action_id(action)
        seat = self.learner_seat
        if self._pending:
            return self._acknowledge(s, a)
        if not is_legal(s, a):
            if self.illegal_action == "raise":
                raise IllegalActionError(illegal_message(s, "the learner", a))
            self._done = True
            reward = self.illegal_penalty * self.reward_scale
            info = self._step_info(illegal_info(seat, a, self.illegal_penalty, self.num_players))
            return observation(s, seat), reward, True, False, info
        s.play(a)
        return None

    def _finish_step(self) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """The step's result once the opponents have played."""
        s = self.game
        assert s is not None
        seat = self.learner_seat
        if s.phase == OVER:
            self._done = True
            reward = payoffs(s)[seat] * self.reward_scale
            info = self._step_info(result_info(s))
            terminated = True
        else:
            reward = 0.0
            info = self._step_info(None)
            terminated = False
        if self.render_mode == "human":
            self.render()
        return observation(s, seat), reward, terminated, False, info

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions as int8 0/1.

        Only :data:`ACKNOWLEDGE` in a hand that ended before the learner acted;
        all zero once the episode is over.
        """
        mask = np.zeros(self._num_actions, dtype=np.int8)
        s = self.game
        if self._pending:
            mask[ACKNOWLEDGE] = 1
        elif s is not None and not self._done:
            for a in legal_actions(s):
                mask[a] = 1  # a loop beats fancy indexing for a few actions
        return mask

    # gymnasium < 1.3 types render() as returning its RenderFrame type, not text
    def render(self) -> str | np.ndarray | None:  # type: ignore[override]
        """The hand from the learner's seat: text (``ansi`` returns it, ``human`` prints it) or a picture.

        ``rgb_array``: a uint8 480 x 640 x 3 frame (``tonk_env.frames``), the
        opponents' hands face down until the hand is over.
        """
        if self.render_mode is None:
            gymnasium.logger.warn(
                "render() called without a render_mode; pass render_mode='ansi', 'human' or 'rgb_array'"
            )
            return None
        if self.render_mode == "rgb_array":
            if self.game is None:
                raise RuntimeError("no hand dealt yet; call reset() before render()")
            return frame_for(self.game, self.learner_seat)
        text = "(no hand dealt)" if self.game is None else render(self.game, self.learner_seat)
        if self._pending:
            text += "\nThe hand ended before you acted: acknowledge (action 1) to receive the payoff."
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        """Nothing to release."""

    # -- conveniences --------------------------------------------------------------------------

    def action_from_string(self, text: str) -> int:
        """Parse an action string for the learner (``"draw"``, ``"discard 4S"``, ...).

        In a hand that ended before the learner acted, ``"acknowledge"`` is the
        only legal string (it gives :data:`ACKNOWLEDGE`).
        """
        s = self._state()
        if self._pending:
            if text.strip().lower() in ("acknowledge", "ack"):
                return ACKNOWLEDGE
            raise IllegalActionError(
                f"{text.strip()!r} is not legal now: the hand ended before the learner acted; "
                f"the only legal action is {ACKNOWLEDGE} (acknowledge)"
            )
        return action_from_string(s, text)

    def action_to_string(self, action: int) -> str:
        """The string of an action id in the current state (``"acknowledge"`` for it, when pending)."""
        a = action_id(action)
        if self._pending and a == ACKNOWLEDGE:
            return "acknowledge"
        return action_to_string(self._state(), a)

    def view(self) -> dict[str, Any]:
        """The engine's JSON view of the learner's seat."""
        return view(self._state(), self.learner_seat)

    def record(self) -> dict[str, Any]:
        """The JSON record of the current hand (see ``tonk_env.engine.record``)."""
        return to_record(self._state())

    # -- internals -----------------------------------------------------------------------------

    def _state(self) -> GameState:
        if self.game is None:
            raise RuntimeError("no hand dealt yet; call reset()")
        return self.game

    def _acknowledge(self, s: GameState, a: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """The step of a hand that ended before the learner acted (``early_end="deliver"``)."""
        seat = self.learner_seat
        if a != ACKNOWLEDGE:
            if self.illegal_action == "raise":
                try:
                    name = repr(action_to_string(s, a))
                except (ValueError, TypeError, IndexError):
                    name = "out of the action table"
                r = s.result
                raise IllegalActionError(
                    f"the learner played action {a} ({name}), but the hand ended before the learner "
                    f"acted ({r.kind if r else 'over'}); the only legal action is {ACKNOWLEDGE} "
                    "(acknowledge), which plays nothing and delivers the payoff"
                )
            self._pending = False
            self._done = True
            info = self._step_info(illegal_info(seat, a, self.illegal_penalty, self.num_players))
            return observation(s, seat), self.illegal_penalty * self.reward_scale, True, False, info
        self._pending = False
        self._done = True
        reward = payoffs(s)[seat] * self.reward_scale
        info = self._step_info(result_info(s), acknowledged=True)
        if self.render_mode == "human":
            self.render()
        return observation(s, seat), reward, True, False, info

    def _step_info(self, end: dict[str, Any] | None, acknowledged: bool = False) -> dict[str, Any]:
        """A step's info: the same keys every step (see the module docstring)."""
        info = step_info(self.num_players, end)
        info["learner_seat"] = self.learner_seat
        info["acknowledged"] = acknowledged
        return info

    def _set_opponents(self, learner: int) -> None:
        n = self.num_players
        if self._sampler is not None:
            chosen = list(self._sampler(self.np_random, n, learner))
            if len(chosen) != n - 1:
                raise ValueError(f"opponent_sampler returned {len(chosen)} policies; need {n - 1}")
        else:
            assert self._fixed is not None
            chosen = self._fixed
        others = [p for p in range(n) if p != learner]
        self.policies = dict(zip(others, chosen, strict=True))
        self._seated = {seat: as_agent(p) for seat, p in self.policies.items()}

    def _opponent_name(self, seat: int) -> str:
        return f"opponent {self.policies[seat]!r}"

    def _learners_turn(self, s: GameState) -> bool:
        return s.cur == self.learner_seat

    def _advance(self, until: Callable[[GameState], bool] | None = None) -> None:
        """Let the opponents play until the learner is to act, the hand is over, or ``until(state)``."""
        s = self.game
        assert s is not None
        if until is None:
            until = self._learners_turn
        play(s, self._seated, until=until, who=self._opponent_name)
