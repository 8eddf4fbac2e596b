"""Agent files: every bad file is refused at load with a message naming it, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from agents.checkpoint import FORMAT, check_meta
from agents.mlp import MLPPolicy
from agents.registry import make_agent
from frontends.onnx_export import build_model, export_onnx
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


@pytest.mark.parametrize("players", [2, 3])
def test_a_network_of_layout_version_3_loads_and_plays_as_it_did(tmp_path: Path, players: int) -> None:
    lay = obs_layout(players)
    old = lay["thrown"].start  # version 3 ended where version 4 appended thrown
    (w0, b0), (w1, b1) = _layers(players)
    layers = [(w0[:, :old].copy(), b0), (w1, b1)]
    p = tmp_path / "v3.npz"
    MLPPolicy(layers, meta={"num_players": players, "obs_version": 3, "obs_size": old}).save_npz(p)
    agent = make_agent(f"npz:{p}")
    assert agent.obs_size == lay.size and agent.meta["obs_size"] == lay.size
    assert agent.meta["obs_version"] == 4 and agent.meta["obs_version_saved"] == 3
    obs = np.random.default_rng(1).random((16, lay.size)).astype(np.float32)
    v3 = MLPPolicy(layers)  # the old network on the old part of the tensor
    # float32 products of different shapes: BLAS may sum them in another order (tests/test_widen.py)
    np.testing.assert_allclose(agent.logits(obs), v3.logits(obs[:, :old]), rtol=1e-4, atol=1e-4)
    bad = tmp_path / "v3_wrong.npz"
    MLPPolicy([(w0, b0), (w1, b1)], meta={"num_players": players, "obs_version": 3}).save_npz(bad)
    want = rf"^{bad}: {lay.size} inputs; a {players}-player observation of layout version 3 has {old}$"
    with pytest.raises(ValueError, match=want):
        make_agent(f"npz:{bad}")
    no_table = tmp_path / "v3_no_table.npz"
    MLPPolicy(layers, meta={"obs_version": 3}).save_npz(no_table)
    with pytest.raises(ValueError, match=r"version 3 with num_players None; an older layout is read only"):
        make_agent(f"npz:{no_table}")


def test_a_checkpoint_of_an_older_layout_plays_but_does_not_resume() -> None:
    meta = {"format": FORMAT, "obs_version": 3}
    assert check_meta("old.zip", meta, FORMAT, older=True) is meta
    with pytest.raises(ValueError, match=r"^old.zip: trained with observation layout version 3, this"):
        check_meta("old.zip", meta, FORMAT)
    with pytest.raises(ValueError, match="layout version 2"):
        check_meta("older.zip", {"format": FORMAT, "obs_version": 2}, FORMAT, older=True)


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


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        ("no_outputs", "layer 0 has no outputs"),
        ("beyond_float32", "NaN or infinite"),
        ("no_meta", r"missing array\(s\): meta"),
        ("no_bias", r"missing array\(s\): b1"),
        ("meta_not_json", "its metadata is not valid JSON"),
        ("meta_a_list", "its metadata is list, not a JSON object"),
        ("meta_not_text", "its meta array holds int64"),
        ("activation", "activation 'sigmoid' in its metadata; known: tanh, relu"),
        ("activation_list", r"activation \[1\] in its metadata"),
        ("obs_version", "observation layout version 1"),
        ("no_players_odd_inputs", r"the network takes 100 inputs; an observation has 442 \(2 players\)"),
    ],
)
def test_bad_arrays_and_metadata_are_refused(tmp_path: Path, damage: str, message: str) -> None:
    (w0, b0), (w1, b1) = _layers()
    arrays: dict[str, np.ndarray] = {"w0": w0, "b0": b0, "w1": w1, "b1": b1}
    meta: object = {"num_players": 2}
    if damage == "no_outputs":
        arrays.update(w0=w0[:0], b0=b0[:0], w1=w1[:, :0])
    elif damage == "beyond_float32":
        arrays["w0"] = w0.astype(np.float64)
        arrays["w0"][0, 0] = 1e300  # finite as float64, inf as the float32 the network computes in
    elif damage == "no_bias":
        del arrays["b1"]
    elif damage == "meta_a_list":
        meta = [1, 2]
    elif damage in ("activation", "activation_list", "obs_version"):
        key, value = {"activation": ("activation", "sigmoid"), "activation_list": ("activation", [1])}.get(
            damage, ("obs_version", 1)
        )
        meta = {"num_players": 2, key: value}
    elif damage == "no_players_odd_inputs":
        meta = {}
        arrays.update(w0=w0[:, :100])
    if damage == "meta_not_json":
        arrays["meta"] = np.array("{num_players: 2")
    elif damage == "meta_not_text":
        arrays["meta"] = np.array(5)
    elif damage != "no_meta":
        arrays["meta"] = np.array(json.dumps(meta))
    p = tmp_path / "bad.npz"
    np.savez(p, **arrays)
    with pytest.raises(ValueError, match=message) as e:
        make_agent(f"npz:{p}")
    assert str(p) in str(e.value)


def test_not_an_npz_archive_is_refused(tmp_path: Path) -> None:
    npy = tmp_path / "one.npz"
    with open(npy, "wb") as f:
        np.save(f, np.zeros(3))  # a single .npy array under an .npz name
    with pytest.raises(ValueError, match="one.npz: a single .npy array"):
        make_agent(f"npz:{npy}")
    (tmp_path / "folder.npz").mkdir()
    with pytest.raises(ValueError, match="folder.npz: not a file"):
        make_agent(f"npz:{tmp_path / 'folder.npz'}")
    with pytest.raises(ValueError, match="none.npz: no such file"):
        make_agent(f"npz:{tmp_path / 'none.npz'}")


# --- onnx: ------------------------------------------------------------------------------------


@pytest.fixture()
def onnx_dir(tmp_path: Path) -> Path:
    """A good exported ONNX policy (``tonk export --format onnx`` of a small network)."""
    pytest.importorskip("onnx")
    pytest.importorskip("onnxruntime")
    npz = tmp_path / "net.npz"
    MLPPolicy(_layers(), meta={"num_players": 2, "rules_hash": make_rules().hash}).save_npz(npz)
    return export_onnx(f"npz:{npz}", tmp_path / "exported")


def test_a_good_onnx_export_loads(onnx_dir: Path) -> None:
    assert make_agent(f"onnx:{onnx_dir}").obs_size == obs_layout(2).size


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        ("truncated", "model.onnx: onnxruntime cannot load it"),
        ("empty", "model.onnx: onnxruntime cannot load it"),
        ("meta_list", "meta.json: a JSON list, not an object"),
        ("meta_binary", r"meta.json: not readable JSON \(UnicodeDecodeError"),
        ("meta_cut", r"meta.json: not readable JSON \(JSONDecodeError"),
        ("no_obs_size", "meta.json: missing obs_size"),
        ("no_players", "meta.json: missing num_players"),
        ("obs_size_text", "meta.json: obs_size 'abc'; need an int"),
        ("obs_size_wrong", "meta.json: the network takes 10 inputs; a 2-player observation has 442"),
        ("num_actions_wrong", "meta.json: the network gives 7 logits"),
        ("other_model", r"model.onnx: input observation has shape \['batch', 604\]"),
        ("nan_weight", "model.onnx: its logits on a probe are not 540 finite numbers"),
        ("inf_last_weight", "model.onnx: its logits on a probe are not 540 finite numbers"),
    ],
)
def test_bad_onnx_exports_are_refused(onnx_dir: Path, tmp_path: Path, damage: str, message: str) -> None:
    model, meta_path = onnx_dir / "model.onnx", onnx_dir / "meta.json"
    meta = json.loads(meta_path.read_text())
    if damage == "truncated":
        model.write_bytes(model.read_bytes()[:200])
    elif damage == "empty":
        model.write_bytes(b"")
    elif damage == "meta_list":
        meta_path.write_text("[1]")
    elif damage == "meta_binary":
        meta_path.write_bytes(b"\xff\xfe{}")
    elif damage == "meta_cut":
        meta_path.write_text(meta_path.read_text()[:40])
    elif damage in ("no_obs_size", "no_players"):
        del meta["obs_size" if damage == "no_obs_size" else "num_players"]
        meta_path.write_text(json.dumps(meta))
    elif damage in ("obs_size_text", "obs_size_wrong", "num_actions_wrong"):
        key, value = {"obs_size_text": ("obs_size", "abc"), "obs_size_wrong": ("obs_size", 10)}.get(
            damage, ("num_actions", 7)
        )
        meta_path.write_text(json.dumps({**meta, key: value}))
    elif damage == "other_model":  # a 3-player network's model beside a 2-player meta.json
        npz3 = tmp_path / "net3.npz"
        MLPPolicy(_layers(players=3), meta={"num_players": 3}).save_npz(npz3)
        model.write_bytes((export_onnx(f"npz:{npz3}", tmp_path / "three") / "model.onnx").read_bytes())
    else:  # NaN or Inf weights: loaded, they would make every move the same
        onnx = pytest.importorskip("onnx")
        layers = [(w.T.copy(), b) for w, b in _layers()]  # (in, out), as build_model takes them
        if damage == "nan_weight":
            layers[0][0][3, 2] = np.nan
        else:
            layers[-1][0][1, 7] = np.inf
        onnx.save(build_model(layers, "tanh"), model)
    with pytest.raises(ValueError, match=message):
        make_agent(f"onnx:{onnx_dir}")


def test_the_cli_names_a_truncated_onnx_model(onnx_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = onnx_dir / "model.onnx"
    model.write_bytes(model.read_bytes()[:100])
    assert main(["eval", f"onnx:{onnx_dir}", "random", "--hands", "2"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tonk eval: error: ") and "model.onnx" in err and "Traceback" not in err
