"""A mkdocs hook: docstrings name code with Sphinx roles (:func:`x`); the site shows just the code."""

from __future__ import annotations

import re
from typing import Any

#: a role before rendered inline code (":func:<code>...") and Sphinx's "~" (show the last name)
_ROLE = re.compile(r":(?:func|class|mod|meth|data|attr|exc|obj|py:\w+):(?=<code>)")
_TILDE = re.compile(r"<code>~(?:\w+\.)*(\w+)</code>")


def on_page_content(html: str, **kwargs: Any) -> str:
    """Drop the role markers from a page's HTML, and a ``~dotted.name`` becomes ``name``."""
    return _TILDE.sub(r"<code>\1</code>", _ROLE.sub("", html))
