"""The differential check: the same deals and random legal actions through the core and the engine.

At every decision it compares the legal set, every entry of the acting
seat's observation (``tonk_env.obs.observation``) and, when a hand ends,
the payoffs and how it ended (the kind, the seat, the detail the kernel
recorded). The engine is the specification; any difference is an error.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..engine.rules import PRESETS, TonkRules, make_rules
from ..engine.state import GameState, legal_actions, new_game, payoffs
from ..obs import obs_layout, observation
from .batch import BatchGames


class CoreMismatchError(AssertionError):
    """The core and the engine disagree."""


def _where(layout_n: int, a: np.ndarray, b: np.ndarray) -> str:
    lay = obs_layout(layout_n)
    bad = np.flatnonzero(a != b)
    names = [name for name, sl in lay.slices.items() if any(sl.start <= i < sl.stop for i in bad)]
    return f"observation slices differ: {names} (core {a[bad][:8]}, engine {b[bad][:8]})"


def exact_check(
    hands: int,
    rules: TonkRules | str = "standard",
    num_players: int = 2,
    seed: int = 0,
    batch: int = 64,
) -> dict[str, Any]:
    """Play ``hands`` hands through both and compare at every decision; raises ``CoreMismatchError``."""
    r = make_rules(rules) if isinstance(rules, str) else rules
    n = num_players
    core = BatchGames(r, n, batch, seed=seed)
    rng = np.random.default_rng(seed)
    engines: list[GameState] = [new_game(r, n, deck=[0]) for _ in range(batch)]
    masks = np.zeros((batch, core.num_actions), dtype=np.int8)
    obs = np.zeros((batch, core.obs_size), dtype=np.float32)
    want = np.zeros(core.obs_size, dtype=np.float32)
    started = 0
    finished = 0
    decisions = 0
    t0 = time.perf_counter()

    def deal(g: int) -> bool:
        """Deal game g in both until a hand with a decision; False when the budget is spent."""
        nonlocal started, finished
        while started < hands:
            started += 1
            deck = rng.permutation(52)
            s = new_game(r, n, deck=deck.tolist())
            over = core.deal(g, deck.astype(np.int64))
            if over != (s.result is not None):
                raise CoreMismatchError(
                    f"deal {started}: core over={over}, engine over={s.result is not None}"
                )
            if over:
                _check_end(core, g, s, started)
                finished += 1
                continue
            engines[g] = s
            return True
        return False

    live = [deal(g) for g in range(batch)]
    while any(live):
        core.legal_masks(masks)
        core.observe(obs)
        for g in range(batch):
            if not live[g]:
                continue
            s = engines[g]
            legal = np.flatnonzero(masks[g])
            ref = legal_actions(s)
            if legal.tolist() != sorted(ref):
                raise CoreMismatchError(f"legal sets differ: core {legal.tolist()}, engine {sorted(ref)}")
            ids = core.legal_ids[g, : core.legal_counts[g]]
            if not np.array_equal(ids, legal):
                raise CoreMismatchError(f"legal ids differ from the mask: {ids.tolist()} vs {legal.tolist()}")
            observation(s, s.cur, want)
            if not np.array_equal(obs[g], want):
                raise CoreMismatchError(_where(n, obs[g], want))
            a = int(legal[rng.integers(len(legal))])
            decisions += 1
            s.play(a)
            done = core.step_one(g, a)
            if done != (s.result is not None):
                raise CoreMismatchError(f"after {a}: core done={done}, engine over={s.result is not None}")
            if done:
                _check_end(core, g, s, started)
                finished += 1
                live[g] = deal(g)
    return {
        "hands": finished,
        "decisions": decisions,
        "rules": r.hash,
        "num_players": n,
        "seconds": time.perf_counter() - t0,
    }


def _check_end(core: BatchGames, g: int, s: GameState, hand: int) -> None:
    """The payoffs and how the hand ended (kind, seat, detail): the core's record against the engine's."""
    got, want = core.game_payoffs(g).tolist(), [float(x) for x in payoffs(s)]
    if got != want:
        raise CoreMismatchError(f"hand {hand}: payoffs differ: core {got}, engine {want}")
    r = s.result
    assert r is not None  # the engine's hand is over here
    if core.ending(g) != (r.kind, r.seat, r.detail):
        raise CoreMismatchError(
            f"hand {hand}: the ending differs: core {core.ending(g)}, engine {(r.kind, r.seat, r.detail)}"
        )


def exact_runs(
    hands: int, rules: Sequence[str] | None = None, players: Sequence[int] = (2, 3, 4, 5, 6)
) -> list[tuple[str, int, int]]:
    """Split ``hands`` evenly over every preset (or ``rules``) and player count: ``(preset, n, hands)``."""
    presets = list(rules) if rules else list(PRESETS)
    combos = [(p, n) for p in presets for n in players]
    base, extra = divmod(hands, len(combos))
    return [(p, n, base + (1 if i < extra else 0)) for i, (p, n) in enumerate(combos) if base or i < extra]
