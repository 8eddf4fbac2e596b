"""Scripted hands through both envs: stacked decks, action strings, rewards and infos for every ending."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tonk_env import env
from tonk_env.engine import SeatInfo, action_table
from tonk_env.single import TonkSingleAgentEnv

NAMES = {action_table(False).name(a): a for a in range(action_table(False).size)}


def stack(hands: list[str], upcard: str, stock: str = "") -> str:
    """A stacked deck for the default dealer (seat 0 first): hands dealt one card a seat at a time."""
    cards = [h.split() for h in hands]
    order = [cards[p][i] for i in range(len(cards[0])) for p in range(len(cards))]
    return " ".join(order + [upcard] + stock.split())


HIGH = "KS QS JH 8S 8C"  # 46
LOW = "AC 2C 3D 4H 5S"  # 15

# id, rules preset, options, hands, upcard, stock, actions, kind, detail, ending seat, payoffs
# fmt: off
SCENARIOS: list[tuple[Any, ...]] = [
    ("instant_win", "standard", {}, ["KS QH JD TC 9S", "2C 3C 4D 5H 6S"], "7C", "", [],
     "instant_win", "", 0, [2, -2]),
    ("instant_win_3p", "standard", {}, ["2C 3C 4D 5H 6S", "KS QH JD TC TS", "2D 3D 4S 5C 6C"], "7C", "", [],
     "instant_win", "", 1, [-2, 4, -2]),
    ("void_deal", "standard", {}, ["KS QH JD TC 9S", "KH QD JC TS 9H"], "7C", "", [],
     "void", "instant_win_tie", None, [0, 0]),
    ("low_tonk_beats_49", "low_tonk", {}, ["AC AD AH 2C 3C", "KS QH JD TC 9S"], "7C", "", [],
     "instant_win", "", 0, [2, -2]),
    ("drop_won", "standard", {}, [LOW, HIGH], "7C", "", ["drop"],
     "drop_won", "", 0, [1, -1]),
    ("caught", "standard", {}, [HIGH, LOW], "7C", "", ["drop"],
     "caught", "", 0, [-2, 2]),
    # RULES §9: A drops with 12, B has 8, C has 20: A pays 2 to B, C pays 1 to B.
    ("caught_3p", "standard", {}, ["AC 2C 2D 3H 4S", "AD AH AS 2H 3C", "4C 4D 4H 5C 3D"], "7C", "", ["drop"],
     "caught", "", 0, [-2, 3, -1]),
    ("caught_3p_everyone_double", "standard", {"caught_pay": "everyone_double"},
     ["AC 2C 2D 3H 4S", "AD AH AS 2H 3C", "4C 4D 4H 5C 3D"], "7C", "", ["drop"],
     "caught", "", 0, [-4, 2, 2]),
    ("drop_after_a_turn", "standard", {}, [HIGH, LOW], "7C", "KC QC",
     ["draw", "discard KC", "drop"], "drop_won", "", 1, [-1, 1]),
    ("tonk_out", "standard", {}, ["4H 5H 6H 9C 9D", HIGH], "2C", "9S",
     ["draw", "spread 4H 5H 6H", "spread 9C 9D 9S"], "tonk_out", "", 0, [2, -2]),
    ("tonk_out_3p", "standard", {"tonk_out_pay": 3}, ["4H 5H 6H 9C 9D", HIGH, "2D 3D 4S 5C 6C"], "2C", "9S",
     ["draw", "spread 4H 5H 6H", "spread 9C 9D 9S"], "tonk_out", "", 0, [6, -3, -3]),
    ("run_out", "standard", {}, ["4H 5H 6H 7H KC", HIGH], "2C", "8H",
     ["draw", "spread 4H 5H 6H 7H 8H", "discard KC"], "run_out", "", 0, [1, -1]),
    # player_1 hits player_0's book, spreads, and runs out with the discard.
    ("hit_then_run_out", "standard", {}, ["JS JH JC 2C 9D", "JD 4H 5H 6H KS"], "7C", "QD 3H",
     ["draw", "spread JS JH JC", "discard QD", "draw", "hit JD on JS", "spread 3H 4H 5H 6H", "discard KS"],
     "run_out", "", 1, [-1, 1]),
    ("take_the_upcard_and_tonk", "standard", {}, ["4H 5H 9C 9D 9S", HIGH], "6H", "",
     ["take", "spread 9C 9D 9S", "spread 4H 5H 6H"], "tonk_out", "", 0, [2, -2]),
    ("max_turns", "standard", {"max_turns": 2}, [LOW, HIGH], "7C", "KC QC",
     ["draw", "discard KC", "draw", "discard QC"], "stock_out", "max_turns", None, [1, -1]),
    ("max_turns_tie_void", "standard", {"max_turns": 2}, [LOW, "AD 2D 3H 4S 5C"], "7C", "KC QC",
     ["draw", "discard KC", "draw", "discard QC"], "void", "max_turns", None, [0, 0]),
    ("max_turns_tie_split_3p", "standard", {"max_turns": 3, "stock_out_tie": "split"},
     [LOW, "AD 2D 3H 4S 5C", HIGH], "7C", "KC QC JC",
     ["draw", "discard KC", "draw", "discard QC", "draw", "discard JC"], "stock_out", "max_turns", None,
     [1, 1, -2]),
    ("seven_cards_drop", "seven_card", {}, ["AC 2C 3D 4H 5S 6C 7D", "KS QS JH 8S 9C TD TH"], "7C", "",
     ["drop"], "drop_won", "", 0, [1, -1]),
    ("no_upcard", "no_upcard", {}, [HIGH, LOW], "KC", "",
     ["draw", "discard KC", "drop"], "drop_won", "", 1, [-1, 1]),
]
# fmt: on


def play_aec(preset: str, options: dict[str, Any], deck: str, n: int, actions: list[str], scale: float = 1.0):
    e = env(n, preset, reward_scale=scale, **options)
    e.reset(seed=0, options={"deck": deck})
    u = e.unwrapped
    for text in actions:
        obs, reward, term, trunc, info = e.last()
        assert not term and reward == 0 and info == {}
        a = u.action_from_string(text)
        assert obs["action_mask"][a] == 1
        e.step(a)
    return e


@pytest.mark.parametrize(
    "name,preset,options,hands,upcard,stock,actions,kind,detail,seat,payoffs",
    SCENARIOS,
    ids=[s[0] for s in SCENARIOS],
)
@pytest.mark.parametrize("scale", [1.0, 0.5])
def test_scenario_through_the_aec_env(
    name: str,
    preset: str,
    options: dict[str, Any],
    hands: list[str],
    upcard: str,
    stock: str,
    actions: list[str],
    kind: str,
    detail: str,
    seat: int | None,
    payoffs: list[float],
    scale: float,
) -> None:
    n = len(hands)
    e = play_aec(preset, options, stack(hands, upcard, stock), n, actions, scale)
    assert all(e.terminations.values()) and not any(e.truncations.values())
    assert e.rewards == {f"player_{i}": p * scale for i, p in enumerate(payoffs)}
    got = {}
    for agent in e.agent_iter():
        obs, reward, term, trunc, info = e.last()
        assert term and not trunc and not obs["action_mask"].any()
        assert (
            info["result_kind"] == kind
            and info["detail"] == detail
            and info["ended_by"] == (-1 if seat is None else seat)
        )
        assert info["payoffs"] == payoffs and len(info["counts"]) == n
        got[agent] = reward
        e.step(None)
    assert got == {f"player_{i}": p * scale for i, p in enumerate(payoffs)}
    assert not e.agents


def test_no_upcard_offers_no_take_at_first() -> None:
    e = play_aec("no_upcard", {}, stack([HIGH, LOW], "KC"), 2, [])
    assert e.observe("player_0")["action_mask"][:3].tolist() == [1, 1, 0]
    e.step(1)
    e.step(e.unwrapped.action_from_string("discard KC"))
    assert e.observe("player_1")["action_mask"][:3].tolist() == [1, 1, 1]


def test_counts_in_infos_and_the_record() -> None:
    deck = stack(["AC 2C 2D 3H 4S", "AD AH AS 2H 3C", "4C 4D 4H 5C 3D"], "7C")
    e = play_aec("standard", {}, deck, 3, ["drop"])
    assert e.infos["player_2"]["counts"] == [12, 8, 20]
    rec = e.unwrapped.record()
    assert rec["result"]["kind"] == "caught" and rec["actions"] == ["drop"]


def test_waiting_removes_drop_from_the_mask() -> None:
    deck = stack(["JS JH JC 2C 9D", "JD 4H 5H 6H KS"], "7C", "QD 3H")
    script = ["draw", "spread JS JH JC", "discard QD", "draw", "hit JD", "discard KS"]
    for preset, can_drop in (("standard", True), ("hit_penalty", False)):
        e = play_aec(preset, {}, deck, 2, script)
        assert e.agent_selection == "player_0"
        obs = e.observe("player_0")
        assert bool(obs["action_mask"][0]) is can_drop and obs["action_mask"][1] == 1
        assert e.unwrapped.view("player_0")["waits"] == ([0, 0] if can_drop else [1, 0])


def test_stock_runs_out() -> None:
    e = env(2)
    e.reset(seed=3, options={"deck": stack([LOW, "AD 2D 3H 4S 6C"], "KH")})  # counts 15 and 16
    u = e.unwrapped
    draws = 0
    while True:
        e.step(u.action_from_string("draw"))
        if e.terminations["player_0"]:
            break
        draws += 1
        e.step(discard_drawn(u))
    assert draws == 52 - 11  # every stock card was drawn, then one more draw ended the hand
    info = e.infos["player_0"]
    assert (
        info["result_kind"] == "stock_out" and info["detail"] == "empty_stock" and info["counts"] == [15, 16]
    )
    assert e.rewards == {"player_0": 1.0, "player_1": -1.0}


def discard_drawn(u: Any) -> int:
    """Discard the card the seat to act just drew (2 players: the stock starts at deck index 11)."""
    s = u.game
    drawn_index = 11 + sum(1 for _, a in s.history if a == 1) - 1
    return u.action_from_string(f"discard {card(s.deck[drawn_index])}")


def card(c: int) -> str:
    return "A23456789TJQK"[c % 13] + "CDHS"[c // 13]


# -- the single-agent env: endings on an opponent's move ------------------------------------------


class Scripted:
    """Plays a fixed list of action strings."""

    def __init__(self, script: list[str]) -> None:
        self.script = list(script)

    def act(self, obs: dict[str, np.ndarray], info: SeatInfo) -> int:
        a = NAMES[self.script.pop(0)]
        assert obs["action_mask"][a] == 1
        return a


@pytest.mark.parametrize(
    "hands,stock,learner,opponent,kind,reward",
    [
        ([HIGH, LOW], "KC", ["draw", "discard KC"], ["drop"], "drop_won", -1.0),  # the opponent's drop wins
        ([LOW, HIGH], "KC", ["draw", "discard KC"], ["drop"], "caught", 2.0),  # the opponent is caught
        (
            [HIGH, "4H 5H 6H 7H KC"],
            "2D 8H",
            ["draw", "discard 2D"],
            ["draw", "spread 4H 5H 6H 7H 8H", "discard KC"],
            "run_out",
            -1.0,
        ),
        (["4H 5H 6H 9C 9D", HIGH], "9S", ["draw", "spread 4H 5H 6H", "spread 9C 9D 9S"], [], "tonk_out", 2.0),
        ([LOW, HIGH], "", ["drop"], [], "drop_won", 1.0),
    ],
)
def test_single_agent_rewards_on_either_move(
    hands: list[str], stock: str, learner: list[str], opponent: list[str], kind: str, reward: float
) -> None:
    env1 = TonkSingleAgentEnv(2, opponents=Scripted(opponent), reward_scale=2.0)
    env1.reset(seed=0, options={"deck": stack(hands, "7C", stock)})
    for i, text in enumerate(learner):
        assert env1.action_masks()[env1.action_from_string(text)] == 1
        obs, r, term, trunc, info = env1.step(env1.action_from_string(text))
        last = i == len(learner) - 1
        assert term is last and not trunc
        assert r == (reward * 2.0 if last else 0.0)
    assert info["result_kind"] == kind and info["learner_seat"] == 0
    assert info["payoffs"][0] == reward


def test_single_agent_learner_second_and_three_players() -> None:
    opp = Scripted(["draw", "discard KC", "draw", "discard QC"])
    e = TonkSingleAgentEnv(3, opponents=[opp, Scripted([])], learner_seat=1)
    deck = stack([HIGH, "AC 2C 3D 4H 5S", "AD 2D 3H 4S 6C"], "7C", "KC QC")
    obs, info = e.reset(options={"deck": deck, "dealer": 2})
    assert e.game.cur == 1 and e.game.history == [(0, 1), (0, 3 + 12)]  # seat 0 drew and discarded KC
    _, r, term, _, info = e.step(e.action_from_string("drop"))  # 15 < 47 and 16
    assert term and r == 2.0 and info["result_kind"] == "drop_won" and info["payoffs"] == [-1, 2, -1]
