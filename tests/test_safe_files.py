"""Arrays from a user's files: sizes checked before decompression, npz hashes checked when present."""

from __future__ import annotations

import io
import json
import tracemalloc
import zipfile
from pathlib import Path

import numpy as np
import pytest

from agents.mlp import MLPPolicy
from agents.registry import make_agent
from tonk_env.obs import obs_layout
from tonk_env.safe_arrays import MAX_MEMBER_BYTES, load_npz


def _write_bomb(path: Path, nbytes: int) -> None:
    """A policy .npz whose w0 decompresses to ``nbytes`` of zeros (streamed: little memory here)."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as z:
        buf = io.BytesIO()
        np.lib.format.write_array(buf, np.array(json.dumps({"activation": "tanh"})))
        z.writestr("meta.npy", buf.getvalue())
        with z.open("w0.npy", "w", force_zip64=True) as f:
            header = {"descr": "<f4", "fortran_order": False, "shape": (nbytes // 4,)}
            np.lib.format.write_array_header_1_0(f, header)
            chunk = bytes(1 << 22)
            for _ in range(nbytes // len(chunk)):
                f.write(chunk)


def _lying_header(path: Path) -> None:
    """A small .npz whose w0 header claims 2**40 floats (the zip directory's size is small)."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z:
        buf = io.BytesIO()
        np.lib.format.write_array_header_1_0(buf, {"descr": "<f4", "fortran_order": False, "shape": (2**40,)})
        z.writestr("w0.npy", buf.getvalue() + bytes(64))


def test_a_decompression_bomb_is_refused_before_decompressing(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.npz"
    _write_bomb(bomb, MAX_MEMBER_BYTES + (8 << 20))
    assert bomb.stat().st_size < 1 << 20  # a small file
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match=r"w0.npy would decompress to 72.0 MiB, over the limit") as e:
            make_agent(f"npz:{bomb}")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 << 20  # nothing was decompressed
    assert "\n" not in str(e.value)


def test_a_header_that_claims_a_huge_array_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "liar.npz"
    _lying_header(path)
    with pytest.raises(ValueError, match=r"array w0 would take 4,194,304.0 MiB, over the limit"):
        load_npz(path)


def test_the_limits_apply_to_checkpoints_too(tmp_path: Path) -> None:
    ckpt = tmp_path / "big.zip"
    with zipfile.ZipFile(ckpt, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as z:
        with z.open("policy.pth", "w", force_zip64=True) as f:
            for _ in range((MAX_MEMBER_BYTES >> 22) + 1):
                f.write(bytes(1 << 22))
        z.writestr("tonk_meta.json", "{}")
    with pytest.raises(ValueError, match="policy.pth would decompress to .* over the limit"):
        make_agent(f"ppo:{ckpt}")


def _policy(path: Path) -> Path:
    size = obs_layout(2).size
    rng = np.random.default_rng(0)
    layers = [(rng.standard_normal((8, size)).astype(np.float32), np.zeros(8, np.float32))]
    layers.append((rng.standard_normal((540, 8)).astype(np.float32), np.zeros(540, np.float32)))
    MLPPolicy(layers, meta={"num_players": 2}).save_npz(path)
    return path


def test_npz_files_carry_their_hash_and_an_edit_is_refused(tmp_path: Path) -> None:
    path = _policy(tmp_path / "p.npz")
    side = tmp_path / "p.npz.sha256"
    assert side.read_text().split()[0] == __import__("hashlib").sha256(path.read_bytes()).hexdigest()
    make_agent(f"npz:{path}")
    saved = side.read_text()
    data = dict(np.load(path))
    data["w0"][0, 0] += 1.0  # edited weights, a valid zip with valid CRCs
    np.savez(path, **data)
    side.write_text(saved)
    with pytest.raises(ValueError, match=r"p.npz has SHA-256 .* p.npz.sha256 says .*refused"):
        make_agent(f"npz:{path}")


def test_a_card_beside_the_file_is_checked_too(tmp_path: Path) -> None:
    path = _policy(tmp_path / "q.npz")
    (tmp_path / "q.npz.sha256").unlink()
    (tmp_path / "q.json").write_text(json.dumps({"name": "q", "sha256": "0" * 64}))
    with pytest.raises(ValueError, match="q.json says 0000000000000000"):
        make_agent(f"npz:{path}")


def test_a_file_without_a_hash_loads_with_a_one_line_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _policy(tmp_path / "r.npz")
    (tmp_path / "r.npz.sha256").unlink()
    make_agent(f"npz:{path}")
    make_agent(f"npz:{path}")  # said once
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "r.npz.sha256" in err[0] and "not checked" in err[0]


def test_the_belief_and_luck_value_loaders_refuse_a_bomb_before_decompressing(tmp_path: Path) -> None:
    from agents.beliefs.model import BeliefModel
    from tonk_env.luck.value import _read_layers

    bomb = tmp_path / "bomb.npz"
    _write_bomb(bomb, MAX_MEMBER_BYTES + (8 << 20))  # over both loaders' limits
    for load in (BeliefModel.load, _read_layers):
        tracemalloc.start()
        try:
            with pytest.raises(ValueError, match="over the limit") as e:
                load(bomb)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert peak < 4 << 20 and "\n" not in str(e.value)


def test_a_damaged_npy_header_is_a_one_line_value_error(tmp_path: Path) -> None:
    """numpy's header parser raises SyntaxError or TokenError on some damage (the fuzz test found one)."""
    path = tmp_path / "damaged.npz"
    body = b"{'descr': '<f4', 'fortran_order': True, 'shape': (8, 338\xc3\x96, }"
    body += b" " * (118 - len(body)) + b"\n"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("w0.npy", b"\x93NUMPY\x01\x00" + len(body).to_bytes(2, "little") + body)
    with pytest.raises(ValueError, match=r"damaged\.npz: array w0: a damaged \.npy header") as e:
        load_npz(path)
    assert "\n" not in str(e.value)
