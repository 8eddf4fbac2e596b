"""
# Tonk

| Import             | `from tonk_env import env`                             |
|--------------------|--------------------------------------------------------|
| Actions            | Discrete                                               |
| Parallel API       | No                                                     |
| Manual Control     | No (play by text with `action_from_string`)            |
| Agents             | `agents = ['player_0', ..., 'player_{n-1}']`           |
| Agents             | 2 to 6 (best with 2 to 4)                              |
| Action Shape       | Discrete(540) (580 with `ace_high`)                    |
| Action Values      | 0 .. 539 (0 .. 579 with `ace_high`)                    |
| Observation Shape  | (52 * (3n + 2) + 6n + 14,): 442 for 2 players, 604 for 3, 766 for 4 |
| Observation Values | [0, 1], except `hand_count` and `opp_estimate` in [0, (hand_size + 1) * 10 / 50] |

Tonk (Tunk) is a knock-rummy for 2 to 6 players: draw or take the top
discard, lay spreads (books and runs) and hit spreads on the table, discard
one card; empty your hand to *tonk out*, or *drop* when you believe your
hand counts lowest. The rules are in `docs/RULES.md`; `rules` picks a preset
(`standard`, `hit_penalty`, `full_waiting`, `seven_card`, `low_tonk`,
`no_upcard`) or takes a `TonkRules`, and keyword options change single rule
options (the names in RULES.md), e.g. `env(3, "standard", hit_wait=1)`.

```python
from tonk_env import env
e = env(num_players=2, rules="standard")
e.reset(seed=42)
for agent in e.agent_iter():
    obs, reward, termination, truncation, info = e.last()
    if termination or truncation:
        action = None
    else:
        action = e.action_space(agent).sample(obs["action_mask"])
    e.step(action)
```

### Observation Space

A dictionary: `'observation'` is the float32 tensor (`tonk_env.obs`) from the
observing seat's point of view (seats are ordered relative to the observer:
offset 0 is the observer), and `'action_mask'` the legal actions.

| slice         | size       | content                                                  |
|---------------|------------|----------------------------------------------------------|
| `hand`        | 52         | 1 for each card in my hand                               |
| `top_discard` | 52         | one-hot top card of the discard pile                     |
| `discarded`   | 52         | every card that has been on the discard pile             |
| `known`       | (n-1) * 52 | per opponent: cards known to be in their hand (taken from the pile) |
| `spreads`     | n * 52     | cards on the table by spread owner                       |
| `hand_sizes`  | n          | cards in each hand / 10                                  |
| `stock_size`  | 1          | cards in the stock / 52                                  |
| `waits`       | n          | turns each seat may not drop, min(w, 10) / 10            |
| `phase`       | 2          | one-hot: start of turn, play phase (both 0 once over)    |
| `hand_count`  | 1          | my count / 50 (up to 1.2 with 5 cards, 1.6 with 7)       |
| `turn`        | 1          | turns played / `max_turns`                               |
| `count_below` | 11         | 1 where my count <= t, t in 3 5 7 9 11 13 15 18 21 25 30 |
| `opp_estimate`| n-1        | per opponent: estimated count / 50 (known cards + mean of the unseen) |
| `opp_turns`   | n-1        | per opponent: turns it drew or took a card, min(k, 20) / 20 |
| `opp_discard` | n-1        | per opponent: value of its latest discard / 10           |
| `opp_above`   | n-1        | per opponent: P(its count is above mine), opponent model of `tonk_env.odds` |
| `drop_win`    | 1          | P(a drop by me now wins): the product of `opp_above`     |
| `top_fits`    | 1          | 1 if the top discard makes a spread with my hand or hits the table |
| `thrown`      | n*52       | per seat: every card it discarded                        |

`tonk_env.obs.obs_layout(n)` names the slices in code; `tonk_env/obs.py`
documents each one.

#### Legal Actions Mask

`'action_mask'` is an int8 vector over the action table, 1 = legal. It is
all zeros for every agent except the one to act, whose mask is never all
zero. By default an illegal action raises `IllegalActionError` (a
`ValueError`) naming the action, the agent and the legal actions; with
`illegal_action="penalize"` it ends the hand instead, the offender gets
`illegal_penalty` (default -1) × `reward_scale` and everyone else 0, and the
infos say `result_kind: "illegal_action"`.

### Action Space

One flat table (`tonk_env.engine.actions`); `env.unwrapped.action_to_string`
and `action_from_string` translate ids and text such as `"discard 4S"`.

| ids      | action              |
|----------|---------------------|
| 0        | `drop`              |
| 1        | `draw` (from an empty stock it ends the hand, RULES §4) |
| 2        | `take` the top discard |
| 3..54    | `discard C` (`3 + card`) |
| 55..106  | `hit C on B`: 4th card of a book |
| 107..158 | `hit C on L`: above the high end of a run |
| 159..210 | `hit C on H`: below the low end of a run |
| 211..275 | `spread` a book (3 or 4 of a rank) |
| 276..    | `spread` a run (66 per suit, 76 with `ace_high`) |

A turn is several actions: drop, draw or take; then spreads and hits; then
one discard, which passes the turn (the agent selection follows the engine).

### Rewards

Zero until the hand ends; then every agent receives its payoff in stakes ×
`reward_scale` (zero-sum): tonk out +2 from each other player, run out +1,
a won drop +1, a caught dropper pays 2 to each player at or below its count,
stock exhausted or `max_turns` reached +1 to the lowest count, instant win +2
(see RULES §5 and the rules options).

At the end every `infos[agent]` holds the keys `tonk_env.outcome.STEP_INFO_KEYS`:
`result_kind`, `payoffs` (stakes, per seat, floats), `counts`, `ended_by` (the
seat that ended it, -1 at `max_turns` or a void deal), `detail` and `turns`,
plus `action` (the illegal action under `illegal_action="penalize"`, else -1).
Before the end the infos are empty with `infos="end"` (the default: TorchRL's
`PettingZooWrapper` turns the infos after `reset()` into tensor specs, and text
values cannot be tensors), or, with `infos="every_step"`, hold the same keys
with the neutral values `""`, `0.0` per seat, `0` per seat, `-1`, `""`, `0` and
`-1` (`tonk_env.outcome.neutral_info`), so libraries that stack every step's
infos into arrays (Tianshou's buffer) find no gaps.

A hand that ends at the deal (instant win, void; about 1 deal in 100 with 2
players) is over right after `reset()` with `early_end="deliver"` (the
default): every agent is terminated with its reward, so PettingZoo's
`api_test` assertion "terminations all False after reset" does not hold for
those deals, and a collector that steps the first agent after `reset()`
(Tianshou's) fails on them. `early_end="redeal"` deals such hands again, so
`reset()` always leaves an agent to act: `env.skipped_hands` counts the deals
skipped by the latest `reset()` (`skipped_hands_total` since the env was made),
at most `max_redeals` (default 100) in a row, and a stacked deck whose hand ends
at the deal is a `ValueError`. Their payoffs are lost to the learners, but they
do not depend on any decision. Terminations are the only ending; truncations
stay False (the `max_turns` limit is a scored ending and the turn is observed).

### Arguments

`env(num_players=2, rules="standard", render_mode=None, reward_scale=1.0,
illegal_action="raise", illegal_penalty=-1.0, render_seat=0, early_end="deliver",
max_redeals=100, infos="end", **rule_options)`.
`reset(seed=None, options={"deck": ..., "dealer": ...})` stacks the deck
(card list or space-separated string, top first, completed at random from the
seed) and chooses the dealer (default the last seat, so `player_0` acts
first). A seeded reset rebuilds nothing: the rules stay the env's.

`env.unwrapped` also offers `action_from_string(text)` / `action_to_string(a)`
for the agent to act, `view(agent)` (the engine's JSON view), `record()` (the
hand's JSON record) and `game` (the engine state; read, never change it).
Render modes: `"ansi"` returns the table as text, `"human"` prints it,
`"rgb_array"` returns a picture of it (uint8, 480 x 640 x 3; `tonk_env.frames`)
from the view of `render_seat` (default 0): its hand face up, the others face
down until the hand is over.

### Speed and checks

The env runs on the compiled core (:mod:`tonk_env.core`): the rules, the legal
mask and the observation tensor of each decision are numba kernels over one
row of integers, and the engine (:mod:`tonk_env.engine`, the specification the
core is checked against) is replayed from the deal and the actions only when
something asks for it: ``game``, ``view``, ``record``, ``render``, the action
strings and an illegal action's message (the end-of-hand infos are the core's
own record of how the hand ended). PettingZoo's
``OrderEnforcingWrapper`` and ``AssertOutOfBoundsWrapper`` are built in rather
than wrapped around it (their ``__getattr__`` chains cost more than a Tonk
move): ``step``, ``observe``, ``render`` and ``agent_iter`` before ``reset()``
raise the wrappers' errors, ``rewards``/``agents``/... before ``reset()`` are
``AttributeError``, and an action outside the action space raises
:class:`ActionOutOfBoundsError`, both an ``AssertionError`` (as the wrapper's)
and an ``IllegalActionError``. ``env()`` and ``raw_env()`` are the same env.

### Version History

* v0: Initial release: observation v3 (`tonk_env.obs.OBS_VERSION`), 540/580 actions.
  Runs on the compiled core: the same deals, observations, masks, rewards and infos as before.
"""

from __future__ import annotations

import warnings
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from pettingzoo import AECEnv
from pettingzoo.utils.env import AECIterable
from pettingzoo.utils.env_logger import EnvLogger

from .agent import action_id
from .core.batch import BatchGames
from .engine import (
    IllegalActionError,
    TonkRules,
    action_from_string,
    action_table,
    action_to_string,
    deal_order,
    make_rules,
    parse_cards,
    render,
    shuffled_deck,
    to_record,
    view,
)
from .engine.state import GameState
from .frames import frame_for
from .obs import obs_layout
from .outcome import illegal_info, neutral_info, step_info
from .play import illegal_message
from .settings import (
    check_early_end,
    check_illegal_action,
    check_infos,
    check_max_redeals,
    check_render_mode,
    check_reward_scale,
)
from .spaces import mask_box, observation_box

__all__ = ["ActionOutOfBoundsError", "env", "raw_env"]


class ActionOutOfBoundsError(IllegalActionError, AssertionError):
    """An action outside the action space: an ``AssertionError`` as PettingZoo's
    ``AssertOutOfBoundsWrapper`` raises, and an :class:`IllegalActionError`."""


def env(num_players: int = 2, rules: str | TonkRules = "standard", **kwargs: Any) -> AECEnv:
    """The Tonk AEC env, PettingZoo's order and bounds checks built in (see the module docstring)."""
    return raw_env(num_players, rules, **kwargs)


class raw_env(AECEnv):  # lower case: PettingZoo's naming
    """Tonk as a PettingZoo AEC env on the compiled core (see the module docstring)."""

    metadata = {
        "name": "tonk_v0",
        "render_modes": ["ansi", "human", "rgb_array"],
        "render_fps": 4,
        "is_parallelizable": False,
    }

    def __init__(
        self,
        num_players: int = 2,
        rules: str | TonkRules = "standard",
        render_mode: str | None = None,
        reward_scale: float = 1.0,
        illegal_action: str = "raise",
        illegal_penalty: float = -1.0,
        render_seat: int = 0,
        early_end: str = "deliver",
        max_redeals: int = 100,
        infos: str = "end",
        **rule_options: Any,
    ) -> None:
        super().__init__()
        self.rules = make_rules(rules, **rule_options)
        self.rules.check_players(num_players)
        self.num_players = num_players
        self.render_mode = check_render_mode(render_mode)
        if (
            isinstance(render_seat, bool)
            or not isinstance(render_seat, int)
            or not 0 <= render_seat < num_players
        ):
            raise ValueError(f"render_seat must be a seat 0..{num_players - 1}, got {render_seat!r}")
        self.render_seat = render_seat
        """The seat whose view ``rgb_array`` frames show (the others' hands face down until the end)."""
        self.reward_scale = check_reward_scale(reward_scale)
        self.illegal_penalty = check_illegal_action(illegal_action, illegal_penalty)
        self.illegal_action = illegal_action
        self.early_end = check_early_end(early_end)
        self.info_mode = check_infos(infos)
        self.max_redeals = check_max_redeals(max_redeals)
        self.skipped_hands = 0
        """Hands dealt again by the latest ``reset()`` (``early_end="redeal"``)."""
        self.skipped_hands_total = 0
        """Hands dealt again since the env was made."""
        self.possible_agents = [f"player_{i}" for i in range(num_players)]
        self._seat = {a: i for i, a in enumerate(self.possible_agents)}
        obs_box = observation_box(self.rules, num_players)
        self.observation_spaces = {
            a: spaces.Dict({"observation": obs_box, "action_mask": mask_box(self.rules)})
            for a in self.possible_agents
        }
        self._num_actions = action_table(self.rules.ace_high).size
        self.action_spaces: dict[str, spaces.Discrete] = {
            a: spaces.Discrete(self._num_actions) for a in self.possible_agents
        }
        self.np_random: np.random.Generator | None = None
        # the compiled core: one game's row and the rules' vectors
        self._core = BatchGames(self.rules, num_players, 1)
        self._pay = self._core.payoffs
        self._obs_size = obs_layout(num_players).size
        self._legal = np.zeros(self._num_actions, dtype=np.int8)  # the acting seat's mask, kept current
        self._no_legal = np.zeros(self._num_actions, dtype=np.int8)
        # the hand as the engine replays it: deal, dealer, actions so far
        self._deck: list[int] = []
        self._dealer = num_players - 1
        self._actions: list[int] = []
        self._game: GameState | None = None  # the replayed engine state, while it is current
        self._has_reset = False
        self._done = True

    # -- PettingZoo API ------------------------------------------------------------------------

    def observation_space(self, agent: str) -> spaces.Space:
        """The observation space of ``agent`` (the same object every call)."""
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        """The action space of ``agent`` (the same object every call)."""
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Deal a new hand; ``options`` may hold ``deck`` (stacked, top first) and ``dealer``."""
        if seed is not None or self.np_random is None:
            self.np_random, _ = seeding.np_random(seed)
        n = self.num_players
        deck = None
        dealer = n - 1
        if options:
            unknown = sorted(k for k in options if k not in ("deck", "dealer"))
            if unknown:
                msg = f"tonk_v0 reset: ignoring unknown options {unknown} (known: deck, dealer)"
                warnings.warn(msg, stacklevel=2)
            deck = options.get("deck")
            d = options.get("dealer")
            if d is not None:
                if isinstance(d, bool) or not isinstance(d, int) or not 0 <= d < n:
                    raise ValueError(f"dealer must be a seat 0..{n - 1}, got {d!r}")
                dealer = d
        stacked = parse_cards(deck) if deck is not None else ()
        self.skipped_hands = 0
        while True:
            over = self._deal(shuffled_deck(self.np_random, stacked), dealer)
            if not over or self.early_end == "deliver":
                break
            if deck is not None:
                raise ValueError(
                    f"tonk_v0 reset: the stacked deck's hand ends at the deal ({self._result_kind()}); "
                    "early_end='redeal' cannot deal it again (early_end='deliver' delivers it)"
                )
            self.skipped_hands += 1
            if self.skipped_hands > self.max_redeals:
                raise RuntimeError(f"tonk_v0 reset: {self.skipped_hands} deals in a row ended at the deal")
        self.skipped_hands_total += self.skipped_hands
        self._has_reset = True
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        every = self.info_mode == "every_step"
        self.infos: dict[str, dict[str, Any]] = {a: neutral_info(n) if every else {} for a in self.agents}
        self._skip_agent_selection = None
        self._done = False
        if over:
            self._end_hand()
        else:
            self._after_move()
        if self.render_mode == "human":
            self.render()

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """``agent``'s observation tensor and action mask (fresh arrays every call)."""
        if not self._has_reset:
            EnvLogger.error_observe_before_reset()
        seat = self._seat[agent]
        obs = self._core.observe_seat(0, seat, np.empty(self._obs_size, dtype=np.float32))
        mask = self._legal if not self._done and self._core.acting_seat(0) == seat else self._no_legal
        return {"observation": obs, "action_mask": mask.copy()}

    def step(self, action: Any) -> None:
        """Play ``action`` for the agent to act (``None`` for a terminated agent)."""
        if not self._has_reset:
            EnvLogger.error_step_before_reset()
        if not self.agents:
            EnvLogger.warn_step_after_terminated_truncated()
            return
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        a = action if type(action) is int else self._action_id(action)
        if not 0 <= a < self._num_actions:
            raise ActionOutOfBoundsError(
                f"{agent} played action {action!r}, outside the action space "
                f"Discrete({self._num_actions}) (ids 0..{self._num_actions - 1})"
            )
        if not self._legal[a]:
            if self.illegal_action == "raise":
                raise IllegalActionError(illegal_message(self._state(), agent, a))
            seat = self._seat[agent]
            pay = [self.illegal_penalty if i == seat else 0.0 for i in range(self.num_players)]
            self._finish(illegal_info(seat, a, self.illegal_penalty, self.num_players), pay)
        else:
            self._actions.append(a)
            self._game = None
            if self._core.step_one(0, a):
                self._end_hand()
            else:
                self._after_move()
        if self.render_mode == "human":
            self.render()

    def agent_iter(self, max_iter: int = 2**63) -> AECIterable:
        """Yield the agent to act until every agent is done (PettingZoo's iterator)."""
        if not self._has_reset:
            EnvLogger.error_agent_iter_before_reset()
        return AECIterable(self, max_iter)

    def render(self) -> str | np.ndarray | None:
        """The table: text with every hand (``ansi`` returns it, ``human`` prints it) or a picture.

        An ``rgb_array`` frame (uint8, 480 x 640 x 3) shows the table from
        ``render_seat``'s view: the other hands face down until the hand ends.
        """
        if self.render_mode is None:
            gymnasium.logger.warn(
                "render() called without a render_mode; pass render_mode='ansi', 'human' or 'rgb_array'"
            )
            return None
        if not self._has_reset:
            EnvLogger.error_render_before_reset()
        if self.render_mode == "rgb_array":
            return frame_for(self._state(), self.render_seat)
        text = render(self._state())
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        """Nothing to release."""

    # -- conveniences --------------------------------------------------------------------------

    @property
    def game(self) -> GameState | None:
        """The engine state of the current hand, replayed from the deal (read it; never change it)."""
        if not self._has_reset:
            return None
        g = self._game
        if g is None:
            g = deal_order(self.rules, self.num_players, self._deck, self._dealer)
            for a in self._actions:
                g.play(a)
            self._game = g
        return g

    def action_from_string(self, text: str) -> int:
        """Parse an action string (``"draw"``, ``"discard 4S"``, ...) for the agent to act."""
        return action_from_string(self._state(), text)

    def action_to_string(self, action: int) -> str:
        """The string of an action id in the current state."""
        return action_to_string(self._state(), action_id(action))

    def view(self, agent: str | None = None) -> dict[str, Any]:
        """The engine's JSON view of ``agent``'s seat (default: the agent to act)."""
        return view(self._state(), self._seat[agent if agent is not None else self.agent_selection])

    def record(self) -> dict[str, Any]:
        """The JSON record of the current hand (see ``tonk_env.engine.record``)."""
        return to_record(self._state())

    def seat(self, agent: str) -> int:
        """The engine seat of an agent name."""
        return self._seat[agent]

    # -- internals -----------------------------------------------------------------------------

    def _result_kind(self) -> str:
        """The result kind of the hand just dealt (replayed from the deal: the env may not be reset yet)."""
        r = deal_order(self.rules, self.num_players, self._deck, self._dealer).result
        return r.kind if r is not None else "over"

    def _deal(self, order: list[int], dealer: int) -> bool:
        """Deal ``order`` (top first) on the core; whether the hand is already over."""
        self._deck = order
        self._dealer = dealer
        self._actions = []
        self._game = None
        return self._core.deal(0, np.array(order, dtype=np.int64), dealer)

    def _state(self) -> GameState:
        g = self.game
        if g is None:
            raise RuntimeError("no hand dealt yet; call reset()")
        return g

    def _action_id(self, action: Any) -> int:
        """``action`` as an int; out-of-space values (floats, arrays) fail as the bounds wrapper's."""
        try:
            return action_id(action)
        except IllegalActionError:
            raise ActionOutOfBoundsError(
                f"an action must be an integer id in 0..{self._num_actions - 1} "
                f"(use action_from_string for text), got {action!r}"
            ) from None

    def _after_move(self) -> None:
        """The hand goes on: the next agent and its legal mask."""
        self._core.legal_mask(0, self._legal)
        self.agent_selection = self.possible_agents[self._core.acting_seat(0)]

    def _end_hand(self) -> None:
        """The hand ended by the rules: the payoffs and how it ended, as the core recorded them."""
        self._finish(self._core.result_info(0), self._pay[0, : self.num_players].tolist())

    def _finish(self, info: dict[str, Any], payoffs: Any) -> None:
        """Terminate every agent with its reward and the result in its info."""
        self._done = True
        scale = self.reward_scale
        for i, agent in enumerate(self.possible_agents):
            r = float(payoffs[i]) * scale
            self.rewards[agent] = r
            self._cumulative_rewards[agent] += r
            self.terminations[agent] = True
            self.infos[agent] = step_info(self.num_players, info)
        self.agent_selection = self.possible_agents[0]
