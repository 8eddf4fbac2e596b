"""Positions for the learned opponent model: hands the simulator plays, labelled with the hidden cards.

Each hand seats agents drawn from a mix (:data:`MIX`: random, greedy,
expert, search and the zoo agent of the table, :func:`mix_for`; or the
config's own ``mix``, e.g. the one opponent a model is to face; two seats
may draw the same agent, which is self-play). At every start-of-turn
decision, and at a play-phase decision with chance ``play_share``, the
acting seat's view is recorded
(:func:`agents.beliefs.features.view_features`) with the label: each
opponent's hidden cards (its hand less the cards the seat knows it holds).
Labels cost nothing: the simulator knows every hand.

Held-out positions, never trained on:

- ``split 1``: every ``holdout_every``-th hand of the mix (same styles, other deals);
- ``split 2``: hands where the predicted opponent plays :data:`HELD_OUT_STYLE`
  (``heuristic:fast``), an agent left out of the mix entirely.

For held-out positions the hand-written model's predictions are stored
beside them, computed from the same view: the per-card chances of the
search's own weighted worlds (the selection model with the last-turn
weights of :mod:`agents.belief`, as ``search:ismcts`` samples them), and
"is my count the lowest?" under those worlds, under the expert's sampler
(selection model, unweighted) and under the odds table
(:func:`tonk_env.odds.drop_win_chance`). Everything is drawn from ``seed``.
"""

from __future__ import annotations

import hashlib
import json
import random
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from agents.beliefs.features import feature_sizes, mask_bits, view_features
from agents.fast import turns_adding_all
from agents.heuristic import ExpertAgent
from agents.registry import make_agent
from agents.search import SearchAgent
from agents.zoo import find_entry
from tonk_env.engine import START, GameState, SeatInfo, TonkRules, make_rules, new_game, seat_info
from tonk_env.engine.actions import DROP
from tonk_env.engine.cards import hand_value
from tonk_env.odds import drop_win_chance
from tonk_env.play import play
from tonk_env.progress import progress_bar

__all__ = ["HELD_OUT_STYLE", "MIX", "DataConfig", "generate", "hand_written", "load_data", "mix_for"]

#: The agents of the training mix and their chance to sit in a seat (the search is slow: fewer);
#: ``zoo:2p`` stands for the zoo's agent of the table played (:func:`mix_for`).
MIX: tuple[tuple[str, float], ...] = (
    ("random", 0.06),
    ("heuristic:greedy", 0.16),
    ("heuristic:expert", 0.30),
    ("search:ismcts", 0.10),
    ("zoo:2p", 0.38),
)
#: The agent style left out of training: its positions are a held-out set of their own.
HELD_OUT_STYLE = "heuristic:fast"
#: Worlds the hand-written model samples per held-out position (the search's drop uses 400).
HAND_WRITTEN_WORLDS = 400
_MAX_DATA_BYTES = 2 * 1024**3


@dataclass(frozen=True)
class DataConfig:
    """What :func:`generate` plays."""

    hands: int = 12000
    """hands of the mix (every ``holdout_every``-th is held out)"""
    style_hands: int = 800
    """hands against the held-out style"""
    players: int = 2
    rules: str = "standard"
    seed: int = 0
    play_share: float = 0.25
    """chance to record a play-phase decision (start-of-turn decisions are always recorded)"""
    holdout_every: int = 10
    mix: dict[str, float] | None = None
    """agent specs and their weights (None: :func:`mix_for` the table); a model trained on one
    opponent's hands, e.g. ``{"heuristic:expert": 1}``, predicts that opponent's cards"""


def mix_for(players: int, rules: TonkRules) -> list[tuple[str, float]]:
    """:data:`MIX` for a table: its zoo member is the zoo's agent for ``players`` and ``rules``.

    A table the zoo has no agent for plays the mix without one (the other weights are kept, the
    draws being by weight).
    """
    entry = find_entry(players, rules.hash)
    mix = []
    for spec, weight in MIX:
        if spec.startswith("zoo:"):
            if entry is None:
                continue
            spec = f"zoo:{entry}"
        mix.append((spec, weight))
    return mix


def _own_mix(mix: dict[str, float]) -> list[tuple[str, float]]:
    """A config's own mix, checked: known specs, not the held-out style, weights >= 0 summing above 0."""
    if not mix or not all(w >= 0 for w in mix.values()) or not sum(mix.values()) > 0:
        raise ValueError(f"mix {mix!r}: agent specs with weights >= 0 and a positive sum are needed")
    if HELD_OUT_STYLE in mix:
        raise ValueError(f"mix: {HELD_OUT_STYLE} is the held-out style; its hands are the style split")
    for spec in mix:
        try:
            make_agent(spec, seed=0)
        except ValueError as e:
            raise ValueError(f"mix {spec!r}: {e}") from None
    return list(mix.items())


def _seed(*parts: Any) -> int:
    h = hashlib.blake2b(":".join(map(str, parts)).encode(), digest_size=8)
    return int.from_bytes(h.digest(), "little")


def hand_written(
    info: SeatInfo, search: SearchAgent, expert: ExpertAgent
) -> tuple[np.ndarray, float, float, float]:
    """The hand-written model on one view: per-card chances ``(n - 1, 52)`` and three P(my count is lowest).

    The per-card chances are the weighted frequencies over the search's worlds,
    smoothed by one world of the uniform guess (so none is exactly 0 or 1).
    """
    n, me = info.n, info.seat
    worlds, weights = search.worlds(info, HAND_WRITTEN_WORLDS)
    w = np.asarray(weights, dtype=np.float64)
    wsum = float(w.sum())
    unseen = mask_bits(info.unseen()).astype(np.float64)
    n_unseen = max(1.0, unseen.sum())
    probs = np.zeros((n - 1, 52))
    mine = hand_value(info.hand)
    lowest = np.ones(len(worlds), dtype=bool)
    for k in range(1, n):
        o = (me + k) % n
        hidden_mask = [hands[o] & ~info.known[o] for hands, _ in worlds]
        bits = np.stack([mask_bits(m) for m in hidden_mask]).astype(np.float64)
        h = info.hand_sizes[o] - info.known[o].bit_count()
        alpha = wsum / len(worlds) if worlds else 1.0
        probs[k - 1] = (w @ bits + alpha * unseen * h / n_unseen) / (wsum + alpha)
        counts = np.array([hand_value(hands[o]) for hands, _ in worlds])
        lowest &= mine < counts
    p_search = float(w @ lowest / wsum) if wsum > 0 else float(lowest.mean())
    samples = expert.sample_counts(info, HAND_WRITTEN_WORLDS)
    p_expert = float(np.mean([all(c[me] < c[o] for o in range(n) if o != me) for _, c in samples]))
    turns = turns_adding_all(info.history, n)
    p_table = drop_win_chance(mine, me, info.known, info.hand_sizes, turns, 0.6)
    return probs, p_search, p_expert, p_table


class _Recorder:
    """Collects positions (and, for held-out hands, the hand-written predictions)."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.rows: dict[str, list[Any]] = {k: [] for k in _ROW_KEYS}
        self.hw: dict[str, list[Any]] = {k: [] for k in _HW_KEYS}
        self.search = SearchAgent(seed=0)
        self.expert = ExpertAgent(seed=0)

    def record(self, s: GameState, rng: random.Random, split: int, style: int, hand: int, keep: int) -> None:
        """Record the acting seat's view of ``s`` (``keep``: only when its next opponent is this seat)."""
        me = s.cur
        n = s.n
        if keep >= 0 and (me + 1) % n != keep:
            return
        info = seat_info(s, me)
        bits, floats = view_features(info)
        labels = np.concatenate(
            [mask_bits(s.hands[(me + k) % n] & ~s.known[(me + k) % n]) for k in range(1, n)]
        )
        counts = [hand_value(h) for h in s.hands]
        r = self.rows
        r["bits"].append(np.packbits(bits))
        r["floats"].append(floats)
        r["labels"].append(np.packbits(labels))
        r["hidden"].append(
            [s.hands[(me + k) % n].bit_count() - s.known[(me + k) % n].bit_count() for k in range(1, n)]
        )
        r["my_count"].append(counts[me])
        r["known_value"].append([hand_value(s.known[(me + k) % n]) for k in range(1, n)])
        r["lowest"].append(all(counts[me] < counts[o] for o in range(n) if o != me))
        r["drop_legal"].append(s.phase == START and DROP in info.legal)
        r["split"].append(split)
        r["style"].append(style)
        r["hand"].append(hand)
        if split > 0:
            self.search.reseed(rng.getrandbits(63))
            self.expert.reseed(rng.getrandbits(63))
            probs, ps, pe, pt = hand_written(info, self.search, self.expert)
            self.hw["row"].append(len(r["split"]) - 1)
            self.hw["hw_probs"].append(probs.astype(np.float32))
            self.hw["hw_low_search"].append(ps)
            self.hw["hw_low_expert"].append(pe)
            self.hw["hw_low_table"].append(pt)


_ROW_KEYS = (
    "bits",
    "floats",
    "labels",
    "hidden",
    "my_count",
    "known_value",
    "lowest",
    "drop_legal",
    "split",
    "style",
    "hand",
)
_HW_KEYS = ("row", "hw_probs", "hw_low_search", "hw_low_expert", "hw_low_table")


def _pick(rng: random.Random, specs: list[str], weights: list[float]) -> int:
    return rng.choices(range(len(specs)), weights=weights)[0]


def _arrays(rec: _Recorder, n: int) -> dict[str, Any]:
    """The recorded positions as the dataset's arrays."""
    rows = rec.rows
    if not rows["split"]:
        raise ValueError("no positions were recorded (every hand ended at the deal?)")
    arrays: dict[str, Any] = {
        "bits": np.stack(rows["bits"]),
        "floats": np.stack(rows["floats"]),
        "labels": np.stack(rows["labels"]),
        "hidden": np.asarray(rows["hidden"], dtype=np.int8),
        "my_count": np.asarray(rows["my_count"], dtype=np.int16),
        "known_value": np.asarray(rows["known_value"], dtype=np.int16),
        "lowest": np.asarray(rows["lowest"], dtype=bool),
        "drop_legal": np.asarray(rows["drop_legal"], dtype=bool),
        "split": np.asarray(rows["split"], dtype=np.int8),
        "style": np.asarray(rows["style"], dtype=np.int8),
        "hand": np.asarray(rows["hand"], dtype=np.int32),
    }
    hw = rec.hw
    arrays["hw_row"] = np.asarray(hw["row"], dtype=np.int64)
    arrays["hw_probs"] = np.stack(hw["hw_probs"]) if hw["row"] else np.zeros((0, n - 1, 52), dtype=np.float32)
    for k in ("hw_low_search", "hw_low_expert", "hw_low_table"):
        arrays[k] = np.asarray(hw[k], dtype=np.float64)
    return arrays


def generate(cfg: DataConfig, out: str | Path, progress: bool = True) -> dict[str, Any]:
    """Play the hands of ``cfg``, write the positions to ``out`` (``.npz``) and return a summary."""
    rules: TonkRules = make_rules(cfg.rules)
    n = cfg.players
    if not 0.0 <= cfg.play_share <= 1.0:
        raise ValueError(f"play_share {cfg.play_share} is not in 0..1")
    if cfg.hands < 1 or cfg.style_hands < 0 or cfg.holdout_every < 2:
        raise ValueError("hands must be at least 1, style_hands at least 0 and holdout_every at least 2")
    mix = mix_for(n, rules) if cfg.mix is None else _own_mix(cfg.mix)
    specs = [s for s, _ in mix] + [HELD_OUT_STYLE]
    weights = [w for _, w in mix] + [0.0]
    agents: list[list[Any]] = [[make_agent(spec, seed=0) for spec in specs] for _ in range(n)]
    rec = _Recorder(n)
    t0 = time.time()
    total = cfg.hands + cfg.style_hands
    bar = progress_bar(total=total, unit="hand", desc="belief data", dynamic_ncols=True, disable=not progress)
    style_index = len(specs) - 1
    for i in range(total):
        rng = random.Random(_seed("belief-data", cfg.seed, i))
        if i < cfg.hands:
            split = 1 if i % cfg.holdout_every == 0 else 0
            picks = [_pick(rng, specs, weights) for _ in range(n)]
            keep = -1
        else:
            split = 2
            picks = [_pick(rng, specs, weights) for _ in range(n)]
            keep = rng.randrange(n)
            picks[keep] = style_index
        seats = [agents[seat][picks[seat]] for seat in range(n)]
        for seat, agent in enumerate(seats):
            agent.reseed(_seed("belief-agent", cfg.seed, i, seat))
            agent.reset_hand(seat, n, rules)
        s = new_game(rules, n, seed=_seed("belief-deal", cfg.seed, i))

        def on_move(
            state: GameState,
            action: int,
            rng: random.Random = rng,
            picks: list[int] = picks,
            split: int = split,
            i: int = i,
            keep: int = keep,
        ) -> None:
            if state.phase == START or rng.random() < cfg.play_share:
                rec.record(state, rng, split, picks[(state.cur + 1) % n], i, keep)

        play(s, seats, on_move=on_move)
        bar.update(1)
    bar.close()
    arrays = _arrays(rec, n)
    summary = {
        "players": n,
        "rules": cfg.rules,
        "rules_hash": rules.hash,
        "seed": cfg.seed,
        "hands": cfg.hands,
        "style_hands": cfg.style_hands,
        "play_share": cfg.play_share,
        "holdout_every": cfg.holdout_every,
        "agents": specs[:-1],
        "mix_weights": weights[:-1],
        "held_out_style": HELD_OUT_STYLE,
        "positions": int(len(arrays["split"])),
        "train_positions": int(np.sum(arrays["split"] == 0)),
        "heldout_positions": int(np.sum(arrays["split"] == 1)),
        "style_positions": int(np.sum(arrays["split"] == 2)),
        "hand_written_worlds": HAND_WRITTEN_WORLDS,
        "wall_seconds": round(time.time() - t0, 1),
    }
    arrays["summary"] = np.array(json.dumps(summary))
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "wb") as f:
        np.savez_compressed(f, **arrays)
    return summary


def load_data(path: str | Path) -> dict[str, Any]:
    """Read a dataset written by :func:`generate` (no pickle; ``ValueError`` naming the file if bad)."""
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"{p}: no such file")
    if p.stat().st_size > _MAX_DATA_BYTES:
        raise ValueError(f"{p}: larger than {_MAX_DATA_BYTES} bytes; refused")
    try:
        with np.load(p, allow_pickle=False) as data:
            out = {k: data[k] for k in data.files}
    except Exception as e:  # pickled members, a truncated zip, a bad header
        raise ValueError(f"{p}: not a belief dataset ({type(e).__name__}: {e})") from None
    need = set(_ROW_KEYS) | {
        "summary",
        "hw_row",
        "hw_probs",
        "hw_low_search",
        "hw_low_expert",
        "hw_low_table",
    }
    missing = sorted(need - set(out))
    if missing:
        raise ValueError(f"{p}: not a belief dataset (missing {', '.join(missing)})")
    summary = json.loads(str(out.pop("summary")))
    bits, floats = feature_sizes(summary["players"])
    if out["bits"].shape[1] * 8 < bits or out["floats"].shape[1] != floats:
        raise ValueError(f"{p}: its features do not match this Tonk RL's belief features")
    out["summary"] = summary
    return out
