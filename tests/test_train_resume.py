"""Resume reads run folders safely: no unpickling, clear messages for finished runs and broken files."""

from __future__ import annotations

import base64
import json
import pickle
import shutil
import zipfile
from pathlib import Path

import pytest
from tiny import TINY_NO_EVAL

from tonk_cli.main import main

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


def test_a_corrupt_config_is_named(run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _copy(run, tmp_path)
    (folder / "config.yaml").write_text("players: [2\n")
    before = _state(folder)
    assert main(["train", "--resume", str(folder), "total_steps=768", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "config.yaml: not valid YAML" in err and "Traceback" not in err
    assert _state(folder) == before


def test_no_readable_checkpoint_is_an_error(
    run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _copy(run, tmp_path)
    for ckpt in (folder / "checkpoints").glob("step_*.zip"):
        ckpt.write_bytes(b"")
    assert main(["train", "--resume", str(folder), "total_steps=768", "--no-progress"]) == 2
    assert "none of its 2 checkpoint(s) can be read" in capsys.readouterr().err
