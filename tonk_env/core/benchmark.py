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
    """Decisions per second of ``batch`` games: masks, acting-seat observations, numpy draws, one step.

    Each round draws one legal action per game with numpy (``rng.random``
    scaled by each game's legal count, an index into its legal ids) and steps
    the batch with :meth:`BatchGames.step_observe`, which deals finished games
    again and writes every game's next legal mask, legal ids and acting-seat
    observation. Every decision of every seat counts.
    """
    core = BatchGames(rules, num_players, batch, seed=seed)
    masks = core.legal_masks()
    obs = core.observe()
    rng = np.random.default_rng(seed)
    rows = np.arange(batch)
    ids, counts = core.legal_ids, core.legal_counts

    def one_step() -> None:
        pick = (rng.random(batch) * counts).astype(np.int64)
        core.step_observe(ids[rows, pick], masks, obs)

    for _ in range(20):  # warm up (compilation, caches)
        one_step()
    hands = 0
    t0 = time.perf_counter()
    for _ in range(steps):
        one_step()
        hands += int(np.count_nonzero(core.dones))
    dt = time.perf_counter() - t0
    return {
        "num_players": num_players,
        "batch": batch,
        "decisions": steps * batch,
        "hands": hands,
        "seconds": dt,
        "decisions_per_s": steps * batch / dt,
    }
