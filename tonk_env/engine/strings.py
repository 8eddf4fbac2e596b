"""Action strings for people, tests and records.

=====================  ================================================
string                 action
=====================  ================================================
``drop``               drop (also ``knock``)
``draw``               draw from the stock
``take``               take the top discard
``discard 4S``         discard a card
``spread 3H 4H 5H``    lay a spread (cards in any order)
``hit 9H``             hit with 9H when it has exactly one legal target
``hit 9H on 6H``       hit the spread that holds 6H (any card of it)
=====================  ================================================

Cards are written as in :mod:`tonk_env.engine.cards` (``10H``, ``th``, ``T♥``).
"""

from __future__ import annotations

from .actions import DISCARD, DRAW, DROP, HIT_BOOK, HIT_HIGH, HIT_LOW, TAKE, action_table
from .cards import card_to_string, mask_of, parse_card, parse_cards
from .state import OVER, PHASE_NAMES, PLAY, GameState, IllegalActionError, action_name, legal_actions

_ALIASES = {"knock": "drop", "pick": "draw", "pickup": "take", "pick up": "take"}
_WORDS = {"drop": DROP, "draw": DRAW, "take": TAKE}


def action_to_string(s: GameState | None, action: int) -> str:
    """The string of an action; with a state, a hit uses its short form when unambiguous."""
    if s is None:
        return action_table(False).name(action)
    return action_name(s, action)


def action_from_string(s: GameState, text: str) -> int:
    """Parse an action string into a legal action id, or raise ``ValueError`` saying why."""
    try:
        action = _parse(s, text)
    except IllegalActionError:
        raise
    except ValueError as e:
        raise IllegalActionError(f"cannot read action {text.strip()!r}: {e}; {_legal_list(s)}") from None
    if action not in legal_actions(s):
        raise IllegalActionError(
            f"{text.strip()!r} is not legal now (seat {s.cur}, phase "
            f"{PHASE_NAMES[s.phase]}); {_legal_list(s)}"
        )
    return action


def _legal_list(s: GameState) -> str:
    if s.phase == OVER:
        return "the hand is over, no action is legal"
    return "legal actions: " + ", ".join(action_to_string(s, a) for a in legal_actions(s))


def _parse(s: GameState, text: str) -> int:
    t = " ".join(text.strip().lower().split())
    t = _ALIASES.get(t, t)
    if t in _WORDS:
        return _WORDS[t]
    verb, _, rest = t.partition(" ")
    if verb == "discard":
        return DISCARD + parse_card(rest)
    if verb == "spread":
        return _parse_spread(s, rest)
    if verb == "hit":
        return _parse_hit(s, rest)
    raise ValueError("expected drop, draw, take, discard C, spread C C C, hit C or hit C on C")


def _parse_spread(s: GameState, rest: str) -> int:
    """The spread action laying the cards of ``rest`` (in any order)."""
    cards = parse_cards(rest)
    m = mask_of(cards)
    if len(cards) < 3 or m.bit_count() != len(cards) or m not in s.table.spread_by_mask:
        raise ValueError("not a spread (a book of 3-4 or a run of 3+ in one suit)")
    return s.table.spread_by_mask[m]


def _parse_hit(s: GameState, rest: str) -> int:
    """The hit named by ``C`` or ``C on T`` (``T`` any card of the target spread)."""
    card_text, _, target_text = rest.partition(" on ")
    card = parse_card(card_text)
    if s.phase != PLAY:
        raise IllegalActionError(f"no hit is legal in phase {PHASE_NAMES[s.phase]}; {_legal_list(s)}")
    candidates = [
        a
        for a in (HIT_BOOK + card, HIT_HIGH + card, HIT_LOW + card)
        if a in s.target_index and s.hands[s.cur] >> card & 1
    ]
    if not target_text.strip():
        if len(candidates) == 1:
            return candidates[0]
        if not candidates:
            raise IllegalActionError(f"{card_to_string(card)} hits no spread now; {_legal_list(s)}")
        options = " or ".join(s.table.name(a) for a in candidates)
        raise IllegalActionError(
            f"'hit {card_to_string(card)}' is ambiguous: say {options}; {_legal_list(s)}"
        )
    target = parse_card(target_text)
    exact = f"hit {card_to_string(card)} on {card_to_string(target)}"
    for a in candidates:  # the long form names the neighbouring card: prefer an exact match
        if s.table.name(a) == exact:
            return a
    for a in candidates:
        if s.spreads[s.target_index[a]].mask >> target & 1:
            return a
    raise IllegalActionError(
        f"{card_to_string(card)} cannot hit the spread holding {card_to_string(target)}; {_legal_list(s)}"
    )
