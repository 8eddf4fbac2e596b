"""A text picture of a hand for people (the terminal, env ``render()``, OpenSpiel's strings)."""

from __future__ import annotations

from .cards import card_to_string, hand_value, mask_to_strings
from .state import OVER, START, GameState


def render(s: GameState, seat: int | None = None) -> str:
    """A text picture of the hand for a person; ``seat`` hides the others' cards."""
    lines = []
    if s.phase == OVER:
        assert s.result is not None
        lines.append(
            f"Hand over after {s.turn} turns: {s.result.kind}"
            + (f" ({s.result.detail})" if s.result.detail else "")
        )
    else:
        what = "drop, draw or take" if s.phase == START else "spread, hit, then discard"
        lines.append(f"Turn {s.turn + 1}: seat {s.cur} to play ({what})")
    top = card_to_string(s.pile[-1]) if s.pile else "--"
    lines.append(f"Stock: {len(s.stock)} cards   Discard pile: {top} on top ({len(s.pile)} cards)")
    for p in range(s.n):
        tag = []
        if p == s.dealer:
            tag.append("dealer")
        if s.waits[p]:
            tag.append(f"waits {s.waits[p]}")
        label = f"Seat {p}" + (" (you)" if p == seat else "") + (f" [{', '.join(tag)}]" if tag else "")
        h = s.hands[p]
        if seat is None or p == seat or s.phase == OVER:
            lines.append(f"  {label}: {' '.join(mask_to_strings(h)) or '(empty)'}  = {hand_value(h)}")
        else:
            lines.append(f"  {label}: {h.bit_count()} cards")
    if s.spreads:
        lines.append("Table:")
        for sp in s.spreads:
            lines.append(f"  seat {sp.owner}: {' '.join(card_to_string(c) for c in sp.cards())}")
    else:
        lines.append("Table: (no spreads)")
    if s.result is not None:
        pays = ", ".join(f"seat {p}: {v:+g}" for p, v in enumerate(s.result.payoffs))
        lines.append(f"Payoffs (stakes): {pays}")
    return "\n".join(lines)
