"""Behaviour-cloning warm start (train/pretrain.py): data, fit, run-folder record, config errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from tiny import TINY

from tonk_cli.main import main
from tonk_env.obs import obs_layout
from train.config import load_config
from train.pretrain import START_ACTIONS, Demos, collect_demos, fit_demos, improve_demos, start_values


def _cfg(*extra: str):
    return load_config(
        "configs/quick.yaml",
        ["pretrain.teacher=heuristic:greedy", "net.pi=[64]", "net.vf=[64]", *extra],
    )


def test_demos_are_the_teachers_legal_decisions(monkeypatch: pytest.MonkeyPatch) -> None:
    import train.pretrain

    monkeypatch.setattr(train.pretrain, "BLOCK_HANDS", 25)  # 60 hands = blocks of 25, 25, 10
    cfg = _cfg()
    demos = collect_demos(cfg, hands=60, seed=3, progress=False, workers=1)
    assert len(demos) > 60  # every hand the learner acts at least once, most hands more
    assert demos.obs.shape == (len(demos), cfg_obs_size(cfg))
    # every recorded action is legal under its recorded mask
    assert demos.masks[np.arange(len(demos)), demos.actions].all()
    # returns are discounted final payoffs: at most the largest stake in size
    assert np.abs(demos.returns).max() <= 10
    again = collect_demos(cfg, hands=60, seed=3, progress=False, workers=2)
    assert np.array_equal(demos.actions, again.actions)  # same seed, same data, any workers
    assert np.array_equal(demos.returns, again.returns)
    assert np.array_equal(demos.obs, again.obs)


def cfg_obs_size(cfg) -> int:
    return obs_layout(cfg.players).size


@pytest.fixture(scope="module")
def greedy_demos() -> Demos:
    """Greedy's decisions in 1,500 hands, for the fits below (one process: no pool to start)."""
    return collect_demos(_cfg(), hands=1500, seed=5, progress=False, workers=1)


def test_fit_learns_to_imitate_the_teacher(greedy_demos: Demos) -> None:
    """Greedy is a simple rule: a small net fitted on 1,500 hands agrees with it far above chance."""
    from sb3_contrib import MaskablePPO

    from tonk_env.single import TonkSingleAgentEnv

    cfg = _cfg("pretrain.epochs=8", "pretrain.batch_size=256")
    demos = greedy_demos
    model = MaskablePPO("MlpPolicy", TonkSingleAgentEnv(), policy_kwargs={"net_arch": [64]}, seed=0)
    untrained = fit_demos(model.policy, demos, load_config(
        "configs/quick.yaml", ["pretrain.teacher=heuristic:greedy", "pretrain.epochs=1",
                               "pretrain.learning_rate=1e-9"]), seed=0, progress=False)  # fmt: skip
    stats = fit_demos(model.policy, demos, cfg, seed=0, progress=False)
    assert stats["val_accuracy"] > 0.75, stats
    assert stats["val_accuracy"] > untrained["val_accuracy"] + 0.2, (untrained, stats)
    assert stats["epochs"][-1]["policy_loss"] < stats["epochs"][0]["policy_loss"]
    assert set(stats["val_accuracy_by_kind"]) <= {"drop", "draw", "take", "discard", "hit", "spread"}


def test_smoothing_keeps_the_teachers_choice_and_leaves_room_to_explore(greedy_demos: Demos) -> None:
    """With label smoothing the clone still picks the teacher's action but gives the others mass."""
    import torch
    from sb3_contrib import MaskablePPO

    from tonk_env.single import TonkSingleAgentEnv

    n = len(greedy_demos) // 2  # about 750 hands' decisions: enough to see the smoothing
    demos = Demos(
        greedy_demos.obs[:n], greedy_demos.masks[:n], greedy_demos.actions[:n], greedy_demos.returns[:n]
    )
    off = {}
    for eps in (0.0, 0.2):
        cfg = _cfg("pretrain.epochs=8", "pretrain.batch_size=256", f"pretrain.smoothing={eps}")
        model = MaskablePPO("MlpPolicy", TonkSingleAgentEnv(), policy_kwargs={"net_arch": [64]}, seed=0)
        stats = fit_demos(model.policy, demos, cfg, seed=0, progress=False)
        assert stats["val_accuracy"] > 0.75, (eps, stats)
        with torch.no_grad():
            o = torch.as_tensor(demos.obs)
            probs = model.policy.get_distribution(o, action_masks=demos.masks).distribution.probs
        several = demos.masks.sum(1) > 1
        off[eps] = float((1 - probs.max(dim=1).values)[torch.as_tensor(several)].mean())
    assert off[0.2] > off[0.0] + 0.05, off


def test_train_with_pretraining_records_it(tmp_path: Path) -> None:
    rc = main(
        [
            "train", "configs/quick.yaml", *TINY, f"out_dir={tmp_path}",
            "pretrain.teacher=heuristic:greedy", "pretrain.hands=40", "pretrain.epochs=1", "--no-progress",
        ]
    )  # fmt: skip
    assert rc == 0
    (run,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    stats = json.loads((run / "pretrain.json").read_text())
    assert stats["teacher"] == "heuristic:greedy" and stats["hands"] == 40 and stats["samples"] > 40
    rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    assert rows[0]["type"] == "pretrain"
    assert rows[1]["type"] == "eval" and rows[1]["step"] == 0  # the warm start itself is scored
    assert (run / "best.zip").is_file()


@pytest.mark.parametrize("players", [2, 3])
def test_start_values_pay_a_drop_exactly_and_play_the_rest_out(players: int) -> None:
    import random

    from tonk_env.engine import PLAY, START, make_rules, new_game
    from tonk_env.engine.actions import DISCARD, DRAW, DROP, TAKE

    rules = make_rules("standard")
    checked = 0
    for seed in range(40):
        g = new_game(rules, players, seed=seed)
        if g.phase != START:
            continue
        g.play(DRAW)  # first turn: draw, discard the first legal card; the next seat is to start
        while g.phase == PLAY:
            g.play(next(a for a in g.legal_actions() if DISCARD <= a < DISCARD + 52))
        if g.phase != START:
            continue
        seat, legal = g.cur, g.legal_actions()
        before = (g.stock.copy(), list(g.hands), len(g.history))
        v = start_values(g, seat, legal, 12, random.Random(1))
        assert (g.stock, list(g.hands), len(g.history)) == before  # the game itself is untouched
        dropped = g.copy()
        dropped.play(DROP)
        assert v[START_ACTIONS.index(DROP)] == dropped.result.payoffs[seat]
        for a in (DRAW, TAKE):
            x = v[START_ACTIONS.index(a)]
            assert np.isnan(x) if a not in legal else abs(x) <= 10
        again = start_values(g, seat, legal, 12, random.Random(1))
        assert np.array_equal(v, again, equal_nan=True)  # same generator, same playouts
        checked += 1
    assert checked >= 10


def test_improvement_follows_the_values_and_leaves_other_decisions() -> None:
    """Synthetic values: dropping pays +1 when feature 0 is set, -1 otherwise; drawing 0; take illegal.

    The teacher always draws; the improved actions drop exactly where feature 0 is set,
    and the rows that are not start decisions keep their action."""
    from tonk_env.engine.actions import DISCARD, DRAW, DROP

    rng = np.random.default_rng(0)
    n = 4000
    obs = rng.random((n, 6), dtype=np.float32)
    flag = rng.random(n) < 0.5
    obs[:, 0] = flag
    actions = np.full(n, DRAW, dtype=np.int64)
    values = np.full((n, 3), np.nan, dtype=np.float32)
    start = rng.random(n) < 0.8
    # noisy, like playouts
    values[start, 0] = np.where(flag[start], 1.0, -1.0) + rng.normal(0, 0.5, start.sum())
    values[start, 1] = rng.normal(0, 0.5, start.sum())
    actions[~start] = DISCARD + 5
    demos = Demos(obs, np.ones((n, 540), bool), actions.copy(), np.zeros(n, np.float32), values)
    cfg = _cfg("pretrain.improve_rollouts=4", "pretrain.improve_epochs=30")
    stats = improve_demos(demos, cfg, 6, 0, False)
    assert np.all(demos.actions[~start] == DISCARD + 5)
    assert np.mean(demos.actions[start & flag] == DROP) > 0.98
    assert np.mean(demos.actions[start & ~flag] == DRAW) > 0.98
    assert stats["start_decisions"] == start.sum()
    assert abs(stats["changed_share"] - np.mean(flag[start])) < 0.02
    assert stats["changes"].keys() == {"draw->drop"}
    lo, hi = stats["val_gain_ci95"]
    assert 0.4 < lo < stats["val_gain"] < hi  # about +1 on half the held-out rows
    with pytest.raises(ValueError, match="improve_rollouts"):
        improve_demos(Demos(obs, demos.masks, actions, demos.returns), _cfg(), 6, 0, False)


def test_train_with_improvement_records_it(tmp_path: Path) -> None:
    rc = main(
        [
            "train", "configs/quick.yaml", *TINY, f"out_dir={tmp_path}", "pretrain.teacher=heuristic:fast",
            "pretrain.hands=60", "pretrain.epochs=1", "pretrain.improve_rollouts=2",
            "pretrain.improve_epochs=2", "--no-progress",
        ]
    )  # fmt: skip
    assert rc == 0
    (run,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    stats = json.loads((run / "pretrain.json").read_text())
    imp = stats["improve"]
    assert imp["start_decisions"] > 60 and imp["playouts"] == 2 and len(imp["value_epochs"]) == 2
    assert 0 <= imp["changed_share"] <= 1 and imp["val_gain_ci95"][0] <= imp["val_gain"]
    rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    assert rows[0]["improve_changed_share"] == imp["changed_share"]


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("pretrain.teacher=heuristic:nope", "pretrain.teacher"),
        ("pretrain.hands=0", "pretrain.hands"),
        ("pretrain.learning_rate=0", "pretrain.learning_rate"),
        ("pretrain.smoothing=1", "pretrain.smoothing"),
        ("pretrain.improve_rollouts=-1", "pretrain.improve_rollouts"),
        ("pretrain.improve_margin=-0.1", "pretrain.improve_margin"),
        ("pretrain.improve_epochs=0", "pretrain.improve_epochs"),
        ("pretrain.rate=1", "unknown config key 'pretrain.rate'"),
    ],
)
def test_bad_pretrain_options_name_the_problem(override: str, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace(".", r"\.")):
        load_config("configs/quick.yaml", [override])


def test_init_from_copies_a_checkpoint_and_refuses_misfits(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from agents.ppo import load_policy

    first = tmp_path / "first"
    assert main(["train", "configs/quick.yaml", *TINY, f"out_dir={first}", "--no-progress"]) == 0
    (src,) = [p for p in first.iterdir() if p.is_dir()]
    ckpt = src / "checkpoints" / "step_256.zip"
    second = tmp_path / "second"
    args = ["train", "configs/quick.yaml", *TINY, f"out_dir={second}", "total_steps=1", "eval.every=0"]
    assert main([*args, f"init_from={ckpt}", "ppo.learning_rate=1e-12", "--no-progress"]) == 0
    (run,) = [p for p in second.iterdir() if p.is_dir()]
    rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    assert rows[0] == {"type": "init_from", "step": 0, "checkpoint": str(ckpt)}
    # with a vanishing learning rate the run ends where the checkpoint started
    a, b = load_policy(ckpt), load_policy(run / "best.zip")
    obs = np.random.default_rng(0).random((4, a.obs_size)).astype(np.float32)
    assert np.allclose(a.logits(obs), b.logits(obs), atol=1e-5)
    capsys.readouterr()
    assert main([*args, f"init_from={ckpt}", "net.pi=[32]", "--no-progress"]) == 2
    assert "does not fit this run's net sizes" in capsys.readouterr().err
    assert main([*args, f"init_from={ckpt}", "players=3", "--no-progress"]) == 2
    assert "trained for 2 players, this run has 3" in capsys.readouterr().err
    with pytest.raises(ValueError, match="choose one warm start"):
        load_config("configs/quick.yaml", [f"init_from={ckpt}", "pretrain.teacher=heuristic:greedy"])


def test_init_from_a_network_copies_its_layers_and_refuses_misfits(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from agents.ppo import load_policy
    from agents.registry import make_agent

    args = ["train", "configs/quick.yaml", *TINY, f"out_dir={tmp_path}", "total_steps=1", "eval.every=0"]
    tiny_lr = ["ppo.learning_rate=1e-12", "--no-progress"]
    assert main([*args, "init_from=zoo:2p", "net.pi=[256,256]", *tiny_lr]) == 0
    (run,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    assert rows[0] == {"type": "init_from", "step": 0, "checkpoint": "zoo:2p"}
    a, b = make_agent("zoo:2p"), load_policy(run / "best.zip")
    obs = np.random.default_rng(0).random((4, a.obs_size)).astype(np.float32)
    assert np.allclose(a.logits(obs), b.logits(obs), atol=1e-5)
    capsys.readouterr()
    assert main([*args, "init_from=zoo:2p", "--no-progress"]) == 2  # quick's net.pi is [128, 128]
    assert "its hidden layers are [256, 256]; set net.pi to them" in capsys.readouterr().err
    assert main([*args, "init_from=zoo:2p", "net.pi=[512,512]", "--no-progress"]) == 2
    assert (
        "(the run has [512, 512]), or grow it with tonk widen zoo:2p --width 512" in capsys.readouterr().err
    )
    assert main([*args, "init_from=zoo:2p", "net.pi=[256,256]", "net.activation=relu", "--no-progress"]) == 2
    assert "its activation is tanh; set net.activation to it" in capsys.readouterr().err
    assert main([*args, "init_from=zoo:3p", "net.pi=[256,256]", "--no-progress"]) == 2
    assert (
        "init_from=zoo:3p: zoo:3p: trained for 3 players, seated at a 2-player table"
        in capsys.readouterr().err
    )
    with pytest.raises(ValueError, match="init_from"):
        load_config("configs/quick.yaml", ["init_from=zoo:nope"])
    with pytest.raises(ValueError, match="init_from"):
        load_config("configs/quick.yaml", [f"init_from=npz:{tmp_path / 'missing.npz'}"])
