"""What one seat may know, as a JSON-serialisable dict: the view that people and programs read.

:func:`view` copies out the seat's :class:`~tonk_env.engine.infostate.SeatInfo`
and builds the dict from it alone (:func:`view_from_info`), so nothing hidden
can leak into it. The observation tensor for networks is
:mod:`tonk_env.obs`; the text picture for people is
:mod:`tonk_env.engine.render`.
"""

from __future__ import annotations

from typing import Any

from .actions import HIT_BOOK, SPREAD
from .cards import card_to_string, hand_value, mask_to_strings
from .infostate import SeatInfo, seat_info
from .state import OVER, PHASE_NAMES, GameState, Spread


def view(s: GameState, seat: int) -> dict[str, Any]:
    """A JSON-serialisable dict of exactly what ``seat`` may know.

    Keys: ``seat``, ``num_players``, ``rules`` (option dict), ``rules_hash``,
    ``dealer``, ``current_player``, ``phase`` (``start``/``play``/``over``),
    ``hand``, ``count`` (my hand's count), ``top_discard``, ``discards`` (the
    discard pile as it stands, oldest first, top last; cards taken from it
    appear in ``history``), ``stock_size``, ``spreads`` (``{"owner", "cards"}``),
    ``hand_sizes``, ``known_cards`` (per seat, cards known to be in that hand),
    ``waits``, ``turn`` (turns completed), ``history`` (every public action as
    ``[seat, action string]``; a draw does not name its card), ``legal_actions``
    (strings; empty unless it is this seat's turn), ``result`` (null until the
    hand is over, then kind, every seat's hand, counts and payoffs).
    """
    return view_from_info(seat_info(s, seat))


def view_from_info(info: SeatInfo) -> dict[str, Any]:
    """The JSON view built from a :class:`SeatInfo` alone (so nothing hidden leaks)."""
    name = info.table.name
    legal = []
    if info.legal:
        short = _short_hits(info)
        legal = [short.get(a) or name(a) for a in info.legal]
    return {
        "seat": info.seat,
        "num_players": info.n,
        "rules": info.rules.to_dict(),
        "rules_hash": info.rules.hash,
        "dealer": info.dealer,
        "current_player": None if info.phase == OVER else info.cur,
        "phase": PHASE_NAMES[info.phase],
        "hand": mask_to_strings(info.hand),
        "count": hand_value(info.hand),
        "top_discard": card_to_string(info.pile[-1]) if info.pile else None,
        "discards": [card_to_string(c) for c in info.pile],
        "stock_size": info.stock_size,
        "spreads": [
            {"owner": sp[0], "cards": [card_to_string(c) for c in Spread(*sp).cards()]} for sp in info.spreads
        ],
        "hand_sizes": list(info.hand_sizes),
        "known_cards": [mask_to_strings(k) for k in info.known],
        "waits": list(info.waits),
        "turn": info.turn,
        "history": [[seat, name(a)] for seat, a in info.history],
        "legal_actions": legal,
        "result": info.result.to_dict() if info.result is not None else None,
    }


def _short_hits(info: SeatInfo) -> dict[int, str]:
    """Short ``hit C`` strings for legal hits whose card has a single target."""
    per_card: dict[int, list[int]] = {}
    for a in info.legal:
        if HIT_BOOK <= a < SPREAD:
            per_card.setdefault((a - HIT_BOOK) % 52, []).append(a)
    return {acts[0]: "hit " + card_to_string(c) for c, acts in per_card.items() if len(acts) == 1}
