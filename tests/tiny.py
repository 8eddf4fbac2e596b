"""Shared tiny training budget for CLI smoke runs (``key=value`` overrides of configs/quick.yaml)."""

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
]

#: The same without periodic evaluation (only the final one).
TINY_NO_EVAL = [x if not x.startswith("eval.every=") else "eval.every=0" for x in TINY]
