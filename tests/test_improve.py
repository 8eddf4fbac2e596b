"""``tonk improve``: generations of policy improvement by network playouts (train/improve/)."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from tiny import tiny_net

import train.improve.run as run_mod
from agents.mlp import MLPPolicy
from agents.registry import make_agent
from agents.zoo import ZOO_ENV, read_card
from eval.duplicate import evaluate
from tonk_cli.main import main
from tonk_cli.workflows.zoo import add_entry
from tonk_env.engine import make_rules
from train.improve.config import config_from_dict, load_improve_config
from train.improve.playouts import CandidateValues, candidates, value_positions, world_opponents
from train.improve.positions import collect_positions
from train.improve.run import check_table, format_row, improve, resume_improve
from train.improve.targets import held_out_choice_gain, improved_targets, log_policy

RULES = make_rules("standard")


def _cfg(tmp_path: Path, start: str, **extra: object) -> dict:
    data = {
        "name": "tiny",
        "start": start,
        "generations": 2,
        "workers": 1,
        "out_dir": str(tmp_path / "runs"),
        "positions": {"count": 48, "opponents": {"self": 1, "heuristic:greedy": 1}},
        "values": {"worlds": 2, "candidates": 2, "batch": 256},
        "fit": {"epochs": 2, "learning_rate": 1e-2, "value": [8], "kl": 0.2, "window": 2},
        "accept": {"hands": 8, "record": {"random": 4}},
    }
    data.update(extra)
    return data


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_candidates_start_with_the_argmax_and_stay_legal() -> None:
    logits = np.array([0.0, 3.0, 1.0, 2.0, 5.0])
    mask = np.array([1, 1, 1, 1, 0], dtype=np.int8)
    got = candidates(logits, mask, 3, np.random.default_rng(0))
    assert got[0] == 1  # the highest legal logit (4 is illegal)
    assert len(set(got.tolist())) == 3 and all(mask[a] for a in got)
    assert len(candidates(logits, mask, 16, np.random.default_rng(0))) == 4  # no more than the legal ones


def test_targets_meet_the_kl_budget_and_move_towards_the_better_candidate() -> None:
    logits = np.array([[2.0, 1.0, 0.0, -5.0], [0.0, 0.0, 0.0, 0.0]])
    masks = np.array([[1, 1, 1, 0], [1, 1, 0, 0]], dtype=np.int8)
    vals = CandidateValues([np.array([0, 1]), np.array([0, 1])], [np.array([0.0, 0.5]), np.array([0.2, 0.2])])
    tg = improved_targets(logits, masks, vals, kl=0.05)
    assert tg.kl == pytest.approx(0.05, rel=0.05)
    pi = np.exp(log_policy(logits, masks))
    assert tg.probs[0, 1] > pi[0, 1] and tg.probs[0, 0] < pi[0, 0]  # towards the candidate worth more
    assert tg.probs[0, 3] == 0 and tg.probs[1, 2:].sum() == 0  # nothing on illegal actions
    assert np.allclose(tg.probs[1, :2], pi[1, :2])  # equal values: pi unchanged
    assert np.allclose(tg.probs.sum(axis=1), 1.0)


def test_kept_actions_keep_their_probability_and_the_values_move_the_others() -> None:
    logits = np.array([[0.0, 1.0, 0.5, -5.0], [1.0, 0.0, 0.0, 0.0]])
    masks = np.array([[1, 1, 1, 0], [1, 1, 0, 0]], dtype=np.int8)
    vals = CandidateValues(
        [np.array([1, 0, 2]), np.array([0, 1])], [np.array([0.0, 0.9, 0.4]), np.array([0.0, 0.5])]
    )
    kept = (masks > 0) & (np.arange(4) == 0)[None, :]  # action 0 (a drop) keeps pi's probability
    tg = improved_targets(logits, masks, vals, kl=0.05, kept=kept)
    pi = np.exp(log_policy(logits, masks))
    assert np.allclose(tg.probs[:, 0], pi[:, 0])  # however much more the values say it is worth
    assert tg.probs[0, 2] > pi[0, 2] and tg.probs[0, 1] < pi[0, 1]  # the rest move by their values
    assert np.allclose(tg.probs[1], pi[1])  # its only other legal action shares what is left: all of it
    assert np.allclose(tg.probs.sum(axis=1), 1.0) and tg.kl == pytest.approx(0.05, rel=0.05)
    free = improved_targets(logits, masks, vals, kl=0.05)
    assert free.probs[0, 0] > pi[0, 0]  # without it the drop gains


def test_the_held_out_gap_is_zero_where_the_candidates_are_equal_and_the_plain_gap_is_not() -> None:
    rng = np.random.default_rng(0)
    halves = [rng.normal(0, 0.3, (2, 3)) for _ in range(4000)]  # equal true values, noise only
    vals = CandidateValues([np.arange(3)] * 4000, [h.mean(axis=0) for h in halves], halves)
    gap, se = vals.held_out_gap()
    assert abs(gap) < 4 * se and se > 0
    assert np.mean([v.max() - v[0] for v in vals.values]) > 10 * se  # the noise's own "gain"
    better = [h + np.array([0.0, 0.2, 0.0]) for h in halves]  # the second candidate is worth +0.2
    gap, _ = CandidateValues([np.arange(3)] * 4000, [h.mean(axis=0) for h in better], better).held_out_gap()
    assert 0.1 < gap < 0.2
    assert len(CandidateValues([], [], None).held_out_gains()) == 0  # no halves, no gains


def test_the_held_out_gain_of_the_targets_grows_with_the_kl_budget_where_a_candidate_is_better() -> None:
    rng = np.random.default_rng(1)
    n = 3000
    logits, masks = np.tile([1.0, 0.0, 0.0, -9.0], (n, 1)), np.tile(np.int8([1, 1, 1, 0]), (n, 1))
    acts = [np.arange(3)] * n
    noise = [rng.normal(0, 0.3, (2, 3)) for _ in range(n)]
    equal = CandidateValues(acts, [h.mean(axis=0) for h in noise], noise)
    for kl in (0.0, 0.05, 0.5):
        gain, se, _ = held_out_choice_gain(logits, masks, equal, kl)
        assert gain <= 4 * se  # choosing among equals by noise gains nothing
    better = [h + np.array([0.0, 0.3, 0.0]) for h in noise]
    vals = CandidateValues(acts, [h.mean(axis=0) for h in better], better)
    small, big, best = (held_out_choice_gain(logits, masks, vals, kl) for kl in (0.01, 0.5, 0.0))
    assert 0 <= small[0] < big[0] <= best[0] + 1e-9 and small[2] < big[2] <= best[2]
    assert np.isnan(held_out_choice_gain(logits, masks, CandidateValues(acts, vals.values), 0.1)[0])


def test_values_do_not_depend_on_the_number_of_workers(tmp_path: Path) -> None:
    net = make_agent(tiny_net(tmp_path / "a.npz"))
    pos = collect_positions(net, {"self": 1.0}, RULES, 2, 60, seed=4, workers=1)
    assert len(pos) == 60 and all(p.mask.sum() >= 2 for p in pos)
    assert [p.obs.tobytes() for p in pos] == [
        p.obs.tobytes() for p in collect_positions(net, {"self": 1.0}, RULES, 2, 60, seed=4, workers=2)
    ]
    one, stats = value_positions(net, pos, 2, 2, "2p", seed=1, batch=64, workers=1)
    two, _ = value_positions(net, pos, 2, 2, "2p", seed=1, batch=64, workers=2)
    assert all(np.array_equal(a, b) for a, b in zip(one.values, two.values, strict=True))
    assert stats.playouts == sum(2 * len(a) for a in one.actions) and stats.decisions > 0
    assert np.isfinite(one.held_out_gap()[0])
    drop_first = [v for a, v in zip(one.actions, one.values, strict=True) if a[0] == 0]
    assert all(abs(x) <= 10 for v in drop_first for x in v)  # payoffs in stakes


def test_the_worlds_are_shared_among_the_playout_opponents_half_by_half() -> None:
    whom = world_opponents({"self": 1.0, "npz:a": 1.0, "npz:b": 2.0}, 10)
    # 5 worlds a half at shares 1.25, 1.25, 2.5: one each, and the largest remainder's one more
    assert whom[0::2].tolist() == whom[1::2].tolist() == [0, 1, 2, 2, 2]
    assert world_opponents({"self": 1.0, "npz:a": 1.0}, 5).tolist() == [0, 0, 0, 1, 1]  # halves of 3 and 2
    assert world_opponents({"self": 1.0}, 7).tolist() == [0] * 7
    assert world_opponents({"npz:a": 3.0, "self": 0.0}, 4).tolist() == [1] * 4


def test_playout_opponents_change_the_values_only_where_they_play(tmp_path: Path) -> None:
    net = make_agent(tiny_net(tmp_path / "a.npz"))
    other = make_agent(tiny_net(tmp_path / "b.npz", seed=9))
    pos = collect_positions(net, {"self": 1.0}, RULES, 2, 20, seed=4, workers=1)
    plain, _ = value_positions(net, pos, 2, 4, "2p", seed=1, batch=64)
    same, _ = value_positions(
        net, pos, 2, 4, "2p", seed=1, batch=64, opponents={"npz:x": net}, weights={"npz:x": 1}
    )
    assert all(np.array_equal(a, b) for a, b in zip(plain.values, same.values, strict=True))
    mixed, stats = value_positions(
        net,
        pos,
        2,
        4,
        "2p",
        seed=1,
        batch=64,
        workers=1,
        opponents={"npz:b": other},
        weights={"self": 1, "npz:b": 1},
    )
    assert [a.tolist() for a in mixed.actions] == [a.tolist() for a in plain.actions]  # the same candidates
    assert any(not np.array_equal(a, b) for a, b in zip(plain.values, mixed.values, strict=True))
    assert stats.decisions > 0
    with pytest.raises(ValueError, match=r"values\.opponents.*heuristic:expert.*a policy network"):
        config_from_dict({"values": {"opponents": {"heuristic:expert": 1}}})
    with pytest.raises(ValueError, match=r"values\.opponents.*positive sum"):
        config_from_dict({"values": {"opponents": {"self": 0}}})
    cfg = _cfg(tmp_path, tiny_net(tmp_path / "s.npz"))
    cfg["values"] = {**cfg["values"], "opponents": {"self": 1, "zoo:3p": 1}}
    with pytest.raises(ValueError, match="values.opponents: 'zoo:3p': .*trained for 3 players"):
        improve(config_from_dict(cfg), evaluate, progress=False)


def test_a_run_writes_its_generations_and_resumes_to_the_same_result(tmp_path: Path) -> None:
    start = tiny_net(tmp_path / "start.npz")
    whole = improve(config_from_dict(_cfg(tmp_path / "a", start)), evaluate, progress=False)
    assert [r["generation"] for r in whole.rows] == [1, 2]
    row = whole.rows[0]
    assert row["positions"] == 48 and row["playouts"] > 0 and set(row["record"]) == {"random"}
    assert row["margin"]["hands"] == 8 and isinstance(row["accepted"], bool)
    assert 0 < row["kl"] and row["tau"] > 0
    by_kind = row["held_out_gap_by_kind"]  # per decision type: gap, its standard error, positions
    assert sum(n for _, _, n in by_kind.values()) == 48 and set(by_kind) <= set(row["kinds"])
    assert all(row["kinds"][k] == n for k, (_, _, n) in by_kind.items())
    weighted = sum(g * n for g, _, n in by_kind.values()) / 48
    assert weighted == pytest.approx(row["held_out_gap"][0], abs=1e-3)
    realized = row["realized_gain"]  # the fitted network on the positions its fit held out
    assert realized["positions"] >= 1 and 0 <= realized["outside"] <= realized["moved"] <= 1
    assert np.isfinite(realized["gain"]) and realized["se"] >= 0
    by_kl = row["held_out_gain_by_kl"]  # the sweep's budgets and the run's own (0.2)
    assert set(by_kl) == {"0.02", "0.05", "0.1", "0.2", "0.5"}
    assert all(np.isfinite(g) and se >= 0 and 0 <= c <= 1 for g, se, c in by_kl.values())
    with np.load(whole.run_dir / "gen_001" / "values.npz") as saved:  # the candidates and their values
        assert saved["actions"].shape[0] == 48 and saved["halves"].shape == (48, 2, saved["actions"].shape[1])
        first = saved["actions"][:, 0]
        assert np.all(first >= 0) and np.allclose(saved["halves"].mean(axis=1), saved["values"])
    for g in (0, 1, 2):
        MLPPolicy.load_npz(whole.run_dir / f"gen_{g:03d}" / "policy.npz")  # each a loadable network
        assert (whole.run_dir / f"gen_{g:03d}" / "policy.npz.sha256").read_text().split()[1] == "policy.npz"
    assert (whole.run_dir / "current.npz.sha256").read_text().split()[1] == "current.npz"
    assert not list(whole.run_dir.rglob("*.tmp*"))  # no temporary file or its sidecar is left
    # stopped after one generation, as a kill after gen_001 was written leaves it, then resumed
    part = improve(config_from_dict(_cfg(tmp_path / "b", start)), evaluate, progress=False, stop=_after(1))
    assert [r["generation"] for r in part.rows] == [1]
    with open(part.run_dir / "generations.jsonl", "a", encoding="utf-8") as f:
        f.write(json.dumps({"generation": 2, "half": "written before state.json"}) + "\n")
    rest = resume_improve(part.run_dir, evaluate, progress=False)
    assert [r["generation"] for r in rest.rows] == [1, 2]
    for name in ("gen_001/policy.npz", "gen_002/policy.npz", "gen_002/value.npz", "current.npz"):
        assert _digest(whole.run_dir / name) == _digest(part.run_dir / name), name
    lines = (part.run_dir / "generations.jsonl").read_text().splitlines()
    assert [json.loads(x)["generation"] for x in lines] == [1, 2]
    assert [_timeless(r) for r in whole.rows] == [_timeless(r) for r in rest.rows]


def test_a_run_stopped_after_its_playouts_resumes_at_the_fit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    start = tiny_net(tmp_path / "start.npz")
    whole = improve(config_from_dict(_cfg(tmp_path / "a", start)), evaluate, progress=False)
    stopped = tmp_path / "stopped"  # as a kill during generation 1's fit leaves it
    shutil.copytree(whole.run_dir, stopped)
    shutil.rmtree(stopped / "gen_002")
    for name in ("policy.npz", "policy.npz.sha256", "value.npz", "targets.npz", "generation.json"):
        (stopped / "gen_001" / name).unlink()
    run_mod._set_current(stopped, stopped / "gen_000")
    (stopped / "generations.jsonl").unlink()
    (stopped / "state.json").write_text(json.dumps({"done": 0, "current": "gen_000"}))
    played = []
    play = run_mod._play_phase
    monkeypatch.setattr(run_mod, "_play_phase", lambda cfg, g, *a: played.append(g) or play(cfg, g, *a))
    rest = resume_improve(stopped, evaluate, progress=False)
    assert played == [2]  # generation 1's playouts were read, not played again
    for name in ("gen_001/policy.npz", "gen_002/policy.npz", "gen_002/value.npz", "current.npz"):
        assert _digest(whole.run_dir / name) == _digest(stopped / name), name
    assert [_timeless(r) for r in whole.rows] == [_timeless(r) for r in rest.rows]
    (stopped / "gen_002" / "values.npz").write_bytes(b"not an npz")  # a broken file is named
    (stopped / "state.json").write_text(json.dumps({"done": 1, "current": "gen_001"}))
    with pytest.raises(ValueError, match=r"gen_002/values.npz: cannot read a generation's playouts"):
        resume_improve(stopped, evaluate, progress=False)


def _timeless(row: dict) -> dict:
    """A generation's row without its timings."""
    return {k: v for k, v in row.items() if k not in ("seconds", "playout_decisions_per_s", "dealing_s")}


def _after(n: int):  # type: ignore[no-untyped-def]
    calls = {"k": 0}

    def stop() -> bool:
        calls["k"] += 1
        return calls["k"] > n

    return stop


def test_bad_configs_name_the_key_and_the_allowed_values(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"values\.worlds=0 is invalid; allowed: an int 1\.\.1,024"):
        config_from_dict({"values": {"worlds": 0}})
    with pytest.raises(
        ValueError, match="unknown improve config key 'generation' .did you mean 'generations'"
    ):
        config_from_dict({"generation": 3})
    with pytest.raises(ValueError, match="accept.hands=41 is invalid; allowed: an even number"):
        config_from_dict({"accept": {"hands": 41}})
    with pytest.raises(
        ValueError, match="accept.rule='best' is invalid; allowed: mean or interval or record"
    ):
        config_from_dict({"accept": {"rule": "best"}})
    with pytest.raises(ValueError, match="accept.rule='record' is invalid; allowed: mean or interval when"):
        config_from_dict({"accept": {"rule": "record", "record": {}}})
    with pytest.raises(ValueError, match="positions.opponents"):
        config_from_dict({"positions": {"opponents": {"nonsense:agent": 1}}})
    with pytest.raises(ValueError, match=r"fit\.kinds=\[.pass.\] is invalid; allowed: a list of decision"):
        config_from_dict({"fit": {"kinds": ["pass"]}})
    with pytest.raises(ValueError, match=r"fit\.kinds=\[\] is invalid; allowed: at least one decision type"):
        config_from_dict({"fit": {"kinds": []}})
    with pytest.raises(
        ValueError, match=r"fit\.kinds=\[.drop., .discard.\] is invalid; allowed: none, or two or more"
    ):
        config_from_dict({"fit": {"kinds": ["drop", "discard"]}})  # drop alone at the start of a turn
    assert config_from_dict({"fit": {"kinds": ["drop", "take"]}}).fit.kinds == ["drop", "take"]
    path = tmp_path / "c.yaml"
    path.write_text("positions:\n  opponents: {self: 1, heuristic:expert: 1}\n")
    cfg = load_improve_config(path, ["positions.opponents={self: 1}"])
    assert cfg.positions.opponents == {"self": 1}  # a mapping given on the command line replaces the file's
    with pytest.raises(ValueError, match="values.belief='2p' is invalid here: .*trained for 2 players"):
        improve(config_from_dict(_cfg(tmp_path, "zoo:3p", players=3)), evaluate, progress=False)
    with pytest.raises(ValueError, match="values.belief='nope' is invalid here"):
        cfg = _cfg(tmp_path, "zoo:2p")
        cfg["values"] = {"belief": "nope"}
        improve(config_from_dict(cfg), evaluate, progress=False)
    with pytest.raises(ValueError, match="improve config start='heuristic:expert' is not a policy network"):
        improve(config_from_dict(_cfg(tmp_path, "heuristic:expert")), evaluate, progress=False)


def test_the_command_says_what_is_missing_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["improve"]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "needs a CONFIG" in err[0]
    assert main(["improve", "--resume", str(tmp_path)]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not a tonk improve run folder" in err[0]
    start = tiny_net(tmp_path / "s.npz")
    cfg = tmp_path / "tiny.yaml"
    import yaml

    cfg.write_text(yaml.safe_dump(_cfg(tmp_path, start, generations=1)))
    assert main(["improve", str(cfg), "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "gen 1: vs previous" in out and "random" in out
    (run,) = (tmp_path / "runs").iterdir()
    assert json.loads((run / "summary.json").read_text())["generations"] == 1


def test_the_record_rule_accepts_by_the_records_paired_with_the_current_network(tmp_path: Path) -> None:
    start = tiny_net(tmp_path / "s.npz")
    accept = {"hands": 8, "rule": "record", "record": {"random": 40, "heuristic:greedy": 20}}
    report = improve(config_from_dict(_cfg(tmp_path, start, accept=accept)), evaluate, progress=False)
    cfg = config_from_dict(_cfg(tmp_path, start))
    for g, row in enumerate(report.rows, 1):
        current = report.run_dir / f"gen_{g - 1:03d}" / "policy.npz"  # the current one at generation 1
        paired = [r["paired"]["mean"] for r in row["record"].values()]
        assert row["accepted"] == (sum(paired) > 0)  # not the head-to-head margin
        for r in row["record"].values():
            assert r["paired"]["mean"] == pytest.approx(r["mean"] - r["current"], abs=2e-4)
            assert r["paired"]["ci95"][0] <= r["paired"]["mean"] <= r["paired"]["ci95"][1]
        if g == 1:  # the current network's figure is its own evaluation on the records' deals
            seed = (cfg.seed * 1_000_003 + g * 7_919) % 2**31 + 1
            old = evaluate([f"npz:{current}", "random"], hands=40, seed=seed, workers=1)
            assert row["record"]["random"]["current"] == round(old.agents[0].mean_stakes, 4)
    assert "(vs current" in format_row(report.rows[0])


def test_an_improved_network_goes_into_the_zoo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ZOO_ENV, str(tmp_path / "zoo"))
    (tmp_path / "zoo").mkdir()
    start = tiny_net(tmp_path / "s.npz")
    report = improve(config_from_dict(_cfg(tmp_path, start, generations=1)), evaluate, progress=False)
    entry = add_entry(report.run_dir, "tiny", baselines=["random"], hands=20, progress=False)
    assert entry.card["source"]["checkpoint"] == "current.npz"
    assert entry.card["training"]["generations"] == 1 and entry.card["training"]["start"] == start
    assert entry.card["training"]["ppo_seconds"] is None  # no PPO in an improve run
    page = entry.page_file.read_text()
    assert "1 generations of policy improvement" in page
    assert read_card("tiny")["sha256"] == _digest(tmp_path / "zoo" / "tiny.npz")


@pytest.mark.parametrize("path", sorted(p.name for p in Path("configs").glob("improve_*.yaml")))
def test_the_shipped_recipes_fit_their_tables(path: str) -> None:
    cfg = load_improve_config(Path("configs") / path)
    start = check_table(cfg)  # the start, the opponent model and the playouts' opponents
    assert start.meta["num_players"] == cfg.players and start.meta["rules_hash"] == cfg.make_rules().hash
