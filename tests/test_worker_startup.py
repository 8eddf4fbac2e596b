"""A worker that cannot start ends the command with its one-line message: no hang, no restart storm."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tonk_cli.main import main
from tonk_env.workers import WorkerDiedError, WorkerStartError, process_map


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


_DEAF_WORKERS = """
import multiprocessing as mp
import signal
import time
from tonk_env import workers
from tonk_env.workers import process_map

workers.GRACE_S = 1.0

def slow_and_deaf():
    # a worker that a SIGTERM does not stop, as one that lost it (see tonk_env/workers.py); every
    # third one is still starting when the others have finished the map: a young fork
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if int(mp.current_process().name.rsplit("-", 1)[1]) % 3 == 0:
        time.sleep(2)

def double(x):
    return 2 * x

assert list(process_map(double, range(6), 3, slow_and_deaf, method="fork")) == [0, 2, 4, 6, 8, 10]
left_early = process_map(double, range(1000), 3, slow_and_deaf, method="fork")
assert next(left_early) == 0
left_early.close()
print("both maps ended")
"""


def test_the_pool_ends_without_relying_on_sigterm() -> None:
    # Pool.__exit__'s SIGTERM-then-wait hung CI: a young forked worker lost the signal. A map that
    # finished closes its pool, one left early kills its workers; neither waits on a SIGTERM.
    done = subprocess.run(
        [sys.executable, "-c", _DEAF_WORKERS], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "both maps ended"


_INTERRUPTED = """
import os
import signal
import sys
import time
from tonk_env.workers import process_map

# Ctrl-C's own handler even where the test runs with SIGINT ignored (a shell's background job
# inherits SIG_IGN, and Python then keeps it)
signal.signal(signal.SIGINT, signal.default_int_handler)
MARKS = sys.argv[1]

def slow(x):
    open(os.path.join(MARKS, str(x)), "w").close()  # this worker is in its task
    time.sleep(30)
    return x

try:
    print("started", flush=True)
    list(process_map(slow, range(4), 2, method="fork"))
except KeyboardInterrupt:
    print("interrupted", flush=True)
"""


def test_ctrl_c_stops_the_map_without_a_traceback_from_each_worker(tmp_path: Path) -> None:
    # Ctrl-C goes to the whole process group; the workers leave it to the parent, which stops them.
    proc = subprocess.Popen(
        [sys.executable, "-c", _INTERRUPTED, str(tmp_path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, start_new_session=True,
    )  # fmt: skip
    assert proc.stdout is not None and proc.stdout.readline().strip() == "started"
    deadline = time.monotonic() + 60
    while len(list(tmp_path.iterdir())) < 2:  # both workers are in their task (so past their start-up)
        assert time.monotonic() < deadline and proc.poll() is None, "the workers never started their tasks"
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert "interrupted" in out
    assert "Traceback" not in err, err


_SIGNALLED_WHILE_FORKING = """
import os
import signal
import sys
from tonk_cli.main import main

MAIN = os.getpid()
signalled = []

def signal_while_forking():  # a SIGTERM that comes while the pool forks its first worker
    if os.getpid() == MAIN and not signalled:
        signalled.append(True)
        os.kill(MAIN, signal.SIGTERM)

os.register_at_fork(before=signal_while_forking)
sys.exit(main(["eval", "heuristic:greedy", "random", "--hands", "400", "--workers", "2", "--no-progress"]))
"""


def test_a_sigterm_while_the_pool_forks_ends_the_command() -> None:
    # A handler's exception inside os.fork's at-fork hooks is dropped ("Exception ignored"): the
    # command went on as if never signalled, or hung on logging's lock left held. Now it ends.
    done = subprocess.run(
        [sys.executable, "-c", _SIGNALLED_WHILE_FORKING], capture_output=True, text=True, timeout=120,
        check=False,
    )  # fmt: skip
    assert done.returncode == 143, done.stderr
    assert done.stderr.strip() == "tonk eval: terminated", done.stderr


_A_WORKER_DIES = """
import multiprocessing as mp
import os
import signal
import sys
import threading
import time
from tonk_env import workers
from tonk_env.workers import WorkerDiedError, process_map

workers.GRACE_S = 1.0
MARKS = sys.argv[1]

def slow(x):
    open(os.path.join(MARKS, str(os.getpid())), "w").close()  # this worker is in its task
    time.sleep(3 if x == 0 else 0)
    if x == 1:
        os.kill(os.getpid(), signal.SIGKILL)  # as the OOM killer would: its task is lost
    return x

def kill_the_idle_one():
    # the other worker waits for a task, holding the task queue's read lock: killed there, it never
    # lets go, and Pool.terminate takes that lock first
    while not os.listdir(MARKS):
        time.sleep(0.01)
    busy = int(os.listdir(MARKS)[0])
    time.sleep(0.3)
    for child in mp.active_children():
        if child.pid != busy:
            os.kill(child.pid, signal.SIGKILL)

for case in ("busy", "idle"):
    for name in os.listdir(MARKS):
        os.remove(os.path.join(MARKS, name))
    if case == "idle":
        threading.Thread(target=kill_the_idle_one, daemon=True).start()
    try:
        list(process_map(slow, [0] if case == "idle" else [1, 0, 0], 2, method="fork"))
    except WorkerDiedError as e:
        print(case, e, flush=True)
"""


def test_a_worker_that_dies_ends_the_map_with_how_it_died(tmp_path: Path) -> None:
    # multiprocessing.Pool replaced a dead worker and waited forever for its lost task; a worker that
    # died holding the task queue's lock left the pool's terminate (and close) waiting for it forever
    done = subprocess.run(
        [sys.executable, "-c", _A_WORKER_DIES, str(tmp_path)], capture_output=True, text=True, timeout=120,
        check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert [line.split()[0] for line in lines] == ["busy", "idle"], done.stdout
    assert all("was killed by SIGKILL (out of memory, most likely" in line for line in lines), lines
    assert all(line.endswith("before the work was done") for line in lines), lines


_UNGUARDED = """
from tonk_env.workers import process_map

def double(x):
    return 2 * x

print(list(process_map(double, range(10), 2, method="spawn")))
"""


def test_a_spawned_worker_of_an_unguarded_script_ends_the_map_and_says_why(tmp_path: Path) -> None:
    # Each spawned worker re-runs the script, which may not start a pool while it is imported: the
    # worker dies at start-up, and the pool used to start another forever.
    script = tmp_path / "unguarded.py"
    script.write_text(_UNGUARDED)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120, check=False, env=env
    )
    assert done.returncode == 1
    # the traceback's last line; multiprocessing's resource tracker may warn after it at exit
    (last,) = [x for x in done.stderr.splitlines() if x.startswith("tonk_env.workers.WorkerDiedError")]
    assert last.startswith("tonk_env.workers.WorkerDiedError: worker process "), done.stderr
    assert "exited with status 1" in last and "if __name__ == '__main__':" in last


def test_tonk_says_in_one_line_that_a_worker_died(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import train.trainer

    def dies(*args: object, **kwargs: object) -> None:
        raise WorkerDiedError("worker process 7 was killed by SIGKILL (out of memory, most likely)")

    monkeypatch.setattr(train.trainer, "train", dies)
    assert main(["train", "configs/quick.yaml", "--no-progress"]) == 1  # not a usage error (2)
    err = capsys.readouterr().err
    assert err == "tonk train: error: worker process 7 was killed by SIGKILL (out of memory, most likely)\n"
