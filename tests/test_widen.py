"""``tonk widen``: a policy network with wider hidden layers and the same logits (agents/mlp.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from tiny import tiny_net

from agents.mlp import MLPPolicy, policy_network, widen_network
from tonk_cli.main import main


def _two_hidden(path: Path) -> MLPPolicy:
    """A random 2-player network with two hidden layers (16 and 8 units), meta from ``tiny_net``."""
    one = policy_network(tiny_net(path))
    rng = np.random.default_rng(3)
    sizes = [one.obs_size, 16, 8, one.num_actions]
    layers = [
        (rng.normal(size=(o, i)).astype(np.float32), rng.normal(size=o).astype(np.float32))
        for i, o in zip(sizes[:-1], sizes[1:], strict=True)
    ]
    return MLPPolicy(layers, meta=one.meta)


def test_the_wider_network_has_the_same_logits_and_plays_as_npz(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "n.npz"
    _two_hidden(tmp_path / "seed.npz").save_npz(src)
    out = tmp_path / "wide.npz"
    assert main(["widen", f"npz:{src}", "--width", "24", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "442-16-8-540 to 442-24-24-540" in printed and "'net.pi=[24, 24]'" in printed
    net, wide = policy_network(f"npz:{src}"), policy_network(f"npz:{out}")
    assert wide.sizes == [442, 24, 24, 540] and Path(f"{out}.sha256").exists()
    obs = np.random.default_rng(0).random((64, net.obs_size)).astype(np.float32)
    # float32 sums of 442 unit-normal products: BLAS blocks the wider matrices differently, and the
    # rounding of the two orders differs by a few 1e-5 (3.7e-5 seen on a 2-core AMD EPYC VM)
    np.testing.assert_allclose(wide.logits(obs), net.logits(obs), rtol=1e-4, atol=1e-4)
    assert wide.meta["widened"] == {"from": f"npz:{src}", "sizes": [442, 16, 8, 540]}
    assert wide.meta["num_players"] == 2 and wide.meta["rules_hash"] == net.meta["rules_hash"]
    w1, w2 = wide.layers[1][0], wide.layers[2][0]  # (in, out)
    assert not np.allclose(w1[:16, 8:], 0)  # the new units read the old ones: they can grow
    assert np.all(w1[16:, :8] == 0) and np.all(w2[8:] == 0)  # and give the old ones and the logits nothing
    again = tmp_path / "again.npz"
    assert main(["widen", f"npz:{src}", "--width", "24", "--out", str(again)]) == 0
    assert again.read_bytes() == out.read_bytes()  # deterministic
    other = tmp_path / "other.npz"
    assert main(["widen", f"npz:{src}", "--width", "24", "--seed", "1", "--out", str(other)]) == 0
    assert other.read_bytes() != out.read_bytes()


def test_narrowing_is_refused_by_name(tmp_path: Path) -> None:
    net = _two_hidden(tmp_path / "n.npz")
    with pytest.raises(ValueError, match=r"^net: width 12 is below its hidden layers' 442-16-8-540"):
        widen_network(net, 12, "net")
    same = widen_network(net, 16, "net")  # the widest layer's size: only the narrower one grows
    assert same.sizes == [442, 16, 16, 540]


@pytest.mark.parametrize(
    ("spec", "extra", "message"),
    [
        (None, ["--width", "0"], "argument --width: '0' is out of range; allowed: 1..65,536"),
        (None, ["--width", "8", "--out", "wide.txt"], "--out"),
        ("nonsense:x", ["--width", "8"], "network 'nonsense:x': unknown agent kind"),
    ],
)
def test_bad_arguments_are_one_line_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], spec: str | None, extra: list[str], message: str
) -> None:
    spec = spec or tiny_net(tmp_path / "n.npz", hidden=16)
    if "--out" not in extra:
        extra = [*extra, "--out", "wide.npz"]
    extra = [str(tmp_path / x) if x.startswith("wide.") else x for x in extra]
    assert main(["widen", spec, *extra]) == 2
    *usage, err = capsys.readouterr().err.splitlines()  # argparse's own errors come after the usage line
    assert err.startswith("tonk widen: error: ") and message in err and len(usage) <= 1
    assert not (tmp_path / "wide.npz").exists() and not (tmp_path / "wide.txt").exists()
