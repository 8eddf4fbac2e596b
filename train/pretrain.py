"""Warm start: behaviour cloning from a teacher agent before PPO.

A fresh MaskablePPO network knows nothing about Tonk, and PPO from scratch
settled well below ``heuristic:expert`` (docs/RESULTS.md, "What mattered").
With ``pretrain.teacher`` set, :func:`pretrain` first

1. plays ``pretrain.hands`` hands of the training env (same rules, players,
   random learner seat, opponents drawn from the pool's *baselines*) with the
   teacher in the learner's seat, recording the learner's observation, action
   mask, the teacher's action and the discounted final payoff;
2. fits the policy head by cross-entropy on the teacher's actions (masked
   logits, as PPO sees them; with ``pretrain.smoothing`` > 0 the target
   spreads that much probability over the legal actions, so that PPO still
   tries the alternatives) and the value head by regression on the
   discounted payoffs, for ``pretrain.epochs`` passes;

With ``pretrain.improve_rollouts`` > 0 a step of policy improvement comes
between 1 and 2 (:func:`improve_demos`): at every start-of-turn decision of
the data each legal start action (drop, draw, take) is valued on the true
position, a drop exactly and the others by ``improve_rollouts`` playouts
(the stock reshuffled each time; ``heuristic:fast`` plays every seat, reading
only its own seat's knowledge). Those values are unbiased but noisy samples
of what the action is worth from the learner's information state (the
hidden cards are as the deal made them), so a value network fitted to them
from the learner's observation estimates that worth; the teacher's start
action is replaced where the network values another by more than
``pretrain.improve_margin``. The policy then clones the improved choices.
This is the step a rollout search takes at every decision (``search:ismcts``
samples worlds where the data had real ones), learned once. What it gains, and
what sets the gain (data, playouts, margin): docs/RESULTS.md, "The
policy-improvement step".

then PPO starts from that network, and the self-play pool's "latest" copy
starts as the cloned policy. Pretraining happens once, at the start of a
fresh run (``--resume`` never repeats it); ``pretrain.json`` in the run
folder records the data size, the teacher-agreement accuracy on a held-out
5% and the losses.

Hands that end before the learner acts (its only legal action is the
acknowledgement) carry no decision and are not recorded.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from contextlib import closing
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from agents.fast import FastParams, turns_adding_all
from agents.registry import make_agent
from agents.search import play_out
from tonk_env.engine import START, make_rules, seat_info
from tonk_env.engine.actions import ACTION_KINDS, DRAW, DROP, TAKE, action_kind_index
from tonk_env.obs import obs_layout
from tonk_env.progress import progress_bar
from tonk_env.runtime import write_json
from tonk_env.single import TonkSingleAgentEnv
from tonk_env.workers import process_map

from .config import TrainConfig, config_from_dict
from .oracle import privileged_features, privileged_size
from .pool import OpponentPool

__all__ = [
    "START_ACTIONS", "Demos", "collect_demos", "fit_demos", "improve_demos", "pretrain", "start_values",
]  # fmt: skip

#: The start-of-turn actions valued by the improvement step, in the order of ``Demos.values``' columns.
START_ACTIONS = (DROP, DRAW, TAKE)
START_NAMES = ("drop", "draw", "take")


class Demos:
    """Recorded teacher decisions: observations, masks, actions, returns.

    ``values`` (rows x 3, with ``pretrain.improve_rollouts``) holds the playout
    values of drop, draw and take at start-of-turn decisions, NaN where an
    action was illegal or the row is not such a decision.
    """

    def __init__(
        self,
        obs: np.ndarray,
        masks: np.ndarray,
        actions: np.ndarray,
        returns: np.ndarray,
        values: np.ndarray | None = None,
    ) -> None:
        self.obs = obs
        self.masks = masks
        self.actions = actions
        self.returns = returns
        self.values = values

    def __len__(self) -> int:
        return len(self.actions)


def _teacher_env(cfg: TrainConfig, seed: int) -> TonkSingleAgentEnv:
    pool = OpponentPool(cfg.pool, seed=seed)
    if not pool.baselines:  # no baselines in the pool: the teacher plays every seat
        alone = type(cfg.pool)(latest=0.0, snapshots=0.0, baselines={cfg.pretrain.teacher: 1.0})
        pool = OpponentPool(alone, seed=seed)
    return TonkSingleAgentEnv(
        num_players=cfg.players,
        rules=make_rules(cfg.rules, **cfg.rule_options),
        opponent_sampler=pool.sample,
        learner_seat="random",
        reward_scale=cfg.reward_scale,
    )


def start_values(game: Any, seat: int, legal: Any, playouts: int, rng: Any) -> np.ndarray:
    """Values for ``seat`` of drop, draw and take (NaN where illegal) on the true ``game``.

    A drop is paid exactly. Draw and take are each played ``playouts`` times on
    copies with the stock reshuffled, and the hand is finished with the fast
    policy (:func:`agents.search.rollout`) for every seat; the mean payoff.
    The same reshuffles serve both actions (common random numbers).
    """
    out = np.full(len(START_ACTIONS), np.nan, dtype=np.float32)
    fp = FastParams()
    turns0 = turns_adding_all(game.history, game.n)
    orders = []
    for _ in range(playouts):
        stock = game.stock.copy()
        rng.shuffle(stock)
        orders.append(stock)
    for j, a in enumerate(START_ACTIONS):
        if a not in legal:
            continue
        if a == DROP:  # paid at once: no playouts
            out[j] = play_out(game.copy(), DROP, seat, fp, turns0)
            continue
        tot = 0.0
        for stock in orders:
            t = game.copy()
            t.stock = stock.copy()
            tot += play_out(t, a, seat, fp, turns0)
        out[j] = tot / playouts
    return out


#: Hands per block of the data: each block has its own seeds, so the data do not depend on ``workers``.
BLOCK_HANDS = 500

#: One block of the data: observations, masks, actions, returns, and start values (None without playouts).
_Block = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]


def _play_block(args: tuple[dict[str, Any], int, int, int]) -> _Block:
    """Play one block of hands with the teacher in the learner's seat (runs in a worker process)."""
    cfg_dict, seed, block, hands = args
    cfg = config_from_dict(cfg_dict)
    bseed = seed * 100_003 + block
    teacher = make_agent(cfg.pretrain.teacher, seed=bseed + 17)
    reset_hand = getattr(teacher, "reset_hand", None)
    env = _teacher_env(cfg, bseed)
    gamma = cfg.ppo.gamma
    oracle = cfg.net.critic == "oracle"
    playouts = cfg.pretrain.improve_rollouts
    if playouts:
        rng = random.Random(bseed + 29)
        val_l: list[np.ndarray] = []
        none = np.full(len(START_ACTIONS), np.nan, dtype=np.float32)
    obs_l: list[np.ndarray] = []
    mask_l: list[np.ndarray] = []
    act_l: list[int] = []
    ret_l: list[float] = []
    for h in range(hands):
        obs, info = env.reset(seed=bseed if h == 0 else None)
        if info.get("hand_over"):  # the hand ended before the learner acted: nothing to learn from
            continue
        if reset_hand is not None:
            reset_hand(env.learner_seat, cfg.players, env.rules)
        first = len(act_l)
        done = False
        reward = 0.0
        while not done:
            mask = env.action_masks()
            g = env.game
            assert g is not None  # the learner is to act in a running hand
            view = seat_info(g, env.learner_seat)
            a = int(teacher.act({"observation": obs, "action_mask": mask}, view))
            if playouts:
                start = g.phase == START and a in START_ACTIONS and len(view.legal) > 1
                val_l.append(start_values(g, env.learner_seat, view.legal, playouts, rng) if start else none)
            if oracle:  # the value head is fitted on what the oracle critic reads
                obs = np.concatenate([obs, privileged_features(g, env.learner_seat)])
            obs_l.append(obs)
            mask_l.append(mask.astype(bool))
            act_l.append(a)
            obs, reward, done, _, _ = env.step(a)
        k = len(act_l) - first
        ret_l.extend(reward * gamma ** (k - 1 - i) for i in range(k))
    env.close()
    n_obs = obs_layout(cfg.players).size
    if oracle:
        n_obs += privileged_size(cfg.players)
    return (
        np.asarray(obs_l, dtype=np.float32).reshape(-1, n_obs),
        np.asarray(mask_l, dtype=bool).reshape(len(act_l), -1),
        np.asarray(act_l, dtype=np.int64),
        np.asarray(ret_l, dtype=np.float32),
        np.asarray(val_l, dtype=np.float32).reshape(-1, len(START_ACTIONS)) if playouts else None,
    )


def collect_demos(
    cfg: TrainConfig, hands: int, seed: int, progress: bool = True, workers: int | None = None
) -> Demos:
    """Play ``hands`` hands with ``cfg.pretrain.teacher`` in the learner's seat and record its decisions.

    The hands are played in blocks of :data:`BLOCK_HANDS` with seeds of their
    own, by ``workers`` processes (default ``cfg.pretrain.workers``); the data
    are the same for any number of workers.
    """
    workers = cfg.pretrain.workers if workers is None else workers
    cfg_dict = cfg.to_dict()
    jobs = [
        (cfg_dict, seed, b, min(BLOCK_HANDS, hands - b * BLOCK_HANDS))
        for b in range(-(-hands // BLOCK_HANDS))
    ]
    bar = None
    if progress:
        desc = f"pretrain: {cfg.pretrain.teacher} plays"
        bar = progress_bar(total=hands, unit="hand", desc=desc, dynamic_ncols=True)
    parts = []
    if workers <= 1 or len(jobs) == 1:
        for job in jobs:
            parts.append(_play_block(job))
            if bar is not None:
                bar.update(job[3])
    else:
        with closing(process_map(_play_block, jobs, min(workers, len(jobs)), method="spawn")) as blocks:
            for job, part in zip(jobs, blocks, strict=True):  # closing: an interrupt ends the workers
                parts.append(part)
                if bar is not None:
                    bar.update(job[3])
    if bar is not None:
        bar.close()
    demos = Demos(*(np.concatenate([p[i] for p in parts]) for i in range(4)))
    if cfg.pretrain.improve_rollouts:
        demos.values = np.concatenate([p[4] for p in parts])
    if not len(demos):
        raise ValueError(f"pretrain: {hands} hands gave no learner decision; raise pretrain.hands")
    return demos


def fit_demos(
    policy: Any, demos: Demos, cfg: TrainConfig, seed: int, progress: bool = True
) -> dict[str, Any]:
    """Fit ``policy`` (a MaskableActorCriticPolicy) to ``demos``; returns accuracy and losses."""
    pc = cfg.pretrain
    rng = np.random.default_rng(seed)
    n = len(demos)
    order = rng.permutation(n)
    n_val = max(1, n // 20) if n >= 40 else 0
    val, tr = order[:n_val], order[n_val:]
    dev = policy.device

    def tensors(idx: np.ndarray) -> tuple[Any, Any, Any, Any]:
        return (
            torch.as_tensor(demos.obs[idx], device=dev),
            torch.as_tensor(demos.masks[idx], device=dev),
            torch.as_tensor(demos.actions[idx], device=dev),
            torch.as_tensor(demos.returns[idx], device=dev),
        )

    opt = torch.optim.Adam(policy.parameters(), lr=pc.learning_rate)
    vf_coef = cfg.ppo.vf_coef if pc.value else 0.0
    history = []
    policy.set_training_mode(True)
    bar = None
    if progress:
        bar = progress_bar(total=pc.epochs, unit="epoch", desc="pretrain: fit", dynamic_ncols=True)
    for epoch in range(pc.epochs):
        perm = rng.permutation(tr)
        tot_pi = tot_v = 0.0
        batches = 0
        for i in range(0, len(perm), pc.batch_size):
            o, m, a, r = tensors(perm[i : i + pc.batch_size])
            # cross-entropy with the (smoothed) target: the teacher's action and the legal ones
            log_p = policy.get_distribution(o, action_masks=m).distribution.logits
            values = policy.predict_values(o)
            legal = m.to(log_p.dtype)
            mean_legal = (log_p * legal).sum(-1) / legal.sum(-1)
            teacher = log_p.gather(1, a.long().unsqueeze(1)).squeeze(1)
            loss_pi = -((1 - pc.smoothing) * teacher + pc.smoothing * mean_legal).mean()
            loss_v = F.mse_loss(values.flatten(), r)
            loss = loss_pi + vf_coef * loss_v
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), cfg.ppo.max_grad_norm * 10)
            opt.step()
            tot_pi += loss_pi.item()
            tot_v += loss_v.item()
            batches += 1
        row = {"epoch": epoch + 1, "policy_loss": tot_pi / batches, "value_loss": tot_v / batches}
        history.append(row)
        if bar is not None:
            bar.set_postfix(nll=f"{row['policy_loss']:.3f}")
            bar.update(1)
    if bar is not None:
        bar.close()
    policy.set_training_mode(False)
    out: dict[str, Any] = {"samples": n, "train_samples": len(tr), "val_samples": n_val, "epochs": history}
    if n_val:
        with torch.no_grad():
            o, m, a, r = tensors(val)
            dist = policy.get_distribution(o, action_masks=m.cpu().numpy())
            pred = dist.distribution.probs.argmax(dim=1)
            values = policy.predict_values(o).flatten()
            hit = (pred == a).cpu().numpy()
            out["val_accuracy"] = float(hit.mean())
            acts = a.cpu().numpy()
            kinds = action_kind_index(acts)
            out["val_accuracy_by_kind"] = {
                kind: round(float(hit[kinds == k].mean()), 4)
                for k, kind in enumerate(ACTION_KINDS)
                if (kinds == k).any()
            }
            out["val_value_mse"] = float(F.mse_loss(values, r))
            out["val_return_var"] = float(r.var())
    return out


def _fit_start_values(
    net: nn.Sequential,
    obs: torch.Tensor,
    target: torch.Tensor,
    legal: torch.Tensor,
    split: tuple[np.ndarray, np.ndarray],
    rng: np.random.Generator,
    epochs: int,
    progress: bool,
) -> tuple[float, list[dict[str, Any]]]:
    """Fit ``net`` by masked squared error on ``split[0]``; leave it at its best epoch on ``split[1]``."""
    tr, val = split
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    lw = legal.to(target.dtype)

    def mse(idx: Any) -> Any:
        err = (net(obs[idx]) - target[idx]) ** 2 * lw[idx]
        return err.sum() / lw[idx].sum()

    bar = None
    if progress:
        bar = progress_bar(total=epochs, unit="epoch", desc="pretrain: start values", dynamic_ncols=True)
    best_err, history = np.inf, []
    best_state: dict[str, torch.Tensor] | None = None
    for epoch in range(epochs):
        perm = rng.permutation(tr)
        for i in range(0, len(perm), 1024):
            loss = mse(perm[i : i + 1024])
            opt.zero_grad()
            loss.backward()
            opt.step()
        with torch.no_grad():
            err = float(mse(val))
        history.append({"epoch": epoch + 1, "val_mse": round(err, 5)})
        if err < best_err:
            best_err, best_state = err, {k: v.clone() for k, v in net.state_dict().items()}
        if bar is not None:
            bar.set_postfix(mse=f"{err:.4f}")
            bar.update(1)
    if bar is not None:
        bar.close()
    if best_state is None:
        raise RuntimeError(f"pretrain: the start-value fit diverged (held-out errors: {history})")
    net.load_state_dict(best_state)
    return best_err, history


def improve_demos(
    demos: Demos, cfg: TrainConfig, n_obs: int, seed: int, progress: bool = True
) -> dict[str, Any]:
    """Replace the teacher's start actions where a fitted value says another is better.

    A value network (the first ``n_obs`` observation columns, two hidden layers
    of 256, one output per start action) is fitted by masked mean squared
    error to ``demos.values`` for ``pretrain.improve_epochs`` passes, keeping
    the epoch with the lowest error on a held-out 10%. Where it values another
    legal start action more than the teacher's by over ``pretrain.improve_margin``
    the action in ``demos`` is changed in place. Returns the fit's errors, the
    share of start decisions changed and, on the held-out rows, the mean
    playout value of the improved choices minus the teacher's with its 95%
    interval (an unbiased estimate of the gain of one improved decision when
    ``heuristic:fast`` plays on).
    """
    if demos.values is None:
        raise ValueError("improve_demos: the demos carry no start values (pretrain.improve_rollouts is 0)")
    pc = cfg.pretrain
    rows = np.flatnonzero(~np.isnan(demos.values).all(axis=1))
    if len(rows) < 20:
        raise ValueError(
            f"pretrain: only {len(rows)} start-of-turn decisions to improve on; raise pretrain.hands"
        )
    obs = torch.as_tensor(demos.obs[rows, :n_obs])
    vals = np.nan_to_num(demos.values[rows])
    legal = torch.as_tensor(~np.isnan(demos.values[rows]))
    target = torch.as_tensor(vals)
    teacher = np.array([START_ACTIONS.index(int(a)) for a in demos.actions[rows]])
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(rows))
    n_val = max(1, len(rows) // 10)
    val, tr = order[:n_val], order[n_val:]
    torch.manual_seed(seed)
    net = nn.Sequential(
        nn.Linear(n_obs, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, len(START_ACTIONS))
    )
    epochs = pc.improve_epochs
    best_err, history = _fit_start_values(net, obs, target, legal, (tr, val), rng, epochs, progress)
    with torch.no_grad():
        q = net(obs).masked_fill(~legal, -np.inf).numpy()
    best = q.argmax(axis=1)
    gain = q[np.arange(len(rows)), best] - q[np.arange(len(rows)), teacher]
    choice = np.where(gain > pc.improve_margin, best, teacher)
    changed = choice != teacher
    demos.actions[rows] = np.asarray(START_ACTIONS)[choice]
    diff = vals[val, choice[val]] - vals[val, teacher[val]]
    half = 1.96 * float(diff.std(ddof=1)) / np.sqrt(len(diff)) if len(diff) > 1 else float("nan")
    pairs = zip(teacher[changed], choice[changed], strict=True)
    moves = Counter(f"{START_NAMES[t]}->{START_NAMES[c]}" for t, c in pairs)
    return {
        "start_decisions": int(len(rows)),
        "playouts": pc.improve_rollouts,
        "margin": pc.improve_margin,
        "value_epochs": history,
        "value_val_mse": round(best_err, 5),
        "changed_share": round(float(changed.mean()), 4),
        "changes": dict(moves),
        "val_gain": round(float(diff.mean()), 5),
        "val_gain_ci95": [round(float(diff.mean()) - half, 5), round(float(diff.mean()) + half, 5)],
    }


def pretrain(model: Any, cfg: TrainConfig, run_dir: Path, progress: bool = True) -> dict[str, Any]:
    """Collect the teacher's decisions and fit ``model.policy`` to them; writes ``pretrain.json``."""
    pc = cfg.pretrain
    t0 = time.perf_counter()
    demos = collect_demos(cfg, pc.hands, seed=cfg.seed * 7919 + 11, progress=progress)
    t1 = time.perf_counter()
    improve = None
    if pc.improve_rollouts:
        n_obs = demos.obs.shape[1]
        if cfg.net.critic == "oracle":  # the value network reads what the policy reads
            n_obs -= privileged_size(cfg.players)
        improve = improve_demos(demos, cfg, n_obs, seed=cfg.seed + 1, progress=progress)
    t2 = time.perf_counter()
    stats = fit_demos(model.policy, demos, cfg, seed=cfg.seed, progress=progress)
    t3 = time.perf_counter()
    stats.update(
        {
            "teacher": pc.teacher,
            "hands": pc.hands,
            "collect_seconds": round(t1 - t0, 2),
            "fit_seconds": round(t3 - t2, 2),
        }
    )
    if improve is not None:
        stats["improve"] = {**improve, "seconds": round(t2 - t1, 2)}
        stats["improve_changed_share"] = improve["changed_share"]
        stats["improve_val_gain"] = improve["val_gain"]
    write_json(run_dir / "pretrain.json", stats)
    return stats
