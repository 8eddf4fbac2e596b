"""Resume reads run folders safely: no unpickling, clear messages for finished runs and broken files."""

from __future__ import annotations

import base64
import io
import json
import pickle
import shutil
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch
from sb3_contrib import MaskablePPO
from tiny import TINY_NO_EVAL

from agents.ppo import load_policy
from tonk_cli.main import main
from train.sb3 import trainer

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny finished run of 512 steps with checkpoints at 256 and 512."""
    out = tmp_path_factory.mktemp("runs")
    assert (
        main(["train", str(ROOT / "configs/quick.yaml"), *TINY_NO_EVAL, f"out_dir={out}", "--no-progress"])
        == 0
    )
    (folder,) = out.iterdir()
    return folder


def _copy(run: Path, tmp_path: Path) -> Path:
    dst = tmp_path / run.name
    shutil.copytree(run, dst)
    return dst


def _state(folder: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns) for p in folder.rglob("*")}


class Payload:
    """Unpickling this creates a marker file: proof that a loader ran code from the checkpoint."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str, str]]:
        return (open, (str(self.marker), "w"))


def _plant(ckpt: Path, marker: Path) -> None:
    """Put a pickled payload into the checkpoint's ``data`` member, where SB3's loader unpickles."""
    with zipfile.ZipFile(ckpt) as z:
        members = {n: z.read(n) for n in z.namelist()}
    data = json.loads(members["data"])
    blob = base64.b64encode(pickle.dumps(Payload(marker))).decode()
    data["policy_class"] = {":type:": "<class 'type'>", ":serialized:": blob}
    data["evil"] = {":type:": "<class 'object'>", ":serialized:": blob}
    members["data"] = json.dumps(data).encode()
    with zipfile.ZipFile(ckpt, "w") as z:
        for name, content in members.items():
            z.writestr(name, content)


def test_a_planted_checkpoint_runs_no_code_on_resume(run: Path, tmp_path: Path) -> None:
    folder = _copy(run, tmp_path)
    marker = tmp_path / "pwned"
    for ckpt in (folder / "checkpoints").glob("step_*.zip"):
        _plant(ckpt, marker)
    assert main(["train", "--resume", str(folder), "total_steps=768", "--no-progress"]) == 0
    assert not marker.exists()
    steps = [json.loads(x).get("step", 0) for x in (folder / "metrics.jsonl").read_text().splitlines()]
    assert max(steps) == 768


def test_resuming_a_finished_run_says_so_and_writes_nothing(
    run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _copy(run, tmp_path)
    before = _state(folder)
    assert main(["train", "--resume", str(folder), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "the run is finished (step 512 of total_steps 512)" in err and "total_steps=1024" in err
    assert "Traceback" not in err and _state(folder) == before


def test_a_truncated_newest_checkpoint_falls_back_to_the_previous(
    run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _copy(run, tmp_path)
    newest = folder / "checkpoints" / "step_512.zip"
    newest.write_bytes(newest.read_bytes()[:300])
    (folder / "checkpoints" / "step_4096 (copy).zip").write_bytes(b"stray")
    assert main(["train", "--resume", str(folder), "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert "skipped" in err and "step_512.zip" in err and "(copy)" not in err
    events = [json.loads(x) for x in (folder / "metrics.jsonl").read_text().splitlines()]
    assert any(e["type"] == "resume" and e["checkpoint"] == "step_256.zip" for e in events)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "players: [2\n",
            "config.yaml is not valid YAML: expected ',' or ']', but got '<stream end>' at line 2",
        ),
        ("", "config.yaml: expected the run's options (key: value lines), got NoneType"),
        ("- 1\n", "config.yaml: expected the run's options (key: value lines), got list"),
        ("colour: red\n", "config.yaml: unknown config key 'colour'"),
    ],
)
def test_a_corrupt_config_is_named(
    run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, message: str
) -> None:
    folder = _copy(run, tmp_path)
    (folder / "config.yaml").write_text(text)
    before = _state(folder)
    assert main(["train", "--resume", str(folder), "total_steps=768", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert _state(folder) == before


def test_other_net_sizes_on_resume_are_refused(
    run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _copy(run, tmp_path)
    before = _state(folder)
    assert main(["train", "--resume", str(folder), "total_steps=768", "net.pi=[32]", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "step_512.zip: its network does not fit this run's net sizes (size mismatch" in err
    assert "Traceback" not in err and _state(folder) == before


def test_no_readable_checkpoint_is_an_error(
    run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _copy(run, tmp_path)
    for ckpt in (folder / "checkpoints").glob("step_*.zip"):
        ckpt.write_bytes(b"")
    assert main(["train", "--resume", str(folder), "total_steps=768", "--no-progress"]) == 2
    assert "none of its 2 checkpoint(s) can be read" in capsys.readouterr().err


def _rewrite(ckpt: Path, member: str, change: Callable[[dict[str, Any]], None]) -> None:
    """Load a tensor member of a checkpoint (our own, trusted), change it and write the zip back."""
    with zipfile.ZipFile(ckpt) as z:
        members = {n: z.read(n) for n in z.namelist()}
    state = torch.load(io.BytesIO(members[member]), weights_only=True)
    change(state)
    buf = io.BytesIO()
    torch.save(state, buf)
    members[member] = buf.getvalue()
    with zipfile.ZipFile(ckpt, "w") as z:
        for name, content in members.items():
            z.writestr(name, content)


def _poison(state: dict[str, Any]) -> None:
    state["action_net.weight"][0, 0] = float("nan")


def _times_dropped(row: dict[str, Any]) -> dict[str, Any]:
    def timing(k: str) -> bool:
        return k == "time" or k.endswith("_s") or "seconds" in k or "per_s" in k

    return {k: v for k, v in row.items() if not timing(k)}


def _tensors(ckpt: Path, member: str) -> Any:
    with zipfile.ZipFile(ckpt) as z:
        return torch.load(io.BytesIO(z.read(member)), weights_only=True)


def _same(a: Any, b: Any) -> bool:
    """Equal nested state dicts, tensors bit for bit."""
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and a.dtype == b.dtype and torch.equal(a, b)
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(map(_same, a, b))
    return bool(a == b)


def test_resume_continues_as_maskableppo_load_did(
    run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The safe restore trains on exactly as SB3's unpickling ``MaskablePPO.load`` (the old code) did."""
    safe = _copy(run, tmp_path / "safe")
    assert main(["train", "--resume", str(safe), "total_steps=768", "--no-progress"]) == 0

    old = _copy(run, tmp_path / "old")

    def load_as_before(cfg: Any, vec: Any, run_dir: Path | None = None) -> Any:
        # the resume branch before: unpickles the zip, acceptable only on this test's own file
        assert run_dir is not None
        ckpt = run_dir / "checkpoints" / "step_512.zip"
        return MaskablePPO.load(ckpt, env=vec, device=cfg.device, tensorboard_log=str(run_dir / "tb"))

    monkeypatch.setattr(trainer, "build_model", load_as_before)
    monkeypatch.setattr(trainer, "restore_checkpoint", lambda model, ckpt: None)
    assert main(["train", "--resume", str(old), "total_steps=768", "--no-progress"]) == 0

    rows = [
        [_times_dropped(json.loads(x)) for x in (folder / "metrics.jsonl").read_text().splitlines()]
        for folder in (safe, old)
    ]
    assert rows[0] == rows[1] and rows[0][-1]["steps"] == 768
    assert any(r["type"] == "rollout" and r["step"] > 512 for r in rows[0])
    for member in ("policy.pth", "policy.optimizer.pth"):
        a, b = (_tensors(folder / "checkpoints" / "step_768.zip", member) for folder in (safe, old))
        assert _same(a, b), member


def test_nan_weights_are_skipped_on_resume_and_refused_as_an_agent(
    run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _copy(run, tmp_path)
    newest = folder / "checkpoints" / "step_512.zip"
    _rewrite(newest, "policy.pth", _poison)
    with pytest.raises(ValueError, match=r"policy\.pth: action_net\.weight holds NaN or infinite values"):
        load_policy(newest)
    assert main(["train", "--resume", str(folder), "total_steps=768", "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert "skipped step_512.zip" in err and "NaN or infinite" in err
    events = [json.loads(x) for x in (folder / "metrics.jsonl").read_text().splitlines()]
    assert any(e["type"] == "resume" and e["checkpoint"] == "step_256.zip" for e in events)


def test_nan_optimizer_state_is_skipped_on_resume(
    run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _copy(run, tmp_path)
    for ckpt in (folder / "checkpoints").glob("step_*.zip"):
        _rewrite(ckpt, "policy.optimizer.pth", lambda s: s["param_groups"][0].update(lr=float("inf")))
    before = _state(folder)
    assert main(["train", "--resume", str(folder), "total_steps=768", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "policy.optimizer.pth: param_groups[0].lr is inf, not a finite number" in err
    assert "none of its 2 checkpoint(s) can be read" in err and _state(folder) == before


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        ("pool_json", "pool.json: unreadable"),
        ("pool_npz", "latest.npz"),
        ("no_pool", "no pool.json"),
    ],
)
def test_a_broken_pool_is_skipped(
    run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], damage: str, message: str
) -> None:
    folder = _copy(run, tmp_path)
    pool = folder / "checkpoints" / "step_512"
    if damage == "pool_json":
        (pool / "pool.json").write_text("{not json")
    elif damage == "pool_npz":
        (pool / "latest.npz").write_bytes((pool / "latest.npz").read_bytes()[:100])
    else:
        shutil.rmtree(pool)
    assert main(["train", "--resume", str(folder), "total_steps=768", "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert "skipped step_512.zip" in err and message in err and "Traceback" not in err


def test_a_broken_best_json_is_named_and_nothing_written(
    run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _copy(run, tmp_path)
    (folder / "best.json").write_text('{"step": 512')
    before = _state(folder)
    assert main(["train", "--resume", str(folder), "total_steps=768", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "best.json: unreadable" in err and "Traceback" not in err
    assert _state(folder) == before


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ("[1, 2]", "its data member is not a JSON object"),
        ('{"num_timesteps": "512"}', "num_timesteps='512' in its data is not a step count"),
        ('{"num_timesteps": 256}', "its metadata says step 512, its data 256"),
        ("{not json", "its data member is not JSON"),
    ],
)
def test_a_bad_data_member_is_skipped(
    run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], data: str, message: str
) -> None:
    folder = _copy(run, tmp_path)
    newest = folder / "checkpoints" / "step_512.zip"
    with zipfile.ZipFile(newest) as z:
        members = {n: z.read(n) for n in z.namelist()}
    members["data"] = data.encode()
    with zipfile.ZipFile(newest, "w") as z:
        for name, content in members.items():
            z.writestr(name, content)
    assert main(["train", "--resume", str(folder), "total_steps=768", "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert "skipped step_512.zip" in err and message in err


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["net.pi=[32]"], "does not fit this run's net sizes"),
        (["players=3"], "trained for 2 players, this run has 3"),
        (["init_from=NAN"], "holds NaN or infinite values"),
    ],
)
def test_a_bad_init_from_leaves_no_run_folder(
    run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    source = run / "checkpoints" / "step_256.zip"
    if extra == ["init_from=NAN"]:
        source = tmp_path / "nan.zip"
        shutil.copy(run / "checkpoints" / "step_256.zip", source)
        _rewrite(source, "policy.pth", _poison)
        extra = []
    out = tmp_path / "runs"
    args = [str(ROOT / "configs/quick.yaml"), *TINY_NO_EVAL, f"out_dir={out}", f"init_from={source}", *extra]
    assert main(["train", *args, "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not out.exists()
