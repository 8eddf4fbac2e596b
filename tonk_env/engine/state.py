"""Game state, the deal, legal actions and applying them.

The API follows OpenSpiel and pgx::

    state = new_game(rules, num_players=2, seed=7)
    while not is_over(state):
        a = random.choice(legal_actions(state))
        state = apply(state, a)          # pure: returns a new state
    payoffs(state)

``apply`` never mutates its input. The hot loops of benchmarks and search
use :meth:`GameState.play`, which changes the state in place, and
:meth:`GameState.copy`.

Turn structure: a seat's turn starts in phase ``START`` (drop, draw or take),
moves to ``PLAY`` (spreads and hits, then exactly one discard), and the
discard passes the turn on. A spread or hit that empties the hand is a tonk
out; a discard that empties it is a run out.

Waiting (``spread_wait``/``hit_wait``): ``waits[seat]`` counts the seat's own
upcoming turns in which it may not drop. It is decremented when the seat
draws or takes, so a wait of N set during a turn blocks the drop at the
start of the next N turns. Each hit on a spread adds ``hit_wait`` to its
owner (hitting your own spread included); with ``wait_cumulative`` off a new
wait only replaces a shorter one.

With ``may_discard_taken`` off, the card taken from the pile this turn may
not be discarded, except when it is the last card in the hand (otherwise the
turn could not end).
"""

from __future__ import annotations

import operator
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import scoring
from .actions import (
    BOOK,
    DISCARD,
    DRAW,
    DROP,
    HIT_BOOK,
    HIT_HIGH,
    HIT_LOW,
    SPREAD,
    TAKE,
    ActionTable,
    action_table,
    position_card,
)
from .cards import FULL_DECK, NUM_CARDS, SUIT_BITS, card_to_string, hand_value, mask_to_strings, parse_cards
from .rules import TonkRules, make_rules

START = 0
PLAY = 1
OVER = 2
PHASE_NAMES = ("start", "play", "over")

RESULT_KINDS = ("instant_win", "void", "tonk_out", "run_out", "drop_won", "caught", "stock_out")


class IllegalActionError(ValueError):
    """An action that is not legal in the current state."""


@dataclass(frozen=True)
class Result:
    """How a hand ended: the kind, per-seat payoffs in stakes and final counts."""

    kind: str
    payoffs: tuple[float, ...]
    counts: tuple[int, ...]
    hands: tuple[int, ...]
    seat: int | None
    """The seat that ended the hand (dropper, tonker, runner, instant winner,
    the player who drew from the empty stock); None at ``max_turns`` or a void deal."""
    detail: str = ""
    """``"empty_stock"`` or ``"max_turns"`` for stock-out scoring, else empty."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form of the result."""
        return {
            "kind": self.kind,
            "payoffs": list(self.payoffs),
            "counts": list(self.counts),
            "hands": [mask_to_strings(h) for h in self.hands],
            "seat": self.seat,
            "detail": self.detail,
        }


class Spread:
    """A spread on the table. ``lo``/``hi`` are run positions (13 = ace high)."""

    __slots__ = ("owner", "mask", "kind", "key", "lo", "hi")

    def __init__(self, owner: int, mask: int, kind: int, key: int, lo: int, hi: int) -> None:
        self.owner = owner
        self.mask = mask
        self.kind = kind
        self.key = key
        self.lo = lo
        self.hi = hi

    def cards(self) -> list[int]:
        """The spread's cards in order (a run low to high, a book by suit)."""
        if self.kind == BOOK:
            return [s * 13 + self.key for s in range(4) if self.mask >> (s * 13 + self.key) & 1]
        return [position_card(self.key, p) for p in range(self.lo, self.hi + 1)]

    def __repr__(self) -> str:
        return f"Spread(owner={self.owner}, {' '.join(map(card_to_string, self.cards()))})"


class GameState:
    """One hand of Tonk. Treat as immutable outside :meth:`play`."""

    __slots__ = (
        "rules", "table", "n", "dealer", "deck", "hands", "stock", "pile", "cur",
        "phase", "taken", "waits", "known", "discarded", "spreads", "spread_owner_masks",
        "book_targets", "high_targets", "low_targets", "target_index", "turn",
        "history", "result",
    )  # fmt: skip

    rules: TonkRules
    table: ActionTable
    n: int
    dealer: int
    deck: list[int]  # the dealing order, top first (empty for a determinized state)
    hands: list[int]
    stock: list[int]  # top of the stock is the last element
    pile: list[int]  # discard pile, oldest first, top last
    cur: int
    phase: int
    taken: int  # card taken from the pile this turn, or -1
    waits: list[int]
    known: list[int]  # cards publicly known to be in each hand (taken, not played since)
    discarded: int  # every card that has been on the discard pile (upcard included)
    spreads: list[Spread]
    spread_owner_masks: list[int]
    book_targets: int
    high_targets: int
    low_targets: int
    target_index: dict[int, int]  # hit action -> index into spreads
    turn: int  # turns completed (all seats)
    history: list[tuple[int, int]]  # (seat, action)
    result: Result | None

    def copy(self) -> GameState:
        """An independent copy (spreads are copied too)."""
        s = GameState.__new__(GameState)
        s.rules = self.rules
        s.table = self.table
        s.n = self.n
        s.dealer = self.dealer
        s.deck = self.deck
        s.hands = self.hands.copy()
        s.stock = self.stock.copy()
        s.pile = self.pile.copy()
        s.cur = self.cur
        s.phase = self.phase
        s.taken = self.taken
        s.waits = self.waits.copy()
        s.known = self.known.copy()
        s.discarded = self.discarded
        s.spreads = [Spread(x.owner, x.mask, x.kind, x.key, x.lo, x.hi) for x in self.spreads]
        s.spread_owner_masks = self.spread_owner_masks.copy()
        s.book_targets = self.book_targets
        s.high_targets = self.high_targets
        s.low_targets = self.low_targets
        s.target_index = self.target_index
        s.turn = self.turn
        s.history = self.history.copy()
        s.result = self.result
        return s

    @property
    def current_player(self) -> int:
        """The seat to act (meaningless once the hand is over)."""
        return self.cur

    def play(self, action: int) -> None:
        """Apply ``action`` in place; raises :class:`IllegalActionError` if illegal."""
        _play(self, action)

    def legal_actions(self) -> list[int]:
        """Legal action ids for the seat to act, ascending."""
        return legal_actions(self)

    def __repr__(self) -> str:
        return (
            f"GameState(n={self.n}, turn={self.turn}, cur={self.cur}, "
            f"phase={PHASE_NAMES[self.phase]}, stock={len(self.stock)})"
        )


def shuffled_deck(
    seed: int | random.Random | np.random.Generator | None = None, prefix: Sequence[int] = ()
) -> list[int]:
    """A deck in dealing order: ``prefix`` first, the remaining cards shuffled from ``seed``.

    ``seed`` is an int (used as ``random.Random(seed)``), a ``random.Random`` or a
    ``numpy.random.Generator`` (its ``permutation``; fastest); None draws fresh entropy.
    """
    if not prefix:
        if isinstance(seed, np.random.Generator):
            return seed.permutation(NUM_CARDS).tolist()
        rng = seed if isinstance(seed, random.Random) else random.Random(seed)
        deck = list(range(NUM_CARDS))
        rng.shuffle(deck)
        return deck
    used = 0
    for c in prefix:
        if not 0 <= c < NUM_CARDS:
            raise ValueError(f"deck: not a card id: {c}")
        if used >> c & 1:
            raise ValueError(f"deck: card {card_to_string(c)} appears twice")
        used |= 1 << c
    rest = [c for c in range(NUM_CARDS) if not used >> c & 1]
    if isinstance(seed, np.random.Generator):
        rest = [rest[i] for i in seed.permutation(len(rest)).tolist()]
    else:
        (seed if isinstance(seed, random.Random) else random.Random(seed)).shuffle(rest)
    return list(prefix) + rest


def new_game(
    rules: TonkRules | str | None = None,
    num_players: int = 2,
    seed: int | random.Random | np.random.Generator | None = None,
    deck: str | Iterable[str | int] | None = None,
    dealer: int | None = None,
) -> GameState:
    """Deal a new hand.

    ``deck`` stacks the cards (top first): one card at a time to each seat,
    starting left of the dealer, then the upcard, then the stock top first.
    A prefix is completed with the remaining cards shuffled from ``seed``
    (see :func:`shuffled_deck`). ``dealer`` defaults to the last seat, so seat
    0 plays first.
    """
    if rules is None:
        rules = _STANDARD
    elif isinstance(rules, str):
        rules = make_rules(rules)
    n = num_players
    if n.__class__ is not int or not 2 <= n <= 6:
        rules.check_players(num_players)
    if dealer is None:
        dealer = n - 1
    elif isinstance(dealer, bool) or not isinstance(dealer, int) or not 0 <= dealer < n:
        raise ValueError(f"dealer must be a seat 0..{n - 1}, got {dealer!r}")
    return deal_order(rules, n, shuffled_deck(seed, parse_cards(deck) if deck is not None else ()), dealer)


def deal_order(rules: TonkRules, n: int, order: list[int], dealer: int) -> GameState:
    """Deal a hand from a complete deck ``order`` (52 distinct card ids, top first), unchecked.

    :func:`new_game` checks its arguments, completes the deck and calls this;
    code that already holds a checked deal (a replay) calls it directly.
    """
    s = GameState.__new__(GameState)
    s.rules = rules
    s.table = action_table(rules.ace_high)
    s.n = n
    s.dealer = dealer
    s.deck = order
    first = (dealer + 1) % n
    hs = rules.hand_size
    k = n * hs
    hands = [0] * n
    for i in range(n):
        h = 0
        for c in order[i:k:n]:
            h |= 1 << c
        hands[(first + i) % n] = h
    s.hands = hands
    if rules.upcard:
        up = order[k]
        s.pile = [up]
        s.discarded = 1 << up
        k += 1
    else:
        s.pile = []
        s.discarded = 0
    s.stock = order[k:][::-1]
    s.cur = first
    s.phase = START
    s.taken = -1
    s.waits = [0] * n
    s.known = [0] * n
    s.spreads = []
    s.spread_owner_masks = [0] * n
    s.book_targets = s.high_targets = s.low_targets = 0
    s.target_index = _NO_TARGETS
    s.turn = 0
    s.history = []
    s.result = None
    low = rules.instant_win_low_max
    totals = rules.instant_win_totals
    if totals or low is not None:
        for h in hands:
            c = hand_value(h)
            if c in totals or (low is not None and c <= low):
                won = scoring.instant_win([hand_value(x) for x in hands], rules)
                assert won is not None  # this hand is an instant win
                kind, pay, winner = won
                _finish(s, kind, pay, winner, "instant_win_tie" if kind == "void" else "")
                break
    return s


_STANDARD = make_rules()
_NO_TARGETS: dict[int, int] = {}


def _finish(s: GameState, kind: str, pay: Sequence[float], seat: int | None, detail: str = "") -> None:
    s.phase = OVER
    s.result = Result(
        kind=kind,
        payoffs=tuple(pay),
        counts=tuple(hand_value(h) for h in s.hands),
        hands=tuple(s.hands),
        seat=seat,
        detail=detail,
    )


def legal_actions(s: GameState) -> list[int]:
    """Legal action ids for the seat to act, ascending; empty once the hand is over."""
    phase = s.phase
    if phase == START:
        out = [DRAW, TAKE] if s.pile else [DRAW]
        if not s.waits[s.cur]:
            out.insert(0, DROP)
        return out
    if phase != PLAY:
        return []
    t = s.table
    hand = s.hands[s.cur]
    a = hand & SUIT_BITS
    b = (hand >> 13) & SUIT_BITS
    c = (hand >> 26) & SUIT_BITS
    d = hand >> 39
    di = t.discard_ids
    out = [*di[0][a], *di[1][b], *di[2][c], *di[3][d]]
    if s.taken >= 0 and not s.rules.may_discard_taken and len(out) > 1:
        out.remove(DISCARD + s.taken)
    m = hand & s.book_targets
    while m:
        low = m & -m
        out.append(HIT_BOOK + low.bit_length() - 1)
        m ^= low
    m = hand & s.high_targets
    while m:
        low = m & -m
        out.append(HIT_HIGH + low.bit_length() - 1)
        m ^= low
    m = hand & s.low_targets
    while m:
        low = m & -m
        out.append(HIT_LOW + low.bit_length() - 1)
        m ^= low
    triple = (a & b & (c | d)) | (c & d & (a | b))
    if triple:
        bi = t.book_ids
        for r in range(13):
            if triple >> r & 1:
                out.extend(bi[r][(a >> r & 1) | (b >> r & 1) << 1 | (c >> r & 1) << 2 | (d >> r & 1) << 3])
    ri = t.run_ids
    out += ri[0][a]
    out += ri[1][b]
    out += ri[2][c]
    out += ri[3][d]
    return out


def legal_mask(s: GameState) -> np.ndarray:
    """Legal actions as an int8 0/1 vector over the action table."""
    mask = np.zeros(s.table.size, dtype=np.int8)
    mask[legal_actions(s)] = 1
    return mask


def is_legal(s: GameState, action: int) -> bool:
    """Whether ``action`` is legal now (O(1), without listing the legal actions)."""
    phase = s.phase
    if phase == START:
        return action == DRAW or (action == TAKE and bool(s.pile)) or (action == DROP and not s.waits[s.cur])
    if phase != PLAY or action < DISCARD or action >= s.table.size:
        return False
    hand = s.hands[s.cur]
    if action < HIT_BOOK:
        c = action - DISCARD
        if not hand >> c & 1:
            return False
        return c != s.taken or s.rules.may_discard_taken or hand == 1 << c
    if action < HIT_HIGH:
        return bool((hand & s.book_targets) >> (action - HIT_BOOK) & 1)
    if action < HIT_LOW:
        return bool((hand & s.high_targets) >> (action - HIT_HIGH) & 1)
    if action < SPREAD:
        return bool((hand & s.low_targets) >> (action - HIT_LOW) & 1)
    m = s.table.spreads[action - SPREAD].mask
    return hand & m == m


def index_targets(s: GameState) -> None:
    """Recompute which cards can hit which spread (after a spread or hit)."""
    book = high = low = 0
    index: dict[int, int] = {}
    ace_high = s.rules.ace_high
    for i, sp in enumerate(s.spreads):
        if sp.kind == BOOK:
            if sp.mask.bit_count() == 3:
                missing = (sum(1 << (q * 13 + sp.key) for q in range(4))) & ~sp.mask
                c = missing.bit_length() - 1
                book |= missing
                index[HIT_BOOK + c] = i
            continue
        suit = sp.key
        if sp.hi < 12 or (sp.hi == 12 and ace_high and sp.lo > 0):
            c = position_card(suit, sp.hi + 1)
            high |= 1 << c
            index[HIT_HIGH + c] = i
        if sp.lo > 0 and not (sp.lo == 1 and sp.hi == 13):
            c = suit * 13 + sp.lo - 1
            low |= 1 << c
            index[HIT_LOW + c] = i
    s.book_targets = book
    s.high_targets = high
    s.low_targets = low
    s.target_index = index


def _add_wait(s: GameState, seat: int, n: int) -> None:
    if n:
        if s.rules.wait_cumulative:
            s.waits[seat] += n
        elif s.waits[seat] < n:
            s.waits[seat] = n


def _play(s: GameState, a: int) -> None:
    # The hot path of every game: draw, take and discard (most moves) stay inline;
    # the rest (drop, spreads and hits, stock-out scoring) are a call away.
    if type(a) is not int:
        a = _as_action_id(a)
    if not is_legal(s, a):
        raise IllegalActionError(_illegal_message(s, a))
    cur = s.cur
    s.history.append((cur, a))
    if a == DRAW:
        if not s.stock:
            _stock_out(s, cur, "empty_stock")
            return
        s.hands[cur] |= 1 << s.stock.pop()
        s.phase = PLAY
        s.taken = -1
        if s.waits[cur]:
            s.waits[cur] -= 1
        return
    if a == TAKE:
        c = s.pile.pop()
        s.hands[cur] |= 1 << c
        s.known[cur] |= 1 << c
        s.phase = PLAY
        s.taken = c
        if s.waits[cur]:
            s.waits[cur] -= 1
        return
    if a == DROP:
        counts = [hand_value(h) for h in s.hands]
        kind, pay = scoring.drop(counts, cur, s.rules)
        _finish(s, kind, pay, cur)
        return
    if a < HIT_BOOK:
        c = a - DISCARD
        bit = 1 << c
        hand = s.hands[cur] & ~bit
        s.hands[cur] = hand
        s.known[cur] &= ~bit
        s.pile.append(c)
        s.discarded |= bit
        if not hand:
            _finish(s, "run_out", scoring.win_from_each(s.n, cur, s.rules.run_out_pay), cur)
            return
        s.turn += 1
        s.phase = START
        s.taken = -1
        s.cur = (cur + 1) % s.n
        if s.turn >= s.rules.max_turns:
            _stock_out(s, None, "max_turns")
        return
    _lay(s, cur, a)


def _lay(s: GameState, cur: int, a: int) -> None:
    """Play a legal hit or spread for seat ``cur`` (a tonk out if it empties the hand)."""
    if a < SPREAD:
        sp = s.spreads[s.target_index[a]]
        c = (a - HIT_BOOK) % 52
        bit = 1 << c
        sp.mask |= bit
        if a >= HIT_LOW:
            sp.lo -= 1
        elif a >= HIT_HIGH:
            sp.hi += 1
        s.spread_owner_masks[sp.owner] |= bit
        played = bit
        _add_wait(s, sp.owner, s.rules.hit_wait)
    else:
        shape = s.table.spreads[a - SPREAD]
        played = shape.mask
        s.spreads.append(Spread(cur, shape.mask, shape.kind, shape.key, shape.lo, shape.hi))
        s.spread_owner_masks[cur] |= played
        _add_wait(s, cur, s.rules.spread_wait)
    hand = s.hands[cur] & ~played
    s.hands[cur] = hand
    s.known[cur] &= ~played
    if s.taken >= 0 and played >> s.taken & 1:
        s.taken = -1
    index_targets(s)
    if not hand:
        _finish(s, "tonk_out", scoring.win_from_each(s.n, cur, s.rules.tonk_out_pay), cur)


def _stock_out(s: GameState, seat: int | None, detail: str) -> None:
    """End the hand by stock-out scoring (``detail``: ``empty_stock`` or ``max_turns``)."""
    counts = [hand_value(h) for h in s.hands]
    kind, pay = scoring.stock_out(counts, s.rules)
    _finish(s, kind, pay, seat, detail)


def _as_action_id(a: Any) -> int:
    try:
        return int(operator.index(a))
    except TypeError:
        raise IllegalActionError(
            f"an action must be an integer id (use action_from_string for text), got {a!r}"
        ) from None


def action_name(s: GameState, action: int) -> str:
    """The string of ``action`` in ``s``: a hit's short form ``hit C`` when its card has one legal target.

    :func:`tonk_env.engine.strings.action_to_string` is the public face of this.
    """
    name = s.table.name(int(action))
    if HIT_BOOK <= action < SPREAD and s.phase != OVER:
        card = (action - HIT_BOOK) % 52
        if _hit_count(s, card) == 1:
            return "hit " + card_to_string(card)
    return name


def _hit_count(s: GameState, card: int) -> int:
    """How many spreads ``card`` can hit, if the seat to act holds it (0 if not)."""
    hand = s.hands[s.cur]
    if not hand >> card & 1:
        return 0
    return sum(1 for t in (s.book_targets, s.high_targets, s.low_targets) if t >> card & 1)


def _illegal_message(s: GameState, a: Any) -> str:
    if s.phase == OVER:
        name = s.table.name(a) if isinstance(a, int) and 0 <= a < s.table.size else repr(a)
        kind = s.result.kind if s.result else ""
        return f"illegal action {name!r}: the hand is over ({kind}); no action is legal"
    try:
        name = repr(action_name(s, a))
    except (ValueError, TypeError):
        name = repr(a)
    legal = ", ".join(action_name(s, x) for x in legal_actions(s))
    return (
        f"illegal action {name} (id {a}) for seat {s.cur} in phase "
        f"{PHASE_NAMES[s.phase]}; legal actions: {legal}"
    )


def apply(s: GameState, action: int) -> GameState:
    """Return the state after ``action``; ``s`` is not changed."""
    t = s.copy()
    _play(t, action)
    return t


def is_over(s: GameState) -> bool:
    """Whether the hand has ended."""
    return s.phase == OVER


def payoffs(s: GameState) -> tuple[float, ...]:
    """Per-seat payoffs in stakes (zero-sum); all zero while the hand is running."""
    if s.result is None:
        return (0,) * s.n
    return s.result.payoffs


def counts(s: GameState) -> list[int]:
    """The count of every seat's hand now."""
    return [hand_value(h) for h in s.hands]


def check_invariants(s: GameState) -> None:
    """Assert that all 52 cards are accounted for exactly once (for tests)."""
    seen = 0
    total = 0
    parts = list(s.hands) + [1 << c for c in s.stock] + [1 << c for c in s.pile]
    parts += [sp.mask for sp in s.spreads]
    for m in parts:
        if seen & m:
            raise AssertionError(f"a card is in two places: {m:#x}")
        seen |= m
        total += m.bit_count()
    if seen != FULL_DECK or total != NUM_CARDS:
        raise AssertionError(f"cards missing: {FULL_DECK & ~seen:#x}")
