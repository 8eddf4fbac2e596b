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


def test_an_empty_config_needs_defaults(tmp_path: Path) -> None:
    empty = tmp_path / "empty.yaml"
    empty.write_text("# nothing here\n")
    with pytest.raises(ValueError, match="is empty; give at least one option, or pass --defaults"):
        load_config(empty)
    assert load_config(empty, defaults=True).total_steps == 200_000


def test_bad_values_fail_before_the_run_folder_exists(tmp_path: Path) -> None:
    out = tmp_path / "runs"
    for bad in ("ppo.learning_rate=.nan", "pool.baselines={'heuristic:nope': 0.3}"):
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
