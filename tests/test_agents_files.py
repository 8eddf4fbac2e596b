"""Agent files: every bad file is refused at load with a message naming it, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from agents.mlp import MLPPolicy
from agents.registry import make_agent
from tonk_cli.main import main
from tonk_env.engine import make_rules
from tonk_env.obs import obs_layout


def _layers(players: int = 2, hidden: int = 8) -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(0)
    size = obs_layout(players).size
    return [
        (rng.standard_normal((hidden, size)).astype(np.float32), np.zeros(hidden, np.float32)),
        (rng.standard_normal((540, hidden)).astype(np.float32), np.zeros(540, np.float32)),
    ]


def _save(path: Path, layers: list[tuple[np.ndarray, np.ndarray]], players: int = 2) -> Path:
    arrays = {}
    for i, (w, b) in enumerate(layers):
        arrays[f"w{i}"], arrays[f"b{i}"] = w, b  # save_npz's layout: W of shape (out, in)
    arrays["meta"] = np.array(json.dumps({"num_players": players, "rules_hash": make_rules().hash}))
    np.savez(path, **arrays)
    return path


def test_a_good_file_loads(tmp_path: Path) -> None:
    p = tmp_path / "net.npz"
    MLPPolicy(_layers(), meta={"num_players": 2}).save_npz(p)
    assert make_agent(f"npz:{p}").obs_size == obs_layout(2).size


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        ("nan", "NaN or infinite"),
        ("inf", "NaN or infinite"),
        ("chain", "inputs, the layer before gives"),
        ("bias", "outputs but a bias"),
        ("ints", "need floats"),
        ("players", "a 3-player observation has"),
        ("logits", "logits; an action table has"),
    ],
)
def test_bad_weights_are_refused(tmp_path: Path, damage: str, message: str) -> None:
    layers = _layers()
    players = 2
    (w0, b0), (w1, b1) = layers
    if damage == "nan":
        w0[0, 0] = np.nan
    elif damage == "inf":
        b1[3] = np.inf
    elif damage == "chain":
        layers[1] = (w1[:, :4], b1)
    elif damage == "bias":
        layers[0] = (w0, b0[:3])
    elif damage == "ints":
        layers[0] = (w0.astype(np.int32), b0)
    elif damage == "players":
        players = 3
    elif damage == "logits":
        layers[1] = (w1[:100], b1[:100])
    p = _save(tmp_path / "bad.npz", layers, players)
    with pytest.raises(ValueError, match=message) as e:
        make_agent(f"npz:{p}")
    assert str(p) in str(e.value)


@pytest.mark.parametrize("cut", [0, 10, 200, -50])
def test_truncated_and_empty_files_are_refused(tmp_path: Path, cut: int) -> None:
    good = tmp_path / "net.npz"
    MLPPolicy(_layers(), meta={"num_players": 2}).save_npz(good)
    blob = good.read_bytes()
    bad = tmp_path / "cut.npz"
    bad.write_bytes(blob[:cut])
    with pytest.raises(ValueError, match="cut.npz"):
        make_agent(f"npz:{bad}")


def test_the_cli_prints_a_message_not_a_traceback(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "empty.npz"
    bad.write_bytes(b"")
    assert main(["eval", f"npz:{bad}", "random", "--hands", "2"]) == 2
    err = capsys.readouterr().err
    assert "empty.npz" in err and "Traceback" not in err
