"""The compiled core has one host: no private names imported across modules, splitmix64 written once."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("tonk_env", "agents", "train", "eval", "frontends")


def private_imports(source: str) -> list[str]:
    """The private names (``_x``, not dunders) a module imports from another module."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module != "__future__":
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.startswith("__"):
                    out.append(f"{node.module}.{alias.name}")
    return out


def test_no_module_of_the_envs_imports_a_private_name() -> None:
    bad = {
        str(p.relative_to(ROOT)): names
        for p in sorted((ROOT / "tonk_env").rglob("*.py"))
        if (names := private_imports(p.read_text()))
    }
    assert bad == {}


@pytest.mark.parametrize(
    "source, found",
    [("from .core.batch import _SUIT_VALUE, BatchGames\n", ["core.batch._SUIT_VALUE"]),
     ("from .x import __version__, y\n", [])],
)  # fmt: skip
def test_the_private_import_check_sees_a_planted_one(source: str, found: list[str]) -> None:
    assert private_imports(source) == found


def test_splitmix64_is_written_once() -> None:
    """Its multipliers appear in one module of the code (tonk_env/core/seeding.py)."""
    homes = [
        str(p.relative_to(ROOT))
        for pkg in PACKAGES
        for p in sorted((ROOT / pkg).rglob("*.py"))
        if "0xBF58476D1CE4E5B9" in p.read_text().upper().replace("0X", "0x")
    ]
    assert homes == ["tonk_env/core/seeding.py"]


def test_numba_caches_are_dropped_when_a_core_source_changes(tmp_path) -> None:
    from tonk_env.core import drop_stale_caches

    (tmp_path / "rules.py").write_text("x = 1\n")
    cache = tmp_path / "__pycache__"
    cache.mkdir()
    (cache / "learner.advance-1.py311.nbi").write_text("old")
    drop_stale_caches(tmp_path)  # no stamp yet: the caches may be of any sources
    assert not list(cache.glob("*.nbi"))
    (cache / "learner.advance-1.py311.nbi").write_text("new")
    drop_stale_caches(tmp_path)  # the same sources: kept
    assert list(cache.glob("*.nbi"))
    (tmp_path / "rules.py").write_text("x = 2\n")  # a callee changed, the caller's file did not
    drop_stale_caches(tmp_path)
    assert not list(cache.glob("*.nbi"))
