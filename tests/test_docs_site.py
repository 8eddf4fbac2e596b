"""The documentation site agrees with the tree: every page in the nav, every API reference importable.

``make docs`` (and ``.ci/run``) builds the site with ``mkdocs build --strict``, which fails on a broken
link or reference; these checks are the fast part of that, run with the tests.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def _nav_pages(node: object) -> list[str]:
    if isinstance(node, str):
        return [node]
    if isinstance(node, list):
        return [p for x in node for p in _nav_pages(x)]
    if isinstance(node, dict):
        return [p for x in node.values() for p in _nav_pages(x)]
    return []


def test_every_page_is_in_the_nav_and_every_nav_entry_exists() -> None:
    cfg = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    nav = _nav_pages(cfg["nav"])
    pages = sorted(str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md"))
    assert sorted(nav) == pages
    assert cfg["strict"] is True


def test_every_api_reference_names_an_importable_object() -> None:
    refs = [m for p in DOCS.rglob("*.md") for m in re.findall(r"^::: ([\w.]+)", p.read_text(), re.M)]
    assert len(refs) >= 20
    for ref in refs:
        importlib.import_module(ref)  # each reference is a module; its docstring heads its section
        assert importlib.import_module(ref).__doc__, f"{ref} has no module docstring for the API page"
