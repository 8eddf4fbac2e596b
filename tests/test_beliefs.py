"""The learned opponent model: its outputs, its file checks, its training and the agents that use it."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import numpy as np
import pytest

from agents.beliefs import BELIEF_ENV, BeliefModel, belief_names, load_belief, read_belief_card
from agents.beliefs.features import feature_sizes, view_features
from agents.beliefs.model import FEATURES_VERSION, fit_hand_size, systematic_sample
from agents.registry import make_agent
from eval.duplicate import evaluate
from tonk_cli.main import main
from tonk_env.engine import OVER, GameState, make_rules, new_game, seat_info
from tonk_env.play import decide
from train.belief_data import MIX, DataConfig, generate, load_data, mix_for
from train.belief_fit import FitConfig, fit_belief


def random_model(n: int = 2, seed: int = 0, hidden: int = 16) -> BeliefModel:
    """A model with random weights (what the checks below need is its shape, not its skill)."""
    gen = np.random.default_rng(seed)
    bits, floats = feature_sizes(n)
    layers = [
        (gen.normal(0, 0.3, (hidden, bits + floats)), gen.normal(0, 0.3, hidden)),
        (gen.normal(0, 0.3, (52 * (n - 1), hidden)), gen.normal(0, 0.3, 52 * (n - 1))),
    ]
    return BeliefModel(layers, {"num_players": n, "rules_hash": "x", "features_version": FEATURES_VERSION})


def positions(n: int, count: int, seed: int = 0) -> list[GameState]:
    """Mid-hand states of greedy play that never drops."""
    out = []
    rng = random.Random(seed)
    agents = [make_agent("heuristic:greedy?drop_at=0", seed=s) for s in range(n)]
    while len(out) < count:
        s = new_game("standard", n, seed=rng.getrandbits(32))
        steps = rng.randrange(1, 30)
        for _ in range(steps):
            if s.phase == OVER:
                break
            s.play(decide(agents[s.cur], s))
        out.append(s)
    return out


@pytest.mark.parametrize("n", [2, 3])
def test_outputs_sum_to_hidden_counts_and_skip_seen_cards(n: int) -> None:
    model = random_model(n)
    for s in positions(n, 12):
        for seat in range(n):
            info = seat_info(s, seat)
            p = model.probabilities(info)
            unseen = info.unseen()
            assert np.all(p >= 0) and np.all(p <= 1 + 1e-9)
            assert np.all(p[seat] == 0)
            for o in range(n):
                if o == seat:
                    continue
                hidden = info.hand_sizes[o] - info.known[o].bit_count()
                assert p[o].sum() == pytest.approx(hidden, abs=1e-6)
                for c in range(52):
                    if not unseen >> c & 1:
                        assert p[o, c] == 0.0


def test_the_model_reads_only_the_seats_information() -> None:
    """Swapping an opponent's hidden card with a stock card leaves the seat's output unchanged."""
    model = random_model(2)
    changed = 0
    for s in positions(2, 10, seed=3):
        me = 0
        o = 1
        hidden = s.hands[o] & ~s.known[o]
        if not hidden or not s.stock:
            continue
        c = (hidden & -hidden).bit_length() - 1
        t = s.copy()
        x = t.stock[0]
        t.hands[o] = (t.hands[o] & ~(1 << c)) | (1 << x)
        t.stock[0] = c
        assert t.hands[o] != s.hands[o]
        a, b = seat_info(s, me), seat_info(t, me)
        assert np.array_equal(view_features(a)[0], view_features(b)[0])
        assert np.array_equal(model.probabilities(a), model.probabilities(b))
        changed += 1
    assert changed >= 5


def test_worlds_drawn_from_the_model_fit_the_view() -> None:
    model = random_model(3)
    for s in positions(3, 5, seed=4):
        info = seat_info(s, s.cur)
        for hands, stock in model.deal_worlds(info, 20, random.Random(1)):
            assert hands[info.seat] == info.hand
            assert len(stock) == info.stock_size
            cards = info.hand | sum(1 << c for c in stock)
            for o in range(3):
                assert hands[o].bit_count() == info.hand_sizes[o]
                assert hands[o] & info.known[o] == info.known[o]
                if o != info.seat:
                    assert not cards & hands[o]
                    cards |= hands[o]
            assert (
                cards
                == info.unseen()
                | info.hand
                | info.known[(info.seat + 1) % 3]
                | info.known[(info.seat + 2) % 3]
            )


def test_systematic_sampling_draws_exactly_h_cards_with_the_given_chances() -> None:
    gen = np.random.default_rng(0)
    z = gen.normal(0, 2, 52)
    free = gen.random(52) < 0.7
    p = fit_hand_size(z, free, np.asarray(5))
    assert p.sum() == pytest.approx(5) and p.max() <= 1
    rows = 20000
    drawn = systematic_sample(np.broadcast_to(p, (rows, 52)), np.full(rows, 5), gen)
    assert np.all(drawn.sum(axis=1) == 5)
    assert not drawn[:, ~free].any()
    assert np.abs(drawn.mean(axis=0) - p).max() < 0.02


def _write_model(folder: Path, name: str = "m") -> Path:
    model = random_model(2)
    model.meta["rules_hash"] = "5b7726a0668f"
    path = folder / f"{name}.npz"
    model.save(path)
    return path


def test_the_loader_refuses_pickled_oversized_and_tampered_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pickled = tmp_path / "pickled.npz"
    np.savez(pickled, meta=np.array({"a": 1}, dtype=object), w0=np.zeros((2, 2)), b0=np.zeros(2))
    with pytest.raises(ValueError, match="pickled") as e:
        load_belief(str(pickled))
    assert "\n" not in str(e.value)
    path = _write_model(tmp_path)
    assert load_belief(str(path)).num_players == 2
    monkeypatch.setattr("agents.beliefs.model.MAX_BYTES", 100)
    with pytest.raises(ValueError, match="larger than") as e:
        load_belief(str(path))
    assert "\n" not in str(e.value)
    monkeypatch.undo()
    # a named model whose file changed after its card was written
    folder = tmp_path / "beliefs"
    folder.mkdir()
    shutil.copy(path, folder / "m.npz")
    card = {
        "format": "tonk-belief-card/1", "name": "m", "file": "m.npz", "sha256": "0" * 64, "num_players": 2,
        "rules": "standard", "rules_hash": "5b7726a0668f", "features_version": FEATURES_VERSION,
        "network": {}, "data": {}, "metrics": {}, "training": {}, "created": "2026-12-01T00:00:00+00:00",
    }  # fmt: skip
    (folder / "m.json").write_text(json.dumps(card))
    monkeypatch.setenv(BELIEF_ENV, str(folder))
    with pytest.raises(ValueError, match="SHA-256") as e:
        load_belief("m")
    assert "\n" not in str(e.value)
    truncated = tmp_path / "cut.npz"
    truncated.write_bytes(path.read_bytes()[:100])
    with pytest.raises(ValueError, match="not a readable"):
        load_belief(str(truncated))


def test_bad_names_are_one_line_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(BELIEF_ENV, str(tmp_path))
    for spec in ("search:ismcts?belief=nope", "heuristic:expert?belief=nope"):
        with pytest.raises(
            ValueError, match="parameter belief='nope': unknown belief model 'nope'; known"
        ) as e:
            make_agent(spec)
        assert "\n" not in str(e.value)
    with pytest.raises(ValueError, match="no such file"):
        make_agent(f"heuristic:expert?belief={tmp_path}/absent.npz")
    path = _write_model(tmp_path)
    agent = make_agent(f"heuristic:expert?belief={path}")
    with pytest.raises(ValueError, match="trained for 2 players, used at a 3-player table"):
        agent.reset_hand(0, 3, new_game("standard", 3, seed=0).rules)


def test_agents_with_a_belief_model_play_legal_hands(tmp_path: Path) -> None:
    path = _write_model(tmp_path)
    res = evaluate(
        [
            f"search:ismcts?belief={path}&budget=8&drop_samples=16",
            f"heuristic:expert?belief={path}&samples=16",
        ],
        hands=4,
        players=2,
        seed=3,
        workers=1,
    )
    assert sum(a.hands for a in res.agents) == 8


def test_data_training_and_metrics_end_to_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = DataConfig(hands=12, style_hands=3, seed=5, play_share=0.2, holdout_every=4)
    a = generate(cfg, tmp_path / "a.npz", progress=False)
    b = generate(cfg, tmp_path / "b.npz", progress=False)
    assert a["positions"] == b["positions"] > 0 and a["train_positions"] > 0
    da, db = load_data(tmp_path / "a.npz"), load_data(tmp_path / "b.npz")
    for key in ("bits", "labels", "hw_probs", "hw_low_search"):
        assert np.array_equal(da[key], db[key])
    card = fit_belief(
        tmp_path / "a.npz", FitConfig(name="tiny", epochs=2, hidden=(8,)), tmp_path / "out", progress=False
    )
    assert card["metrics"]["splits"] and card["training"]["best_epoch"] in (1, 2)
    monkeypatch.setenv(BELIEF_ENV, str(tmp_path / "out"))
    model = load_belief("tiny")
    assert model.num_players == 2
    assert main(["belief", "metrics", str(tmp_path / "a.npz"), "--model", "tiny", "--update-card"]) == 0
    out = capsys.readouterr().out
    assert "per-card log-loss" in out and "hand_written" in out and "Reliability" in out
    assert "learned_minus_search_worlds" in json.dumps(read_belief_card("tiny")["metrics"])
    assert load_belief("tiny").num_players == 2  # the npz is unchanged: its card's SHA-256 still fits
    assert main(["belief", "list"]) == 0
    assert "tiny: 2 players" in capsys.readouterr().out
    assert (
        main(["belief", "train", str(tmp_path / "a.npz"), "--name", "bad name", "--out-dir", str(tmp_path)])
        == 2
    )
    assert "invalid" in capsys.readouterr().err


def test_the_shipped_models_load_by_name_and_fit_their_cards() -> None:
    names = belief_names()
    assert "2p" in names
    for name in names:
        card = read_belief_card(name)
        model = load_belief(name)
        assert model.num_players == card["num_players"]
        assert card["metrics"]["splits"] and card["data"]["held_out_style"]
        s = positions(model.num_players, 1, seed=9)[0]
        info = seat_info(s, s.cur)
        p = model.probabilities(info)
        o = (info.seat + 1) % info.n
        assert p[o].sum() == pytest.approx(info.hand_sizes[o] - info.known[o].bit_count(), abs=1e-6)


def test_the_mix_seats_the_zoo_agent_of_the_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert mix_for(2, make_rules("standard")) == list(MIX)
    hp = dict(mix_for(2, make_rules("hit_penalty")))
    assert "zoo:hit_penalty" in hp and "zoo:2p" not in hp
    assert "zoo:3p" in dict(mix_for(3, make_rules("standard")))
    monkeypatch.setenv("TONK_ZOO_DIR", str(tmp_path))  # an empty zoo: the mix plays without one
    assert [s for s, _ in mix_for(2, make_rules("standard"))] == [
        s for s, _ in MIX if not s.startswith("zoo:")
    ]
    summary = generate(
        DataConfig(hands=4, style_hands=1, players=3, seed=5, holdout_every=2),
        tmp_path / "d.npz",
        progress=False,
    )
    assert summary["players"] == 3 and summary["positions"] > 0 and "zoo:2p" not in summary["agents"]


def test_a_mix_of_ones_own_makes_a_model_of_that_opponent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "e.npz"
    assert main(["belief", "data", "--out", str(out), "--hands", "4", "--style-hands", "1",
                 "--holdout-every", "2", "--no-progress", "--mix", "heuristic:expert=1"]) == 0  # fmt: skip
    summary = json.loads(capsys.readouterr().out)
    assert summary["agents"] == ["heuristic:expert"] and summary["mix_weights"] == [1.0]
    assert set(load_data(out)["style"][load_data(out)["split"] < 2]) == {0}  # every opponent the expert
    for mix, match in (
        ({"heuristic:fast": 1.0}, "held-out style"),
        ({"nope": 1.0}, "mix 'nope': "),
        ({"random": 0.0}, "positive sum"),
    ):
        with pytest.raises(ValueError, match=match):
            generate(DataConfig(hands=2, mix=mix), tmp_path / "x.npz", progress=False)
    assert not (tmp_path / "x.npz").exists()
    for bad in ("heuristic:expert", "random=-1", "random=nan"):
        assert main(["belief", "data", "--out", str(tmp_path / "y.npz"), "--mix", bad]) == 2
        err = capsys.readouterr().err
        assert "--mix" in err and "SPEC=WEIGHT" in err and "Traceback" not in err
