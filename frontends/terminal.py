"""``tonk play``: a person plays Tonk against agents in the terminal.

The game loop is :func:`play_terminal`, which reads moves from an input
stream and writes to an output stream, so tests drive it with scripted text.
The person's moves and the agents' are played and the hands scored by the
:class:`~frontends.table.Table`, as in the server. Everything shown to the
person is built from their seat's
:class:`~tonk_env.engine.SeatInfo` while the hand runs (nothing hidden can
leak); the whole deal is shown once the hand is over.

What a person may type at the prompt:

==================  ==================================================
input               meaning
==================  ==================================================
``3``               the 3rd move of the numbered list of legal moves
``draw``, ``d``     draw from the stock
``take``, ``t``     take the top discard
``drop``, ``k``     drop (``knock``)
``x 4S``, ``4S``    discard 4S
``s 3H 4H 5H``      spread (also three or more cards alone)
``h 9H [on 6H]``    hit (``hit 9H on 6H``: the spread holding 6H)
``help``, ``?``     this list;  ``look`` redraws the table
``score``           the running score;  ``log`` this hand's moves
``quit``, EOF       leave (an unfinished hand is not scored)
==================  ==================================================

Cards are rank ``A 2-9 T J Q K`` (or ``10``) then suit ``C D H S``, any case.
An entry that is not a legal move says why and asks again.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from typing import TextIO

from tonk_env.engine import (
    OVER,
    GameState,
    IllegalActionError,
    TonkRules,
    action_from_string,
    seat_info,
    view_from_info,
)
from tonk_env.engine.actions import DISCARD, DRAW, HIT_BOOK, SPREAD
from tonk_env.engine.cards import card_to_string, hand_value, mask_to_strings, parse_card
from tonk_env.engine.infostate import SeatInfo
from tonk_env.engine.state import Spread

from .table import Move, Table, describe_result

HELP = """\
Moves: type a number from the list, or an action:
  draw (d)            draw the top card of the stock
  take (t)            take the top card of the discard pile
  drop (k, knock)     end the hand now, claiming the lowest count
  x 4S  or  4S        discard 4S (ends your turn)
  s 3H 4H 5H          spread a book (3-4 of a rank) or a run (3+ in a suit)
  h 9H  /  h 9H on 6H hit a spread on the table (name any card of the target spread)
Cards: rank A 2-9 T J Q K (or 10), suit C D H S; any case (4s, th, 10H).
Other: look (redraw the table), log (this hand's moves), score, help (?), quit (q).
A turn: drop, draw or take; then spreads and hits; then one discard."""

_VERBS = {"d": "draw", "t": "take", "k": "drop", "x": "discard", "s": "spread", "h": "hit"}


class Quit(Exception):
    """The person left (``quit`` or end of input)."""


class TerminalGame:
    """One person at a :class:`Table`, talking through two text streams."""

    def __init__(self, table: Table, seat: int, inp: TextIO, out: TextIO, width: int | None = None) -> None:
        self.table = table
        self.seat = seat
        self.inp = inp
        self.out = out
        self.width = width or min(100, shutil.get_terminal_size((80, 24)).columns)
        self.log: list[Move] = []

    # -- output ----------------------------------------------------------------------------
    def say(self, text: str = "") -> None:
        """Write a line (or several)."""
        self.out.write(text + "\n")
        self.out.flush()

    def label(self, p: int) -> str:
        """How a seat is called: ``you`` or ``seat 1 (spec)``."""
        return "you" if p == self.seat else self.table.name(p)

    def show_table(self, s: GameState, hand_no: int, hands: int | None) -> None:
        """Draw the table as the person's seat sees it."""
        info = seat_info(s, self.seat)
        of = f" of {hands}" if hands else ""
        head = f"== Hand {hand_no}{of} - turn {info.turn + 1} - you are seat {self.seat} "
        self.say(head + "=" * max(0, self.width - len(head)))
        top = card_to_string(info.pile[-1]) if info.pile else "--"
        self.say(f"Stock: {info.stock_size} cards    Discard pile: [{top}] on top ({len(info.pile)} cards)")
        self.say("Players:")
        for p in range(info.n):
            tags = []
            if p == info.dealer:
                tags.append("dealer")
            if info.waits[p]:
                tags.append(f"may not drop for {info.waits[p]} turn(s)")
            if p != self.seat and info.known[p]:
                tags.append("known: " + " ".join(mask_to_strings(info.known[p])))
            turn = "->" if p == info.cur and info.phase != OVER else "  "
            extra = f"   [{'; '.join(tags)}]" if tags else ""
            self.say(f" {turn} {self.label(p):28s} {info.hand_sizes[p]} cards{extra}")
        self.say("Table:" + ("" if info.spreads else " (no spreads)"))
        for i, sp in enumerate(info.spreads):
            cards = " ".join(card_to_string(c) for c in Spread(*sp).cards())
            self.say(f"   {i + 1}. {cards:20s} ({self.label(sp[0])})")
        self.say(
            f"Your hand: {' '.join(mask_to_strings(info.hand)) or '(empty)'}   count {hand_value(info.hand)}"
        )

    def legal_moves(self, info: SeatInfo) -> list[tuple[int, str]]:
        """The person's legal moves as ``(id, string)``: start-of-turn moves, spreads, hits, discards.

        Discards follow the order of the hand on screen (by rank, then suit).
        """
        moves = list(zip(info.legal, view_from_info(info)["legal_actions"], strict=True))
        return sorted(moves, key=_display_order)

    def show_moves(self, moves: list[tuple[int, str]]) -> None:
        """The numbered list of legal moves, in columns."""
        cells = [f"{i + 1:>2}) {text}" for i, (_, text) in enumerate(moves)]
        width = max(len(c) for c in cells) + 2
        per_row = max(1, (self.width - 2) // width)
        self.say("Your move:")
        for i in range(0, len(cells), per_row):
            self.say("  " + "".join(c.ljust(width) for c in cells[i : i + per_row]).rstrip())

    def show_moves_of_agents(self, moves: list[Move]) -> None:
        """Print what the agents just did."""
        for m in moves:
            self.say(f"   {self.label(m.seat)}: {m.text}")

    def show_end(self, s: GameState, hand_no: int) -> None:
        """Every hand, how the hand ended, the payoffs and the running score."""
        r = s.result
        assert r is not None
        names = [self.label(p) for p in range(s.n)]
        head = f"== Hand {hand_no} over: {describe_result(s, names)} "
        self.say(head + "=" * max(2, self.width - len(head)))
        for p in range(s.n):
            cards = " ".join(mask_to_strings(r.hands[p])) or "(empty)"
            self.say(f"   {names[p]:28s} {cards:22s} count {r.counts[p]:3d}   {r.payoffs[p]:+g}")
        if s.spreads:
            self.say(
                "   table: " + " | ".join(" ".join(card_to_string(c) for c in sp.cards()) for sp in s.spreads)
            )
        self.show_score()

    def show_score(self) -> None:
        """The running score."""
        t = self.table
        parts = ", ".join(f"{self.label(p)} {v:+g}" for p, v in enumerate(t.scores))
        self.say(f"Score after {t.hands_played} hand(s): {parts}")

    # -- input -----------------------------------------------------------------------------
    def ask(self, prompt: str) -> str:
        """Read one line; :class:`Quit` at end of input."""
        self.out.write(prompt)
        self.out.flush()
        line = self.inp.readline()
        if not line:
            self.say()
            raise Quit
        return line.strip()

    def read_move(self, s: GameState, hand_no: int, hands: int | None) -> int:
        """Ask until the person enters a legal move; return its action id."""
        info = seat_info(s, self.seat)
        moves = self.legal_moves(info)
        self.show_moves(moves)
        while True:
            text = self.ask(f"seat {self.seat}> ")
            low = " ".join(text.lower().split())
            if low in ("q", "quit", "exit"):
                raise Quit
            if low in ("", "?", "help", "h"):
                if low:
                    self.say(HELP)
                self.show_moves(moves)
                continue
            if low in ("look", "l", "table"):
                self.show_table(s, hand_no, hands)
                self.show_moves(moves)
                continue
            if low == "score":
                self.show_score()
                continue
            if len(low) > MAX_MOVE_TEXT:  # never echo a pasted page back
                self.say(
                    f"  ! a move is a few words; that line has {len(text):,} characters ({low[:30]!r}...)"
                )
                self.say("  (type a number from the list, or 'help')")
                continue
            if low in ("log", "history"):
                self.show_log()
                continue
            try:
                return parse_move(s, low, moves)
            except ValueError as e:
                self.say(f"  ! {e}")
                self.say("  (type a number from the list, or 'help')")

    def show_log(self) -> None:
        """This hand's moves so far."""
        if not self.log:
            self.say("   (no moves yet)")
        for m in self.log:
            self.say(f"   {self.label(m.seat)}: {m.text}")

    # -- the game --------------------------------------------------------------------------
    def play_hand(self, hand_no: int, hands: int | None) -> GameState:
        """Deal and play one hand to its end; return the final state."""
        t = self.table
        s = t.deal()
        self.log = []
        self.say()
        if s.phase == OVER or s.cur != self.seat:
            of = f" of {hands}" if hands else ""
            head = f"== Hand {hand_no}{of} - {self.label(s.dealer)} dealt, {self.label(s.cur)} to play first "
            self.say(head + "=" * max(0, self.width - len(head)))
            mine = s.hands[self.seat]
            self.say(f"Your hand: {' '.join(mask_to_strings(mine))}   count {hand_value(mine)}")
        while s.phase != OVER:
            if s.cur == self.seat:
                self.show_table(s, hand_no, hands)
                while s.phase != OVER and s.cur == self.seat:
                    before = s.hands[self.seat]
                    a = self.read_move(s, hand_no, hands)
                    draw = a == DRAW and s.stock
                    self.log.append(t.play_person(s, self.seat, a))
                    if draw and s.phase != OVER:
                        card = (s.hands[self.seat] & ~before).bit_length() - 1
                        self.say(f"   you drew {card_to_string(card)}")
                    if s.phase != OVER and s.cur == self.seat:
                        info = seat_info(s, self.seat)
                        self.say(f"Your hand: {' '.join(mask_to_strings(info.hand))}   count {info.count}")
            else:
                moves = t.advance(s)
                self.log.extend(moves)
                self.show_moves_of_agents(moves)
        t.score_if_over(s)  # a hand over at the deal (play_person and advance scored any other)
        self.show_end(s, hand_no)
        return s


#: The longest line read as a move (longer ones are refused without being echoed).
MAX_MOVE_TEXT = 100


def parse_move(s: GameState, text: str, moves: Sequence[tuple[int, str]]) -> int:
    """Turn what the person typed into a legal action id, or raise ``ValueError`` saying why."""
    low = " ".join(text.lower().split())
    if low.isascii() and low.isdigit():
        k = int(low)
        if not 1 <= k <= len(moves):
            raise ValueError(f"there is no move {k}: pick 1..{len(moves)}")
        return moves[k - 1][0]
    words = low.split()
    if words[0] in _VERBS:
        words[0] = _VERBS[words[0]]
    elif all(_is_card(w) for w in words):
        words.insert(0, "discard" if len(words) == 1 else "spread")
    try:
        return action_from_string(s, " ".join(words))
    except IllegalActionError as e:
        raise ValueError(str(e)) from None


def _display_order(move: tuple[int, str]) -> tuple[int, int]:
    a, _ = move
    if a < DISCARD:
        return (0, a)
    if a >= SPREAD:
        return (1, a)
    if a >= HIT_BOOK:
        return (2, a)
    card = a - DISCARD
    return (3, card % 13 * 4 + card // 13)


def _is_card(word: str) -> bool:
    try:
        parse_card(word)
    except ValueError:
        return False
    return True


def play_terminal(
    inp: TextIO,
    out: TextIO,
    rules: TonkRules,
    players: int = 2,
    opponents: Sequence[str] = ("heuristic:expert",),
    seat: int = 0,
    hands: int | None = 1,
    seed: int | None = None,
    width: int | None = None,
) -> list[float]:
    """Play ``hands`` hands (None: until quit) of a person against agents; return the score."""
    if hands is not None and hands < 1:
        raise ValueError(f"--hands must be at least 1, got {hands}")
    if not 0 <= seat < players:
        raise ValueError(f"--seat must be 0..{players - 1} for {players} players, got {seat}")
    table = Table(rules, players, [seat], list(opponents), seed=seed)
    game = TerminalGame(table, seat, inp, out, width=width)
    game.say(
        f"Tonk: {players} players, rules hash {rules.hash}. You are seat {seat}. "
        f"Type 'help' for the moves, 'quit' to leave."
    )
    for p in range(players):
        if p != seat:
            game.say(f"  seat {p}: {table.specs[p]}")
    try:
        k = 0
        while hands is None or k < hands:
            k += 1
            game.play_hand(k, hands)
            if hands is None or k < hands:
                if game.ask("Press Enter for the next hand (or quit) ").lower() in ("q", "quit", "exit"):
                    raise Quit
    except Quit:
        game.say("Goodbye.")
        game.show_score()
        return table.scores
    game.say("Game over.")
    return table.scores
