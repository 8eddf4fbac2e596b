"""The luck correction (AIVAT over stock draws): features, zero-mean terms, planted biases, files, option."""

from __future__ import annotations

import json
import math
import random
import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from eval.duplicate import evaluate
from eval.report import format_table
from tonk_cli.main import main
from tonk_env.agent import FunctionAgent
from tonk_env.engine import GameState, SeatInfo, hand_value, legal_actions, new_game
from tonk_env.engine.actions import DISCARD, DRAW, DROP, HIT_BOOK, TAKE
from tonk_env.engine.cards import VALUES
from tonk_env.luck import (
    ValueNet,
    draw_outcomes,
    draw_term,
    feature_size,
    hand_luck,
    load_value,
    save_value,
    state_features,
)
from tonk_env.luck.features import _offsets
from tonk_env.play import play

Term = Callable[[ValueNet, GameState, int], np.ndarray]


def random_value(n: int = 2, seed: int = 0, hidden: int = 16) -> ValueNet:
    """A value network with random weights: the terms are zero-mean for any value."""
    g = np.random.default_rng(seed)
    f = feature_size(n)
    layers = [
        (g.normal(0, 0.3, (f, hidden)).astype(np.float32), g.normal(0, 0.1, hidden).astype(np.float32)),
        (g.normal(0, 0.3, (hidden, 1)).astype(np.float32), np.zeros(1, np.float32)),
    ]
    return ValueNet(layers, name="random")


def count_value(n: int = 2) -> ValueNet:
    """V = minus the seat's own count (centred over the table): a low draw is good luck."""
    w = np.zeros((feature_size(n), 1), np.float32)
    w[_offsets(n)["counts"], 0] = -1.0
    return ValueNet([(w, np.zeros(1, np.float32))], name="count")


def with_top(s: GameState, card: int) -> GameState:
    """A copy of ``s`` whose stock has ``card`` on top (the rest of the order unchanged)."""
    t = s.copy()
    i = t.stock.index(card)
    t.stock[i], t.stock[-1] = t.stock[-1], t.stock[i]
    return t


def states_before_draws(seed: int, n: int = 2, count: int = 6) -> list[GameState]:
    """Start-of-turn states (stock not empty) from a random playout that never drops."""
    rng = random.Random(seed)
    s = new_game("standard", n, seed=seed)
    out = []
    while s.phase != 2 and len(out) < count:
        legal = legal_actions(s)
        if DRAW in legal and s.stock:
            out.append(s.copy())
        s.play(rng.choice([a for a in legal if a != DROP] or legal))
    return out


# --- features ------------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [2, 3])
def test_draw_outcomes_are_the_states_with_each_card_drawn(n: int) -> None:
    for before in states_before_draws(3, n):
        after = before.copy()
        drawn = after.stock[-1]
        after.play(DRAW)
        cards, rows = draw_outcomes(after, drawn)
        assert sorted(cards.tolist()) == sorted(before.stock)
        for k, c in enumerate(cards):
            t = with_top(before, int(c))
            t.play(DRAW)
            np.testing.assert_array_equal(rows[k], state_features(t))


def test_features_do_not_see_the_stock_order() -> None:
    s = states_before_draws(5)[2]
    t = s.copy()
    random.Random(1).shuffle(t.stock)
    assert t.stock != s.stock
    np.testing.assert_array_equal(state_features(s), state_features(t))


def test_values_are_zero_sum_over_the_table() -> None:
    s = states_before_draws(2, 3)[1]
    v = random_value(3).values(state_features(s))
    assert v.shape == (3,) and abs(float(v.sum())) < 1e-5


# --- zero mean, exactly: every card the stock could give ------------------------------------------


def correct_term(value: ValueNet, after: GameState, drawn: int) -> np.ndarray:
    return draw_term(value, after, drawn)


def belief_term(value: ValueNet, after: GameState, drawn: int) -> np.ndarray:
    """Planted bias: the expectation over the cards the drawer has not seen (stock and other hands)."""
    worlds = []
    for c in [
        drawn,
        *after.stock,
        *(c for o in range(after.n) if o != after.cur for c in range(52) if after.hands[o] >> c & 1),
    ]:  # noqa: E501
        t = after.copy()
        t.hands[t.cur] = (t.hands[t.cur] & ~(1 << drawn)) | (1 << c)
        if c in t.stock:
            t.stock[t.stock.index(c)] = drawn
        elif c != drawn:
            owner = next(o for o in range(t.n) if t.hands[o] >> c & 1 and o != t.cur)
            t.hands[owner] = (t.hands[owner] & ~(1 << c)) | (1 << drawn)
        worlds.append(state_features(t))
    v = value.values(np.stack(worlds))
    return (v.mean(axis=0) - v[0]).astype(np.float64)


def predraw_term(value: ValueNet, after: GameState, drawn: int) -> np.ndarray:
    """Planted bias: the value before the draw stands in for the expectation over the draw."""
    before = after.copy()
    before.hands[before.cur] &= ~(1 << drawn)
    before.stock.append(drawn)
    before.phase = 0
    v_before = value.values(state_features(before))
    v_after = value.values(state_features(after))
    return (v_before - v_after).astype(np.float64)


def exact_mean_term(term: Term, value: ValueNet, before: GameState) -> np.ndarray:
    """The term's exact expectation at ``before``: the mean over every card that can come off the stock."""
    total = np.zeros(before.n)
    for card in before.stock:
        t = with_top(before, card)
        t.play(DRAW)
        total += term(value, t, card)
    return total / len(before.stock)


#: How far from zero an exact expectation may be (float32 rounding).
TOL = 1e-5


@pytest.mark.parametrize("n", [2, 3])
def test_the_term_has_exact_mean_zero_for_any_value(n: int) -> None:
    for i, before in enumerate(states_before_draws(11, n)):
        for value in (random_value(n, seed=i), count_value(n)):
            assert np.abs(exact_mean_term(correct_term, value, before)).max() < TOL


@pytest.mark.parametrize("planted", [belief_term, predraw_term])
def test_a_planted_biased_expectation_fails_the_exact_check(planted: Term) -> None:
    worst = max(
        float(np.abs(exact_mean_term(planted, value, before)).max())
        for before in states_before_draws(11)
        for value in (random_value(), count_value())
    )
    assert worst > 100 * TOL  # the check above fails it


# --- zero mean over played hands, with a tolerance from the standard error -------------------------


def discard_highest(info: SeatInfo) -> int:
    discards = [a for a in info.legal if DISCARD <= a < HIT_BOOK]
    return max(discards, key=lambda a: (VALUES[a - DISCARD], a)) if discards else info.legal[0]


def honest(obs: object, info: SeatInfo) -> int:
    """Drops at 12 or less, else draws; discards its highest card. Never sees the stock."""
    if DRAW in info.legal:
        return DROP if DROP in info.legal and hand_value(info.hand) <= 12 else DRAW
    return discard_highest(info)


def hand_terms(value: ValueNet, hands: int, peek: bool = False) -> list[float]:
    """Seat 0's summed luck term in each of ``hands`` hands between fixed policies."""
    out = []
    for h in range(hands):
        s = new_game("standard", 2, seed=1000 + h)
        deck = list(s.deck)

        def peeking(obs: object, info: SeatInfo, s: GameState = s) -> int:
            """Planted bias: sees the stock's top and draws only a low card (else takes the discard)."""
            if DRAW in info.legal and s.stock and VALUES[s.stock[-1]] > 4 and TAKE in info.legal:
                return TAKE
            return honest(obs, info)

        agent = FunctionAgent(peeking if peek else honest)
        play(s, [agent, FunctionAgent(honest)])
        out.append(float(hand_luck(value, s.rules, 2, deck, s.dealer, (a for _, a in s.history))[0]))
    return out


def z_score(xs: list[float]) -> float:
    m = sum(xs) / len(xs)
    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1))
    return m / (sd / math.sqrt(len(xs)))


def test_terms_average_zero_over_hands_of_fixed_policies() -> None:
    terms = hand_terms(count_value(), 300)
    assert sum(1 for t in terms if t != 0) > 200  # the hands do draw
    assert abs(z_score(terms)) < 3.5


def test_a_policy_that_peeks_at_the_stock_order_is_detected() -> None:
    assert abs(z_score(hand_terms(count_value(), 300, peek=True))) > 3.5


# --- value files -------------------------------------------------------------------------------------


@pytest.fixture
def value_file(tmp_path: Path) -> Path:
    v = random_value()
    card = {"name": "tiny", "num_players": 2, "rules": "standard", "rules_hash": "5b7726a0668f",
            "network": {"activation": "relu", "sizes": [feature_size(2), 16, 1]}, "data": {}, "fit": {},
            "created": "2026-12-01T00:00:00Z"}  # fmt: skip
    save_value(tmp_path / "tiny.npz", v.layers, card)
    return tmp_path / "tiny.npz"


def test_a_saved_value_loads_with_its_hash(value_file: Path) -> None:
    v = load_value(str(value_file))
    assert v.sha256 == json.loads(value_file.with_suffix(".json").read_text())["sha256"]
    np.testing.assert_allclose(v.layers[0][0], random_value().layers[0][0])


def _corrupt_bytes(p: Path) -> None:
    p.write_bytes(b"not a zip")


def _corrupt_card(p: Path) -> None:
    p.with_suffix(".json").write_text("{")


def _no_card(p: Path) -> None:
    p.with_suffix(".json").unlink()


def _other_hash(p: Path) -> None:
    card = json.loads(p.with_suffix(".json").read_text())
    card["sha256"] = "0" * 64
    p.with_suffix(".json").write_text(json.dumps(card))


def _three_players(p: Path) -> None:
    card = json.loads(p.with_suffix(".json").read_text())
    card["num_players"] = 3
    p.with_suffix(".json").write_text(json.dumps(card))


@pytest.mark.parametrize(
    ("spoil", "why"),
    [
        (_corrupt_bytes, "differs from its card"),
        (_corrupt_card, "not a JSON card"),
        (_no_card, "no such file"),
        (_other_hash, "differs from its card"),
        (_three_players, f"takes {feature_size(2)} inputs"),
    ],
)
def test_a_bad_value_file_is_one_line_naming_the_file(
    value_file: Path, spoil: Callable[[Path], None], why: str, capsys: pytest.CaptureFixture[str]
) -> None:
    spoil(value_file)
    assert main(["eval", "random", "random", "--hands", "2", "--luck", str(value_file)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "tiny." in err and why in err


def test_an_unknown_value_name_lists_the_shipped_ones(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "random", "--hands", "2", "--luck", "nosuch"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "'nosuch'" in err and "2p" in err


def test_a_value_for_another_table_is_refused(value_file: Path) -> None:
    with pytest.raises(ValueError, match="fitted for 2 players, the evaluation has 3"):
        evaluate(["random", "random"], hands=6, players=3, luck=str(value_file))
    with pytest.raises(ValueError, match="rules hash"):
        evaluate(["random", "random"], hands=2, rules="hit_penalty", luck=str(value_file))


# --- the evaluation option ---------------------------------------------------------------------------


def test_the_option_leaves_the_plain_figures_and_is_deterministic(value_file: Path) -> None:
    specs = ["heuristic:greedy", "random"]
    plain = evaluate(specs, hands=40, seed=3).to_dict(timing=False)
    with_luck = evaluate(specs, hands=40, seed=3, luck=str(value_file)).to_dict(timing=False)
    luck = with_luck.pop("luck")
    assert with_luck == plain
    assert evaluate(specs, hands=40, seed=3, luck=str(value_file)).to_dict(timing=False)["luck"] == luck
    assert luck["sha256"] == load_value(str(value_file)).sha256 and luck["file"].endswith("tiny.npz")
    for row, a in zip(luck["agents"], plain["agents"], strict=True):
        assert row["plain_mean_stakes"] == a["mean_stakes"] and row["plain_ci95"] == a["ci95"]
    assert luck["agents"][0]["mean_stakes"] == pytest.approx(-luck["agents"][1]["mean_stakes"])


def test_the_corrected_figures_do_not_depend_on_workers(value_file: Path) -> None:
    one = evaluate(["heuristic:greedy", "random"], hands=80, seed=1, luck=str(value_file))
    two = evaluate(["heuristic:greedy", "random"], hands=80, seed=1, luck=str(value_file), workers=2)
    assert one.luck is not None and two.luck is not None
    assert one.luck.to_dict() == two.luck.to_dict()


def test_the_table_names_the_value_and_its_hash(value_file: Path) -> None:
    res = evaluate(["heuristic:greedy", "random"], hands=20, luck=str(value_file))
    text = format_table(res)
    assert str(value_file) in text and load_value(str(value_file)).sha256 in text and "factor" in text


def test_the_shipped_value_loads_and_corrects() -> None:
    v = load_value("2p")
    assert v.card["num_players"] == 2 and v.card["data"]["hands"] >= 1000
    res = evaluate(["heuristic:expert", "heuristic:greedy"], hands=20, luck="2p")
    assert res.luck is not None and res.luck.sha256 == v.sha256
    assert all(math.isfinite(a.mean_stakes) for a in res.luck.agents)


# --- fitting ------------------------------------------------------------------------------------------


def test_luck_fit_writes_a_loadable_value(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def fit(out: Path, hands: int, *extra: str) -> ValueNet:
        argv = ["luck", "fit", str(out), "--hands", str(hands), "--epochs", "2", "--hidden", "8",
                "--no-progress", "--mix", "random=1", "--mix", "heuristic:greedy=1", *extra]  # fmt: skip
        assert main(argv) == 0
        assert "sha256" in capsys.readouterr().out
        return load_value(str(out))

    hands_file = tmp_path / "hands.jsonl"
    fit(tmp_path / "part.npz", 20, "--hands-file", str(hands_file))
    assert len(hands_file.read_text().splitlines()) == 21  # the header and 20 hands
    v = fit(tmp_path / "v.npz", 40, "--hands-file", str(hands_file))  # continues the file
    assert len(hands_file.read_text().splitlines()) == 41
    assert v.card["data"]["hands"] == 40 and v.card["data"]["mix"] == {"random": 1.0, "heuristic:greedy": 1.0}
    assert "luck-fit:0:" in v.card["data"]["deals"]
    assert fit(tmp_path / "again.npz", 40).sha256 == v.sha256  # same seed, same value file
    shutil.rmtree(tmp_path)
