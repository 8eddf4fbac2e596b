"""The ``onnx:DIR`` agent: a policy exported by ``tonk export --format onnx``, run with onnxruntime.

No torch is needed: onnxruntime evaluates ``DIR/model.onnx`` (see
:mod:`frontends.onnx_export` for its inputs and outputs), and
``DIR/meta.json`` says which table it was trained for. Like the ``npz:``
agent it plays the masked argmax (``?deterministic=false`` samples from the
masked softmax) and refuses, in ``reset_hand``, a table with another number
of players or another rules hash. Both files are checked at load
(:func:`read_meta`, then the model's inputs, outputs and finite logits on a
probe), each problem a ``ValueError`` naming the file. onnxruntime is
optional: it is imported when an agent is built, and its absence is a
``ValueError`` saying what to install. :mod:`agents.registry` registers the kind as
``"agents.onnx_agent:load_onnx_agent"``.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from tonk_env.obs import OBS_VERSION

from .mlp import check_inputs, check_logits, check_table_fit, parse_bool_param

FORMAT = "tonk-onnx-policy/1"


class OnnxPolicy:
    """A masked policy evaluated by onnxruntime (the Policy protocol of :mod:`agents.base`)."""

    needs_obs = True

    def __init__(self, path: str | Path, deterministic: bool = True, seed: int | None = None) -> None:
        try:
            import onnxruntime as ort
        except ImportError:
            raise ValueError("the onnx agent needs onnxruntime: pip install onnxruntime") from None
        d = Path(path)
        if d.is_file() and d.name == "model.onnx":
            d = d.parent
        if not (d / "model.onnx").is_file() or not (d / "meta.json").is_file():
            raise ValueError(f"{d}: not an exported ONNX policy (expected model.onnx and meta.json in it)")
        meta = read_meta(d)
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = 1
        opts.inter_op_num_threads = 1
        try:
            self.session = ort.InferenceSession(
                str(d / "model.onnx"), opts, providers=["CPUExecutionProvider"]
            )
        except Exception as e:  # onnxruntime raises its own exception types
            raise ValueError(f"{d / 'model.onnx'}: onnxruntime cannot load it ({e})") from None
        self.meta = meta
        self.path = d
        self.deterministic = deterministic
        self.rng = random.Random(seed)
        self.obs_size = int(meta["obs_size"])
        self.num_actions = int(meta["num_actions"])
        self._check_model()

    def _check_model(self) -> None:
        """Check the model against ``meta.json``: its inputs and outputs, and finite logits on a probe."""
        where = self.path / "model.onnx"
        inputs = {i.name: list(i.shape) for i in self.session.get_inputs()}
        for name, size in (("observation", self.obs_size), ("action_mask", self.num_actions)):
            shape = inputs.get(name)
            if shape is None or len(shape) != 2 or shape[1] != size:
                raise ValueError(f"{where}: input {name} has shape {shape}; meta.json gives [batch, {size}]")
        if "masked_logits" not in {o.name for o in self.session.get_outputs()}:
            raise ValueError(f"{where}: no output masked_logits")
        # a zero and a ones observation, every action legal: a NaN or Inf weight shows in the logits
        obs = np.stack([np.zeros(self.obs_size, np.float32), np.ones(self.obs_size, np.float32)])
        try:
            z = self.masked_logits(obs, np.ones((2, self.num_actions), np.int8))
        except Exception as e:  # onnxruntime raises its own exception types
            raise ValueError(f"{where}: onnxruntime cannot run it ({e})") from None
        if np.shape(z) != (2, self.num_actions) or not np.isfinite(z).all():
            raise ValueError(
                f"{where}: its logits on a probe are not {self.num_actions} finite numbers "
                "(NaN or infinite weights?)"
            )

    def reseed(self, seed: int) -> None:
        """Restart the sampling generator."""
        self.rng = random.Random(seed)

    def reset_hand(self, seat: int, num_players: int, rules: Any) -> None:
        """Check that this network fits the table it is seated at."""
        check_table_fit(f"onnx:{self.path}", self.meta, num_players, rules)

    def masked_logits(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """The model's masked logits for a batch (or one row)."""
        obs = np.asarray(observations, np.float32)
        mask = np.asarray(masks).astype(np.int8, copy=False)
        one = obs.ndim == 1
        if one:
            obs, mask = obs[None], mask[None]
        out = self.session.run(["masked_logits"], {"observation": obs, "action_mask": mask})[0]
        return out[0] if one else out

    def _choose(self, z: np.ndarray, mask: np.ndarray) -> int:
        if self.deterministic:
            return int(np.argmax(z))
        z = z.astype(np.float64)
        z[np.asarray(mask) == 0] = -np.inf
        p = np.exp(z - z.max())
        cum = np.cumsum(p)
        return int(np.searchsorted(cum, self.rng.random() * cum[-1], side="right").clip(0, len(z) - 1))

    def act(self, obs: Mapping[str, np.ndarray], info: Any = None) -> int:
        """Policy protocol: act on ``obs["observation"]`` under ``obs["action_mask"]``."""
        mask = obs["action_mask"]
        return self._choose(self.masked_logits(obs["observation"], mask), mask)

    def act_batch(self, obs: Mapping[str, np.ndarray], infos: Sequence[Any] = ()) -> list[int]:
        """One action per row of ``obs["observation"]`` (B, size) and ``obs["action_mask"]``."""
        masks = np.asarray(obs["action_mask"])
        z = self.masked_logits(obs["observation"], masks)
        return [self._choose(z[i], masks[i]) for i in range(len(z))]


def read_meta(folder: Path) -> dict[str, Any]:
    """``folder/meta.json`` of an exported policy, checked (``ValueError`` naming the file if bad)."""
    p = folder / "meta.json"
    try:
        meta = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as e:  # UnicodeDecodeError and JSONDecodeError: ValueErrors
        raise ValueError(f"{p}: not readable JSON ({type(e).__name__}: {e})") from None
    if not isinstance(meta, dict):
        raise ValueError(f"{p}: a JSON {type(meta).__name__}, not an object")
    if meta.get("format") != FORMAT:
        raise ValueError(f"{folder}: format {meta.get('format')!r}, expected {FORMAT!r}")
    if meta.get("obs_version") != OBS_VERSION:
        raise ValueError(
            f"{folder}: exported for observation layout version {meta.get('obs_version')}, "
            f"this Tonk RL uses version {OBS_VERSION}"
        )
    missing = [k for k in ("num_players", "obs_size", "num_actions") if k not in meta]
    if missing:
        raise ValueError(f"{p}: missing {', '.join(missing)}")
    size = meta["obs_size"]
    if isinstance(size, bool) or not isinstance(size, int):
        raise ValueError(f"{p}: obs_size {size!r}; need an int")
    check_inputs(str(p), meta["num_players"], size)
    check_logits(str(p), meta["num_actions"])
    return meta


def load_onnx_agent(
    path: str, seed: int | None = None, deterministic: Any = True, **params: Any
) -> OnnxPolicy:
    """The ``onnx:DIR`` agent (``DIR`` from ``tonk export --format onnx``)."""
    if params:
        raise ValueError(f"agent onnx:{path}: unknown parameters {sorted(params)}; known: deterministic")
    det = parse_bool_param(deterministic, "deterministic", f"onnx:{path}")
    return OnnxPolicy(path, deterministic=det, seed=seed)
