"""The RLlib backend of ``tonk train``: config checks, the vector env and runner, masking, export,
run folder, resume, APPO, cluster.

Skipped when Ray's RLlib is not installed (``pip install 'tonk-rl[rllib]'``; ``make test`` installs it).
The training tests share one local Ray instance of 2 CPUs (the module's ``ray_session``; ``tonk train``
uses a running instance as it finds it) and tiny budgets; the cluster test starts its own nodes.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path

import numpy as np
import pytest
import yaml

from tonk_cli.main import main
from train.config import config_from_dict, load_config

pytest.importorskip("ray.rllib")

import torch  # noqa: E402 - after the skip
from ray.rllib.core.columns import Columns  # noqa: E402

from agents.registry import make_agent  # noqa: E402
from train.rllib.module import MASKED_LOGIT, MaskedTonkModule, policy_layers  # noqa: E402
from train.rllib.vector import RllibVectorEnv  # noqa: E402

#: A run of a few seconds: 1 env runner with 2 envs, small nets, a tiny evaluation.
TINY = {
    "backend": "rllib",
    "name": "rl",
    "players": 2,
    "total_steps": 1200,
    "checkpoint_every": 600,
    "net": {"pi": [32], "vf": [32]},
    "ppo": {"n_steps": 64, "batch_size": 128, "n_epochs": 2},
    "pool": {
        "snapshot_every": 600,
        "refresh_every": 300,
        "baselines": {"heuristic:greedy": 0.3, "random": 0.2},
    },
    "eval": {"every": 600, "hands": 20, "opponents": ["random"]},
    "rllib": {"env_runners": 0, "envs_per_runner": 4, "num_cpus": 2},
    "torch_threads": 1,  # pytest runs a worker a core
}


def _config(tmp_path: Path, **changes: object) -> Path:
    data = {**TINY, "out_dir": str(tmp_path / "runs"), **changes}
    path = tmp_path / "rl.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


# -- the config ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("changes", "words"),
    [
        ({"vec_env": "dummy"}, "config vec_env='dummy' is a setting of backend sb3 only"),
        ({"ppo": {"target_kl": 0.02}}, "config ppo.target_kl=0.02 is a setting of backend sb3 only"),
        ({"backend": "sb3"}, "config rllib.env_runners=0 is a setting of backend rllib"),
        ({"rllib": {"env_runners": -1}}, "config rllib.env_runners=-1 is invalid"),
        ({"rllib": {"envs_per_runner": 0}}, "config rllib.envs_per_runner=0 is invalid"),
        ({"rllib": {"workers": 2}}, "unknown config key 'rllib.workers'"),
        ({"rllib": {"address": "not an address"}}, "config rllib.address='not an address' is invalid"),
        ({"backend": "ray"}, "config backend='ray' is invalid; allowed: sb3 or rllib"),
        ({"rllib": {"algo": "impala"}}, "config rllib.algo='impala' is invalid; allowed: ppo or appo"),
        ({"ppo": {"batch_size": 1024, "n_steps": 64}}, "at most ppo.n_steps * max(rllib.env_runners, 1)"),
    ],
)
def test_config_errors_name_the_key(changes: dict, words: str) -> None:
    data = {**TINY, **changes}
    if "rllib" in changes:
        data["rllib"] = {**TINY["rllib"], **changes["rllib"]}  # type: ignore[dict-item]
    if "ppo" in changes:
        data["ppo"] = {**TINY["ppo"], **changes["ppo"]}  # type: ignore[dict-item]
    with pytest.raises(ValueError) as e:
        config_from_dict(data)
    assert words in str(e.value)


def test_unreachable_address_is_a_message_and_writes_nothing(tmp_path: Path, capsys) -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    rc = main(["train", str(_config(tmp_path)), "--address", f"127.0.0.1:{port}", "--no-progress"])
    assert rc != 0
    err = capsys.readouterr().err
    assert f"cannot reach a Ray cluster at 127.0.0.1:{port}" in err and "Traceback" not in err
    assert not (tmp_path / "runs").exists()


def test_more_runners_than_cpus_is_a_message() -> None:
    """Ray would wait forever for CPUs it does not have; the run says so before it starts."""
    from train.rllib.setup_ray import check_cpus

    cfg = config_from_dict({**TINY, "rllib": {**TINY["rllib"], "env_runners": 3, "learners": 1}})
    with pytest.raises(ValueError, match=r"need 4 CPUs, the Ray instance has 2"):
        check_cpus(cfg, 2.0)
    check_cpus(
        config_from_dict({**TINY, "rllib": {**TINY["rllib"], "env_runners": 3, "cpus_per_runner": 0.5}}), 2.0
    )


def test_missing_rllib_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from train.rllib.setup_ray import require_rllib

    monkeypatch.setitem(sys.modules, "ray.rllib", None)  # import ray.rllib now raises ImportError
    with pytest.raises(ValueError, match=r"pip install 'tonk-rl\[rllib\]'"):
        require_rllib()


# -- the env and the masked module ----------------------------------------------------------------


@pytest.fixture(autouse=True)
def _one_torch_thread():
    """Single-row forwards: a second thread only spin-waits for a busy core (and slows them 100x)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def _env_and_module(
    players: int = 2, seed: int = 0, num_envs: int = 8
) -> tuple[RllibVectorEnv, MaskedTonkModule]:
    cfg = config_from_dict({**TINY, "players": players, "seed": seed})
    env = RllibVectorEnv({"train_config": cfg.to_dict(), "num_envs": num_envs})
    module = MaskedTonkModule(
        observation_space=env.single_observation_space,
        action_space=env.single_action_space,
        model_config={"pi": [32], "vf": [32], "activation": "tanh", "mask_in_obs": True},
    )
    return env, module


def _batch(obs: np.ndarray) -> dict:
    return {Columns.OBS: torch.as_tensor(obs)}


@pytest.mark.parametrize("players", [2, 3])
def test_no_illegal_action_is_ever_sampled(players: int) -> None:
    """Thousands of decisions by exploration (sampling) and inference (argmax): every one legal."""
    env, module = _env_and_module(players)
    torch.manual_seed(0)
    with torch.no_grad():  # a sharper policy than at initialisation makes masked mistakes likelier
        module.pi[-1].weight.mul_(300.0)
    explore = module.get_exploration_action_dist_cls()
    infer = module.get_inference_action_dist_cls()
    obs, _ = env.reset(seed=1)
    mask_at = env.obs_size
    decisions = hands = 0
    while decisions < 3000:
        batch = _batch(obs)
        if decisions % 2:
            logits = module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS]
            actions = infer.from_logits(logits).to_deterministic().sample()
        else:
            logits = module.forward_exploration(batch)[Columns.ACTION_DIST_INPUTS]
            actions = explore.from_logits(logits).sample()
        masks = obs[:, mask_at:]
        assert (masks[np.arange(len(obs)), actions.numpy()] == 1).all()
        train_logits = module.forward_train(batch)[Columns.ACTION_DIST_INPUTS]
        assert bool((train_logits[torch.as_tensor(masks) == 0] == MASKED_LOGIT).all())
        assert torch.isfinite(train_logits).all()
        decisions += len(obs)
        obs, rewards, done, _, _ = env.step(actions.numpy())  # the env raises on an illegal action
        hands += int(done.sum())
        # a finished hand's last observation offers only ACKNOWLEDGE (its action is ignored)
        assert all(obs[g, mask_at:].sum() == 1 for g in np.flatnonzero(done))
    assert hands > 50
    assert env.take_stats()["steps"] <= decisions


def test_runners_sample_the_same_hands_as_episodes() -> None:
    """RLlib's stock runner (next-step autoreset) and the batched runner: legal actions, rewards = stakes.

    Each runner's finished episodes pay what the env counted for the learner; every step's action is
    legal in its observation; the batched runner's episodes cover every step it took. The driver's
    runner, which has no env of its own, makes one when RLlib samples with it.
    """
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.env.single_agent_env_runner import SingleAgentEnvRunner

    from train.rllib.runner import TonkEnvRunner

    cfg = config_from_dict(TINY)
    spec = RLModuleSpec(
        module_class=MaskedTonkModule, model_config={"pi": [32], "vf": [32], "mask_in_obs": True}
    )
    config = (
        PPOConfig()
        .environment(RllibVectorEnv, env_config={"train_config": cfg.to_dict()}, disable_env_checking=True)
        .env_runners(
            num_env_runners=0, num_envs_per_env_runner=4, gym_env_vectorize_mode="vector_entry_point"
        )
        .rl_module(rl_module_spec=spec)
        .debugging(seed=3)
    )
    for cls in (SingleAgentEnvRunner, TonkEnvRunner):
        runner = cls(config=config)
        env = runner.env.unwrapped
        assert isinstance(env, RllibVectorEnv) and env.num_envs == 4
        episodes = runner.sample(num_timesteps=400)
        stats = env.take_stats() if cls is SingleAgentEnvRunner else None
        done = [e for e in episodes if e.is_terminated]
        assert len(done) > 20 and sum(len(e) for e in episodes) >= 400
        for e in episodes:
            e = e if cls is TonkEnvRunner else e.to_numpy()
            obs, acts = np.asarray(e.get_observations()), np.asarray(e.get_actions())
            assert (obs[np.arange(len(acts)), env.obs_size + acts] == 1).all()
        if stats is not None:
            assert sum(e.get_return() for e in done) == pytest.approx(stats["stakes_sum"])
        else:
            kinds = runner.metrics.peek(("tonk", "kinds"))
            assert sum(kinds.values()) == len(done)
            assert sum(e.get_return() for e in done) == pytest.approx(
                runner.metrics.peek(("tonk", "stakes_sum"))
            )
            spaces = runner.get_spaces()  # what a remote runner tells the algorithm
        runner.stop()

    # With remote runners the local one (in the driver) has no env; RLlib samples with it while Ray
    # restarts a remote runner whose process died, and that ended the run ("doesn't have an env").
    local = TonkEnvRunner(config=config.env_runners(num_env_runners=1), worker_index=0, spaces=spaces)
    try:
        assert local.env is None
        episodes = local.sample(num_timesteps=100)
        assert local.env is not None and sum(len(e) for e in episodes) >= 100
    finally:
        local.stop()


def test_episodes_built_directly_equal_rllibs_constructor(monkeypatch: pytest.MonkeyPatch) -> None:
    """The runner's episodes are RLlib's, slot by slot; another layout falls back to the constructor."""
    from ray.rllib.env.single_agent_episode import SingleAgentEpisode

    import train.rllib.episodes as episodes

    rng = np.random.default_rng(0)
    maker = episodes.EpisodeMaker()
    assert maker.fast  # the installed RLlib's episodes are what the maker writes
    for n, terminated, t0 in ((1, True, 0), (5, False, 12), (9, True, 3)):
        args = (
            f"hand{n}",
            rng.random((n + 1, 7), dtype=np.float32),
            rng.integers(0, 9, n),
            rng.random(n, dtype=np.float32),
            {Columns.ACTION_LOGP: rng.random(n, dtype=np.float32)},
        )
        got = maker.make(*args, terminated=terminated, t_started=t0)
        want = episodes._official(*args, terminated=terminated, t_started=t0)
        assert isinstance(got, SingleAgentEpisode) and episodes.same_episode(got, want)
        assert len(got) == n and got.t == t0 + n and got.is_done == terminated
        assert not episodes.same_episode(
            got, episodes._official(*args, terminated=terminated, t_started=t0 + 1)
        )
    monkeypatch.setattr(episodes, "_BUFFER_KEYS", frozenset({"data", "lookback"}))  # another RLlib's buffers
    slow = episodes.EpisodeMaker()
    assert not slow.fast
    assert episodes.same_episode(slow.make(*args, terminated=True, t_started=3), want)  # the last case's


def test_the_runners_draw_is_the_masked_softmax() -> None:
    """``draw_legal``: legal actions only, the softmax's frequencies and log-probabilities, or the argmax."""
    from train.rllib.runner import draw_legal

    rng = np.random.default_rng(1)
    logits = rng.normal(size=(6, 540)).astype(np.float32) * 2
    legal = rng.random((6, 540)) < 0.02
    legal[:, 7] = True
    masked = torch.from_numpy(logits).masked_fill(~torch.from_numpy(legal), MASKED_LOGIT)
    want_lp = torch.log_softmax(masked, dim=1).numpy()
    gen = np.random.default_rng(0)
    counts = np.zeros((6, 540))
    for _ in range(4000):
        a, lp = draw_legal(masked.numpy(), legal, gen)
        assert legal[np.arange(6), a].all()
        np.testing.assert_allclose(lp, want_lp[np.arange(6), a], atol=1e-5)
        counts[np.arange(6), a] += 1
    probs = np.exp(want_lp)
    assert np.abs(counts / 4000 - probs).max() < 0.03  # 4,000 draws a row: within a few standard errors
    a, _ = draw_legal(masked.numpy(), legal, None)
    assert (a == masked.numpy().argmax(axis=1)).all()
    legal[2] = False
    with pytest.raises(ValueError, match="row 2 has no legal action"):
        draw_legal(logits, legal, gen)


def test_exported_policy_chooses_as_the_module(tmp_path: Path) -> None:
    """The numpy export (policy.npz layout) and the RLlib module: the same argmax on 1,000 positions."""
    env, module = _env_and_module()
    torch.manual_seed(3)
    with torch.no_grad():
        module.pi[-1].weight.normal_(0, 1.0)  # a decided policy: near-ties would test rounding, not export
    from agents.mlp import MLPPolicy

    MLPPolicy(policy_layers(module.state_dict()), activation="tanh").save_npz(tmp_path / "p.npz")
    exported = MLPPolicy.load_npz(tmp_path / "p.npz")
    obs, _ = env.reset(seed=5)
    same = total = 0
    while total < 1000:
        mine = torch.argmax(module.forward_inference(_batch(obs))[Columns.ACTION_DIST_INPUTS], dim=1).numpy()
        for g in range(len(obs)):
            same += mine[g] == exported.choose(obs[g, : env.obs_size], obs[g, env.obs_size :].astype(np.int8))
        total += len(obs)
        obs, *_ = env.step(mine)
    assert same == total


# -- a whole run through the CLI ----------------------------------------------------------------


@pytest.fixture(scope="module")
def ray_session():
    """One local Ray instance (2 CPUs) for the module's training runs: Ray starts once, not per run."""
    import ray

    started = not ray.is_initialized()
    if started:
        ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    if started:
        ray.shutdown()


def test_train_writes_the_run_folder_resumes_and_plays(tmp_path: Path, capsys, ray_session) -> None:
    cfg = _config(tmp_path)
    assert main(["train", str(cfg), "--no-progress"]) == 0
    (run,) = (tmp_path / "runs").iterdir()
    for name in (
        "config.yaml",
        "run.json",
        "metrics.jsonl",
        "best.json",
        "summary.json",
        "learning_curve.png",
    ):
        assert (run / name).is_file(), name
    assert list((run / "tb").rglob("events.out.tfevents.*"))
    steps = sorted(int(p.name.split("_")[1]) for p in (run / "checkpoints").glob("step_*"))
    assert len(steps) >= 2 and steps[-1] >= 1200
    last = run / "checkpoints" / f"step_{steps[-1]}"
    assert {p.name for p in last.iterdir()} >= {
        "tonk_meta.json",
        "policy.npz",
        "learner.pt",
        "state.json",
        "pool",
    }
    assert (run / "best" / "policy.npz").is_file()
    rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    rollouts = [r for r in rows if r["type"] == "rollout"]
    assert rollouts and all(r["hands"] > 0 and r["collect_s"] > 0 for r in rollouts)
    summary = json.loads((run / "summary.json").read_text())
    assert summary["backend"] == "rllib" and summary["algo"] == "ppo"
    assert sum(summary["steps_by_node"].values()) == summary["steps"]
    assert summary["collect_steps_per_s_per_runner"] > 0

    # the checkpoint's module (learner.pt, read safely) and its policy.npz: the same action
    from tonk_env.engine import make_rules
    from train.rllib.folder_checkpoint import read_rllib_checkpoint

    ckpt = read_rllib_checkpoint(last, make_rules("standard"), 2)
    env, module = _env_and_module()
    module.load_state_dict(
        {k: torch.as_tensor(v) for k, v in ckpt.learner_state["rl_module"]["default_policy"].items()}
    )
    agent = make_agent(f"rllib:{last}")
    obs, _ = env.reset(seed=9)
    for _ in range(40):
        mine = torch.argmax(module.forward_inference(_batch(obs))[Columns.ACTION_DIST_INPUTS], dim=1).numpy()
        for g in range(len(obs)):
            assert mine[g] == agent.choose(obs[g, : env.obs_size], obs[g, env.obs_size :].astype(np.int8))
        obs, *_ = env.step(mine)

    # the run folder as an agent spec in the evaluation
    capsys.readouterr()
    assert main(["eval", f"rllib:{run}", "random", "--hands", "10", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)

    # resume: the step count continues from the newest checkpoint, with its learner state
    assert main(["train", "--resume", str(run), "total_steps=1800", "--no-progress"]) == 0
    summary = json.loads((run / "summary.json").read_text())
    assert summary["steps"] >= 1800
    rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    (res,) = [r for r in rows if r["type"] == "resume"]
    assert res["step"] == steps[-1]

    # another player count: every checkpoint is refused by name, nothing new is written
    before = sorted(p.name for p in (run / "checkpoints").iterdir())
    assert main(["train", "--resume", str(run), "players=3", "total_steps=5000", "--no-progress"]) != 0
    err = capsys.readouterr().err
    assert "trained for 2 players, this run has 3" in err and "Traceback" not in err
    assert sorted(p.name for p in (run / "checkpoints").iterdir()) == before
    with pytest.raises(ValueError, match="trained for 2 players"):
        from tonk_env.engine import new_game
        from tonk_env.play import start_hand

        start_hand([agent, agent, agent], 3, new_game(make_rules("standard"), 3, seed=0).rules)


def test_bench_train_runs_every_mode(tmp_path: Path, capsys, ray_session) -> None:
    """``tonk bench train --json``: SB3 on the core, RLlib PPO and APPO, each with its rates."""
    sb3 = tmp_path / "sb3.yaml"
    sb3.write_text(
        yaml.safe_dump(
            {
                "name": "s",
                "n_envs": 4,
                "net": {"pi": [32], "vf": [32]},
                "ppo": {"n_steps": 64, "batch_size": 128, "n_epochs": 1},
                "pool": {"baselines": {"random": 1.0}},
            }
        )
    )
    rl = _config(tmp_path)
    args = ["bench", "train", "--json", "--steps", "512", "--sb3-config", str(sb3), "--rllib-config", str(rl)]
    assert main([*args, "--set", "torch_threads=1", "--no-progress"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert list(res["modes"]) == ["sb3-core", "sb3-core-overlap", "rllib-ppo-core", "rllib-appo-core"]
    for mode, r in res["modes"].items():
        assert r["steps"] >= 512, mode
        assert r["steps_per_s"] > 0 and r["collect_steps_per_s"] > 0 and r["update_steps_per_s"] > 0, mode
    assert res["modes"]["rllib-appo-core"]["collect_steps_per_s_per_runner"] > 0
    assert main(["bench", "train", "--modes", "rllib-impala"]) != 0
    assert "modes are a comma list of sb3-core" in capsys.readouterr().err


def test_load_config_keeps_the_rllib_section(tmp_path: Path) -> None:
    cfg = load_config(_config(tmp_path), ["rllib.envs_per_runner=8"])
    assert cfg.backend == "rllib" and cfg.rllib.envs_per_runner == 8


def test_two_node_cluster_spreads_env_runners(tmp_path: Path) -> None:
    """Two Ray nodes on this machine (a CPU each): an env runner on each, steps from both."""
    import ray
    from ray.cluster_utils import Cluster

    if ray.is_initialized():  # the module's session: tonk train would otherwise run on it
        ray.shutdown()
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    # Cluster writes its address where a plain ray.init() of another test (in another xdist worker)
    # would find and join it; this test passes the address explicitly, so the file goes
    ray._common.utils.reset_ray_address()
    try:
        cluster.add_node(num_cpus=1)
        cluster.wait_for_nodes()
        nodes = {n.node_id for n in cluster.list_all_nodes()}
        cfg = _config(
            tmp_path,
            total_steps=512,
            checkpoint_every=512,
            eval={"every": 0, "hands": 10, "opponents": []},
            rllib={"env_runners": 2, "envs_per_runner": 2},
        )
        assert main(["train", str(cfg), "--address", cluster.address, "--no-progress"]) == 0
        assert not ray.is_initialized()  # the run disconnected from the cluster it joined
    finally:
        cluster.shutdown()
    (run,) = (tmp_path / "runs").iterdir()
    summary = json.loads((run / "summary.json").read_text())
    by_node = summary["steps_by_node"]
    assert set(by_node) == nodes, by_node
    assert all(steps > 0 for steps in by_node.values()) and sum(by_node.values()) == summary["steps"] >= 512
