"""The Tonk rules engine: pure Python, no RL library.

Quick tour::

    from tonk_env.engine import make_rules, new_game, legal_actions, apply, is_over, payoffs
    s = new_game(make_rules("standard"), num_players=2, seed=1)
    while not is_over(s):
        s = apply(s, legal_actions(s)[0])
    print(payoffs(s), s.result.kind)

See ``docs/RULES.md`` for the rules; each module's docstring documents its
part (``cards``: card ids and bitmasks; ``actions``: the action table;
``state``: turns and legality; ``strings``: action strings; ``scoring``:
payments; ``infostate``: what one seat knows; ``view``: the JSON view;
``render``: the text picture; ``record``: hand records). The observation
tensor and the opponent model are the env layer's (:mod:`tonk_env.obs`,
:mod:`tonk_env.odds`).
"""

from __future__ import annotations

from .actions import ActionTable, action_table
from .cards import card_to_string, cards_of, hand_value, mask_of, mask_to_strings, parse_card, parse_cards
from .infostate import SeatInfo, sample_state, seat_info
from .record import RECORD_FORMAT, replay, to_record
from .render import render
from .rules import OPTION_NAMES, PRESETS, TonkRules, make_rules, parse_assignments, parse_option
from .state import (
    OVER,
    PHASE_NAMES,
    PLAY,
    RESULT_KINDS,
    START,
    GameState,
    IllegalActionError,
    Result,
    apply,
    check_invariants,
    counts,
    deal_order,
    is_legal,
    is_over,
    legal_actions,
    legal_mask,
    new_game,
    payoffs,
    shuffled_deck,
)
from .strings import action_from_string, action_to_string
from .view import view, view_from_info

__all__ = [
    "OPTION_NAMES", "OVER", "PHASE_NAMES", "PLAY", "PRESETS", "RECORD_FORMAT", "RESULT_KINDS", "START",
    "ActionTable", "GameState", "IllegalActionError", "Result", "SeatInfo", "TonkRules",
    "action_from_string", "action_table", "action_to_string", "apply", "card_to_string", "cards_of",
    "check_invariants", "counts", "deal_order", "hand_value", "is_legal", "is_over", "legal_actions",
    "legal_mask", "make_rules", "mask_of", "mask_to_strings", "new_game", "parse_assignments", "parse_card",
    "parse_cards", "parse_option", "payoffs", "render", "replay", "sample_state", "seat_info",
    "shuffled_deck", "to_record", "view", "view_from_info",
]  # fmt: skip
