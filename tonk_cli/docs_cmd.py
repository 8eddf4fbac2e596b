"""``tonk docs``: the documentation pages that ship with the package, by name or as a list.

``docs/`` stays the one source, as ``configs/`` does for the recipes: the wheel
carries its pages as the data package ``tonk_cli.docs``
(``[tool.setuptools.package-dir]`` maps it onto the top-level ``docs/``
folder), so the links of the README, which are relative and dead on a package
index page, have a copy on every machine the package is installed on.
``tonk docs`` lists the pages with their paths; ``tonk docs TRAINING`` prints
one page.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from .recipes import shipped_folder

__all__ = ["docs_dir", "find_page", "shipped_pages"]


def docs_dir() -> Path:
    """The shipped pages' folder: the package's own copy (a wheel), else the checkout's ``docs/``."""
    return shipped_folder("docs")


def shipped_pages() -> list[Path]:
    """Every shipped page (``docs/*.md``), sorted by name."""
    folder = docs_dir()
    return sorted(folder.glob("*.md")) if folder.is_dir() else []


def find_page(name: str) -> Path:
    """The page ``name`` means (``TRAINING``, ``training``, ``TRAINING.md``); a one-line error lists them."""
    stem = Path(name).stem.lower()
    for page in shipped_pages():
        if page.stem.lower() == stem:
            return page
    names = ", ".join(p.stem for p in shipped_pages()) or "none found"
    raise ValueError(f"no documentation page {name!r} (pages: {names})")


def cmd_docs(args: argparse.Namespace) -> int:
    """List the pages with their paths, or print one page."""
    if args.page:
        print(find_page(args.page).read_text(encoding="utf-8"), end="")
        return 0
    print(f"documentation pages in {docs_dir()} (tonk docs PAGE prints one):")
    for page in shipped_pages():
        first = next(
            (ln.lstrip("# ").strip() for ln in page.read_text(encoding="utf-8").splitlines() if ln), ""
        )
        print(f"  {page.stem:<14} {first}")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``tonk docs``."""
    d = sub.add_parser("docs", help="the documentation pages shipped with the package (list, or print one)")
    d.add_argument(
        "page", nargs="?", metavar="PAGE", help="a page to print, e.g. TRAINING (default: list them)"
    )
    d.set_defaults(func=cmd_docs)
