"""The terminal game (``tonk play``): scripted input through the game loop, the move parser, the CLI."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

from frontends.table import NotNow, Table, describe_result, fill_seats
from frontends.terminal import TerminalGame, parse_move, play_terminal
from tonk_cli.main import main
from tonk_env.engine import OVER, make_rules, new_game, seat_info, view_from_info
from tonk_env.engine.actions import DISCARD, DRAW, DROP, TAKE
from tonk_env.engine.cards import parse_card

ROOT = Path(__file__).resolve().parents[1]

# seat 0: 3H 4H 5H 6H KC; seat 1: 2C 2D 2S 8C 8D; upcard QS; stock 4S, 9D, ...
STACK = "3H 2C 4H 2D 5H 2S 6H 8C KC 8D QS 4S 9D"


def _play(script: str, **kw) -> tuple[list[float], str]:
    out = io.StringIO()
    kw.setdefault("rules", make_rules())
    kw.setdefault("opponents", ["random"])
    scores = play_terminal(io.StringIO(script), out, width=80, **kw)
    return scores, out.getvalue()


def _moves(s, seat: int = 0):
    info = seat_info(s, seat)
    return list(zip(info.legal, view_from_info(info)["legal_actions"], strict=True))


def test_a_scripted_hand_is_played_to_its_end() -> None:
    # help, junk, an out-of-range number, then "draw, discard the first card" every turn
    script = "help\nfoo\nx 2Z\n99\n" + "2\n1\n" * 300
    scores, out = _play(script, seed=3, hands=1)
    assert "Moves: type a number" in out  # help
    assert "cannot read action 'foo'" in out
    assert "not a card: '2z'" in out
    assert "there is no move 99: pick 1..3" in out
    assert "Your move:" in out and " 1) drop" in out and " 2) draw" in out
    assert "== Hand 1 over:" in out
    end = out[out.index("== Hand 1 over:") :]
    assert "count" in end and "Score after 1 hand(s)" in end
    assert sum(scores) == 0
    assert "Game over." in out


def test_running_score_over_several_hands() -> None:
    scores, out = _play("k\n\n" * 40, seed=11, hands=3, players=3, opponents=["heuristic:greedy", "random"])
    assert out.count("over:") == 3
    assert "Score after 3 hand(s)" in out
    assert sum(scores) == 0
    # the dealer passes to the left: seat 2 deals the first hand, seat 0 the second, seat 1 the third
    assert "seat 1 (random) to play first" not in out
    assert "you dealt" in out


@pytest.mark.parametrize("script", ["quit\n", "", "q\n"])
def test_quit_and_end_of_input_leave_cleanly(script: str) -> None:
    scores, out = _play(script, seed=1, hands=2)
    assert "Goodbye." in out
    assert "Score after 0 hand(s)" in out
    assert scores == [0.0, 0.0]


def test_quit_between_hands_keeps_the_score() -> None:
    scores, out = _play("k\nquit\n", seed=4, hands=5)
    assert "Score after 1 hand(s)" in out and "Goodbye." in out
    assert sum(scores) == 0 and any(scores)


def test_move_parser_aliases_numbers_and_errors() -> None:
    s = new_game(make_rules(), 2, deck=STACK, dealer=1)
    moves = _moves(s)
    assert [t for _, t in moves] == ["drop", "draw", "take"]
    assert parse_move(s, "d", moves) == DRAW
    assert parse_move(s, "t", moves) == TAKE
    assert parse_move(s, "k", moves) == DROP
    assert parse_move(s, "KNOCK", moves) == DROP
    assert parse_move(s, "2", moves) == DRAW
    with pytest.raises(ValueError, match="no move 4"):
        parse_move(s, "4", moves)
    with pytest.raises(ValueError, match="not legal now.*legal actions: drop, draw, take"):
        parse_move(s, "x 3H", moves)

    s.play(DRAW)  # seat 0 draws 4S
    moves = _moves(s)
    four_spades = DISCARD + parse_card("4S")
    assert parse_move(s, "x 4s", moves) == four_spades
    assert parse_move(s, "4S", moves) == four_spades
    assert parse_move(s, "discard 4S", moves) == four_spades
    spread = parse_move(s, "s 3h 4h 5h", moves)
    assert parse_move(s, "5H 3H 4H", moves) == spread
    assert s.table.name(spread) == "spread 3H 4H 5H"
    with pytest.raises(ValueError, match="not a spread"):
        parse_move(s, "s 3H 4H KC", moves)
    with pytest.raises(ValueError, match="not legal now"):
        parse_move(s, "d", moves)

    s.play(spread)
    moves = _moves(s)
    assert "hit 6H" in [t for _, t in moves]
    hit = parse_move(s, "h 6h", moves)
    assert s.table.name(hit) == "hit 6H on 5H"
    assert parse_move(s, "h 6H on 3H", moves) == hit
    assert parse_move(s, "hit 6h on 5h", moves) == hit
    with pytest.raises(ValueError, match="KC hits no spread"):
        parse_move(s, "h KC", moves)


def test_the_table_shows_only_what_the_seat_may_know() -> None:
    rules = make_rules()
    table = Table(rules, 2, [0], ["random"], seed=0)
    out = io.StringIO()
    game = TerminalGame(table, 0, io.StringIO(), out, width=80)
    s = new_game(rules, 2, deck=STACK, dealer=1)
    game.show_table(s, 1, 1)
    text = out.getvalue()
    assert "Your hand: 3H 4H 5H 6H KC   count 28" in text
    assert "[QS] on top" in text and "Stock: 41 cards" in text
    assert "seat 1 (random)" in text and "5 cards" in text
    for hidden in ("2C", "2D", "2S", "8C", "8D", "4S", "9D"):
        assert hidden not in text


def test_the_table_plays_the_persons_move_and_scores_each_hand_once() -> None:
    """The one place of the terminal game and the server: a move out of turn is refused, and a hand
    is scored once however often its end is reported."""
    table = Table(make_rules(), 2, [0], ["random"], seed=0)
    s = table.deal()
    assert s.cur == 0 and s.phase != OVER  # the first dealer is the last seat: seat 0 plays first
    with pytest.raises(NotNow, match="not your turn: seat 0 is to act"):
        table.check_turn(s, 1)
    with pytest.raises(ValueError, match="played by agent random, not by a person"):
        table.play_person(s, 1, DROP)
    move = table.play_person(s, 0, DROP)
    assert (move.seat, move.text) == (0, "drop") and s.result is not None
    assert table.hands_played == 1 and table.scores == list(s.result.payoffs)
    assert table.advance(s) == [] and table.score_if_over(s)  # reported again: not scored again
    assert table.hands_played == 1 and table.scores == list(s.result.payoffs)
    with pytest.raises(NotNow, match="the hand is over"):
        table.play_person(s, 0, DROP)


def test_fill_seats_and_result_words() -> None:
    assert fill_seats(4, [1], ["a", "b"]) == {0: "a", 2: "b", 3: "a"}
    with pytest.raises(ValueError, match="do not fit"):
        fill_seats(2, [0], ["a", "b"])
    with pytest.raises(ValueError, match="seat must be 0..1"):
        fill_seats(2, [2], ["a"])
    s = new_game(make_rules(), 2, deck=STACK, dealer=1)
    s.play(DROP)
    assert describe_result(s, ["you", "seat 1"]) == "you dropped and were caught (count 28)"
    assert describe_result(s) == "seat 0 dropped and was caught (count 28)"


def test_play_command_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["play", "--seat", "5"]) == 2
    assert "tonk play: error: --seat must be 0..1" in capsys.readouterr().err
    assert main(["play", "--opponents", "nosuch"]) == 2
    assert "tonk play: error: unknown agent kind 'nosuch'" in capsys.readouterr().err
    assert main(["play", "--set", "hand_size=9"]) == 2
    assert "hand_size" in capsys.readouterr().err


def test_play_command_through_stdin() -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "tonk_cli.main",
            "play",
            "--seed",
            "2",
            "--opponents",
            "random",
            "--hands",
            "2",
        ],
        input="k\n\nk\n\nk\n",
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert "You are seat 0" in proc.stdout
    assert proc.stdout.count("over:") == 2
    assert "Score after 2 hand(s)" in proc.stdout and "Game over." in proc.stdout
