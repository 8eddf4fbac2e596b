"""Fitting the luck value function: regress final payoffs on full-state rows of simulated hands.

The data are hands the simulator plays between agents drawn, seat by seat,
from a mix (:data:`DEFAULT_MIX`), on deals that no evaluation uses: hand
``h`` is dealt from ``random.Random(f"luck-fit:{seed}:{h}")`` while every
evaluation and tournament deals from ``random.Random(f"deal:{seed}:{g}")``
(:func:`eval.duplicate.deal_deck`), so the value is never fitted on the hands
it will correct. Each position right after a stock draw (where the value is
used) gives one example: the ``(n, F)`` rows of
:func:`tonk_env.luck.state_features` and the hand's ``n`` payoffs.

The network (a ReLU MLP from one seat's row to one float) is fitted with its
outputs centred over the table, exactly as :meth:`ValueNet.values` uses them,
by mean squared error on the payoffs; the last tenth of the hands is held out
and the epoch with the lowest held-out loss is kept. ``tonk luck fit`` calls
:func:`fit_value`.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import random
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from agents.registry import check_spec, make_agent
from tonk_env.engine import TonkRules, make_rules, new_game, shuffled_deck
from tonk_env.engine.actions import DRAW
from tonk_env.luck import feature_size, save_value, state_features
from tonk_env.play import play, start_hand
from tonk_env.progress import progress_bar
from tonk_env.workers import process_map

#: The agents a seat is drawn from, with their weights.
DEFAULT_MIX: dict[str, float] = {
    "random": 0.1,
    "heuristic:greedy": 0.15,
    "heuristic:expert": 0.27,
    "heuristic:fast": 0.17,
    "zoo:2p": 0.25,
    "search:ismcts": 0.06,
}
#: Hands per chunk of data generation (fixed, so the data do not depend on the workers).
CHUNK_HANDS = 50


def fit_deck(seed: int, hand: int) -> list[int]:
    """The deck of fitting hand ``hand`` (a namespace no evaluation deals from)."""
    return shuffled_deck(random.Random(f"luck-fit:{seed}:{hand}"))


def _seat_seed(seed: int, hand: int, seat: int) -> int:
    h = hashlib.blake2b(f"luck-fit-agent:{seed}:{hand}:{seat}".encode(), digest_size=8)
    return int.from_bytes(h.digest(), "little")


@dataclass
class _Gen:
    """Plays fitting hands in one process (agents built once per spec and seat)."""

    mix: dict[str, float]
    players: int
    rules: TonkRules
    seed: int

    def __post_init__(self) -> None:
        self.specs = list(self.mix)
        self.weights = [self.mix[s] for s in self.specs]
        self.agents: dict[tuple[str, int], Any] = {}

    def agent(self, spec: str, seat: int) -> Any:
        key = (spec, seat)
        if key not in self.agents:
            self.agents[key] = make_agent(spec, seed=_seat_seed(self.seed, -1, seat))
        return self.agents[key]

    def hands(self, ids: Sequence[int]) -> list[dict[str, Any]]:
        """The record of each hand: its number, the agents by seat, the actions and the payoffs."""
        n, rules = self.players, self.rules
        out = []
        for h in ids:
            pick = random.Random(f"luck-fit-seats:{self.seed}:{h}")
            specs = [pick.choices(self.specs, self.weights)[0] for _ in range(n)]
            seats = [self.agent(spec, s) for s, spec in enumerate(specs)]
            start_hand(seats, n, rules, [_seat_seed(self.seed, h, s) for s in range(n)])
            state = play(new_game(rules, n, deck=fit_deck(self.seed, h), dealer=n - 1), seats)
            assert state.result is not None
            actions = [a for _, a in state.history]
            out.append({"h": h, "seats": specs, "actions": actions, "payoffs": list(state.result.payoffs)})
        return out


_GEN: _Gen | None = None


def _init(mix: dict[str, float], players: int, rules: TonkRules, seed: int) -> None:
    global _GEN
    _GEN = _Gen(mix, players, rules, seed)


def _chunk(ids: Sequence[int]) -> list[dict[str, Any]]:
    assert _GEN is not None
    return _GEN.hands(ids)


def generate(
    hands: int,
    players: int = 2,
    rules: TonkRules | None = None,
    seed: int = 0,
    mix: Mapping[str, float] | None = None,
    workers: int = 1,
    progress: bool = False,
    start: int = 0,
    sink: Callable[[list[dict[str, Any]]], None] | None = None,
) -> list[dict[str, Any]]:
    """Play fitting hands ``start .. hands - 1``; return their records (see :meth:`_Gen.hands`) in order.

    ``sink`` receives each chunk's records as soon as it is played (a hands file grows with it).
    """
    rules = rules or make_rules("standard")
    mix = dict(mix or DEFAULT_MIX)
    for spec in mix:
        check_spec(spec)
    chunks = [list(range(i, min(i + CHUNK_HANDS, hands))) for i in range(start, hands, CHUNK_HANDS)]
    records: list[dict[str, Any]] = []
    bar = (
        progress_bar(total=hands, initial=start, unit="hand", desc="luck fit: hands", leave=False)
        if progress
        else None
    )

    def take(part: list[dict[str, Any]]) -> None:
        records.extend(part)
        if sink is not None:
            sink(part)
        if bar is not None:
            bar.update(len(part))

    try:
        if workers == 1 or len(chunks) <= 1:
            gen = _Gen(mix, players, rules, seed)
            for c in chunks:
                take(gen.hands(c))
        else:
            parts = process_map(_chunk, chunks, min(workers, len(chunks)), _init, (mix, players, rules, seed))
            with closing(parts):  # an interrupt takes the workers down at once
                for part in parts:
                    take(part)
    finally:
        if bar is not None:
            bar.close()
    return records


def positions(
    records: Sequence[Mapping[str, Any]], players: int, rules: TonkRules, seed: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows ``(m, n, F)`` of every position right after a stock draw, the payoffs ``(m, n)``, the hands."""
    xs: list[np.ndarray] = []
    ys: list[Sequence[float]] = []
    hs: list[int] = []
    for rec in records:
        s = new_game(rules, players, deck=fit_deck(seed, rec["h"]), dealer=players - 1)
        for a in rec["actions"]:
            drew = a == DRAW and bool(s.stock)
            s.play(a)
            if drew:
                xs.append(state_features(s))
                ys.append(rec["payoffs"])
                hs.append(rec["h"])
    x = np.stack(xs) if xs else np.zeros((0, players, feature_size(players)), np.float32)
    return x, np.asarray(ys, np.float32).reshape(-1, players), np.asarray(hs, np.int64)


def read_hands(path: Path, header: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The records of a hands file written for the same ``header`` (none if there is no such file)."""
    if not path.is_file():
        return []
    try:
        lines = path.read_text().splitlines()
        head, records = json.loads(lines[0]), [json.loads(x) for x in lines[1:]]
    except (OSError, ValueError, IndexError, UnicodeDecodeError) as e:
        raise ValueError(f"{path}: not a hands file of `tonk luck fit` ({type(e).__name__}: {e})") from None
    if head != dict(header):
        raise ValueError(f"{path}: written for other settings ({head}); remove it or name another file")
    if [r.get("h") for r in records] != list(range(len(records))):
        raise ValueError(f"{path}: its hands are not numbered 0, 1, 2, ...; remove it")
    return records


def _appender(path: Path, header: Mapping[str, Any], fresh: bool) -> Callable[[list[dict[str, Any]]], None]:
    """A sink that appends records to the hands file (written with its header line when ``fresh``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if fresh:
        path.write_text(json.dumps(dict(header)) + "\n")

    def sink(part: list[dict[str, Any]]) -> None:
        with path.open("a") as f:
            f.writelines(json.dumps(rec) + "\n" for rec in part)

    return sink


def fit_layers(
    x: np.ndarray,
    y: np.ndarray,
    holdout: np.ndarray,
    hidden: Sequence[int] = (256, 256),
    epochs: int = 30,
    lr: float = 1e-3,
    batch: int = 512,
    seed: int = 0,
    log: Callable[[str], None] | None = None,
) -> tuple[list[tuple[np.ndarray, np.ndarray]], dict[str, Any]]:
    """Fit the MLP on ``(x, y)`` (rows ``(m, n, F)``, payoffs ``(m, n)``); keep the best held-out epoch."""
    torch.manual_seed(seed)
    f = x.shape[-1]
    sizes = [f, *hidden, 1]
    mods: list[nn.Module] = []
    for i in range(len(sizes) - 1):
        mods.append(nn.Linear(sizes[i], sizes[i + 1]))
        if i < len(sizes) - 2:
            mods.append(nn.ReLU())
    net = nn.Sequential(*mods)
    opt = torch.optim.Adam(net.parameters(), lr=lr, weight_decay=1e-5)
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)
    train_idx = np.flatnonzero(~holdout)
    val_idx = np.flatnonzero(holdout)

    def loss_of(idx: np.ndarray) -> torch.Tensor:
        out = net(xt[idx]).squeeze(-1)
        v = out - out.mean(dim=-1, keepdim=True)
        return ((v - yt[idx]) ** 2).mean()

    def val_loss() -> float:
        with torch.no_grad():
            return float(
                np.mean([loss_of(val_idx[i : i + 8192]).item() for i in range(0, len(val_idx), 8192)])
            )

    gen = np.random.default_rng(seed)
    base = float(((y[val_idx] - y[train_idx].mean(axis=0)) ** 2).mean()) if len(val_idx) else float("nan")
    best, best_state, best_epoch, history = float("inf"), None, 0, []
    for epoch in range(1, epochs + 1):
        net.train()
        perm = gen.permutation(train_idx)
        for i in range(0, len(perm), batch):
            opt.zero_grad()
            loss = loss_of(perm[i : i + batch])
            loss.backward()
            opt.step()
        net.eval()
        vl = val_loss()
        history.append(vl)
        if log:
            log(f"epoch {epoch}: held-out mse {vl:.4f} (constant predictor {base:.4f})")
        if vl < best:
            best, best_epoch = vl, epoch
            best_state = {k: t.clone() for k, t in net.state_dict().items()}
    assert best_state is not None
    net.load_state_dict(best_state)
    linears = [m for m in net if isinstance(m, nn.Linear)]
    layers = [(m.weight.detach().numpy().T.copy(), m.bias.detach().numpy().copy()) for m in linears]
    info = {
        "epochs": epochs,
        "best_epoch": best_epoch,
        "lr": lr,
        "batch": batch,
        "heldout_mse": best,
        "heldout_mse_constant": base,
        "heldout_r2": 1 - best / base if base > 0 else None,
        "heldout_mse_by_epoch": history,
    }
    return layers, info


def fit_value(
    out: str | Path,
    hands: int = 8000,
    players: int = 2,
    rules: TonkRules | None = None,
    rules_name: str = "standard",
    seed: int = 0,
    mix: Mapping[str, float] | None = None,
    hidden: Sequence[int] = (256, 256),
    epochs: int = 30,
    workers: int = 1,
    progress: bool = False,
    log: Callable[[str], None] | None = None,
    hands_file: str | Path | None = None,
    lr: float = 1e-3,
) -> dict[str, Any]:
    """Play fitting hands, fit the value network, write ``out`` (.npz) and its card; return the card."""
    if isinstance(hands, bool) or not isinstance(hands, int) or hands < 10:
        raise ValueError(f"hands must be an int of at least 10, got {hands!r}")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be a positive int, got {workers!r}")
    out = Path(out)
    if out.suffix != ".npz":
        raise ValueError(f"{out}: a value file's name ends in .npz")
    rules = rules or make_rules(rules_name)
    rules.check_players(players)
    mix = dict(mix or DEFAULT_MIX)
    torch.set_num_threads(1)
    t0 = time.perf_counter()
    header = {"seed": seed, "players": players, "rules_hash": rules.hash, "mix": mix}
    records = read_hands(Path(hands_file), header) if hands_file is not None else []
    if len(records) < hands:
        sink = _appender(Path(hands_file), header, not records) if hands_file is not None else None
        records += generate(hands, players, rules, seed, mix, workers, progress, len(records), sink)
    records = records[:hands]
    t_gen = time.perf_counter() - t0
    x, y, hand_of = positions(records, players, rules, seed)
    holdout = hand_of >= hands - max(1, hands // 10)
    if holdout.all() or not holdout.any():
        raise ValueError(
            f"{hands} hands gave {len(x)} positions after a draw, too few to fit and hold out; "
            "use more --hands"
        )
    if log:
        log(f"{len(x)} positions from {hands} hands in {t_gen:.0f} s; fitting")
    layers, info = fit_layers(x, y, holdout, hidden, epochs, lr=lr, seed=seed, log=log)
    card = {
        "name": out.stem,
        "num_players": players,
        "rules": rules_name,
        "rules_hash": rules.hash,
        "network": {"activation": "relu", "sizes": [x.shape[-1], *hidden, 1]},
        "data": {
            "mix": mix,
            "hands": hands,
            "positions": int(len(x)),
            "positions_heldout": int(holdout.sum()),
            "deals": f'random.Random(f"luck-fit:{seed}:{{h}}"), h = 0..{hands - 1} (no evaluation deals so)',
            "positions_are": "every position right after a stock draw; target: the hand's payoffs",
            "seed": seed,
        },
        "fit": {
            **info,
            "hidden": list(hidden),
            "generate_seconds": t_gen,
            "fit_seconds": time.perf_counter() - t0 - t_gen,
        },  # fmt: skip
        "created": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    return save_value(out, layers, card)


__all__ = [
    "CHUNK_HANDS", "DEFAULT_MIX", "fit_deck", "fit_layers", "fit_value", "generate", "positions",
    "read_hands",
]  # fmt: skip
