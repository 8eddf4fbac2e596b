"""A policy network evaluated with numpy alone: fast, torch-free inference.

Trained MaskablePPO policies (an MLP: hidden layers with an activation, then
the action logits) are turned into :class:`MLPPolicy` for self-play
opponents, evaluation and sharing. Weights are plain arrays, so an
:class:`MLPPolicy` can be saved to and loaded from ``.npz`` files, a format
that runs no code when loaded (unlike pickled checkpoints).
"""

from __future__ import annotations

import functools
import json
import random
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agents.registry import make_agent
from tonk_env.engine import action_table
from tonk_env.obs import OBS_VERSION, obs_layout, upgrade_inputs
from tonk_env.safe_arrays import check_file_hash, load_npz, write_sha256_sidecar

ACTIVATIONS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "tanh": np.tanh,
    "relu": lambda x: np.maximum(x, 0.0),
}
#: The weight arrays of a policy ``.npz``: ``w0``, ``w1``, ... (each with its bias ``b0``, ``b1``, ...).
_WEIGHT_ARRAY = re.compile(r"w\d+")


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

    Each ``W`` is 2-D of shape (out, in) with out >= 1, each ``b`` 1-D of
    length out, each layer's in equals the previous layer's out; every weight
    is finite as float32 (a NaN or Inf weight would make every move the same,
    silently).
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
        if w.shape[0] < 1:
            raise ValueError(f"{name}: layer {i} has no outputs")
        if b.shape[0] != w.shape[0]:
            raise ValueError(f"{name}: layer {i} has {w.shape[0]} outputs but a bias of {b.shape[0]}")
        if prev is not None and w.shape[1] != prev:
            raise ValueError(f"{name}: layer {i} takes {w.shape[1]} inputs, the layer before gives {prev}")
        if not (_finite32(w) and _finite32(b)):
            raise ValueError(f"{name}: layer {i} holds NaN or infinite weights (as float32)")
        prev = w.shape[0]


def _finite32(a: np.ndarray) -> bool:
    """Every value of ``a`` finite once cast to float32, the type the network computes in."""
    with np.errstate(over="ignore"):  # a float64 beyond float32's range becomes inf: refused, not warned
        return bool(np.isfinite(a.astype(np.float32)).all())


class LegalColumns:
    """Each row's legal columns of a 0/1 mask, packed to the left of a ``(rows, most legal)`` array.

    ``rows`` and ``cols`` are the legal entries in row order (ascending columns
    within a row), ``counts`` and ``starts`` each row's number of them and its
    first entry, ``ids`` the packed column ids; :meth:`pack` lays per-entry values
    out the same way. A row without a legal column is a ``ValueError``.
    """

    def __init__(self, mask: np.ndarray) -> None:
        mask = np.asarray(mask)
        self.rows, self.cols = np.nonzero(mask)
        n = mask.shape[0]
        self.counts = np.bincount(self.rows, minlength=n)
        if self.counts.min() == 0:
            raise ValueError(f"row {int(np.argmin(self.counts))} has no legal action")
        self.starts = np.cumsum(self.counts) - self.counts
        self._slot = np.arange(self.rows.size) - np.repeat(self.starts, self.counts)
        self.shape = (n, int(self.counts.max()))

    @functools.cached_property
    def ids(self) -> np.ndarray:
        """The legal column ids, packed (0 after each row's last)."""
        return self.pack(self.cols, 0)

    def pack(self, values: np.ndarray, fill: float) -> np.ndarray:
        """``values`` (one per legal entry) packed like :attr:`ids`, ``fill`` after each row's last."""
        out = np.full(self.shape, fill, dtype=np.asarray(values).dtype)
        out[self.rows, self._slot] = values
        return out


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
    #: logits in one batch (:mod:`train.sb3.dummy_vec`). None: never batched.
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
    def sizes(self) -> list[int]:
        """The layer sizes, inputs first: ``[442, 256, 256, 540]``."""
        return [self.obs_size, *(b.shape[0] for _, b in self.layers)]

    @property
    def sizes_text(self) -> str:
        """The layer sizes as one word: ``442-256-256-540``."""
        return "-".join(map(str, self.sizes))

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

    @staticmethod
    def pick_many(z: np.ndarray, masks: np.ndarray, pickers: Sequence[MLPPolicy]) -> list[int]:
        """Row ``k``'s action as ``pickers[k].pick(z[k], masks[k])`` would choose it, for all rows at once.

        Each sampling picker draws its one uniform from its own generator, in row
        order, as :meth:`pick` does, and the arithmetic is :meth:`pick`'s (float64,
        shifted by the row's maximum, exponentiated, summed in order) on each row's
        legal columns only, where pick's masked columns add exact zeros: so the
        choices and the generators' states are the same.
        """
        # only the legal columns, packed to the left (rows x most legal; the padding after them): the
        # masked columns add exp(-inf) = 0 to pick's sums, which leaves every partial sum as it is
        legal = LegalColumns(masks)
        ids, counts = legal.ids, legal.counts
        n, width = legal.shape
        zs = legal.pack(np.asarray(z, dtype=np.float64)[legal.rows, legal.cols], -np.inf)
        out = ids[np.arange(n), np.argmax(zs, axis=1)]  # deterministic rows: the first highest legal logit
        sample = np.array([not p.deterministic for p in pickers], dtype=bool)
        if sample.any():
            zs = zs[sample]
            zs -= zs.max(axis=1, keepdims=True)
            cum = np.cumsum(np.exp(zs), axis=1)
            u = np.array([p.rng.random() for p in pickers if not p.deterministic])
            target = u * cum[np.arange(zs.shape[0]), counts[sample] - 1]
            chosen = np.count_nonzero(cum <= target[:, None], axis=1)  # searchsorted(side="right")
            # past the last legal action (a target rounded up to the total): pick's clip to the last column
            past = chosen >= counts[sample]
            picked = ids[sample][np.arange(zs.shape[0]), np.minimum(chosen, width - 1)]
            out[sample] = np.where(past, z.shape[1] - 1, picked)
        return [int(a) for a in out]

    def act(self, obs: Mapping[str, np.ndarray], info: Any = None) -> int:
        """The agent contract: act on ``obs["observation"]`` under ``obs["action_mask"]``."""
        return self.choose(obs["observation"], obs["action_mask"])

    def act_batch(self, obs: Mapping[str, np.ndarray], infos: Sequence[Any] = ()) -> list[int]:
        """The contract's batched form: one legal action per row of ``obs`` (one matrix product)."""
        masks = np.asarray(obs["action_mask"])
        z = self.logits(obs["observation"])
        if self.deterministic:  # pick_many's argmax rows, without its float64 copy and per-row flags
            return np.where(masks != 0, z, -np.inf).argmax(axis=1).tolist()
        return self.pick_many(z, masks, [self] * len(z))

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

    def save_npz(self, path: str | Path, sidecar: bool = True) -> None:
        """Save weights and metadata to ``.npz`` (no pickled code) and its hash to ``FILE.npz.sha256``.

        ``sidecar=False`` leaves the hash out (a caller writing to a temporary name
        and renaming it writes the sidecar for the final name itself).
        """
        arrays: dict[str, Any] = dict(self.weights())
        arrays["meta"] = np.array(json.dumps({**self.meta, "activation": self.activation}))
        np.savez(path, **arrays)
        if sidecar:
            written = Path(path) if str(path).endswith(".npz") else Path(f"{path}.npz")  # np.savez adds .npz
            write_sha256_sidecar(written)

    @classmethod
    def load_npz(cls, path: str | Path, **kwargs: Any) -> MLPPolicy:
        """Load a policy saved by :meth:`save_npz`, checked whole (``ValueError`` naming the file if bad)."""
        p = Path(path)
        meta, layers = read_npz(p)
        layers = upgrade_layout(p, meta, layers)
        check_npz_meta(p, meta, layers)
        activation = meta.pop("activation", "tanh")
        return cls(layers, activation=activation, meta=meta, name=kwargs.pop("name", p.name), **kwargs)


def read_npz(
    path: Path, what: str = "Tonk policy .npz file", limit: int | None = None
) -> tuple[dict[str, Any], list[tuple[np.ndarray, np.ndarray]]]:
    """The metadata and the ``(W, b)`` layers of an MLP ``.npz`` (``meta``, ``w0``, ``b0``, ...), no pickle.

    A ``ValueError`` naming the file if it is missing, unreadable (truncated,
    empty, not a zip), lacks one of ``meta``, ``w0``, ``b0``, ... (said as not a
    ``what``) or its metadata is not a JSON object. ``limit``: bytes an array,
    and all of them, may take (default: the safe loader's limits).
    """
    sizes = {} if limit is None else {"member_limit": limit, "file_limit": limit}
    data = load_npz(path, **sizes)  # sizes checked before anything is decompressed
    n = sum(1 for k in data if _WEIGHT_ARRAY.fullmatch(k))
    need = ["meta", *(f"{c}{i}" for i in range(max(n, 1)) for c in "wb")]
    missing = [k for k in need if k not in data]
    if missing:
        raise ValueError(f"{path}: not a {what} (missing array(s): {', '.join(missing)})")
    text = data["meta"]
    layers = [(data[f"w{i}"], data[f"b{i}"]) for i in range(n)]
    return _parse_meta(path, text), layers


def _parse_meta(path: Path, text: np.ndarray) -> dict[str, Any]:
    """The JSON object held by a policy ``.npz``'s ``meta`` array."""
    if text.ndim != 0 or text.dtype.kind != "U":
        raise ValueError(f"{path}: its meta array holds {text.dtype} of shape {text.shape}, not a JSON text")
    try:
        meta = json.loads(str(text))
    except (ValueError, RecursionError) as e:  # JSONDecodeError is a ValueError; so is an overlong int
        raise ValueError(f"{path}: its metadata is not valid JSON ({type(e).__name__}: {e})") from None
    if not isinstance(meta, dict):
        raise ValueError(f"{path}: its metadata is {type(meta).__name__}, not a JSON object")
    return meta


def upgrade_layout(
    path: Path, meta: dict[str, Any], layers: list[tuple[np.ndarray, np.ndarray]]
) -> list[tuple[np.ndarray, np.ndarray]]:
    """The layers of a network saved for an older observation layout, read into this one.

    Its first layer gets zero weights on the slices appended since
    (:func:`tonk_env.obs.upgrade_inputs`), so it plays as it did; ``meta`` then
    says this layout and keeps the saved one as ``obs_version_saved``. A network
    of this layout is returned as it is; ``ValueError`` names the file when the
    version or the input size does not fit. ``obs_size``, when ``meta`` has it, is updated.
    """
    version = meta.get("obs_version", OBS_VERSION)
    if version == OBS_VERSION or not layers:
        return layers
    players = meta.get("num_players")
    if isinstance(players, bool) or not isinstance(players, int) or not 2 <= players <= 6:
        raise ValueError(
            f"{path}: saved for observation layout version {version!r} with num_players {players!r}; "
            "an older layout is read only for a table of 2..6 players"
        )
    try:
        first = upgrade_inputs(np.asarray(layers[0][0]), version, players)
    except ValueError as e:
        raise ValueError(f"{path}: {e}") from None
    meta["obs_version_saved"] = version
    meta["obs_version"] = OBS_VERSION
    if "obs_size" in meta:
        meta["obs_size"] = first.shape[1]
    return [(first, layers[0][1]), *layers[1:]]


def check_npz_meta(path: Path, meta: Mapping[str, Any], layers: Sequence[tuple[Any, Any]]) -> None:
    """Check a saved network whole: its layers, activation, observation layout and size, and logits."""
    check_layers(layers, str(path))
    activation = meta.get("activation", "tanh")
    if not isinstance(activation, str) or activation not in ACTIVATIONS:
        raise ValueError(
            f"{path}: activation {activation!r} in its metadata; known: {', '.join(ACTIVATIONS)}"
        )
    version = meta.get("obs_version", OBS_VERSION)
    if version != OBS_VERSION:
        raise ValueError(
            f"{path}: trained with observation layout version {version!r}, "
            f"this Tonk RL uses version {OBS_VERSION}"
        )
    check_inputs(str(path), meta.get("num_players"), int(np.asarray(layers[0][0]).shape[1]))
    check_logits(str(path), int(np.asarray(layers[-1][0]).shape[0]))


def check_inputs(name: str, players: Any, size: int) -> None:
    """Raise ``ValueError`` unless ``size`` inputs is the observation of ``players`` (None: of any table)."""
    if players is None:
        sizes = {n: obs_layout(n).size for n in range(2, 7)}
        if size not in sizes.values():
            raise ValueError(
                f"{name}: the network takes {size} inputs; an observation has "
                + ", ".join(f"{v} ({n} players)" for n, v in sizes.items())
            )
        return
    if isinstance(players, bool) or not isinstance(players, int) or not 2 <= players <= 6:
        raise ValueError(f"{name}: num_players {players!r} in its metadata; need 2..6")
    want = obs_layout(players).size
    if size != want:
        raise ValueError(
            f"{name}: the network takes {size} inputs; a {players}-player observation has {want}"
        )


def check_logits(name: str, size: Any) -> None:
    """Raise ``ValueError`` unless ``size`` logits is the size of an action table."""
    sizes = sorted({action_table(False).size, action_table(True).size})
    if isinstance(size, bool) or size not in sizes:
        raise ValueError(
            f"{name}: the network gives {size} logits; an action table has {' or '.join(map(str, sizes))}"
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
    policy = MLPPolicy.load_npz(path, deterministic=det, seed=seed, name=f"npz:{path}")  # sizes checked
    check_file_hash(Path(path), f"npz:{path}")
    return policy


NETWORK_KINDS = "zoo:NAME, npz:FILE, ppo:RUN"
"""The spec kinds that name a policy network, as an error message lists them."""


def policy_network(
    spec: str, what: str = "", seed: int | None = 0, players: int | None = None, rules: Any = None
) -> MLPPolicy:
    """The policy network a spec names (``zoo:``, ``npz:``, ``ppo:``), checked to fit a table when given.

    Every refusal is one ``ValueError`` led by ``what``, the way the caller's option names the spec
    (``"--start 'zoo:2p'"``; the spec itself by default): the spec's own error, "is not a policy
    network", or, with ``players`` (and ``rules``), the table the network was not trained for.
    """
    what = what or repr(spec)
    try:
        net = make_agent(spec, seed=seed)
    except ValueError as e:
        raise ValueError(f"{what}: {e}") from None
    if not isinstance(net, MLPPolicy):
        raise ValueError(f"{what} is not a policy network; allowed: {NETWORK_KINDS}")
    if players is not None:
        try:
            net.reset_hand(0, players, rules)
        except ValueError as e:
            raise ValueError(f"{what}: {e}") from None
    return net


#: The metadata that must agree for networks to be averaged: the table and what the network reads.
_AVERAGE_MUST_MATCH = ("num_players", "rules_hash", "obs_version")


def average_networks(nets: Sequence[MLPPolicy], names: Sequence[str]) -> MLPPolicy:
    """The networks' weights averaged layer by layer: a "model soup" (Wortsman et al., ICML 2022).

    It is meaningful only for networks fine-tuned from one start, whose hidden
    units still line up; networks trained apart average to noise. A
    ``ValueError`` naming the first network (by ``names``) whose layer shapes,
    activation, table, rules or observation layout differ from the first's.
    The result is deterministic; its metadata is the first's, its ``step`` and
    ``run`` replaced by ``averaged``: the names.
    """
    if len(nets) < 2 or len(names) != len(nets):
        raise ValueError(f"averaging needs two networks at least, got {len(nets)}")
    first, shapes = nets[0], [w.shape for w, _ in nets[0].layers]
    for net, name in zip(nets[1:], names[1:], strict=True):
        theirs = [w.shape for w, _ in net.layers]
        if theirs != shapes or net.activation != first.activation:
            raise ValueError(
                f"{name}: layers {net.sizes_text} ({net.activation}) differ from {names[0]}'s "
                f"{first.sizes_text} ({first.activation}); only networks of one shape can be averaged"
            )
        for key in _AVERAGE_MUST_MATCH:
            if net.meta.get(key) != first.meta.get(key):
                raise ValueError(
                    f"{name}: {key} {net.meta.get(key)!r} differs from {names[0]}'s {first.meta.get(key)!r}"
                )
    layers = [
        (
            np.mean([net.layers[i][0] for net in nets], axis=0).T,
            np.mean([net.layers[i][1] for net in nets], axis=0),
        )
        for i in range(len(shapes))
    ]
    meta = {k: v for k, v in first.meta.items() if k not in ("step", "run", "generation")}
    meta["averaged"] = list(names)
    return MLPPolicy(layers, activation=first.activation, meta=meta, name="average")


def widen_network(net: MLPPolicy, width: int, name: str, seed: int = 0) -> MLPPolicy:
    """``net`` with every hidden layer grown to ``width`` units and its function kept exactly.

    Each new unit takes random incoming weights (normal, standard deviation
    1/sqrt(fan-in); bias 0) and gives out zero weights, so the logits are
    ``net``'s for every observation while training can grow the new units
    (function-preserving widening, as in Net2Net: Chen, Goodfellow & Shlens,
    ICLR 2016). Same inputs and ``seed`` give the same weights. A ``ValueError``
    naming ``name`` if ``width`` is below a hidden layer's size or there is no
    hidden layer. The metadata is ``net``'s, ``widened`` added: the name and
    the old sizes.
    """
    hidden = net.sizes[1:-1]
    if not hidden:
        raise ValueError(f"{name}: layers {net.sizes_text} have no hidden layer to widen")
    if width < max(hidden):
        raise ValueError(
            f"{name}: width {width} is below its hidden layers' {net.sizes_text}; it only widens"
        )
    rng = np.random.default_rng(seed)
    layers = [(w.copy(), b.copy()) for w, b in net.layers]  # (in, out)
    for i in range(len(layers) - 1):
        (w, b), (w_next, b_next) = layers[i], layers[i + 1]
        extra = width - w.shape[1]
        new_in = rng.normal(0.0, 1.0 / np.sqrt(w.shape[0]), size=(w.shape[0], extra)).astype(np.float32)
        layers[i] = (np.hstack([w, new_in]), np.concatenate([b, np.zeros(extra, np.float32)]))
        layers[i + 1] = (np.vstack([w_next, np.zeros((extra, w_next.shape[1]), np.float32)]), b_next)
    meta = {k: v for k, v in net.meta.items() if k != "widened"}
    meta["widened"] = {"from": name, "sizes": net.sizes}
    return MLPPolicy([(w.T, b) for w, b in layers], activation=net.activation, meta=meta, name="widened")
