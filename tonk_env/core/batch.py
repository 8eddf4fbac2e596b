"""``BatchGames``: the compiled core's host: the rule vectors and a batch of games, on preallocated arrays.

One game per row of the state array (:mod:`tonk_env.core.layout`). The
object holds everything the kernels read: the rule vectors (``P``, ``F``,
``instant``, the spread ``shapes`` and ``suit_runs``, the opponent model's
``above`` table, the card ``values`` and ``suit_value`` tables), the games'
rows (``state``, ``payoffs``) and their seeded-deal ``counters``. Its methods
are the one way to run the kernels; the envs (the AEC env, the vector env),
the search and the differential check all use it.

``step(actions)`` plays one action for the acting seat of every game, writes
per-seat ``rewards`` (the payoffs of hands that ended) and ``dones``, and
deals finished games again from their own seeded deals. Seeded deals follow
one convention (:mod:`tonk_env.core.seeding`): ``counters[g]`` counts the
seeded deals game ``g`` has had since the seed, so its current one is
``deck_of(g, counters[g] - 1)`` and any deal can be replayed through the
engine with ``new_game(rules, n, deck=batch.deck_of(g, k))``; a deal from a
given deck counts no seeded deal. A deal that ends at once (an instant win or
a void deal) has no decision: the auto-reset adds its payoffs to the same
step's rewards and deals again.

Words: *batch* is this object (every seat of many games, all stepped at
once); *vector* is the Gymnasium vector env (:mod:`tonk_env.vector`: one
learner seat in each game); *vec* is SB3's ``VecEnv`` in ``train/``.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np

from ..engine.actions import DISCARD, TAKE, action_table
from ..engine.cards import SUIT_VALUE, VALUES, hand_value
from ..engine.rules import TonkRules, make_rules
from ..engine.state import RESULT_KINDS, GameState
from ..obs import obs_layout
from ..odds import SELECTION, above_table
from .drivers import (
    apply_rows,
    masks_batch,
    observe_batch,
    observe_rows,
    observe_seats,
    privileged_seats,
    redeal_rows,
    step_batch,
    step_observe_batch,
)  # fmt: skip
from .layout import (
    C_ADDS,
    C_BOOKT,
    C_CUR,
    C_DECK,
    C_DISC,
    C_END_DETAIL,
    C_END_KIND,
    C_END_SEAT,
    C_HANDS,
    C_HIGHT,
    C_KNOWN,
    C_LAST,
    C_LOWT,
    C_NSP,
    C_OWNER,
    C_PHASE,
    C_PILE,
    C_PILEN,
    C_PTR,
    C_SPHI,
    C_SPKEY,
    C_SPKIND,
    C_SPLO,
    C_SPMASK,
    C_SPOWNER,
    C_TAKEN,
    C_THROWN,
    C_TURN,
    C_WAITS,
    END_DETAILS,
    F_INSTANT_PAY,
    F_RUN_PAY,
    F_SELECTION,
    F_TONK_PAY,
    MAX_SEATS,
    MAX_SPREADS,
    NUM_COLS,
    NUM_FPARAMS,
    NUM_PARAMS,
    P_ACE_HIGH,
    P_ACTIONS,
    P_ANY_INSTANT,
    P_CAUGHT,
    P_HAND_SIZE,
    P_HIT_WAIT,
    P_INSTANT_TIE,
    P_LOW_MAX,
    P_MAX_TURNS,
    P_MAY_DISCARD_TAKEN,
    P_N,
    P_SPREAD_WAIT,
    P_STOCK_TIE,
    P_UPCARD,
    P_WAIT_CUMULATIVE,
    end_kind_name,
)  # fmt: skip
from .observe import observe_into
from .rules import apply_action, deal, legal_mask_into
from .seeding import seeded_deck

_SUIT_VALUE = np.array(SUIT_VALUE, dtype=np.int64)
_VALUES = np.array(VALUES, dtype=np.int64)


@cache
def above_array() -> np.ndarray:
    """The opponent model's table as a float64 array ``[hidden, extra, t + 1]`` (one per process)."""
    return np.array(above_table(), dtype=np.float64)


def rules_params(rules: TonkRules, num_players: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The kernels' rule vectors (int64 params, float64 params, instant-win table) for ``rules``."""
    if not isinstance(num_players, int) or not 2 <= num_players <= MAX_SEATS:
        raise ValueError(
            f"num_players: the compiled core supports 2..{MAX_SEATS} players, got {num_players!r}"
        )
    rules.check_players(num_players)
    P = np.zeros(NUM_PARAMS, dtype=np.int64)
    P[P_N] = num_players
    P[P_HAND_SIZE] = rules.hand_size
    P[P_UPCARD] = int(rules.upcard)
    P[P_ACE_HIGH] = int(rules.ace_high)
    P[P_MAY_DISCARD_TAKEN] = int(rules.may_discard_taken)
    P[P_MAX_TURNS] = rules.max_turns
    P[P_SPREAD_WAIT] = rules.spread_wait
    P[P_HIT_WAIT] = rules.hit_wait
    P[P_WAIT_CUMULATIVE] = int(rules.wait_cumulative)
    P[P_CAUGHT] = ("standard", "double_to_lowest_only", "everyone_double").index(rules.caught_pay)
    P[P_STOCK_TIE] = ("void", "split").index(rules.stock_out_tie)
    P[P_INSTANT_TIE] = ("void", "rank").index(rules.instant_win_tie)
    P[P_LOW_MAX] = -1 if rules.instant_win_low_max is None else rules.instant_win_low_max
    P[P_ANY_INSTANT] = int(bool(rules.instant_win_totals) or rules.instant_win_low_max is not None)
    P[P_ACTIONS] = action_table(rules.ace_high).size
    F = np.zeros(NUM_FPARAMS, dtype=np.float64)
    F[F_INSTANT_PAY] = rules.instant_win_pay
    F[F_TONK_PAY] = rules.tonk_out_pay
    F[F_RUN_PAY] = rules.run_out_pay
    F[F_SELECTION] = SELECTION
    instant = np.zeros(200, dtype=np.bool_)
    for t in rules.instant_win_totals:
        if 0 <= t < 200:
            instant[t] = True
    return P, F, instant


def action_shapes(ace_high: bool) -> tuple[np.ndarray, np.ndarray]:
    """Spread shapes ``[mask, kind, key, lo, hi]`` of the action table and each suit's run range."""
    t = action_table(ace_high)
    shapes = np.array([[s.mask, s.kind, s.key, s.lo, s.hi] for s in t.spreads], dtype=np.int64)
    suit_runs = np.array(
        [[65 + s * t.runs_per_suit, 65 + (s + 1) * t.runs_per_suit] for s in range(4)], dtype=np.int64
    )
    return shapes, suit_runs


def check_decks(decks: Any, count: int) -> np.ndarray:
    """``options["decks"]`` of a reset checked: one full deck (top first) per game; int64 ``(count, 52)``."""
    d = np.asarray(decks)
    if d.shape != (count, 52) or d.dtype.kind not in "iu":
        raise ValueError(f"options['decks'] must be integers of shape ({count}, 52), got {d.dtype} {d.shape}")
    want = np.arange(52)
    for g in range(count):
        if not np.array_equal(np.sort(d[g]), want):
            raise ValueError(f"options['decks'][{g}] is not a deck: it needs each card 0..51 once")
    return d.astype(np.int64)


class BatchGames:
    """``batch_size`` hands of Tonk under one ruleset, on preallocated arrays (see the module docstring)."""

    def __init__(
        self,
        rules: TonkRules | str | None,
        num_players: int,
        batch_size: int,
        seed: int = 0,
        deal: bool = True,
    ) -> None:
        self.rules = make_rules(rules) if isinstance(rules, str) else (rules or make_rules())
        self.n = num_players
        self.batch_size = int(batch_size)
        if self.batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size!r}")
        self.P, self.F, self.instant = rules_params(self.rules, num_players)
        self.shapes, self.suit_runs = action_shapes(self.rules.ace_high)
        self.above = above_array()
        #: card values by card id, and suit-pattern counts (13-bit pattern -> count), for the kernels
        self.values, self.suit_value = _VALUES, _SUIT_VALUE
        self.num_actions = int(self.P[P_ACTIONS])
        self.max_spreads = MAX_SPREADS
        self.obs_size = obs_layout(num_players).size
        self.seed = int(seed)
        self.dealer = num_players - 1
        self.state = np.zeros((self.batch_size, NUM_COLS), dtype=np.int64)
        self.payoffs = np.zeros((self.batch_size, MAX_SEATS), dtype=np.float64)
        #: seeded deals each game has had since the seed (its next one is number ``counters[g]``)
        self.counters = np.zeros(self.batch_size, dtype=np.int64)
        self.rewards = np.zeros((self.batch_size, num_players), dtype=np.float64)
        self.dones = np.zeros(self.batch_size, dtype=np.bool_)
        #: every game's legal ids (ascending) and their number, written by :meth:`legal_masks`
        self.legal_ids = np.zeros((self.batch_size, self.num_actions), dtype=np.int64)
        self.legal_counts = np.zeros(self.batch_size, dtype=np.int64)
        self._rows = np.arange(self.batch_size, dtype=np.int64)
        if deal:
            self.reset()

    # -- deals ---------------------------------------------------------------------------------

    def reseed(self, seed: int) -> None:
        """Restart the seeded deals from ``seed`` (every game's next deal is its first)."""
        self.seed = int(seed)
        self.counters[:] = 0

    def deck_of(self, game: int, index: int) -> list[int]:
        """The deck (top first) of game ``game``'s ``index``-th seeded deal."""
        out = np.empty(52, dtype=np.int64)
        seeded_deck(self.seed, game, index, out)
        return out.tolist()

    def reset(self, decks: np.ndarray | None = None, auto_skip: bool = True) -> np.ndarray:
        """Deal every game: from ``decks`` (``[batch, 52]``, top first) or its next seeded deal.

        Returns a bool array: which games' deals ended at once (only with ``decks``
        or ``auto_skip=False``; otherwise such deals are skipped).
        """
        if decks is None:
            dealers = np.full(self.batch_size, self.dealer, dtype=np.int64)
            return self.deal_next(self._rows, dealers, skip=auto_skip)
        over = np.zeros(self.batch_size, dtype=np.bool_)
        for g in range(self.batch_size):
            over[g] = self.deal(g, np.asarray(decks[g], dtype=np.int64))
        return over

    def deal(self, game: int, deck: np.ndarray, dealer: int | None = None) -> bool:
        """Deal one game from a deck (top first), as ``new_game(rules, n, deck=deck, dealer=dealer)``."""
        d = self.dealer if dealer is None else dealer
        return bool(deal(self.state, self.payoffs, game, deck, d, self.P, self.F, self.instant, _SUIT_VALUE))

    def deal_next(self, games: np.ndarray, dealers: np.ndarray, skip: bool = False) -> np.ndarray:
        """Deal each game ``g`` of ``games`` its next seeded deal from dealer ``dealers[g]``.

        Returns which deals ended at once (row ``i`` for ``games[i]``); with
        ``skip`` such deals are dealt again until one has a decision.
        """
        over = np.zeros(len(games), dtype=np.bool_)
        redeal_rows(
            self.state, self.payoffs, games, self.seed, self.counters, dealers, skip,
            self.P, self.F, self.instant, _SUIT_VALUE, over,
        )  # fmt: skip
        return over

    # -- masks and observations ----------------------------------------------------------------

    def legal_masks(self, out: np.ndarray | None = None, count: int | None = None) -> np.ndarray:
        """Write every game's legal-action mask (int8 ``[batch, actions]``) and return it.

        The same call writes the legal ids, ascending, into ``legal_ids[g, :legal_counts[g]]``.
        ``count``: only the first ``count`` games (``out`` then has ``count`` rows).
        """
        k = self.batch_size if count is None else count
        if out is None:
            out = np.zeros((k, self.num_actions), dtype=np.int8)
        masks_batch(
            self.state[:k], self.P, self.shapes, self.suit_runs, out, self.legal_ids, self.legal_counts
        )
        return out

    def legal_mask(self, game: int, out: np.ndarray) -> int:
        """Write game ``game``'s legal actions as 0/1 into ``out`` (int8); returns how many."""
        return int(legal_mask_into(self.state, game, self.P, self.shapes, self.suit_runs, out))

    def observe(self, out: np.ndarray | None = None, count: int | None = None) -> np.ndarray:
        """Write the acting seat's observation of every game (float32 ``[batch, obs]``) and return it.

        ``count``: only the first ``count`` games (``out`` then has ``count`` rows).
        """
        k = self.batch_size if count is None else count
        if out is None:
            out = np.zeros((k, self.obs_size), dtype=np.float32)
        observe_batch(self.state[:k], self.P, self.F, self.above, _SUIT_VALUE, out)
        return out

    def observe_seat(self, game: int, seat: int, out: np.ndarray) -> np.ndarray:
        """Write ``seat``'s observation of game ``game`` into ``out`` (float32) and return it."""
        observe_into(self.state, game, seat, self.P, self.F, self.above, _SUIT_VALUE, out)
        return out

    def observe_seats(self, games: np.ndarray, seats: np.ndarray, out: np.ndarray) -> None:
        """Write seat ``seats[g]``'s observation of each game ``g`` of ``games`` into ``out[g]``."""
        observe_seats(self.state, games, seats, self.P, self.F, self.above, _SUIT_VALUE, out)

    def observe_rows(self, games: np.ndarray, obs: np.ndarray, masks: np.ndarray) -> None:
        """Row ``i`` of ``obs`` and ``masks``: the acting seat's observation and mask of ``games[i]``."""
        observe_rows(
            self.state,
            games,
            self.P,
            self.F,
            self.above,
            _SUIT_VALUE,
            obs,
            masks,
            self.shapes,
            self.suit_runs,
        )

    def privileged(self, games: np.ndarray, seats: np.ndarray, out: np.ndarray) -> None:
        """Write the privileged features (``tonk_env.obs``) of games ``g`` in ``games`` from ``seats[g]``."""
        privileged_seats(self.state, games, seats, self.P, _SUIT_VALUE, out)

    def current_players(self) -> np.ndarray:
        """The acting seat of every game."""
        return self.state[:, C_CUR].copy()

    def acting_seat(self, game: int) -> int:
        """The seat to act in game ``game``."""
        return int(self.state[game, C_CUR])

    def acting_seats(self, games: np.ndarray) -> list[int]:
        """The seat to act in each of ``games``."""
        return self.state[games, C_CUR].tolist()  # type: ignore[no-any-return]

    # -- moves ---------------------------------------------------------------------------------

    def step(self, actions: np.ndarray, auto_reset: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """Play one legal action per game (unchecked); returns ``(rewards [batch, n], dones [batch])``."""
        acts = np.asarray(actions, dtype=np.int64)
        step_batch(
            self.state, self.payoffs, acts, self.P, self.F, self.instant, self.shapes, _VALUES, _SUIT_VALUE,
            self.rewards, self.dones, self.seed, self.counters, self.dealer, auto_reset,
        )  # fmt: skip
        return self.rewards, self.dones

    def step_observe(
        self, actions: np.ndarray, masks: np.ndarray, obs: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`step` with auto-reset, then write the next masks (and legal ids) and observations.

        One pass over the games (the fastest way to run the batch): ``masks`` and
        ``obs`` are the arrays of :meth:`legal_masks` and :meth:`observe`.
        """
        step_observe_batch(
            self.state, self.payoffs, np.asarray(actions, dtype=np.int64), self.P, self.F, self.instant,
            self.shapes, self.suit_runs, _VALUES, _SUIT_VALUE, self.above, self.rewards, self.dones,
            self.seed, self.counters, self.dealer, masks, self.legal_ids, self.legal_counts, obs,
        )  # fmt: skip
        return self.rewards, self.dones

    def step_rows(self, rows: np.ndarray, actions: np.ndarray) -> np.ndarray:
        """Play ``actions[i]`` in game ``rows[i]`` (legal, unchecked; no auto-reset); which hands ended."""
        ended = np.zeros(len(rows), dtype=np.bool_)
        apply_rows(
            self.state, self.payoffs, np.asarray(rows, dtype=np.int64), np.asarray(actions, dtype=np.int64),
            self.P, self.F, self.shapes, _VALUES, _SUIT_VALUE, ended,
        )  # fmt: skip
        return ended

    def step_one(self, game: int, action: int) -> bool:
        """Play a legal action in one game (no auto-reset); True if its hand ended."""
        return bool(
            apply_action(
                self.state, self.payoffs, game, int(action), self.P, self.F, self.shapes, _VALUES, _SUIT_VALUE
            )
        )

    # -- positions and results -----------------------------------------------------------------

    def load(self, game: int, s: GameState) -> None:
        """Set game ``game`` to the engine state ``s``: any position of these rules and players.

        The deal order is not part of a position; the stock (``s.stock``, top
        last) is written at the end of the row's deck, so draws take the same
        cards. Sampled worlds (``tonk_env.engine.sample_state``) load the same way.
        """
        if s.rules != self.rules or s.n != self.n:
            raise ValueError(
                f"load: a {s.n}-player state of rules {s.rules.hash} into a {self.n}-player core of "
                f"rules {self.rules.hash}"
            )
        if len(s.spreads) > self.max_spreads:
            raise ValueError(
                f"load: {len(s.spreads)} spreads on the table; the core holds {self.max_spreads}"
            )
        row = self.state[game]
        row[:] = 0
        self.payoffs[game] = 0.0
        n = s.n
        row[C_CUR] = s.cur
        row[C_PHASE] = s.phase
        row[C_TAKEN] = s.taken
        row[C_TURN] = s.turn
        row[C_DISC] = s.discarded
        row[C_BOOKT] = s.book_targets
        row[C_HIGHT] = s.high_targets
        row[C_LOWT] = s.low_targets
        stock = s.stock
        ptr = 52 - len(stock)
        row[C_PTR] = ptr
        row[C_DECK + ptr : C_DECK + 52] = stock[::-1]
        row[C_PILEN] = len(s.pile)
        row[C_PILE : C_PILE + len(s.pile)] = s.pile
        row[C_NSP] = len(s.spreads)
        for i, sp in enumerate(s.spreads):
            row[C_SPMASK + i] = sp.mask
            row[C_SPKIND + i] = sp.kind
            row[C_SPKEY + i] = sp.key
            row[C_SPLO + i] = sp.lo
            row[C_SPHI + i] = sp.hi
            row[C_SPOWNER + i] = sp.owner
        row[C_HANDS : C_HANDS + n] = s.hands
        row[C_KNOWN : C_KNOWN + n] = s.known
        row[C_OWNER : C_OWNER + n] = s.spread_owner_masks
        row[C_WAITS : C_WAITS + n] = s.waits
        for p, a in s.history:  # what the observation reads from the public history
            if a <= TAKE:
                row[C_ADDS + p] += a > 0
            elif a < DISCARD + 52:
                row[C_LAST + p] = VALUES[a - DISCARD]
                row[C_THROWN + p] |= 1 << (a - DISCARD)
        if s.result is not None:
            self.payoffs[game, :n] = s.result.payoffs
            row[C_END_KIND] = 1 + RESULT_KINDS.index(s.result.kind)
            row[C_END_SEAT] = -1 if s.result.seat is None else s.result.seat
            row[C_END_DETAIL] = END_DETAILS.index(s.result.detail)

    def game_payoffs(self, game: int) -> np.ndarray:
        """Per-seat payoffs of game ``game``'s hand (zeros while it runs)."""
        return self.payoffs[game, : self.n].copy()

    def ending(self, game: int) -> tuple[str, int | None, str]:
        """How game ``game``'s hand ended, as the engine's ``Result``: ``(kind, seat or None, detail)``.

        The rules kernels record it when the hand ends; ``ValueError`` while it runs.
        """
        row = self.state[game]
        seat = int(row[C_END_SEAT])
        return (
            end_kind_name(int(row[C_END_KIND])),
            (None if seat < 0 else seat),
            END_DETAILS[int(row[C_END_DETAIL])],
        )

    def result_info(self, game: int) -> dict[str, Any]:
        """The end-of-hand info of game ``game`` (the keys and values of ``tonk_env.outcome.result_info``).

        The payoffs are the core's (floats); the kind, the seat and the detail are
        :meth:`ending`'s, the counts those of the final hands.
        """
        kind, seat, detail = self.ending(game)
        return {
            "result_kind": kind,
            "payoffs": self.payoffs[game, : self.n].tolist(),
            "counts": [hand_value(h) for h in self.hands(game)],
            "ended_by": seat,
            "detail": detail,
            "turns": self.turns(game),
        }

    def hands(self, game: int) -> list[int]:
        """Every seat's hand of game ``game`` (card masks)."""
        return self.state[game, C_HANDS : C_HANDS + self.n].tolist()

    def turns(self, game: int) -> int:
        """Turns completed in game ``game``'s hand."""
        return int(self.state[game, C_TURN])
