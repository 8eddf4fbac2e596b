"""``tonk average``: one policy network, the mean of several networks' weights (agents/mlp.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from tiny import tiny_net

from agents.mlp import MLPPolicy, average_networks, policy_network
from tonk_cli.main import main


def test_the_average_is_the_mean_of_the_weights_and_plays_as_npz(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    specs = [tiny_net(tmp_path / f"n{i}.npz", seed=i) for i in range(3)]
    out = tmp_path / "avg.npz"
    assert main(["average", *specs, "--out", str(out)]) == 0
    assert f"npz:{out}" in capsys.readouterr().out and Path(f"{out}.sha256").exists()
    nets = [policy_network(s) for s in specs]
    avg = policy_network(f"npz:{out}")
    for i, (w, b) in enumerate(avg.layers):
        np.testing.assert_allclose(w, np.mean([n.layers[i][0] for n in nets], axis=0), rtol=0, atol=1e-7)
        np.testing.assert_allclose(b, np.mean([n.layers[i][1] for n in nets], axis=0), rtol=0, atol=1e-7)
    assert avg.meta["averaged"] == specs and "step" not in avg.meta
    assert avg.meta["num_players"] == 2 and avg.meta["rules_hash"] == nets[0].meta["rules_hash"]
    obs = np.random.default_rng(0).random((5, avg.obs_size)).astype(np.float32)
    assert not np.allclose(avg.logits(obs), nets[0].logits(obs))  # a new network, not the first one
    again = tmp_path / "again.npz"
    assert main(["average", *specs, "--out", str(again)]) == 0
    assert again.read_bytes() == out.read_bytes()  # deterministic


def test_networks_of_other_shapes_or_tables_are_refused_by_name(tmp_path: Path) -> None:
    a = policy_network(tiny_net(tmp_path / "a.npz"))
    wide = policy_network(tiny_net(tmp_path / "wide.npz", hidden=32))
    with pytest.raises(ValueError, match=r"^wide: layers 442-32-540 \(tanh\) differ from a's 442-16-540"):
        average_networks([a, wide], ["a", "wide"])
    other = MLPPolicy(a.layers_for_export(), meta={**a.meta, "rules_hash": "0000"})
    with pytest.raises(ValueError, match="^other: rules_hash '0000' differs from a's"):
        average_networks([a, other], ["a", "other"])


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ([], "two networks at least are needed, got 1"),
        (["npz:NET"], "--out"),
        (["nonsense:x"], "network 'nonsense:x': unknown agent kind"),
    ],
)
def test_bad_arguments_are_one_line_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    net = tiny_net(tmp_path / "n.npz")
    extra = [net if x == "npz:NET" else x for x in extra]
    out = tmp_path / ("avg.txt" if extra == [net] else "avg.npz")
    assert main(["average", net, *extra, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tonk average: error: ") and message in err and err.count("\n") == 1
    assert not out.exists()
