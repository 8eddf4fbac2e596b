"""``tonk docs``: the documentation pages that ship with the package, by name or as a list.

``docs/`` stays the one source, as ``configs/`` does for the recipes: the wheel
carries its pages as the data package ``tonk_cli.docs``
(``[tool.setuptools.package-dir]`` maps it onto the top-level ``docs/``
folder), so the links of the README, which are relative and dead on a package
index page, have a copy on every machine the package is installed on.
``tonk docs`` lists the pages with their paths; ``tonk docs TRAINING`` prints
one page. Finding the pages is :mod:`tonk_cli.recipes`' work.
"""

from __future__ import annotations

import argparse

from .recipes import docs_dir, find_page, shipped_pages


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
