"""Random generators' states as plain JSON, to save at a checkpoint and restore on resume.

Python's ``random.Random`` and numpy's ``Generator`` (and the global numpy
and torch generators) become lists and dicts of numbers that
:func:`json.dumps` writes and :func:`json.loads` reads back exactly; nothing
is pickled. ``ValueError`` says which state does not fit its generator.
"""

from __future__ import annotations

import random
from typing import Any, cast

import numpy as np
import torch


def rng_state(rng: Any) -> dict[str, Any] | None:
    """The state of a ``random.Random`` or numpy ``Generator`` as JSON data (None for anything else)."""
    if isinstance(rng, random.Random):
        version, internal, gauss = rng.getstate()
        return {"python": [version, list(internal), gauss]}
    if isinstance(rng, np.random.Generator):
        return {"numpy": rng.bit_generator.state}
    return None


def set_rng_state(rng: Any, state: dict[str, Any] | None, what: str) -> None:
    """Put ``state`` (from :func:`rng_state`) back into ``rng``; a ``ValueError`` names ``what``."""
    if state is None and rng_state(rng) is None:
        return
    try:
        if isinstance(rng, random.Random) and isinstance(state, dict) and "python" in state:
            version, internal, gauss = state["python"]
            rng.setstate((version, tuple(internal), gauss))
            return
        if isinstance(rng, np.random.Generator) and isinstance(state, dict) and "numpy" in state:
            rng.bit_generator.state = state["numpy"]
            return
    except (TypeError, ValueError, KeyError) as e:
        raise ValueError(f"{what}: the saved generator state does not fit ({e})") from None
    raise ValueError(f"{what}: the saved generator state is for another kind of generator")


def global_states() -> dict[str, Any]:
    """The global python, numpy and torch generators' states."""
    legacy = cast(tuple[str, np.ndarray, int, int, float], np.random.get_state(legacy=True))
    kind, keys, pos, has_gauss, cached = legacy
    return {
        "python": list_state(random.getstate()),
        "numpy": [kind, keys.tolist(), int(pos), int(has_gauss), float(cached)],
        "torch": torch.get_rng_state().tolist(),
    }


def list_state(state: tuple[Any, ...]) -> list[Any]:
    """Python's ``random.getstate()`` as JSON data."""
    version, internal, gauss = state
    return [version, list(internal), gauss]


def set_global_states(states: dict[str, Any]) -> None:
    """Restore the states of :func:`global_states`; ``ValueError`` if one does not fit."""
    try:
        version, internal, gauss = states["python"]
        random.setstate((version, tuple(internal), gauss))
        kind, keys, pos, has_gauss, cached = states["numpy"]
        np.random.set_state((kind, np.asarray(keys, dtype=np.uint32), pos, has_gauss, cached))
        torch.set_rng_state(torch.tensor(states["torch"], dtype=torch.uint8))
    except (TypeError, ValueError, KeyError, RuntimeError) as e:
        raise ValueError(f"the saved global generator states do not fit ({type(e).__name__}: {e})") from None
