"""The observation tensor: what one seat sees, as one flat float32 vector with named slices.

Float32, from the observing seat's point of view; seats are ordered relative
to the observer (offset 0 is the observer, offset 1 the next seat clockwise,
...). ``n`` is the number of players. :func:`obs_layout` names the slices in
code, in this order:

=================  ==========  =================================================
slice              size        content
=================  ==========  =================================================
``hand``           52          1 for each card in my hand
``top_discard``    52          one-hot top card of the discard pile (all 0 if empty)
``discarded``      52          every card that has been on the discard pile
``known``          (n-1)*52    per opponent (offset 1..n-1): cards known to be in
                               their hand (taken from the pile, not played since)
``spreads``        n*52        cards on the table by spread owner (offset 0..n-1)
``hand_sizes``     n           cards in each hand / 10
``stock_size``     1           cards in the stock / 52
``waits``          n           turns each seat may not drop, min(w, 10) / 10
``phase``          2           one-hot: start of turn, play phase (both 0 once over)
``hand_count``     1           my count / 50
``turn``           1           turns played / max_turns
``count_below``    11          1 where my count <= t, t in 3 5 7 9 11 13 15 18 21 25 30
``opp_estimate``   n-1         per opponent: estimated count / 50 = known cards'
                               value + unknown cards x mean value of the cards
                               I have not seen
``opp_turns``      n-1         per opponent: turns it drew or took a card (or
                               tried to draw from an empty stock, which ends
                               the hand), min(k, 20) / 20
``opp_discard``    n-1         per opponent: value of its latest discard / 10
                               (0 before its first discard)
``opp_above``      n-1         per opponent: P(its count is above mine) under the
                               opponent model of :mod:`tonk_env.odds`
``drop_win``       1           P(a drop by me now wins): the product of
                               ``opp_above`` (0 if some opponent surely counts
                               no more than I do)
``top_fits``       1           1 if the top discard makes a spread with my hand
                               or hits a spread on the table
``thrown``         n*52        per seat (offset 0..n-1): every card it discarded
                               (taken back from the pile or not)
=================  ==========  =================================================

Size: ``52 * (3n + 2) + 6n + 14`` (2 players: 442, 3: 604, 4: 766).
``hand_count`` and ``opp_estimate`` can exceed 1 (up to
``(hand_size + 1) * 10 / 50``: 1.2 with five cards, 1.6 with seven);
:func:`observation_bounds` gives the bounds of every entry.

The tensor lives in the env layer, not in the rules engine: ``opp_above``
and ``drop_win`` read an opponent model (:mod:`tonk_env.odds`), and a model
is not a rule.

Version 2 added ``count_below`` and ``opp_estimate``: they make the drop
decision's inputs explicit (version 1 agents never learned to drop). Version
3 added ``opp_turns`` to ``top_fits``: what the hand-written agents read to
decide a drop (how long each opponent has been shedding, what it last threw,
the modelled odds of the drop) and a take (whether the top card fits), which
a network otherwise has to rebuild from the card masks. Version 4 added
``thrown``: who discarded which card (``discarded`` does not say), so a
network can read what each opponent let go and, with two players, which of
my discards the opponent passed on. ``OBS_VERSION`` changes whenever this
layout changes; checkpoints record it.

A network saved for an older layout still loads (:func:`upgrade_inputs`):
every layout so far only appended slices, so the old network reads the new
tensor through zero weights on the appended slices and plays exactly as it
did.

Agents receive a seat's observation as a mapping with the keys
:data:`OBS_KEYS`; :class:`LazyObs` computes each entry on first access.

The privileged features
-----------------------
What a seat cannot see, for an oracle critic in training only (``train.oracle``;
``TonkVectorEnv(oracle=True)`` appends it to the observation). One flat float32
vector, :func:`privileged_layout` names its slices:

=================  ==========  =================================================
slice              size        content
=================  ==========  =================================================
``opp_hands``      (n-1)*52    per opponent (offset 1..n-1): the cards in its hand
``opp_counts``     n-1         per opponent: its count / 50
``next_stock``     52          one-hot next card of the stock (all 0 if empty)
=================  ==========  =================================================

Size: ``53 * (n - 1) + 52`` (:func:`privileged_size`). :func:`privileged_features`
computes it from an engine state; the compiled core's
``tonk_env.core.observe.privileged_into`` writes the same floats.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import cache

import numpy as np

from .engine.actions import DISCARD, TAKE
from .engine.cards import FULL_DECK, VALUES, forms_spread, hand_value
from .engine.rules import TonkRules
from .engine.state import OVER, PLAY, START, GameState, legal_actions, legal_mask
from .odds import above_chance

OBS_VERSION = 4

#: The slices each layout version appended, by version (see :func:`upgrade_inputs`).
APPENDED: dict[int, tuple[str, ...]] = {4: ("thrown",)}
#: The oldest layout version a saved network may have and still load.
OLDEST_LOADABLE = 3

#: Thresholds of the ``count_below`` thermometer.
COUNT_THRESHOLDS = (3, 5, 7, 9, 11, 13, 15, 18, 21, 25, 30)
_COUNT_BELOW = [[1.0 if c <= t else 0.0 for t in COUNT_THRESHOLDS] for c in range(200)]
_PHASE_ONE_HOT = {START: [1.0, 0.0], PLAY: [0.0, 1.0], OVER: [0.0, 0.0]}


class ObsLayout:
    """Named slices of the observation tensor for ``n`` players."""

    def __init__(self, n: int) -> None:
        self.n = n
        parts = [
            ("hand", 52),
            ("top_discard", 52),
            ("discarded", 52),
            ("known", (n - 1) * 52),
            ("spreads", n * 52),
            ("hand_sizes", n),
            ("stock_size", 1),
            ("waits", n),
            ("phase", 2),
            ("hand_count", 1),
            ("turn", 1),
            ("count_below", len(COUNT_THRESHOLDS)),
            ("opp_estimate", n - 1),
            ("opp_turns", n - 1),
            ("opp_discard", n - 1),
            ("opp_above", n - 1),
            ("drop_win", 1),
            ("top_fits", 1),
            ("thrown", n * 52),
        ]
        self.slices: dict[str, slice] = {}
        pos = 0
        for name, size in parts:
            self.slices[name] = slice(pos, pos + size)
            pos += size
        self.size = pos
        self.num_masks = 3 + (n - 1) + n
        self.version = OBS_VERSION

    def __getitem__(self, name: str) -> slice:
        return self.slices[name]

    def split(self, obs: np.ndarray) -> dict[str, np.ndarray]:
        """Cut an observation into its named parts."""
        return {k: obs[..., v] for k, v in self.slices.items()}

    def describe(self) -> list[tuple[str, int, int]]:
        """``(name, start, size)`` for every slice."""
        return [(k, v.start, v.stop - v.start) for k, v in self.slices.items()]


@cache
def obs_layout(n: int) -> ObsLayout:
    """The (cached) observation layout for ``n`` players."""
    return ObsLayout(n)


def observation_bounds(rules: TonkRules, num_players: int) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper bounds of the observation tensor (see the module docstring)."""
    lay = obs_layout(num_players)
    low = np.zeros(lay.size, dtype=np.float32)
    high = np.ones(lay.size, dtype=np.float32)
    high[lay["hand_count"]] = max(1.0, (rules.hand_size + 1) * 10 / 50)
    high[lay["opp_estimate"]] = max(1.0, (rules.hand_size + 1) * 10 / 50)
    return low, high


def unpack_masks(masks: list[int], out: np.ndarray, gap: int = 0, after: list[int] | None = None) -> int:
    """Write 52-card masks side by side into ``out`` (52 0/1 floats each, in order); returns 52 * len(masks).

    ``gap`` zeros and then the masks ``after`` follow them (the caller fills the gap).
    The masks are concatenated into one integer and unpacked with one numpy call."""
    big = 0
    for m in reversed(after or ()):
        big = (big << 52) | m
    big <<= gap
    for m in reversed(masks):
        big = (big << 52) | m
    nb = 52 * len(masks)
    total = nb + gap + 52 * len(after or ())
    out[:total] = np.unpackbits(
        np.frombuffer(big.to_bytes(total // 8 + 1, "little"), dtype=np.uint8), bitorder="little"
    )[:total]
    return nb


def observation(s: GameState, seat: int, out: np.ndarray | None = None) -> np.ndarray:
    """The float32 observation tensor of ``seat`` (see the module docstring)."""
    n = s.n
    lay = obs_layout(n)
    if out is None:
        out = np.empty(lay.size, dtype=np.float32)
    order = [(seat + i) % n for i in range(n)]
    known = s.known
    owner = s.spread_owner_masks
    masks = [s.hands[seat], 1 << s.pile[-1] if s.pile else 0, s.discarded]
    masks += [known[o] for o in order[1:]]
    masks += [owner[o] for o in order]
    hands = s.hands
    waits = s.waits
    tail = [hands[o].bit_count() * 0.1 for o in order]
    tail.append(len(s.stock) / 52)
    tail += [(w if w < 10 else 10) * 0.1 for w in (waits[o] for o in order)]
    tail += _PHASE_ONE_HOT[s.phase]
    mine = hand_value(hands[seat])
    tail.append(mine / 50)
    tail.append(s.turn / s.rules.max_turns)
    tail += _COUNT_BELOW[mine]
    seen = hands[seat] | s.discarded
    for m in owner:
        seen |= m
    for m in known:
        seen |= m
    unseen = FULL_DECK & ~seen
    n_unseen = unseen.bit_count()
    mean_unseen = hand_value(unseen) / n_unseen if n_unseen else 0.0
    cap = (s.rules.hand_size + 1) * 0.2
    for o in order[1:]:
        k = known[o]
        est = (hand_value(k) + (hands[o].bit_count() - k.bit_count()) * mean_unseen) * 0.02
        tail.append(est if est < cap else cap)
    # opp_turns, opp_discard: one pass over the public history
    adds = [0] * n
    last = [0] * n
    thrown = [0] * n
    for p, a in s.history:
        if a <= TAKE:
            adds[p] += a > 0
        elif a < DISCARD + 52:
            last[p] = VALUES[a - DISCARD]
            thrown[p] |= 1 << (a - DISCARD)
    tail += [(adds[o] if adds[o] < 20 else 20) * 0.05 for o in order[1:]]
    tail += [last[o] * 0.1 for o in order[1:]]
    # opp_above, drop_win: the selection model's table
    win = 1.0
    for o in order[1:]:
        k = known[o]
        p_above = above_chance(mine - hand_value(k), hands[o].bit_count() - k.bit_count(), adds[o])
        tail.append(p_above)
        win *= p_above
    tail.append(win)
    fits = 0.0
    if s.pile:
        top = s.pile[-1]
        if (s.book_targets | s.high_targets | s.low_targets) >> top & 1 or forms_spread(
            top, hands[seat], s.rules.ace_high
        ):
            fits = 1.0
    tail.append(fits)
    nb = unpack_masks(masks, out, len(tail), [thrown[o] for o in order])  # the tail's place left zero
    out[nb : nb + len(tail)] = tail
    return out


def upgrade_inputs(weights: np.ndarray, version: int, num_players: int) -> np.ndarray:
    """A first layer's weights ``(units, inputs)`` for layout ``version``, widened to this layout.

    The slices appended since ``version`` get zero weights, so the network's
    outputs on the new tensor are its outputs on the old one. ``ValueError``
    names the version when it is newer than this layout or older than
    :data:`OLDEST_LOADABLE`, or when ``inputs`` is not that version's size.
    """
    if (
        isinstance(version, bool)
        or not isinstance(version, int)
        or not OLDEST_LOADABLE <= version <= OBS_VERSION
    ):
        raise ValueError(
            f"observation layout version {version!r}; this Tonk RL reads versions "
            f"{OLDEST_LOADABLE} to {OBS_VERSION}"
        )
    lay = obs_layout(num_players)
    added = [lay[name] for v in range(version + 1, OBS_VERSION + 1) for name in APPENDED[v]]
    keep = np.ones(lay.size, dtype=bool)
    for sl in added:
        keep[sl] = False
    if weights.shape[1] != int(keep.sum()):
        raise ValueError(
            f"{weights.shape[1]} inputs; a {num_players}-player observation of layout version "
            f"{version} has {int(keep.sum())}"
        )
    out = np.zeros((weights.shape[0], lay.size), dtype=weights.dtype)
    out[:, keep] = weights
    return out


@cache
def privileged_layout(n: int) -> dict[str, slice]:
    """The named slices of the privileged features for ``n`` players (see the module docstring)."""
    out: dict[str, slice] = {}
    pos = 0
    for name, size in (("opp_hands", (n - 1) * 52), ("opp_counts", n - 1), ("next_stock", 52)):
        out[name] = slice(pos, pos + size)
        pos += size
    return out


def privileged_size(num_players: int) -> int:
    """Floats of the privileged features for ``num_players`` (``53 * (n - 1) + 52``)."""
    return privileged_layout(num_players)["next_stock"].stop


def privileged_features(s: GameState, seat: int) -> np.ndarray:
    """What ``seat`` cannot see: the opponents' hands, their counts / 50, the next stock card (float32)."""
    n = s.n
    lay = privileged_layout(n)
    out = np.zeros(privileged_size(n), dtype=np.float32)
    hands = [s.hands[(seat + i) % n] for i in range(1, n)]
    unpack_masks(hands, out[lay["opp_hands"]])
    out[lay["opp_counts"]] = [hand_value(h) / 50 for h in hands]
    if s.stock:
        out[lay["next_stock"].start + s.stock[-1]] = 1.0
    return out


#: The keys of an agent's observation dict.
OBS_KEYS = ("observation", "action_mask")


class LazyObs(Mapping[str, np.ndarray]):
    """The observation dict of one seat, computed on first access (for harnesses and opponents in envs).

    It reads the live state when an entry is first read: read it before the state moves on."""

    __slots__ = ("_state", "_seat", "_cache")

    def __init__(self, state: GameState, seat: int) -> None:
        self._state = state
        self._seat = seat
        self._cache: dict[str, np.ndarray] = {}

    def __getitem__(self, key: str) -> np.ndarray:
        v = self._cache.get(key)
        if v is None:
            if key == "observation":
                v = observation(self._state, self._seat)
            elif key == "action_mask":
                v = legal_mask(self._state)
                if self._state.cur != self._seat:
                    v[:] = 0
            else:
                raise KeyError(key)
            self._cache[key] = v
        return v

    def legal(self) -> list[int]:
        """The seat's legal action ids, ascending (the 1s of ``action_mask``), without building the mask."""
        return legal_actions(self._state) if self._state.cur == self._seat else []

    def __iter__(self) -> Iterator[str]:
        return iter(OBS_KEYS)

    def __len__(self) -> int:
        return len(OBS_KEYS)
