"""Packaging: every package folder is in the wheel's list, each typed, the configs shipped by name."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tonk_cli.recipes import configs_dir, find_config, shipped_configs

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the oldest Python the project supports
    tomllib = pytest.importorskip("tomli")

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
TOP = ("tonk_env", "agents", "train", "eval", "frontends", "tonk_cli")


def test_every_package_folder_is_listed_and_typed() -> None:
    listed = set(PYPROJECT["tool"]["setuptools"]["packages"])
    found = {
        ".".join(d.relative_to(ROOT).parts)
        for top in TOP
        for d in [ROOT / top, *(ROOT / top).rglob("*")]
        if d.is_dir() and "__pycache__" not in d.parts and any(f.is_file() for f in d.iterdir())
    }
    missing = sorted(found - listed)
    assert not missing, f"package folders missing from [tool.setuptools] packages: {missing}"
    assert listed - found == {"tonk_cli.configs", "tonk_cli.docs"}
    for top in TOP:
        assert (ROOT / top / "py.typed").is_file(), top


def test_the_configs_ship_from_the_one_configs_folder() -> None:
    assert PYPROJECT["tool"]["setuptools"]["package-dir"] == {
        "tonk_cli.configs": "configs",
        "tonk_cli.docs": "docs",
    }
    assert configs_dir().resolve() == (ROOT / "configs").resolve()
    assert {"quick", "ppo_2p", "tournament_quick"} <= set(shipped_configs())
    tournaments = sorted(p.stem for p in (ROOT / "configs").glob("tournament*.yaml"))
    assert shipped_configs("tournament") == tournaments


def test_license_is_an_spdx_string_with_its_file() -> None:
    project = PYPROJECT["project"]
    assert project["license"] == "MIT" and project["license-files"] == ["LICENSE"]
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")
    assert PYPROJECT["build-system"]["requires"][0] == "setuptools>=77"


def test_find_config_by_name_path_or_docs_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # outside the clone: configs/quick.yaml is not here
    quick = (ROOT / "configs" / "quick.yaml").resolve()
    assert find_config("quick").resolve() == quick
    assert find_config("quick.yaml").resolve() == quick
    assert find_config("configs/quick.yaml").resolve() == quick
    own = tmp_path / "quick.yaml"
    own.write_text("name: mine\n")
    assert find_config("quick.yaml") == Path("quick.yaml")  # a file that exists wins
    with pytest.raises(ValueError, match=r"config file nosuch does not exist.*shipped: .*quick"):
        find_config("nosuch")
    with pytest.raises(ValueError, match=r"config file elsewhere/quick.yaml does not exist"):
        find_config("elsewhere/quick.yaml")


def test_tonk_train_and_pipeline_take_a_shipped_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import train.trainer
    from tonk_cli.main import main
    from tonk_cli.workflows import pipeline

    monkeypatch.chdir(tmp_path)  # outside the clone
    seen = []
    monkeypatch.setattr(train.trainer, "train", lambda cfg, progress, evaluate: seen.append(cfg) or tmp_path)
    assert main(["train", "quick", "total_steps=512", "--no-progress"]) == 0
    assert seen[-1].name == "quick" and seen[-1].total_steps == 512
    assert main(["train", "configs/ppo_2p.yaml", "--no-progress"]) == 0
    assert seen[-1].name == "ppo_2p"
    assert main(["train", "nosuch", "--no-progress"]) == 2  # a one-line error, listing the shipped names
    assert pipeline.run_pipeline.__defaults__[0] == "quick"


def test_the_docs_ship_and_tonk_docs_finds_a_page(capsys: pytest.CaptureFixture[str]) -> None:
    from tonk_cli.main import main
    from tonk_cli.recipes import docs_dir, find_page

    assert docs_dir().resolve() == (ROOT / "docs").resolve()
    assert PYPROJECT["tool"]["setuptools"]["package-data"]["tonk_cli.docs"] == ["*.md"]
    assert main(["docs"]) == 0
    listing = capsys.readouterr().out
    assert "TRAINING" in listing and "AGENTS" in listing
    assert find_page("training") == find_page("TRAINING.md") == docs_dir() / "TRAINING.md"
    assert main(["docs", "RULES"]) == 0
    assert capsys.readouterr().out == (ROOT / "docs" / "RULES.md").read_text(encoding="utf-8")
    with pytest.raises(ValueError, match=r"no documentation page 'nope' \(pages: .*TRAINING"):
        find_page("nope")
    assert main(["docs", "nope"]) == 2  # the same, as a one-line error
    assert capsys.readouterr().err.startswith("tonk docs: error: no documentation page")
