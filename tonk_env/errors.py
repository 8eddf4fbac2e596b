"""One-line messages from exceptions whose text spans several lines (torch's, YAML's, any).

Every error a user sees is one line: which file, and why. Torch's refusal of
a pickled object (``weights_only``) runs to a dozen lines and advises
``weights_only=False``, which would run the file's code: here it becomes
what was refused, and that nothing ran. YAML's errors put the problem and its
place on separate lines: here they are one, and :func:`read_yaml` is the one
reader of the YAML files a user points at (configs, run folders).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

#: The largest YAML file :func:`read_yaml` reads (configs are a few hundred bytes).
MAX_YAML_BYTES = 1 << 20


def one_line(e: BaseException) -> str:
    """An exception's text on one line (a ``ValueError``'s as it is, others after their type's name)."""
    text = " ".join(part.strip() for part in str(e).splitlines() if part.strip())
    if isinstance(e, ValueError):
        return text or type(e).__name__
    return f"{type(e).__name__}: {text}" if text else type(e).__name__


def torch_load_message(e: BaseException) -> str:
    """Why ``torch.load(weights_only=True)`` refused a file, in one line without torch's advice."""
    text = str(e)
    if "Weights only load failed" in text or "WeightsUnpickler error" in text:
        _, _, why = text.partition("WeightsUnpickler error:")
        why = " ".join(why.split())
        for advice in (" Please use", " Check the documentation", " We "):  # torch's advice: not for us
            why = why.split(advice)[0]
        why = why.strip().rstrip(".")
        return (
            f"it holds pickled objects, not only tensors ({why or 'refused by the safe loader'}); "
            "refused, nothing in it was run"
        )
    return one_line(e)


def yaml_message(e: Any) -> str:
    """A YAML error as one line: the problem, its line and column (PyYAML's marked errors), or its text."""
    problem = getattr(e, "problem", None)
    mark = getattr(e, "problem_mark", None)
    if problem and mark is not None:
        context, started = getattr(e, "context", None), getattr(e, "context_mark", None)
        if context and started is not None and (started.line, started.column) != (mark.line, mark.column):
            context += f" that starts at line {started.line + 1}, column {started.column + 1}"
        return f"{problem} at line {mark.line + 1}, column {mark.column + 1}" + (
            f" ({context})" if context else ""
        )
    return one_line(e)


def read_yaml(path: str | Path, label: str | None = None) -> Any:
    """The data of a YAML file, by the safe loader (no tag can run code); ``ValueError`` in one line.

    The message starts with ``label`` (default: the path) and says why: it does not
    exist, is not a file, cannot be read, is over :data:`MAX_YAML_BYTES`, or is not
    valid YAML (with the line and column).
    """
    p = Path(path)
    label = label or str(p)
    if not p.exists():
        raise ValueError(f"{label} does not exist")
    if not p.is_file():
        raise ValueError(f"{label} is not a file")
    try:
        with p.open("rb") as f:
            raw = f.read(MAX_YAML_BYTES + 1)
    except OSError as e:
        raise ValueError(f"{label} cannot be read: {e.strerror or e}") from None
    if len(raw) > MAX_YAML_BYTES:
        raise ValueError(f"{label} is larger than the {MAX_YAML_BYTES:,} bytes a YAML file may hold here")
    try:
        return yaml.safe_load(raw.decode("utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError, ValueError) as e:  # ValueError: a bad date, !!int abc
        raise ValueError(f"{label} is not valid YAML: {yaml_message(e)}") from None
    except RecursionError:
        raise ValueError(f"{label} is not valid YAML: nested too deeply") from None
