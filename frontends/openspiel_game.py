"""OpenSpiel interop: Tonk as the Python game ``python_tonk``, and Tonk agents as OpenSpiel bots.

Importing this module registers the game with ``pyspiel`` (``pip install
open_spiel``)::

    import pyspiel
    import frontends.openspiel_game  # registers python_tonk
    game = pyspiel.load_game("python_tonk(players=3,rules=hit_penalty)")

==========================  ==================================================
OpenSpiel                   Tonk
==========================  ==================================================
parameters                  ``players`` (2..6), ``rules`` (a preset name)
chance nodes                the shuffle: 52 chance moves, each the next card of
                            the deck from the cards left (uniform); then the
                            deal (the last seat deals, seat 0 plays first)
actions                     the engine's flat action table (540 ids, 580 with
                            ``ace_high``); ``action_to_string`` its strings
returns                     the hand's payoffs in stakes (terminal reward)
observation tensor          the observation of that seat (``tonk_env.obs``,
                            layout version ``OBS_VERSION``), named slices in ``dict``
observation string          the engine's text rendering for that seat
==========================  ==================================================

Information-state (perfect-recall) observations are not provided.
:class:`TonkBot` wraps any agent spec (``heuristic:expert``, ``ppo:RUN``,
...) as a ``pyspiel.Bot`` so OpenSpiel's evaluation code can seat our agents.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyspiel

from agents.registry import make_agent
from tonk_env.engine import (
    OVER,
    GameState,
    TonkRules,
    make_rules,
    new_game,
    render,
)
from tonk_env.engine.actions import action_table
from tonk_env.engine.cards import card_to_string
from tonk_env.obs import obs_layout, observation
from tonk_env.play import decide, start_hand

SHORT_NAME = "python_tonk"
DEFAULT_PARAMS = {"players": 2, "rules": "standard"}

GAME_TYPE = pyspiel.GameType(
    short_name=SHORT_NAME,
    long_name="Tonk (Tonk RL engine)",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=6,
    min_num_players=2,
    provides_information_state_string=False,
    provides_information_state_tensor=False,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification=DEFAULT_PARAMS,
)


class TonkGame(pyspiel.Game):
    """The OpenSpiel game of a Tonk table (one hand)."""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        p = {**DEFAULT_PARAMS, **(params or {})}
        self.rules = make_rules(str(p["rules"]))
        self.n = int(p["players"])
        self.rules.check_players(self.n)
        r = self.rules
        bound = max(2.0, r.tonk_out_pay, r.run_out_pay, r.instant_win_pay) * (self.n - 1)
        info = pyspiel.GameInfo(
            num_distinct_actions=action_table(r.ace_high).size,
            max_chance_outcomes=52,
            num_players=self.n,
            min_utility=-bound,
            max_utility=bound,
            utility_sum=0.0,
            max_game_length=52 + r.max_turns * (r.hand_size + 3),
        )
        super().__init__(GAME_TYPE, info, p)

    def new_initial_state(self) -> TonkState:
        """A state before the shuffle."""
        return TonkState(self)

    def make_py_observer(self, iig_obs_type: Any = None, params: Any = None) -> TonkObserver:
        """The observer of one seat's observation (not perfect recall)."""
        if iig_obs_type is not None and iig_obs_type.perfect_recall:
            raise ValueError("python_tonk provides no perfect-recall (information state) observations")
        if params:
            raise ValueError(f"python_tonk observers take no parameters; got {params}")
        return TonkObserver(self.n)


class _Hand:
    """The Python part of a state; OpenSpiel clones it with deepcopy, done here with ``GameState.copy``."""

    __slots__ = ("rules", "n", "order", "s")

    def __init__(self, rules: TonkRules, n: int) -> None:
        self.rules = rules
        self.n = n
        self.order: list[int] = []
        self.s: GameState | None = None

    def __deepcopy__(self, memo: dict[int, Any]) -> _Hand:
        other = _Hand(self.rules, self.n)
        other.order = list(self.order)
        other.s = None if self.s is None else self.s.copy()
        return other


class TonkState(pyspiel.State):
    """A hand in progress: the shuffle so far, then the engine's :class:`GameState`."""

    def __init__(self, game: TonkGame) -> None:
        super().__init__(game)
        self.hand = _Hand(game.rules, game.n)

    @property
    def s(self) -> GameState | None:
        """The engine state (None during the shuffle)."""
        return self.hand.s

    @property
    def order(self) -> list[int]:
        """The deck so far, top first."""
        return self.hand.order

    @property
    def rules(self) -> TonkRules:
        """The rules of the table."""
        return self.hand.rules

    @property
    def n(self) -> int:
        """The number of players."""
        return self.hand.n

    def current_player(self) -> int:
        """The seat to act, CHANCE during the shuffle, TERMINAL once the hand is over."""
        if self.s is None:
            return pyspiel.PlayerId.CHANCE
        if self.s.phase == OVER:
            return pyspiel.PlayerId.TERMINAL
        return self.s.cur

    def _legal_actions(self, player: int) -> list[int]:
        assert self.s is not None and player == self.s.cur
        return self.s.legal_actions()

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """The next card of the deck: any card not placed yet, uniformly."""
        left = sorted(set(range(52)) - set(self.order))
        return [(c, 1.0 / len(left)) for c in left]

    def _apply_action(self, action: int) -> None:
        if self.s is None:
            self.order.append(action)
            if len(self.order) == 52:
                self.hand.s = new_game(self.rules, self.n, deck=self.order, dealer=self.n - 1)
        else:
            self.s.play(action)

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return f"deck {card_to_string(action)}"
        return action_table(self.rules.ace_high).name(action)

    def is_terminal(self) -> bool:
        """Whether the hand is over."""
        return self.s is not None and self.s.phase == OVER

    def returns(self) -> list[float]:
        """The payoffs in stakes once the hand is over (zeros before)."""
        if self.s is None or self.s.result is None:
            return [0.0] * self.n
        return [float(x) for x in self.s.result.payoffs]

    def __str__(self) -> str:
        if self.s is None:
            return f"shuffling: {' '.join(card_to_string(c) for c in self.order)}"
        return render(self.s)


class TonkObserver:
    """OpenSpiel's PyObserver: the engine's observation tensor with its named slices."""

    def __init__(self, n: int) -> None:
        lay = obs_layout(n)
        self.tensor = np.zeros(lay.size, np.float32)
        self.dict = {name: self.tensor[sl] for name, sl in lay.slices.items()}

    def set_from(self, state: TonkState, player: int) -> None:
        """Fill the tensor with ``player``'s observation (zeros during the shuffle)."""
        if state.s is None:
            self.tensor.fill(0)
        else:
            observation(state.s, player, out=self.tensor)

    def string_from(self, state: TonkState, player: int) -> str:
        """The text rendering of the table as ``player`` sees it."""
        if state.s is None:
            return f"shuffling ({len(state.order)} of 52 cards placed)"
        return render(state.s, player)


class TonkBot(pyspiel.Bot):
    """A Tonk agent (any spec string) playing one seat of ``python_tonk`` as an OpenSpiel bot."""

    def __init__(self, spec: str, player: int, seed: int | None = None) -> None:
        super().__init__()
        self.agent = make_agent(spec, seed=seed)
        self.player = player
        self._hand: int | None = None

    def restart_at(self, state: TonkState) -> None:
        """Get ready for a new hand."""
        self._hand = None

    def step(self, state: TonkState) -> int:
        """The agent's action for the seat to act."""
        s = state.s
        assert s is not None and s.cur == self.player
        key = hash((tuple(s.deck), s.dealer))
        if self._hand != key:
            start_hand({self.player: self.agent}, s.n, s.rules)
            self._hand = key
        return decide(self.agent, s)


pyspiel.register_game(GAME_TYPE, TonkGame)
