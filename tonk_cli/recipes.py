"""The shipped configs (``configs/*.yaml``) and doc pages (``docs/*.md``), found by name or path,
in a clone and in an installed wheel.

``configs/`` stays the one source: the wheel carries it as the data package
``tonk_cli.configs`` (``[tool.setuptools.package-dir]`` maps that package onto
the top-level ``configs/`` folder), and a source checkout reads the folder
itself. :func:`find_config` turns what a user typed into a file:

- an existing path is that file (``tonk train my.yaml``, ``configs/quick.yaml`` in a clone);
- a bare name is a shipped config (``tonk train quick`` is ``quick.yaml``);
- a missing ``configs/NAME.yaml`` is the shipped ``NAME.yaml`` (the commands
  of the docs work outside a clone);
- anything else is a one-line ``ValueError`` listing the shipped names.

:func:`find_page` does the same for the documentation pages (``tonk docs``).
"""

from __future__ import annotations

from pathlib import Path

__all__ = [
    "configs_dir", "docs_dir", "find_config", "find_page", "shipped_configs", "shipped_folder",
    "shipped_pages",
]  # fmt: skip


def shipped_folder(name: str) -> Path:
    """A top-level folder shipped in ``tonk_cli``: the package's copy (a wheel), else the checkout's."""
    packaged = Path(__file__).resolve().parent / name
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[1] / name


def configs_dir() -> Path:
    """The shipped configs' folder: the package's own copy (a wheel), else the checkout's ``configs/``."""
    return shipped_folder("configs")


def shipped_configs(prefix: str = "") -> list[str]:
    """The names of the shipped configs (``quick``, ``ppo_2p``, ...), those starting with ``prefix``."""
    folder = configs_dir()
    if not folder.is_dir():
        return []
    return sorted(p.stem for p in folder.glob("*.yaml") if p.stem.startswith(prefix))


def find_config(name_or_path: str | Path, prefix: str = "") -> Path:
    """The config file a name or path means (see the module docstring); ``prefix`` narrows the list shown."""
    p = Path(name_or_path)
    if p.exists():
        return p
    text = str(name_or_path)
    stem = p.stem if p.suffix in (".yaml", ".yml") else p.name
    shipped = configs_dir() / f"{stem}.yaml"
    bare = p.parent == Path(".") and p.suffix in ("", ".yaml", ".yml")
    under_configs = p.parent.name == "configs" and p.suffix in (".yaml", ".yml")
    if (bare or under_configs) and shipped.is_file():
        return shipped
    names = ", ".join(shipped_configs(prefix)) or "none found"
    raise ValueError(
        f"config file {text} does not exist, and no shipped config has that name (shipped: {names})"
    )


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
