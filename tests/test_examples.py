"""Each script in examples/ runs with its tiny budget against the pinned libraries (the examples extra)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: script, the library it needs, the line it prints
EXAMPLES = [
    (
        "tianshou_dqn.py",
        "tianshou",
        r"tianshou DQN \(player_0\) vs random: mean reward [+-]\d\.\d{3} stakes/hand",
    ),
    ("sb3_maskable_ppo.py", "sb3_contrib", r"sb3 MaskablePPO vs heuristic:greedy: mean reward [+-]\d\.\d{3}"),
    ("cleanrl_ppo.py", "torch", r"cleanrl PPO vs random: 256 steps, mean reward [+-]\d\.\d{3} stakes/hand"),
    (
        "torchrl_ppo.py",
        "torchrl",
        r"torchrl PPO self-play: 16 hands, \d+ decisions, player_0 mean reward [+-]\d",
    ),
    ("rllib_ppo.py", "ray.rllib", r"rllib PPO self-play via PettingZooEnv: 1 iterations, \d+ env steps"),
]


@pytest.mark.parametrize(("script", "library", "line"), EXAMPLES, ids=[e[0] for e in EXAMPLES])
def test_example_runs_with_a_tiny_budget(script: str, library: str, line: str) -> None:
    pytest.importorskip(library, reason=f"the examples extra is not installed ({library})")
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    env = {**os.environ, "PYTHONPATH": path, "OMP_NUM_THREADS": "1"}
    if script == "tianshou_dqn.py":
        # Tianshou compiles its buffer's numba helpers in every process (about 8 of the example's 18 s
        # here), for a budget that calls them a few times: run as Python, the example prints the same
        env["NUMBA_DISABLE_JIT"] = "1"
    out = subprocess.run(
        [sys.executable, str(ROOT / "examples" / script), "--tiny"],
        capture_output=True, text=True, env=env, timeout=600, check=False,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-3000:]
    assert re.search(line, out.stdout), out.stdout[-2000:]
