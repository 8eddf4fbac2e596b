"""Scripted hands as tables (PettingZoo ``test_board.py`` style).

Each row is a stacked deal (hands by seat, the upcard, the stock top first),
the action strings played in order (``"!x"`` = ``x`` must be refused), and the
expected end: result kind, payoffs in stakes, and optionally counts, the seat
that ended the hand and the result detail. Seat 0 plays first (the dealer is
the last seat). Every worked example of RULES.md §9 is a row marked ``§9``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest
from helpers_engine import dd, play_script, rest_of_deck, stack

from tonk_env.engine import (
    RECORD_FORMAT,
    TonkRules,
    action_from_string,
    card_to_string,
    hand_value,
    is_over,
    legal_actions,
    make_rules,
    new_game,
    parse_cards,
    payoffs,
    replay,
    to_record,
    view,
)
from tonk_env.engine.actions import DRAW, DROP, TAKE
from tonk_env.engine.cards import mask_of


@dataclass
class Scenario:
    id: str
    rules: TonkRules
    hands: list[str]
    upcard: str | None
    stock: str
    actions: list[str]
    kind: str | None  # None: the hand must still be running
    payoffs: tuple[float, ...] | None = None
    counts: tuple[int, ...] | None = None
    seat: Any = "any"  # "any" = not checked
    detail: str | None = None
    waits: tuple[int, ...] | None = None
    spreads: list[tuple[int, str]] | None = None  # (owner, cards in order) on the table at the end


STD = make_rules("standard")


def R(preset: str = "standard", **options: Any) -> TonkRules:
    return make_rules(preset, **options)


# --- RULES.md §9: the three-player drop examples (A = seat 0 drops; B = 1, C = 2) -------------
# A and B each lay a book on their first turn to get down to two cards; C draws and
# discards; A drops at the start of their second turn.
def _drop3(a: str, b: str, c: str, c_spreads: str | None = None) -> tuple[list[str], list[str]]:
    hands = [a, b, c]
    acts = ["draw", "spread KC KD KH", "discard 9S", "draw", "spread QC QD QH", "discard 8S", "draw"]
    acts += [f"spread {c_spreads}", "discard 7S"] if c_spreads else ["discard 7S"]
    return hands, acts + ["drop"]


DROP_6_4_12 = _drop3("KC KD KH 2C 4D", "QC QD QH AC 3D", "2D 2H 3C 3H 2S")
DROP_6_5_5 = _drop3("KC KD KH 2C 4D", "QC QD QH AC 4C", "JC JD JH 2D 3D", "JC JD JH")
DROP_5_5_12 = _drop3("KC KD KH AC 4C", "QC QD QH 2D 3D", "2H 2S 3H 3S 2C")
DROP_8_4_7 = _drop3("KC KD KH 3C 5D", "QC QD QH AC 3D", "JC JD JH 2D 5C", "JC JD JH")
DROP_STOCK = "9S 8S 7S"

# --- §9 stock exhausted, counts A 12, B 9, C 9: B and C lay a book, then everyone plays
# down the whole stock by drawing and discarding, and A draws from the empty stock.
_SO_HANDS = ["2C 2D 2H 3C 3D", "KC KD KH 4C 5D", "QC QD QH 4D 5C"]
_SO_REST = rest_of_deck(*_SO_HANDS)
_SO_UP, _SO_STOCK = _SO_REST[0], _SO_REST[1:]
_SO_ACTIONS = (
    dd(_SO_STOCK[0])
    + ["draw", "spread KC KD KH", f"discard {_SO_STOCK[1]}"]
    + ["draw", "spread QC QD QH", f"discard {_SO_STOCK[2]}"]
    + dd(*_SO_STOCK[3:])
    + ["draw"]
)

# --- a two-player hand that plays down the whole stock (41 cards) ------------------------
_S2_HANDS = ["AC AD AH AS 2C", "KC KD QC QD 8C"]  # counts 6 and 48
_S2_REST = rest_of_deck(*_S2_HANDS)
_S2_UP, _S2_STOCK = _S2_REST[0], _S2_REST[1:]

_TIE_HANDS = ["AC AD 2H 3S KC", "AH AS 2C 3D KD"]  # 17 each
_TIE_REST = rest_of_deck(*_TIE_HANDS)

# The first hand of a waiting script: seat 0 spreads a heart run on turn 1 and keeps KC 9D;
# seat 1 (count 48) only draws and discards.
W0, W1 = "3H 4H 5H KC 9D", "KS QS JS TS 8S"


def _wait_turns(blocked: int, draws: list[str]) -> list[str]:
    """``blocked`` rounds in which seat 0 may not drop, then seat 0 drops."""
    acts: list[str] = []
    it = iter(draws)
    for _ in range(blocked):
        acts += ["!drop", *dd(next(it)), *dd(next(it))]
    return acts + ["drop"]


# fmt: off
SCENARIOS = [
    # ---------------------------------------------------------------- RULES.md §9
    Scenario("§9 instant win 49", STD, ["KS QH JD TC 9S", "2C 3C 4D 5D 6H", "2D 3D 4C 5C 7H"], "8H", "",
             [], "instant_win", (4, -2, -2), counts=(49, 20, 21), seat=0),
    Scenario("§9 drop 6 vs 4, 12: caught", STD, DROP_6_4_12[0], "9C", DROP_STOCK, DROP_6_4_12[1],
             "caught", (-2, 3, -1), counts=(6, 4, 12), seat=0),
    Scenario("§9 drop 6 vs 5, 5: caught", STD, DROP_6_5_5[0], "9C", DROP_STOCK, DROP_6_5_5[1],
             "caught", (-4, 2, 2), counts=(6, 5, 5), seat=0),
    Scenario("§9 drop 5 vs 5, 12: a tie is caught", STD, DROP_5_5_12[0], "9C", DROP_STOCK, DROP_5_5_12[1],
             "caught", (-2, 3, -1), counts=(5, 5, 12), seat=0),
    Scenario("§9 drop 8 vs 4, 7: caught", STD, DROP_8_4_7[0], "9C", DROP_STOCK, DROP_8_4_7[1],
             "caught", (-4, 3, 1), counts=(8, 4, 7), seat=0),
    # B = seat 0 lays 6H 7H 8H, C = seat 1 lays 5C 6C 7C, A = seat 2 hits 4C and 8C to hold 4H 5H 9H;
    # next turn A draws 3H, spreads 3H 4H 5H and hits 9H onto B's run.
    Scenario("§9 tonk out with a hit on an opponent's run", STD,
             ["6H 7H 8H KS QS", "5C 6C 7C KD QD", "4H 5H 9H 4C 8C"], "2S", "JS JD TS TD 9D 3H",
             ["draw", "spread 6H 7H 8H", "discard JS", "draw", "spread 5C 6C 7C", "discard JD",
              "draw", "hit 4C", "hit 8C", "discard TS", *dd("TD"), *dd("9D"),
              "draw", "spread 3H 4H 5H", "hit 9H"],
             "tonk_out", (-2, -2, 4), seat=2,
             spreads=[(0, "6H 7H 8H 9H"), (1, "4C 5C 6C 7C 8C"), (2, "3H 4H 5H")]),  # B keeps its run
    # ... and under hit_penalty the hit counts as a hit on B (seat 0); C was hit twice and has
    # served one of the two turns since.
    Scenario("§9 tonk out: the hit is a hit on B for waiting", R("hit_penalty"),
             ["6H 7H 8H KS QS", "5C 6C 7C KD QD", "4H 5H 9H 4C 8C"], "2S", "JS JD TS TD 9D 3H",
             ["draw", "spread 6H 7H 8H", "discard JS", "draw", "spread 5C 6C 7C", "discard JD",
              "draw", "hit 4C", "hit 8C", "discard TS", *dd("TD"), *dd("9D"),
              "draw", "spread 3H 4H 5H", "hit 9H"],
             "tonk_out", (-2, -2, 4), seat=2, waits=(1, 1, 0)),
    # B = seat 0 lays JS JH JC; A = seat 1 lays a club run to hold only JD; next turn A draws 4S,
    # hits JD onto B's book and discards 4S.
    Scenario("§9 run out by hitting then discarding", STD, ["JS JH JC 9H 8D", "JD 2C 3C 4C 5C"], "KS",
             "7D 9S 6D 4S",
             ["draw", "spread JS JH JC", "discard 7D", "draw", "spread 2C 3C 4C 5C", "discard 9S",
              *dd("6D"), "draw", "hit JD", "discard 4S"],
             "run_out", (-1, 1), counts=(17, 0), seat=1),
    Scenario("§9 run out: had the drawn card fit a spread, it is a tonk out", STD,
             ["JS JH JC 9H 8D", "JD 2C 3C 4C 5C"], "KS", "7D 9S 6D 6C",
             ["draw", "spread JS JH JC", "discard 7D", "draw", "spread 2C 3C 4C 5C", "discard 9S",
              *dd("6D"), "draw", "hit JD", "hit 6C"],
             "tonk_out", (-2, 2), counts=(17, 0), seat=1),
    Scenario("§9 stock exhausted 12/9/9, stock_out_tie void", STD, _SO_HANDS, _SO_UP, " ".join(_SO_STOCK),
             _SO_ACTIONS, "void", (0, 0, 0), counts=(12, 9, 9), seat=0, detail="empty_stock"),
    Scenario("§9 stock exhausted 12/9/9, stock_out_tie split", R(stock_out_tie="split"), _SO_HANDS, _SO_UP,
             " ".join(_SO_STOCK), _SO_ACTIONS, "stock_out", (-2, 1, 1), counts=(12, 9, 9), seat=0,
             detail="empty_stock"),
    # ---------------------------------------------------------------- instant wins
    Scenario("instant win 50", STD, ["2C 3C 4C 5C 6C", "KC QC JC TC TD"], "8H", "", [],
             "instant_win", (-2, 2), counts=(20, 50), seat=1),
    Scenario("instant win pays instant_win_pay", R(instant_win_pay=3), ["KS QH JD TC 9S", "2C 3C 4C 5C 6C"],
             "8H", "", [], "instant_win", (3, -3), seat=0),
    Scenario("two instant winners: void", STD, ["KS QH JD TC 9S", "KC QC JC TH TD", "2C 3C 4C 5C 6C"],
             "8H", "", [], "void", (0, 0, 0), seat=None, detail="instant_win_tie"),
    Scenario("instant_win_tie rank: 50 beats 49", R(instant_win_tie="rank"),
             ["KS QH JD TC 9S", "KC QC JC TH TD", "2C 3C 4C 5C 6C"], "8H", "", [],
             "instant_win", (-2, 4, -2), seat=1),
    Scenario("instant_win_tie rank: 50 and 50 stay void", R(instant_win_tie="rank"),
             ["KC QC JC TC TD", "KD QD JD TH TS"], "8H", "", [], "void", (0, 0), seat=None),
    Scenario("instant_win_totals off: 49 plays on", R(instant_win_totals=()),
             ["KS QH JD TC 9S", "2C 3C 4C 5C 6C"], "8H", "", ["drop"], "caught", (-2, 2)),
    Scenario("instant_win_low_max: 8 wins at once", R("low_tonk"), ["AC AD AH 2C 3C", "KS QH JD TC 8S"],
             "8H", "", [], "instant_win", (2, -2), counts=(8, 48), seat=0),
    Scenario("instant_win_low_max: exactly the maximum wins", R("low_tonk"),
             ["AC AD AH 3C 5C", "KS QH JD TC 8S"], "8H", "", [], "instant_win", (2, -2), counts=(11, 48)),
    Scenario("instant_win_low_max: one above plays on", R("low_tonk"), ["AC AD AH 4C 5C", "KS QH JD TC 8S"],
             "8H", "", ["drop"], "drop_won", (1, -1), counts=(12, 48)),
    Scenario("low beats 50 under rank", R("low_tonk"), ["KC QC JC TC TD", "AS AD AH 2C 3C"], "8H", "", [],
             "instant_win", (-2, 2), counts=(50, 8), seat=1),
    Scenario("the lower low count beats the higher", R("low_tonk"), ["AC AD 2H 2C 4C", "AS AH 2D 2S 3C"],
             "8H", "", [], "instant_win", (-2, 2), counts=(10, 9), seat=1),
    Scenario("low and 49 under void: void", R(instant_win_low_max=11),
             ["AC AD AH 2C 3C", "KS QH JD TC 9S"], "8H", "", [], "void", (0, 0)),
    Scenario("seven_card: no instant wins", R("seven_card"), ["KS QH JD TC 5S 2H 2D", "2C 3C 4C 5C 6C 7C 8C"],
             "8H", "", ["drop"], "caught", (-2, 2), counts=(49, 35)),
    # ---------------------------------------------------------------- tonk out, run out, drop
    Scenario("tonk out with two spreads", STD, ["3H 4H 5H KC KD", "2C 3C 4C 5C 7D"], "2S", "KH",
             ["draw", "spread 3H 4H 5H", "spread KC KD KH"], "tonk_out", (2, -2), counts=(0, 21), seat=0),
    Scenario("tonk_out_pay 3", R(tonk_out_pay=3), ["3H 4H 5H KC KD", "2C 3C 4C 5C 7D", "7C 8C 9D TD JD"],
             "2S", "KH", ["draw", "spread 3H 4H 5H", "spread KC KD KH"], "tonk_out", (6, -3, -3)),
    Scenario("run out after a five-card run", STD, ["3H 4H 5H 6H 7H", "2C 3C 4C 5C 7D"], "2S", "KC",
             ["draw", "spread 3H 4H 5H 6H 7H", "discard KC"], "run_out", (1, -1), seat=0),
    Scenario("run_out_pay 1.5", R(run_out_pay=1.5), ["3H 4H 5H 6H 7H", "2C 3C 4C 5C 7D"], "2S", "KC",
             ["draw", "spread 7H 5H 3H 6H 4H", "discard KC"], "run_out", (1.5, -1.5)),
    Scenario("drop won, first turn", STD, ["AC AD AH 2C 3C", "KS QH JD TC 8S"], "8H", "", ["drop"],
             "drop_won", (1, -1), counts=(8, 48), seat=0),
    Scenario("drop won, three players", STD, ["AC AD AH 2C 3C", "KS QH JD TC 8S", "9C 9D 2S 3S 4S"], "8H", "",
             ["drop"], "drop_won", (2, -1, -1), seat=0),
    Scenario("drop won after a turn, by the second seat", STD, ["KS QH JD TC 8S", "AC AD AH 2C 3C"], "8H",
             "7C",
             [*dd("7C"), "drop"], "drop_won", (-1, 1), seat=1),
    Scenario("drop on an equal count is caught (two players)", STD, ["AC AD 2H 3S KC", "AH AS 2C 3D KD"],
             "8H",
             "", ["drop"], "caught", (-2, 2), counts=(17, 17)),
    Scenario("knock is drop", STD, ["AC AD AH 2C 3C", "KS QH JD TC 8S"], "8H", "", ["KNOCK"], "drop_won",
             (1, -1)),
    # caught_pay: the §9 deals under each scheme
    *[
        Scenario(f"caught_pay {scheme}, {name}", R(caught_pay=scheme), deal[0], "9C", DROP_STOCK, deal[1],
                 "caught", pay)
        for scheme, name, deal, pay in [
            ("standard", "6/4/12", DROP_6_4_12, (-2, 3, -1)),
            ("double_to_lowest_only", "6/4/12", DROP_6_4_12, (-2, 2, 0)),
            ("everyone_double", "6/4/12", DROP_6_4_12, (-4, 2, 2)),
            ("standard", "8/4/7", DROP_8_4_7, (-4, 3, 1)),
            ("double_to_lowest_only", "8/4/7", DROP_8_4_7, (-2, 2, 0)),
            ("everyone_double", "8/4/7", DROP_8_4_7, (-4, 2, 2)),
            ("double_to_lowest_only", "6/5/5", DROP_6_5_5, (-4, 2, 2)),
            ("everyone_double", "5/5/12", DROP_5_5_12, (-4, 2, 2)),
        ]
    ],
    # ---------------------------------------------------------------- stock exhausted, max_turns
    Scenario("two players play down the stock; drawing from the empty stock ends it", STD, _S2_HANDS, _S2_UP,
             " ".join(_S2_STOCK), [*dd(*_S2_STOCK), "draw"], "stock_out", (1, -1), counts=(6, 48), seat=1,
             detail="empty_stock"),
    Scenario("after the stock runs out, play goes on by taking", STD, _S2_HANDS, _S2_UP, " ".join(_S2_STOCK),
             [*dd(*_S2_STOCK), "take", f"discard {_S2_STOCK[-1]}", "draw"], "stock_out", (1, -1), seat=0,
             detail="empty_stock"),
    Scenario("stock out, two players tied: void", STD, _TIE_HANDS, _TIE_REST[0], " ".join(_TIE_REST[1:]),
             [*dd(*_TIE_REST[1:]), "draw"], "void", (0, 0), counts=(17, 17), detail="empty_stock"),
    Scenario("max_turns 4 scores as stock out", R(max_turns=4), _S2_HANDS, _S2_UP, " ".join(_S2_STOCK),
             dd(*_S2_STOCK[:4]), "stock_out", (1, -1), counts=(6, 48), seat=None, detail="max_turns"),
    Scenario("max_turns 1", R(max_turns=1), ["KS QH JD TC 8S", "AC AD AH 2C 3C"], "9H", "9D",
             dd("9D"), "stock_out", (-1, 1), seat=None, detail="max_turns"),
    Scenario("max_turns 3: not over after 2 turns", R(max_turns=3), _S2_HANDS, _S2_UP, " ".join(_S2_STOCK),
             dd(*_S2_STOCK[:2]), None),
    # ---------------------------------------------------------------- waiting
    Scenario("spread_wait 2 blocks the drop for exactly 2 own turns", R(spread_wait=2), [W0, W1], "2C",
             "2S 3S 4S 5S 6S 7S",
             ["draw", "spread 3H 4H 5H", "discard 2S", *dd("3S"), *_wait_turns(2, ["4S", "5S", "6S", "7S"])],
             "drop_won", (1, -1), counts=(19, 48)),
    # a turn served by taking the top discard counts like one served by drawing
    Scenario("spread_wait 2: turns served by taking count too", R(spread_wait=2), [W0, W1], "2C",
             "2S 3S 4S 5S 6S 7S",
             ["draw", "spread 3H 4H 5H", "discard 2S", *dd("3S"), "!drop", "take", "discard 3S", *dd("4S"),
              "!drop", "take", "discard 4S", *dd("5S"), "drop"],
             "drop_won", (1, -1), counts=(19, 48), waits=(0, 0)),
    Scenario("spread_wait: waiting does not stop a tonk out", R(spread_wait=2), ["3H 4H 5H KC KD", W1], "2C",
             "2S 3S KH",
             ["draw", "spread 3H 4H 5H", "discard 2S", *dd("3S"), "!drop", "draw", "spread KC KD KH"],
             "tonk_out", (2, -2), waits=(3, 0)),  # 2, one served at the draw, then 2 more for the book
    Scenario("full_waiting preset: spread_wait 3", R("full_waiting"), [W0, W1], "2C",
             "2S 3S 4S 5S 6S 7S 8D 9H",
             ["draw", "spread 3H 4H 5H", "discard 2S", *dd("3S"),
              *_wait_turns(3, ["4S", "5S", "6S", "7S", "8D", "9H"])],
             "drop_won", (1, -1)),
    # hit_wait: seat 1 hits seat 0's run; seat 0 may not drop on its next turn only.
    Scenario("hit_wait 1 on the owner of the spread", R("hit_penalty"), [W0, "6H QS JS TS 8S"], "2C",
             "2S 3S 4S 5S",
             ["draw", "spread 3H 4H 5H", "discard 2S", "draw", "hit 6H", "discard 3S",
              *_wait_turns(1, ["4S", "5S"])],
             "drop_won", (1, -1)),
    Scenario("hit_wait: the hitter does not wait", R("hit_penalty"), [W0, "6H QS JS TS 8S"], "2C", "2S 3S",
             ["draw", "spread 3H 4H 5H", "discard 2S", "draw", "hit 6H", "discard 3S", "!drop", "draw"], None,
             waits=(0, 0)),
    Scenario("hit_wait: hitting your own spread makes you wait", R("hit_penalty"), ["3H 4H 5H 6H 9D", W1],
             "2C", "KC 3S 4S 5S 6S 7S",
             ["draw", "spread 3H 4H 5H", "hit 6H", "discard KC", *dd("3S"), *_wait_turns(1, ["4S", "5S"])],
             "drop_won", (1, -1), counts=(9, 48)),
    Scenario("hit_wait 2 on your own spread on a later turn", R(hit_wait=2), ["3H 4H 5H 9D 6H", W1], "2C",
             "KC 3S 4S 5S 6S 7S 8D 9C",
             ["draw", "spread 3H 4H 5H", "discard KC", *dd("3S"), "draw", "hit 6H", "discard 4S", *dd("5S"),
              *_wait_turns(2, ["6S", "7S", "8D", "9C"])],
             "drop_won", (1, -1), counts=(9, 48)),
    # wait_cumulative: seat 0 spreads (spread_wait), then seat 1 hits it (hit_wait)
    Scenario("wait_cumulative on: 3 + 1 = 4 blocked turns", R("full_waiting"), [W0, "6H QS JS TS 8S"], "2C",
             "2S 3S 4S 5S 6S 7S 8D 9H 9C 8C",
             ["draw", "spread 3H 4H 5H", "discard 2S", "draw", "hit 6H", "discard 3S",
              *_wait_turns(4, ["4S", "5S", "6S", "7S", "8D", "9H", "9C", "8C"])],
             "drop_won", (1, -1)),
    Scenario("wait_cumulative off: max(3, 1) = 3 blocked turns", R("full_waiting", wait_cumulative=False),
             [W0, "6H QS JS TS 8S"], "2C", "2S 3S 4S 5S 6S 7S 8D 9H",
             ["draw", "spread 3H 4H 5H", "discard 2S", "draw", "hit 6H", "discard 3S",
              *_wait_turns(3, ["4S", "5S", "6S", "7S", "8D", "9H"])],
             "drop_won", (1, -1)),
    Scenario("wait_cumulative off: a longer new wait replaces a shorter one",
             R(spread_wait=1, hit_wait=3, wait_cumulative=False), [W0, "6H QS JS TS 8S"], "2C", "2S 3S",
             ["draw", "spread 3H 4H 5H", "discard 2S", "draw", "hit 6H", "discard 3S"], None, waits=(3, 0)),
    Scenario("wait_cumulative on: spread_wait 1 + hit_wait 3", R(spread_wait=1, hit_wait=3),
             [W0, "6H QS JS TS 8S"], "2C", "2S 3S",
             ["draw", "spread 3H 4H 5H", "discard 2S", "draw", "hit 6H", "discard 3S"], None, waits=(4, 0)),
    # ---------------------------------------------------------------- ace_high
    Scenario("ace_high: Q-K-A is a run", R(ace_high=True), ["QH KH AH 9C 8D", W1], "2C", "7C",
             ["draw", "spread QH KH AH", "discard 7C"], None),
    Scenario("standard: Q-K-A is not a run", STD, ["QH KH AH 9C 8D", W1], "2C", "7C",
             ["draw", "!spread QH KH AH", "!spread KH AH QH", "discard 7C"], None),
    Scenario("ace_high: K-A-2 is never a run", R(ace_high=True), ["KH AH 2H 9C 8D", W1], "2C", "7C",
             ["draw", "!spread KH AH 2H", "!spread QH KH AH 2H", "discard 7C"], None),
    Scenario("ace_high: the ace hits J-Q-K high", R(ace_high=True), ["JH QH KH 9C 8D", "AH QS JS TS 8S"],
             "2C", "7C 6C", ["draw", "spread JH QH KH", "discard 7C", "draw", "hit AH", "discard 6C"], None,
             spreads=[(0, "JH QH KH AH")]),
    Scenario("standard: the ace does not hit J-Q-K", STD, ["JH QH KH 9C 8D", "AH QS JS TS 8S"], "2C",
             "7C 6C",
             ["draw", "spread JH QH KH", "discard 7C", "draw", "!hit AH", "!hit AH on KH", "discard 6C"],
             None, spreads=[(0, "JH QH KH")]),
    Scenario("ace_high: J hits Q-K-A low", R(ace_high=True), ["QH KH AH 9C 8D", "JH QS TS 9S 8S"], "2C",
             "7C 6C", ["draw", "spread QH KH AH", "discard 7C", "draw", "hit JH on AH", "discard 6C"], None,
             spreads=[(0, "JH QH KH AH")]),
    Scenario("ace_high: no wrap, K does not hit A-2-3", R(ace_high=True),
             ["AH 2H 3H 9C 8D", "KH QS TS 9S 8S"], "2C", "7C 6C",
             ["draw", "spread AH 2H 3H", "discard 7C", "draw", "!hit KH", "discard 6C"], None,
             spreads=[(0, "AH 2H 3H")]),
    Scenario("ace_high: no wrap, 2 does not hit Q-K-A", R(ace_high=True),
             ["QH KH AH 9C 8D", "2H QS TS 9S 8S"], "2C", "7C 6C",
             ["draw", "spread QH KH AH", "discard 7C", "draw", "!hit 2H", "discard 6C"], None),
    Scenario("ace low in both: A hits 2-3-4", STD, ["2H 3H 4H 9C 8D", "AH QS TS 9S 8S"], "2C", "7C 6C",
             ["draw", "spread 2H 3H 4H", "discard 7C", "draw", "hit AH", "discard 6C"], None,
             spreads=[(0, "AH 2H 3H 4H")]),
    # ---------------------------------------------------------------- may_discard_taken, upcard, hand_size
    Scenario("may_discard_taken off: the taken card stays unless it is the last", R(may_discard_taken=False),
             ["3H 4H 5H 6H KC", "KD KH KS 8C 9C"], "2D", "9S 7D",
             ["draw", "spread 3H 4H 5H 6H", "discard 9S", "draw", "spread KD KH KS", "discard 7D",
              "take", "!discard 7D", "hit KC", "discard 7D"],
             "run_out", (1, -1), seat=0),
    Scenario("may_discard_taken on: the taken card may be discarded", STD, ["3H 4H 5H KC 9D", W1], "2D", "",
             ["take", "discard 2D"], None),
    Scenario("may_discard_taken off: the taken upcard cannot go straight back", R(may_discard_taken=False),
             ["3H 4H 5H KC 9D", W1], "2D", "", ["take", "!discard 2D", "discard 9D"], None),
    Scenario("no_upcard: no take on the first turn", R("no_upcard"), ["3H 4H 5H KC 9D", W1], None, "2D 7C",
             ["!take", "draw", "discard 2D", "take", "discard 2D"], None),
    Scenario("seven_card: a tonk out with a four-card book and a four-card run", R("seven_card"),
             ["KC KD KH KS 3H 4H 5H", "2C 3C 4C 5C 7D 8D 9D"], "2S", "6H",
             ["draw", "spread KC KD KH KS", "spread 3H 4H 5H 6H"], "tonk_out", (2, -2), counts=(0, 38)),
    Scenario("seven_card: run out", R("seven_card"), ["KC KD KH 3H 4H 5H 6H", "2C 3C 4C 5C 7D 8D 9D"], "2S",
             "QC", ["draw", "spread KC KD KH", "spread 6H 5H 4H 3H", "discard QC"], "run_out", (1, -1)),
]
# fmt: on


@pytest.mark.parametrize("sc", SCENARIOS, ids=lambda sc: sc.id)
def test_scenario(sc: Scenario) -> None:
    s = play_script(sc.rules, sc.hands, sc.upcard, sc.stock, sc.actions)
    if sc.kind is None:
        assert not is_over(s), s.result
        assert legal_actions(s)
    else:
        assert is_over(s)
        assert s.result is not None
        assert s.result.kind == sc.kind, s.result
        assert payoffs(s) == pytest.approx(sc.payoffs)
        assert sum(payoffs(s)) == pytest.approx(0)
        assert legal_actions(s) == []
    if sc.counts is not None:
        assert s.result is not None and s.result.counts == sc.counts
    if sc.seat != "any":
        assert s.result is not None and s.result.seat == sc.seat
    if sc.detail is not None:
        assert s.result is not None and s.result.detail == sc.detail
    if sc.waits is not None:
        assert tuple(s.waits) == sc.waits
    if sc.spreads is not None:
        assert [(sp.owner, " ".join(map(card_to_string, sp.cards()))) for sp in s.spreads] == sc.spreads


def test_stack_deals_the_named_hands() -> None:
    """The stacked deck deals exactly the hands the tables name (guards the helper)."""
    hands = ["KS QH JD TC 9S", "2C 3C 4D 5D 6H", "2D 3D 4C 5C 7H"]
    s = new_game(STD, 3, deck=stack(hands, "8H", "AS"))
    assert s.hands == [mask_of(parse_cards(h)) for h in hands]
    assert [hand_value(h) for h in s.hands] == [49, 20, 21]
    assert s.pile == parse_cards("8H") and s.stock[-1] == parse_cards("AS")[0]


def test_dealer_option_moves_the_first_player() -> None:
    """Cards go one at a time starting left of the dealer, and that seat plays first."""
    deck = "AC 2C 3C AD 2D 3D AH 2H 3H AS 2S 3S 4C 5C 6C 7C"
    s = new_game(STD, 3, deck=deck, dealer=0)
    assert s.cur == 1
    # seat 1 got the 1st, 4th, ... card; seat 0 (the dealer) the 3rd, 6th, ...
    assert s.hands[1] == mask_of(parse_cards("AC AD AH AS 4C"))
    assert s.hands[2] == mask_of(parse_cards("2C 2D 2H 2S 5C"))
    assert s.hands[0] == mask_of(parse_cards("3C 3D 3H 3S 6C"))
    assert s.pile == parse_cards("7C")
    assert [view(s, p)["dealer"] for p in range(3)] == [0, 0, 0]


@pytest.mark.parametrize("wait", [0, 1, 2, 3, 5])
def test_spread_wait_blocks_exactly_n_own_turns(wait: int) -> None:
    """For each N the drop is refused at exactly the next N own turns, then allowed."""
    stock = rest_of_deck(W0, W1, "2C")
    s = play_script(
        R(spread_wait=wait),
        [W0, W1],
        "2C",
        " ".join(stock),
        ["draw", "spread 3H 4H 5H", f"discard {stock[0]}", *dd(stock[1])],
    )
    blocked = 0
    it = iter(stock[2:])
    while DROP not in legal_actions(s):
        assert s.cur == 0 and s.waits[0] == wait - blocked
        blocked += 1
        for _ in range(2):  # my turn and the opponent's: draw, discard the drawn card
            for text in dd(next(it)):
                s.play(action_from_string(s, text))
    assert blocked == wait
    assert s.cur == 0 and s.waits[0] == 0


def test_view_of_a_seven_card_deal() -> None:
    s = new_game("seven_card", 6, seed=1)
    assert view(s, 0)["hand_sizes"] == [7] * 6
    assert view(s, 0)["stock_size"] == 52 - 43
    assert legal_actions(s) == [DROP, DRAW, TAKE]


def _record_of_a_hand() -> dict[str, Any]:
    s = play_script("standard", ["JS JH JC 9H 8D", "JD 2C 3C 4C 5C"], "KS", "7D 9S 6D 4S",
                    ["draw", "spread JS JH JC", "discard 7D", "draw", "spread 2C 3C 4C 5C", "discard 9S",
                     *dd("6D"), "draw", "hit JD", "discard 4S"])  # fmt: skip
    return to_record(s)


def test_record_of_a_scripted_hand() -> None:
    rec = _record_of_a_hand()
    assert rec["format"] == RECORD_FORMAT == "tonk-record/1"
    assert rec["rules"] == STD.to_dict() and rec["rules_hash"] == STD.hash
    assert rec["num_players"] == 2 and rec["dealer"] == 1 and len(rec["deck"]) == 52
    assert rec["deck"][:4] == ["JS", "JD", "JH", "2C"]
    assert rec["actions"][-3:] == ["draw", "hit JD on JC", "discard 4S"]  # hits in their long form
    assert rec["result"]["kind"] == "run_out" and rec["result"]["payoffs"] == [-1, 1]
    assert rec["result"]["hands"] == [["8D", "9H"], []]
    back = replay(json.dumps(rec))
    assert back.result is not None and back.result.to_dict() == rec["result"]


@pytest.mark.parametrize(
    "change, match",
    [
        ({"format": "tonk-record/0"}, "format"),
        ({"rules_hash": "000000000000"}, "rules_hash"),
        ({"actions": ["draw", "discard AC"]}, "action 1 'discard AC'"),
        ({"result": {"kind": "tonk_out"}}, "differs"),
        ({"rules": {"hand_size": 6}}, "hand_size"),
    ],
)
def test_replay_refuses_a_broken_record(change: dict[str, Any], match: str) -> None:
    rec = {**_record_of_a_hand(), **change}
    with pytest.raises(ValueError, match=match):
        replay(rec)


def test_replay_without_check_accepts_a_stale_result() -> None:
    rec = {**_record_of_a_hand(), "result": {"kind": "tonk_out"}, "rules_hash": "x"}
    assert replay(rec, check=False).result.kind == "run_out"  # type: ignore[union-attr]  # the hand is over, so result is set
