"""Shared tiny things for tests: a training budget for CLI smoke runs (``key=value`` overrides of
configs/quick.yaml) and a random policy network."""

from __future__ import annotations

from pathlib import Path

TINY = [
    "total_steps=512",
    "n_envs=2",
    "ppo.n_steps=128",
    "ppo.batch_size=128",
    "ppo.n_epochs=1",
    "net.pi=[16]",
    "net.vf=[16]",
    "checkpoint_every=256",
    "pool.refresh_every=128",
    "pool.snapshot_every=256",
    "eval.every=256",
    "eval.hands=8",
    "eval.opponents=[random]",
    "torch_threads=1",  # pytest runs a worker a core: two threads each would contend for them
]

#: The same without periodic evaluation (only the final one).
TINY_NO_EVAL = [x if not x.startswith("eval.every=") else "eval.every=0" for x in TINY]


def tiny_net(path: Path, seed: int = 0, hidden: int = 16) -> str:
    """A small random 2-player policy network for the standard rules saved as ``path``; its spec."""
    import numpy as np

    from agents.mlp import MLPPolicy
    from tonk_env.engine import action_table, make_rules
    from tonk_env.obs import obs_layout
    from train.run_folder import policy_meta

    rules = make_rules("standard")
    rng = np.random.default_rng(seed)
    sizes = [obs_layout(2).size, hidden, action_table(rules.ace_high).size]
    layers = [
        (rng.normal(0, 0.3, (b, a)).astype(np.float32), np.zeros(b, np.float32))
        for a, b in zip(sizes[:-1], sizes[1:], strict=True)
    ]
    MLPPolicy(layers, meta=policy_meta(rules, 2)).save_npz(path)
    return f"npz:{path}"
