"""Helpers for the engine tests: stacked decks, scripted hands, random playouts and random states."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import strategies as st

from tonk_env.engine import (
    OVER,
    PRESETS,
    GameState,
    IllegalActionError,
    TonkRules,
    action_from_string,
    check_invariants,
    legal_actions,
    make_rules,
    new_game,
)
from tonk_env.engine.actions import DRAW, DROP, HIT_BOOK
from tonk_env.engine.cards import NUM_CARDS, card_to_string, parse_cards

ALL_CARDS = [card_to_string(c) for c in range(NUM_CARDS)]


def stack(
    hands: Sequence[str], upcard: str | None = None, stock: str = "", dealer: int | None = None
) -> list[str]:
    """A deck (top first) that deals ``hands[p]`` to seat ``p``, then ``upcard``, then ``stock`` top first.

    Cards go one at a time to each seat starting left of the dealer (the
    dealer defaults to the last seat, as in ``new_game``).
    """
    n = len(hands)
    dealer = n - 1 if dealer is None else dealer
    per = [h.split() for h in hands]
    size = len(per[0])
    assert all(len(h) == size for h in per), "every seat needs the same number of cards"
    first = (dealer + 1) % n
    deck = [per[(first + k) % n][i] for i in range(size) for k in range(n)]
    if upcard:
        deck.append(upcard)
    return deck + stock.split()


def rest_of_deck(*used: str) -> list[str]:
    """The cards (as strings, in card-id order) not named in ``used``."""
    taken = set(parse_cards(" ".join(used)))
    return [card_to_string(c) for c in range(NUM_CARDS) if c not in taken]


def dd(*cards: str) -> list[str]:
    """``draw`` then ``discard`` the drawn card, once per card (plays down the stock)."""
    out: list[str] = []
    for c in cards:
        out += ["draw", f"discard {c}"]
    return out


def play_script(
    rules: TonkRules | str,
    hands: Sequence[str],
    upcard: str | None,
    stock: str,
    actions: Sequence[str],
    dealer: int | None = None,
) -> GameState:
    """Deal a stacked deck and play ``actions`` through ``action_from_string``.

    An action written ``"!text"`` asserts that ``text`` is refused (and plays
    nothing). The 52 cards are checked after every step.
    """
    rules = make_rules(rules) if isinstance(rules, str) else rules
    s = new_game(rules, len(hands), seed=0, deck=stack(hands, upcard, stock, dealer), dealer=dealer)
    check_invariants(s)
    for i, text in enumerate(actions):
        if text.startswith("!"):
            with pytest.raises(IllegalActionError):
                action_from_string(s, text[1:])
            continue
        try:
            a = action_from_string(s, text)
        except IllegalActionError as e:  # pragma: no cover - a broken script, say which step
            raise AssertionError(f"step {i} {text!r}: {e}") from None
        s.play(a)
        check_invariants(s)
    return s


def snapshot(s: GameState) -> tuple[Any, ...]:
    """Everything in a state, as plain values, to compare states."""
    return (
        s.rules, s.n, s.dealer, s.deck, tuple(s.hands), tuple(s.stock), tuple(s.pile), s.cur, s.phase,
        s.taken, tuple(s.waits), tuple(s.known), s.discarded,
        tuple((x.owner, x.mask, x.kind, x.key, x.lo, x.hi) for x in s.spreads),
        tuple(s.spread_owner_masks), s.book_targets, s.high_targets, s.low_targets,
        tuple(sorted(s.target_index.items())), s.turn, tuple(s.history), s.result,
    )  # fmt: skip


@dataclass
class BiasedPlayer:
    """A random player that rarely drops and likes spreads and hits, so hands run long."""

    rng: random.Random
    p_drop: float = 0.02
    p_meld: float = 0.6
    p_take: float = 0.3
    counts: dict[str, int] = field(default_factory=dict)

    def __call__(self, s: GameState) -> int:
        legal = legal_actions(s)
        r = self.rng
        if DRAW in legal:  # start of turn
            if DROP in legal and r.random() < self.p_drop:
                return DROP
            rest = [a for a in legal if a != DROP]
            if len(rest) > 1 and r.random() < self.p_take:
                return rest[1]  # take
            return DRAW if len(rest) == 1 or r.random() < 0.8 else r.choice(rest)
        melds = [a for a in legal if a >= HIT_BOOK]
        if melds and r.random() < self.p_meld:
            return r.choice(melds)
        return r.choice([a for a in legal if a < HIT_BOOK] or legal)


def playout(
    rules: TonkRules, n: int, seed: int, player_seed: int | None = None, p_drop: float = 0.02
) -> tuple[GameState, list[GameState]]:
    """Play one hand with :class:`BiasedPlayer`; return the final state and every state on the way."""
    s = new_game(rules, n, seed=seed)
    player = BiasedPlayer(random.Random(seed if player_seed is None else player_seed), p_drop=p_drop)
    states = [s.copy()]
    while s.phase != OVER:
        s.play(player(s))
        states.append(s.copy())
    return s, states


def random_state(preset: str, n: int, seed: int, cut: float) -> GameState:
    """A state part way through a random hand (the end state if ``cut`` is 1)."""
    _, states = playout(make_rules(preset), n, seed)
    return states[int(cut * (len(states) - 1))]


#: Hypothesis strategy: states part way through random hands, every preset and player count.
state_st = st.builds(
    random_state,
    st.sampled_from(sorted(PRESETS)),
    st.integers(2, 6),
    st.integers(0, 2**32 - 1),
    st.floats(0, 1),
)
