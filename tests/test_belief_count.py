"""The opponent model's count head: its worlds follow the head's hidden totals, its fit and its checks."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from test_beliefs import positions

from agents.beliefs import BeliefModel, load_belief
from agents.beliefs.features import feature_sizes
from agents.beliefs.model import FEATURES_VERSION, OVERSAMPLE, resample_by_count
from tonk_cli.main import main
from tonk_env.engine import hand_value, seat_info
from train.belief_data import DataConfig, generate
from train.belief_fit import FitConfig, fit_belief


def head_model(n: int, bins: int, seed: int = 0, hidden: int = 16) -> BeliefModel:
    gen = np.random.default_rng(seed)
    bits, floats = feature_sizes(n)
    out = (52 + bins) * (n - 1)
    layers = [
        (gen.normal(0, 0.3, (hidden, bits + floats)), gen.normal(0, 0.3, hidden)),
        (gen.normal(0, 0.3, (out, hidden)), gen.normal(0, 0.3, out)),
    ]
    meta = {"num_players": n, "rules_hash": "x", "features_version": FEATURES_VERSION, "count_bins": bins}
    return BeliefModel(layers, meta)


def test_resampling_gives_the_kept_worlds_the_heads_totals() -> None:
    gen = np.random.default_rng(0)
    totals = gen.binomial(20, 0.3, size=(8000, 1))  # drawn totals crowd around 6
    one = np.full((1, 21), 1e-9)
    one[0, 11] = 1.0
    kept = totals[resample_by_count(totals, one, 500, gen)]
    assert np.all(kept == 11)
    flat = np.zeros((1, 21))
    flat[0, 2:11] = 1 / 9  # the head: even over 2..10
    kept = totals[resample_by_count(totals, flat, 9000, gen), 0]
    share = np.bincount(kept, minlength=21) / len(kept)
    assert share[:2].sum() < 0.01 and share[11:].sum() < 0.01
    assert np.abs(share[2:11] - 1 / 9).max() < 0.02
    same = resample_by_count(totals, np.bincount(totals[:, 0], minlength=21)[None] / 8000, 8000, gen)
    assert len(np.unique(same)) == 8000  # a head equal to the draws keeps every world once


@pytest.mark.parametrize("n", [2, 3])
def test_a_model_with_a_count_head_deals_worlds_that_fit_the_view(n: int) -> None:
    model = head_model(n, bins=81)
    assert model.count_bins == 81
    for s in positions(n, 4, seed=n):
        info = seat_info(s, s.cur)
        worlds = model.deal_worlds(info, 16, random.Random(3))
        assert len(worlds) == 16
        for hands, stock in worlds:
            assert hands[info.seat] == info.hand and len(stock) == info.stock_size
            for o in range(n):
                assert hands[o].bit_count() == info.hand_sizes[o]
                assert hands[o] & info.known[o] == info.known[o]
            everything = sum(hands) + sum(1 << c for c in stock)
            assert everything.bit_count() == sum(info.hand_sizes) + info.stock_size  # no card twice
        counts = model.sample_counts(info, 8, random.Random(3))
        assert counts.shape == (8, n) and np.all(counts[:, info.seat] == hand_value(info.hand))


def test_the_count_head_is_checked_against_the_networks_outputs() -> None:
    model = head_model(2, bins=10)
    layers = [(w.T, b) for w, b in model.layers]
    for bins, match in ((11, "with 11 count bins need 63"), (-1, "count_bins -1"), (True, "count_bins True")):
        with pytest.raises(ValueError, match=match):
            BeliefModel(layers, {**model.meta, "count_bins": bins})


def test_fitting_with_a_count_head_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    generate(DataConfig(hands=12, style_hands=3, seed=5, holdout_every=4), tmp_path / "a.npz", progress=False)
    card = fit_belief(
        tmp_path / "a.npz",
        FitConfig(name="counted", epochs=2, hidden=(8,), count_bins=81),
        tmp_path / "out",
        progress=False,
    )
    assert card["training"]["count_bins"] == 81 and card["network"]["sizes"][-1] == 52 + 81
    model = load_belief(str(tmp_path / "out" / "counted.npz"))
    assert model.count_bins == 81 and OVERSAMPLE > 1
    assert "learned" in card["metrics"]["splits"]["1"]["lowest"]
    argv = [
        "belief",
        "train",
        str(tmp_path / "a.npz"),
        "--name",
        "x",
        "--out-dir",
        str(tmp_path),
        "--no-progress",
    ]
    assert main([*argv, "--count-bins", "1"]) == 2
    err = capsys.readouterr().err
    assert "count_bins 1" in err and "Traceback" not in err
