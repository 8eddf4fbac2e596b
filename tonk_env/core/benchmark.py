"""The vector microbenchmark: 1,024 games stepped as one batch, random legal actions drawn with numpy."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from ..engine.rules import TonkRules
from .batch import BatchGames


def vector_decisions_per_s(
    num_players: int = 2,
    batch: int = 1024,
    steps: int = 2000,
    rules: TonkRules | str = "standard",
    seed: int = 0,
) -> dict[str, Any]:
    """Decisions per second of ``batch`` games: masks, acting-seat observations, numpy draws, one step."""
    core = BatchGames(rules, num_players, batch, seed=seed)
    masks = core.legal_masks()
    obs = core.observe()
    rng = np.random.default_rng(seed)
    row_base = np.arange(batch, dtype=np.int64) * core.num_actions

    def one_step() -> None:
        core.legal_masks(masks)
        core.observe(obs)
        legal = np.flatnonzero(masks)  # every legal (game, action), grouped by game
        counts = np.count_nonzero(masks, axis=1)
        starts = np.cumsum(counts) - counts
        pick = starts + (rng.random(batch) * counts).astype(np.int64)
        core.step(legal[pick] - row_base)

    for _ in range(20):  # warm up (compilation, caches)
        one_step()
    hands = 0
    t0 = time.perf_counter()
    for _ in range(steps):
        one_step()
        hands += int(core.dones.sum())
    dt = time.perf_counter() - t0
    return {
        "num_players": num_players,
        "batch": batch,
        "decisions": steps * batch,
        "hands": hands,
        "seconds": dt,
        "decisions_per_s": steps * batch / dt,
    }
