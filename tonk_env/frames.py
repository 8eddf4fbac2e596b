"""Pictures of the table: the ``render_mode="rgb_array"`` frames of both envs.

A frame is a numpy ``uint8`` array of shape ``(HEIGHT, WIDTH, 3)`` drawn with
Pillow (a dependency of matplotlib, so of this package; no window, no GUI
toolkit) from one seat's JSON view (:func:`tonk_env.engine.view`). The view
holds only what that seat may know, so the picture cannot show a hidden card:

- the viewer's hand face up, every other hand face down (cards that seat is
  known to hold, such as a discard it took, face up first);
- the stock face down with its size, the discard pile's top card and size;
- the spreads on the table with their owners;
- each seat's tags (dealer, waits) and, for the viewer, its count; the seat to
  play framed in gold;
- once the hand is over, every hand face up, each seat's count and payoff.

``Gymnasium``'s ``RecordVideo`` makes a clip of these frames (it needs
``moviepy``); ``frame_for(state, seat)`` draws one for an engine state.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from .engine import GameState, view

#: Frame size in pixels (both multiples of 16, as video encoders like them).
WIDTH, HEIGHT = 640, 480

_FELT = (31, 107, 69)
_FELT_DARK = (15, 61, 41)
_PANEL = (25, 88, 57)
_GOLD = (242, 201, 76)
_WHITE = (244, 244, 244)
_INK = (27, 27, 27)
_RED = (198, 40, 40)
_BACK = (44, 79, 158)
_BACK_LINE = (92, 124, 200)
_GREEN = (155, 231, 155)
_PINK = (255, 179, 179)

_BIG = (34, 48)  # a hand's card: width, height
_SMALL = (24, 34)  # a spread's card
_SUIT_RED = ("H", "D")


@cache
def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    """Pillow's built-in font at ``size`` pixels (a bitmap font where FreeType is missing)."""
    return ImageFont.load_default(size=size)


def _suit(d: ImageDraw.ImageDraw, suit: str, cx: float, cy: float, r: float, color: tuple[int, ...]) -> None:
    """A suit symbol of radius ``r`` centred at ``(cx, cy)``, drawn with polygons and circles."""
    if suit == "D":
        d.polygon([(cx, cy - r), (cx + 0.75 * r, cy), (cx, cy + r), (cx - 0.75 * r, cy)], fill=color)
        return
    h = r / 2
    if suit == "H":
        for x in (cx - h, cx + h):
            d.ellipse([x - h, cy - r * 0.4 - h, x + h, cy - r * 0.4 + h], fill=color)
        d.polygon([(cx - r, cy - r * 0.25), (cx + r, cy - r * 0.25), (cx, cy + r)], fill=color)
        return
    if suit == "S":
        for x in (cx - h, cx + h):
            d.ellipse([x - h, cy - h * 0.6, x + h, cy + h * 1.4], fill=color)
        d.polygon([(cx - r, cy + r * 0.3), (cx + r, cy + r * 0.3), (cx, cy - r)], fill=color)
    else:  # clubs
        k = r * 0.45
        for x, y in ((cx, cy - r * 0.45), (cx - r * 0.5, cy + r * 0.15), (cx + r * 0.5, cy + r * 0.15)):
            d.ellipse([x - k, y - k, x + k, y + k], fill=color)
    d.polygon([(cx, cy), (cx - r * 0.35, cy + r), (cx + r * 0.35, cy + r)], fill=color)


def _card(d: ImageDraw.ImageDraw, x: int, y: int, text: str | None, size: tuple[int, int]) -> None:
    """One card at ``(x, y)``: face up (``"QH"``), face down (``None``)."""
    w, h = size
    box = [x, y, x + w - 1, y + h - 1]
    if text is None:
        d.rounded_rectangle(box, radius=4, fill=_BACK, outline=_WHITE, width=2)
        d.rectangle([x + 5, y + 5, x + w - 6, y + h - 6], outline=_BACK_LINE, width=2)
        cx, cy, r = x + w / 2, y + h / 2, w / 5
        d.polygon([(cx, cy - r), (cx + r, cy), (cx, cy + r), (cx - r, cy)], fill=_BACK_LINE)
        return
    d.rounded_rectangle(box, radius=4, fill=(255, 255, 255), outline=(136, 136, 136))
    rank, suit = ("10" if text[0] == "T" else text[0]), text[1]
    color = _RED if suit in _SUIT_RED else _INK
    big = w >= _BIG[0]
    d.text((x + 3, y + 2), rank, fill=color, font=_font(15 if big else 11))
    r = w * (0.26 if big else 0.24)
    _suit(d, suit, x + w / 2 + (2 if big else 1), y + h * 0.66, r, color)


def _cards(
    d: ImageDraw.ImageDraw, x: int, y: int, faces: list[str | None], size: tuple[int, int], step: int
) -> int:
    """A row of cards from ``x``, ``step`` pixels apart; return the x after the last."""
    for f in faces:
        _card(d, x, y, f, size)
        x += step
    return x + size[0] - step


def _status(v: dict[str, Any]) -> str:
    """The header line: whose turn and what they may do, or how the hand ended."""
    res = v["result"]
    if res is not None:
        by = "" if res.get("seat") is None else f" by seat {res['seat']}"
        return f"Hand over after {v['turn']} turns: {res['kind'].replace('_', ' ')}{by}"
    what = "drop, draw or take" if v["phase"] == "start" else "spread, hit, then discard"
    return f"Turn {v['turn'] + 1}: seat {v['current_player']} to play ({what})"


def _seat_row(d: ImageDraw.ImageDraw, v: dict[str, Any], p: int, y: int, height: int) -> None:
    """Seat ``p``'s row: its name and tags, its cards (face down unless they are the viewer's), its result."""
    me = p == v["seat"]
    res = v["result"]
    if v["current_player"] == p:
        d.rounded_rectangle([6, y, 392, y + height - 4], radius=8, outline=_GOLD, width=3, fill=_PANEL)
    else:
        d.rounded_rectangle([6, y, 392, y + height - 4], radius=8, fill=_PANEL)
    tags = [t for t, on in (("dealer", p == v["dealer"]), (f"waits {v['waits'][p]}", v["waits"][p])) if on]
    name = f"Seat {p}" + (" (viewer)" if me else "") + "".join(f"  [{t}]" for t in tags)
    d.text((14, y + 3), name, fill=_GOLD if me else _WHITE, font=_font(13))
    if res is not None:
        faces: list[str | None] = list(res["hands"][p])
        pay = res["payoffs"][p]
        d.text((300, y + 3), f"count {res['counts'][p]}", fill=_WHITE, font=_font(13))
        d.text(
            (300, y + 21),
            f"{pay:+g}",
            fill=_GREEN if pay > 0 else _PINK if pay < 0 else _WHITE,
            font=_font(20),
        )
    elif me:
        faces = list(v["hand"])
        d.text((300, y + 3), f"count {v['count']}", fill=_WHITE, font=_font(13))
    else:
        known = list(v["known_cards"][p])
        faces = [*known, *([None] * (v["hand_sizes"][p] - len(known)))]
    size = _BIG if height >= 70 else _SMALL
    step = min(size[0] + 3, (280 - size[0]) // max(len(faces) - 1, 1))
    if not faces:
        d.text((14, y + 24), "(no cards)", fill=_WHITE, font=_font(13))
    _cards(d, 14, y + 19, faces, size, step)


def _center(d: ImageDraw.ImageDraw, v: dict[str, Any]) -> None:
    """The right panel: stock, discard pile, the spreads."""
    d.rounded_rectangle([400, 34, 634, 474], radius=10, fill=_PANEL)
    if v["stock_size"]:
        _card(d, 414, 44, None, _BIG)
    else:
        d.rounded_rectangle([414, 44, 414 + _BIG[0] - 1, 44 + _BIG[1] - 1], radius=4, outline=_WHITE)
    d.text((410, 96), f"stock {v['stock_size']}", fill=_WHITE, font=_font(12))
    if v["top_discard"]:
        _card(d, 488, 44, v["top_discard"], _BIG)
    else:
        d.rounded_rectangle([488, 44, 488 + _BIG[0] - 1, 44 + _BIG[1] - 1], radius=4, outline=_WHITE)
    d.text((478, 96), f"discards {len(v['discards'])}", fill=_WHITE, font=_font(12))
    d.text((410, 118), "Spreads" if v["spreads"] else "Spreads: none", fill=_GOLD, font=_font(13))
    y = 138
    rows = (474 - y) // 38
    for i, sp in enumerate(v["spreads"]):
        if i == rows - 1 and len(v["spreads"]) > rows:
            d.text((410, y + 8), f"+{len(v['spreads']) - i} more", fill=_WHITE, font=_font(13))
            break
        d.text((410, y + 10), f"s{sp['owner']}", fill=_WHITE, font=_font(12))
        step = min(17, (200 - _SMALL[0]) // max(len(sp["cards"]) - 1, 1))
        _cards(d, 432, y, list(sp["cards"]), _SMALL, step)
        y += 38


def draw_view(v: dict[str, Any]) -> np.ndarray:
    """The table as one seat sees it (an engine ``view`` dict): a ``(480, 640, 3)`` uint8 image."""
    img = Image.new("RGB", (WIDTH, HEIGHT), _FELT)
    d = ImageDraw.Draw(img)
    d.rectangle([0, 0, WIDTH, 28], fill=_FELT_DARK)
    d.text((10, 6), _status(v), fill=_WHITE, font=_font(15))
    d.text((WIDTH - 10, 8), f"seat {v['seat']}'s view", fill=_GOLD, font=_font(12), anchor="ra")
    n = v["num_players"]
    height = min(76, (HEIGHT - 34) // n)
    for p in range(n):
        _seat_row(d, v, p, 34 + p * height, height)
    _center(d, v)
    return np.asarray(img, dtype=np.uint8)


def frame_for(state: GameState, seat: int) -> np.ndarray:
    """The ``rgb_array`` frame of an engine state from ``seat``'s view (hidden hands face down)."""
    return draw_view(view(state, seat))
