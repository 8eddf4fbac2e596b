"""Training configs: every value range-checked at load, before a run folder exists."""

from __future__ import annotations

from pathlib import Path

import pytest

from tonk_cli.main import main
from train.config import load_config

QUICK = str(Path(__file__).resolve().parents[1] / "configs" / "quick.yaml")


@pytest.mark.parametrize(
    ("override", "words"),
    [
        ("ppo.gamma=2", "ppo.gamma=2.0 is invalid; allowed: a number in (0, 1]"),
        ("ppo.gamma=-1", "ppo.gamma=-1"),
        ("ppo.gamma=0", "ppo.gamma=0"),
        ("ppo.clip_range=.nan", "ppo.clip_range=nan is invalid; allowed: a finite number > 0"),
        ("ppo.clip_range=0", "ppo.clip_range=0"),
        ("ppo.learning_rate=.nan", "ppo.learning_rate=nan"),
        ("ppo.learning_rate=.inf", "ppo.learning_rate=inf"),
        ("ppo.learning_rate_end=-1e-4", "ppo.learning_rate_end"),
        ("ppo.gae_lambda=1.5", "ppo.gae_lambda=1.5"),
        ("ppo.ent_coef=-0.1", "ppo.ent_coef"),
        ("ppo.max_grad_norm=0", "ppo.max_grad_norm"),
        ("net.pi=[0]", "net.pi=[0] is invalid; allowed: layer sizes >= 1"),
        ("net.vf=[64,-1]", "net.vf"),
        ("reward_scale=.nan", "reward_scale=nan"),
        ("pool.latest=.nan", "pool.latest=nan"),
        ("pretrain.learning_rate=.nan", "pretrain.learning_rate=nan"),
        ("name=../../x", "name='../../x' is invalid; allowed: 1-100 letters"),
        ("name=.hidden", "name='.hidden'"),
        ("name=a/b", "name='a/b'"),
        ("pool.baselines={'nope:x': 0.2, 'random': 0.1}", "pool.baselines.nope:x is invalid"),
        ("eval.opponents=[heuristic:nobody]", "eval.opponents[0] is invalid"),
        ("pretrain.teacher=heuristic:nobody", "pretrain.teacher='heuristic:nobody' is invalid"),
        ("seed=-1", "seed=-1 is invalid; allowed: an integer in [0, 4294967295]"),
        ("seed=4294967296", "seed=4294967296 is invalid"),
        ("device=gpu", "device='gpu' is invalid; allowed: auto, cpu, mps, cuda or cuda:N"),
        ("device=cuda:x", "device='cuda:x'"),
        ("eval.workers=257", "eval.workers=257 is invalid; allowed: an integer in [1, 256]"),
        ("pretrain.workers=10000", "pretrain.workers=10000 is invalid"),
        ("torch_threads=100000", "torch_threads=100000 is invalid"),
        ("net.pi=[100000]", "net.pi=[100000] is invalid; allowed: layer sizes >= 1 and <= 8192"),
        ("net.vf=" + str([8] * 33), "at most 32 of them"),
        ("ppo.gamma=" + "9" * 400, "ppo.gamma=999"),
        ("ppo.target_kl=0", "ppo.target_kl=0"),
        ("ppo.ent_coef_end=.nan", "ppo.ent_coef_end=nan"),
        ("ppo.learning_rate_end=.inf", "ppo.learning_rate_end=inf"),
        ("ppo.vf_coef=.inf", "ppo.vf_coef=inf"),
        ("ppo.max_grad_norm=.nan", "ppo.max_grad_norm=nan"),
        ("ppo.n_steps=0", "ppo.n_steps=0 is invalid; allowed: an integer >= 1"),
        ("ppo.n_epochs=0", "ppo.n_epochs=0"),
        ("total_steps=0", "total_steps=0"),
        ("n_envs=0", "n_envs=0"),
        ("eval.hands=0", "eval.hands=0"),
        ("pool.snapshots=.nan", "pool.snapshots=nan"),
        ("pool.baselines={random: .inf}", "pool.baselines.random=inf"),
        ("shaping_coef=.inf", "shaping_coef=inf"),
        ("pretrain.smoothing=1", "pretrain.smoothing=1.0"),
        ("pretrain.improve_margin=.nan", "pretrain.improve_margin=nan"),
        (
            "init_from=no/such/run",
            "init_from='no/such/run' is invalid; allowed: a checkpoint .zip or run folder",
        ),
    ],
)
def test_values_that_cannot_be_meant_are_refused(override: str, words: str) -> None:
    with pytest.raises(ValueError) as e:
        load_config(QUICK, [override])
    assert words in str(e.value)


def test_sensible_values_pass() -> None:
    cfg = load_config(
        QUICK, ["ppo.gamma=1", "ppo.gae_lambda=0", "ppo.ent_coef=0", "net.pi=[]", "name=my-run_2.b"]
    )
    assert cfg.ppo.gamma == 1 and cfg.net.pi == [] and cfg.name == "my-run_2.b"
    edges = ["seed=4294967295", "eval.workers=256", "n_envs=1000", "net.vf=[8192]", "device=cuda:0"]
    cfg = load_config(QUICK, edges)
    assert cfg.seed == 2**32 - 1 and cfg.n_envs == 1000 and cfg.device == "cuda:0"
    assert load_config(QUICK, ["device=auto", "ppo.target_kl=null", "eval.opponents=[]"]).eval.opponents == []


def test_many_processes_need_subproc_to_be_refused() -> None:
    with pytest.raises(
        ValueError, match=r"n_envs=1000 is invalid; allowed: an integer in \[1, 256\] with vec_env"
    ):
        load_config(QUICK, ["vec_env=subproc", "n_envs=1000", "ppo.batch_size=64"])


def test_out_dir_under_a_file_is_refused(tmp_path: Path) -> None:
    afile = tmp_path / "afile"
    afile.write_text("x")
    for out in (afile, afile / "runs"):
        with pytest.raises(
            ValueError, match=r"out_dir=.* is invalid; allowed: a folder, or a path to make one"
        ):
            load_config(QUICK, [f"out_dir={out}"])
    assert load_config(QUICK, [f"out_dir={tmp_path / 'new' / 'runs'}"]).out_dir.endswith("runs")


@pytest.mark.parametrize("text", ["", "# nothing here\n", "null\n", "~", "{}\n", "---\n...\n"])
def test_an_empty_config_needs_defaults(tmp_path: Path, text: str) -> None:
    empty = tmp_path / "empty.yaml"
    empty.write_text(text)
    with pytest.raises(ValueError, match="is empty; give at least one option, or pass --defaults"):
        load_config(empty)
    assert load_config(empty, defaults=True).total_steps == 200_000


@pytest.mark.parametrize("text", ["[]\n", "0\n", "''\n", "false\n", "just words\n"])
def test_a_top_level_that_is_not_a_mapping_is_refused_even_with_defaults(tmp_path: Path, text: str) -> None:
    path = tmp_path / "odd.yaml"
    path.write_text(text)
    for defaults in (False, True):
        with pytest.raises(ValueError, match=r"odd.yaml: expected a mapping at the top level"):
            load_config(path, defaults=defaults)


def test_the_defaults_flag_reaches_the_config(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty.yaml"
    empty.write_text("")
    out = tmp_path / "runs"
    assert main(["train", str(empty), "total_steps=0", f"out_dir={out}", "--no-progress", "--defaults"]) == 2
    err = capsys.readouterr().err
    assert "total_steps=0 is invalid" in err and "is empty" not in err
    assert not out.exists()


def test_bad_values_fail_before_the_run_folder_exists(tmp_path: Path) -> None:
    out = tmp_path / "runs"
    bads = ("ppo.learning_rate=.nan", "pool.baselines={'heuristic:nope': 0.3}", "seed=-1", "device=gpu")
    for bad in (*bads, f"init_from={tmp_path / 'missing'}", "name=../../x"):
        assert main(["train", QUICK, bad, f"out_dir={out}", "--no-progress"]) == 2
        assert not out.exists()
    empty = tmp_path / "empty.yaml"
    empty.write_text("")
    assert main(["train", str(empty), f"out_dir={out}", "--no-progress"]) == 2
    assert not out.exists()


def test_malformed_yaml_names_the_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("players: 2\nppo: [unclosed\n")
    with pytest.raises(ValueError, match=r"(?s)bad.yaml is not valid YAML.*line 2"):
        load_config(bad)
    lst = tmp_path / "list.yaml"
    lst.write_text("- 1\n- 2\n")
    with pytest.raises(ValueError, match="expected a mapping at the top level"):
        load_config(lst)


def test_bad_yaml_names_the_file_and_line_and_runs_no_code(tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    cases = {
        "tag.yaml": f"players: !!python/object/apply:os.system ['touch {marker}']\n",
        "alias.yaml": "players: 2\nname: *nowhere\n",
        "tabs.yaml": "players: 2\nppo:\n\tgamma: 0.9\n",
    }
    for name, text in cases.items():
        path = tmp_path / name
        path.write_text(text)
        with pytest.raises(
            ValueError, match=rf"^config file \S*{name} is not valid YAML: [^\n]* at line \d+, column \d+"
        ):
            load_config(path)
    assert not marker.exists()


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("seed: 2024-13-45\n", "not valid YAML: month must be in 1..12"),
        ("seed: !!int abc\n", "not valid YAML: invalid literal"),
        ("name: " + "[" * 1000 + "\n", "not valid YAML: nested too deeply"),  # past the recursion limit
        ("\xff\xfe players: 2\n", "not valid YAML"),
    ],
)
def test_yaml_that_cannot_be_read_is_a_message(tmp_path: Path, text: str, words: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_bytes(text.encode("latin-1"))
    with pytest.raises(ValueError, match=rf"bad.yaml is {words}"):
        load_config(path)


def test_a_config_path_that_is_not_a_readable_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValueError, match="is not a file"):
        load_config(tmp_path)
    with pytest.raises(ValueError, match="does not exist"):
        load_config(tmp_path / "nope.yaml")
    locked = tmp_path / "locked.yaml"
    locked.write_text("players: 2\n")

    def refuse(self: Path, *args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "open", refuse)  # as chmod 0 would, for a user who is not root
    with pytest.raises(ValueError, match="locked.yaml cannot be read: Permission denied"):
        load_config(locked)


def test_a_huge_aliased_value_gives_a_short_message(tmp_path: Path) -> None:
    levels = ["&z0 [x, x, x, x, x, x, x, x, x, x]"]
    levels += [f"&z{i} [{', '.join([f'*z{i - 1}'] * 10)}]" for i in range(1, 9)]  # 10**9 leaves
    for key in ("name", "ppo", "rule_options"):
        path = tmp_path / "lol.yaml"
        path.write_text(f"{key}: [{', '.join(levels)}]\n")
        with pytest.raises(ValueError) as e:
            load_config(path)
        assert len(str(e.value)) < 1000
