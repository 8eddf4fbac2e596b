"""A worker that cannot start ends the command with its one-line message: no hang, no restart storm."""

from __future__ import annotations

from pathlib import Path

import pytest

from tonk_cli.main import main
from tonk_env.workers import WorkerStartError, process_map


def _fail_to_start(path: str) -> None:
    raise ValueError(f"{path}: a folder without best.zip\nor checkpoints/*.zip; not a training run")


def _double(x: int) -> int:
    return 2 * x


def _not_a_run(tmp_path: Path) -> str:
    folder = tmp_path / "rllib_run"
    (folder / "checkpoints" / "step_100").mkdir(parents=True)
    (folder / "config.yaml").write_text("backend: rllib\n")
    return f"{folder}/"  # the trailing slash of the report


def test_a_failing_initializer_ends_the_map_with_its_message() -> None:
    # spawn: this test process may hold threads of earlier tests (a forked child could inherit a held lock)
    with pytest.raises(WorkerStartError, match="^DIR: a folder without best.zip or checkpoints") as e:
        list(process_map(_double, range(20), 2, _fail_to_start, ("DIR",), method="spawn"))
    assert "\n" not in str(e.value)
    assert list(process_map(_double, range(5), 2, method="spawn")) == [0, 2, 4, 6, 8]


@pytest.mark.parametrize("workers", ["1", "2"])
def test_eval_of_a_folder_that_is_not_a_run_ends_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], workers: str
) -> None:
    spec = f"ppo:{_not_a_run(tmp_path)}"
    assert main(["eval", spec, "random", "--workers", workers, "--hands", "400"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "not a training run" in err


def test_a_tournament_with_a_folder_that_is_not_a_run_ends_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = f"ppo:{_not_a_run(tmp_path)}"
    argv = ["tournament", spec, "random", "--workers", "2", "--hands", "8", "--out", str(tmp_path / "t")]
    assert main([*argv, "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "not a training run" in err
