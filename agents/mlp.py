"""A policy network evaluated with numpy alone: fast, torch-free inference.

Trained MaskablePPO policies (an MLP: hidden layers with an activation, then
the action logits) are turned into :class:`MLPPolicy` for self-play
opponents, evaluation and sharing. Weights are plain arrays, so an
:class:`MLPPolicy` can be saved to and loaded from ``.npz`` files, a format
that runs no code when loaded (unlike pickled checkpoints).
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from tonk_env.engine import action_table
from tonk_env.obs import obs_layout

ACTIVATIONS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "tanh": np.tanh,
    "relu": lambda x: np.maximum(x, 0.0),
}


def check_table_fit(name: str, meta: Mapping[str, Any], num_players: int, rules: Any) -> None:
    """Raise ``ValueError`` if a network trained per ``meta`` sits at another table size or rules."""
    expected = meta.get("num_players")
    if expected is not None and expected != num_players:
        raise ValueError(f"{name}: trained for {expected} players, seated at a {num_players}-player table")
    want = meta.get("rules_hash")
    if want is not None and rules is not None and getattr(rules, "hash", want) != want:
        raise ValueError(
            f"{name}: trained with rules hash {want}, but the table plays rules hash {rules.hash}"
        )


def check_layers(layers: Sequence[tuple[Any, Any]], name: str) -> None:
    """Raise ``ValueError`` naming ``name`` unless ``layers`` is a chain of finite float ``(W, b)`` layers.

    Each ``W`` is 2-D of shape (out, in), each ``b`` 1-D of length out, each
    layer's in equals the previous layer's out; every weight is finite (a NaN
    or Inf weight would make every move the same, silently).
    """
    if not layers:
        raise ValueError(f"{name}: a network needs at least one layer")
    prev = None
    for i, (w, b) in enumerate(layers):
        w, b = np.asarray(w), np.asarray(b)
        if w.ndim != 2 or b.ndim != 1:
            raise ValueError(
                f"{name}: layer {i} has weights of shape {w.shape} and bias {b.shape}; need 2-D and 1-D"
            )
        if w.dtype.kind != "f" or b.dtype.kind != "f":
            raise ValueError(f"{name}: layer {i} holds {w.dtype}/{b.dtype} values; need floats")
        if b.shape[0] != w.shape[0]:
            raise ValueError(f"{name}: layer {i} has {w.shape[0]} outputs but a bias of {b.shape[0]}")
        if prev is not None and w.shape[1] != prev:
            raise ValueError(f"{name}: layer {i} takes {w.shape[1]} inputs, the layer before gives {prev}")
        if not (np.isfinite(w).all() and np.isfinite(b).all()):
            raise ValueError(f"{name}: layer {i} holds NaN or infinite weights")
        prev = w.shape[0]


class MLPPolicy:
    """Masked policy over the action table from an MLP's weights.

    ``layers`` is a list of ``(W, b)`` with ``W`` of shape (out, in), the last
    one producing the action logits. ``deterministic`` picks the masked
    argmax; otherwise it samples from the masked softmax with its own rng.
    """

    #: It acts on the observation alone: envs need not build a ``SeatInfo`` for it.
    reads_info = False
    #: Set by owners of several copies of one network (the training pool): copies
    #: with equal keys hold equal weights, so a vectorised env may compute their
    #: logits in one batch (:mod:`train.vec`). None: never batched.
    batch_key: Any = None

    def __init__(
        self,
        layers: list[tuple[np.ndarray, np.ndarray]],
        activation: str = "tanh",
        deterministic: bool = True,
        seed: int | None = None,
        name: str = "mlp",
        meta: Mapping[str, Any] | None = None,
    ) -> None:
        if activation not in ACTIVATIONS:
            raise ValueError(f"unknown activation {activation!r}; known: {', '.join(ACTIVATIONS)}")
        check_layers(layers, name)
        self.layers = [(np.asarray(w, np.float32).T.copy(), np.asarray(b, np.float32)) for w, b in layers]
        self.activation = activation
        self._act = ACTIVATIONS[activation]
        self.deterministic = deterministic
        self.rng = random.Random(seed)
        self.name = name
        self.meta = dict(meta or {})

    def reseed(self, seed: int) -> None:
        """Restart the sampling generator (evaluation reseeds every hand)."""
        self.rng = random.Random(seed)

    @property
    def obs_size(self) -> int:
        """Length of the observation vector the network takes."""
        return self.layers[0][0].shape[0]

    @property
    def num_actions(self) -> int:
        """Number of logits (the action table size)."""
        return self.layers[-1][0].shape[1]

    def logits(self, obs: np.ndarray) -> np.ndarray:
        """Raw action logits for one observation or a batch."""
        x = np.asarray(obs, dtype=np.float32)
        for w, b in self.layers[:-1]:
            x = self._act(x @ w + b)
        w, b = self.layers[-1]
        return x @ w + b

    def choose(self, obs: np.ndarray, mask: np.ndarray) -> int:
        """A legal action for one observation and its 0/1 mask."""
        return self.pick(self.logits(obs), mask)

    def pick(self, z: np.ndarray, mask: np.ndarray) -> int:
        """A legal action from one row of logits and its 0/1 mask (argmax, or a sample)."""
        if self.deterministic:  # the first legal action of the highest logit
            legal = np.flatnonzero(mask)
            return int(legal[np.argmax(z[legal])])
        z = z.astype(np.float64)
        z[np.asarray(mask) == 0] = -np.inf
        z -= z.max()
        p = np.exp(z)
        cum = np.cumsum(p)
        return int(np.searchsorted(cum, self.rng.random() * cum[-1], side="right").clip(0, len(z) - 1))

    def act(self, obs: Mapping[str, np.ndarray], info: Any = None) -> int:
        """The agent contract: act on ``obs["observation"]`` under ``obs["action_mask"]``."""
        return self.choose(obs["observation"], obs["action_mask"])

    def act_batch(self, obs: Mapping[str, np.ndarray], infos: Sequence[Any] = ()) -> list[int]:
        """The contract's batched form: one legal action per row of ``obs`` (one matrix product)."""
        masks = np.asarray(obs["action_mask"])
        z = self.logits(obs["observation"])
        if self.deterministic:
            z = z.astype(np.float64)
            z[masks == 0] = -np.inf
            return [int(a) for a in np.argmax(z, axis=1)]
        return [self.pick(z[i], masks[i]) for i in range(len(z))]

    def reset_hand(self, seat: int, num_players: int, rules: Any) -> None:
        """Check that this network fits the table it is seated at."""
        check_table_fit(self.name, self.meta, num_players, rules)

    # -- weights as plain arrays -------------------------------------------------
    def layers_for_export(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """The layers as ``(W, b)`` with ``W`` of shape (out, in), as the constructor takes them."""
        return [(w.T.copy(), b.copy()) for w, b in self.layers]

    def weights(self) -> dict[str, np.ndarray]:
        """The weights as a flat dict of arrays (for ``.npz``)."""
        out: dict[str, np.ndarray] = {}
        for i, (w, b) in enumerate(self.layers):
            out[f"w{i}"] = w.T
            out[f"b{i}"] = b
        return out

    def save_npz(self, path: str | Path) -> None:
        """Save weights and metadata to ``.npz`` (no pickled code)."""
        arrays: dict[str, Any] = dict(self.weights())
        arrays["meta"] = np.array(json.dumps({**self.meta, "activation": self.activation}))
        np.savez(path, **arrays)

    @classmethod
    def load_npz(cls, path: str | Path, **kwargs: Any) -> MLPPolicy:
        """Load a policy saved by :meth:`save_npz` (``allow_pickle=False``)."""
        p = Path(path)
        if not p.is_file():
            raise ValueError(f"{p}: no such file")
        try:
            with np.load(p, allow_pickle=False) as data:
                meta = json.loads(str(data["meta"]))
                n = sum(1 for k in data.files if k.startswith("w"))
                layers = [(data[f"w{i}"], data[f"b{i}"]) for i in range(n)]
        except KeyError as e:
            raise ValueError(f"{p}: not a Tonk policy .npz file (no array {e} in it)") from None
        except Exception as e:  # a truncated or corrupt file fails in zipfile, zlib or numpy's header parser
            raise ValueError(f"{p}: not a readable Tonk policy .npz file ({type(e).__name__}: {e})") from None
        if not isinstance(meta, dict):
            raise ValueError(f"{p}: its metadata is {type(meta).__name__}, not a JSON object")
        check_npz_meta(p, meta, layers)
        activation = meta.pop("activation", "tanh")
        return cls(layers, activation=activation, meta=meta, name=kwargs.pop("name", p.name), **kwargs)


def check_npz_meta(path: Path, meta: Mapping[str, Any], layers: Sequence[tuple[Any, Any]]) -> None:
    """Check that a saved network's first and last layers fit its player count and an action table."""
    check_layers(layers, str(path))
    players = meta.get("num_players")
    if players is not None:
        if isinstance(players, bool) or not isinstance(players, int) or not 2 <= players <= 6:
            raise ValueError(f"{path}: num_players {players!r} in its metadata; need 2..6")
        want = obs_layout(players).size
        if np.asarray(layers[0][0]).shape[1] != want:
            raise ValueError(
                f"{path}: the network takes {np.asarray(layers[0][0]).shape[1]} inputs; "
                f"a {players}-player observation has {want}"
            )
    sizes = {action_table(False).size, action_table(True).size}
    out = np.asarray(layers[-1][0]).shape[0]
    if out not in sizes:
        raise ValueError(
            f"{path}: the network gives {out} logits; an action table has "
            f"{' or '.join(map(str, sorted(sizes)))}"
        )


def layers_from_state_dict(state: Mapping[str, Any]) -> list[tuple[np.ndarray, np.ndarray]]:
    """The policy branch of an SB3 actor-critic ``state_dict``: hidden layers, then ``action_net``."""
    layers = []
    i = 0
    while f"mlp_extractor.policy_net.{i}.weight" in state:
        layers.append(
            (
                _np(state[f"mlp_extractor.policy_net.{i}.weight"]),
                _np(state[f"mlp_extractor.policy_net.{i}.bias"]),
            )
        )
        i += 2
    if "action_net.weight" not in state:
        raise ValueError("not an actor-critic policy: no action_net in its weights")
    layers.append((_np(state["action_net.weight"]), _np(state["action_net.bias"])))
    return layers


def _np(t: Any) -> np.ndarray:
    return t.detach().cpu().numpy() if hasattr(t, "detach") else np.asarray(t)


def parse_bool_param(value: Any, name: str, spec: str) -> bool:
    """A path kind's boolean parameter given as text (``true``/``false``/...)."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "on", "yes"):
        return True
    if text in ("0", "false", "off", "no"):
        return False
    raise ValueError(f"agent {spec}: parameter {name}={value!r} must be true or false")


def load_npz_agent(path: str, seed: int | None = None, deterministic: Any = True, **params: Any) -> MLPPolicy:
    """The ``npz:PATH`` agent: a policy network saved as ``.npz`` (runs no pickled code)."""
    if params:
        raise ValueError(f"agent npz:{path}: unknown parameters {sorted(params)}; known: deterministic")
    det = parse_bool_param(deterministic, "deterministic", f"npz:{path}")
    return MLPPolicy.load_npz(path, deterministic=det, seed=seed, name=f"npz:{path}")
