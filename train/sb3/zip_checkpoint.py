"""The SB3 backend's checkpoints (``.zip``): saving them with Tonk metadata, resuming, warm starts, export.

A checkpoint is sb3-contrib's ``.zip`` (``MaskablePPO.save``) with one more
member, ``tonk_meta.json``: the rules (options and hash), the number of
players, the observation layout version and the action table size. Reading a
checkpoint (the ``ppo:PATH`` agent, :func:`resolve_checkpoint`,
:func:`read_meta`) is the agents' business: :mod:`agents.checkpoint`.

Security: nothing here unpickles. Resuming rebuilds the model from the run's
``config.yaml`` and reads the checkpoint with safe loaders only
(:func:`read_run_checkpoint`, :func:`restore_checkpoint`): the policy and
optimizer tensors with ``torch.load(weights_only=True)``, the step counters
from SB3's ``data`` member as plain JSON (its pickled entries are never
decoded), the opponent pool from ``.npz`` files without pickle. A planted run
folder cannot run code. SB3's ``MaskablePPO.load``, which unpickles, is not
used. Weights with a NaN or an infinity are refused.
"""

from __future__ import annotations

import io
import json
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from agents.checkpoint import FORMAT, META_NAME, read_meta
from agents.mlp import policy_network
from agents.ppo import check_finite_state, load_policy, load_policy_state
from tonk_env.engine import TonkRules, make_rules
from tonk_env.errors import torch_load_message
from tonk_env.safe_arrays import check_zip_sizes, read_member

from ..config import TrainConfig
from ..run_folder import policy_meta


def checkpoint_meta(
    rules: TonkRules, num_players: int, activation: str, step: int, config_name: str
) -> dict[str, Any]:
    """The metadata stored in every checkpoint."""
    return {
        "format": FORMAT,
        **policy_meta(rules, num_players),
        "activation": activation,
        "step": step,
        "run": config_name,
    }


def save_checkpoint(model: Any, path: Path, meta: dict[str, Any]) -> Path:
    """``model.save`` to ``path`` and add ``tonk_meta.json`` to the zip (written atomically)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    model.save(tmp)
    written = tmp if tmp.exists() else tmp.with_name(tmp.name + ".zip")
    with zipfile.ZipFile(written, "a") as z:
        z.writestr(META_NAME, json.dumps(meta, indent=1))
    written.replace(path)
    return path


def save_run_checkpoint(cfg: TrainConfig, model: Any, run_dir: Path, path: Path | None = None) -> Path:
    """Save ``checkpoints/step_<N>.zip`` (or ``path``) of a run with Tonk metadata."""
    step = int(model.num_timesteps)
    meta = checkpoint_meta(
        make_rules(cfg.rules, **cfg.rule_options), cfg.players, cfg.net.activation, step, cfg.name
    )
    return save_checkpoint(model, path or run_dir / "checkpoints" / f"step_{step}.zip", meta)


def export_npz(path: str | Path, out: str | Path) -> Path:
    """Write a checkpoint's policy as ``.npz`` (weights + metadata), the safe exchange format."""
    pol = load_policy(path)
    out = Path(out)
    pol.save_npz(out)
    return out


#: The plain-number counters of SB3's ``data`` member that a resumed model takes over.
_COUNTERS = ("num_timesteps", "_n_updates", "_episode_num")
#: The members a run checkpoint needs to be resumed from.
_MEMBERS = frozenset({"policy.pth", "policy.optimizer.pth", "data"})


@dataclass(frozen=True)
class RunCheckpoint:
    """A run checkpoint read safely: its metadata, tensors and SB3's step counters."""

    path: Path
    meta: dict[str, Any]
    policy: dict[str, Any]
    optimizer: dict[str, Any]
    counters: dict[str, int]

    @property
    def step(self) -> int:
        """The number of steps trained when it was saved."""
        return self.counters["num_timesteps"]


def read_run_checkpoint(path: Path) -> RunCheckpoint:
    """Read a run checkpoint whole, safely, to resume from it; ``ValueError`` says what is wrong.

    Tensors are read with ``torch.load(weights_only=True)`` and the counters
    from SB3's ``data`` member with ``json`` only (its pickled entries are
    never decoded), so nothing in the file can run. A truncated or corrupt
    member (CRC), a missing member, NaN or infinite weights and a step count
    that disagrees with the metadata are refused.
    """
    meta = read_meta(path)
    try:
        with zipfile.ZipFile(path) as z:
            check_zip_sizes(z, str(path))  # before testzip, which decompresses every member
            bad = z.testzip()
            if bad is not None:
                raise ValueError(f"{path}: member {bad} is corrupt (truncated or altered)")
            missing = _MEMBERS - set(z.namelist())
            if missing:
                raise ValueError(f"{path}: no {', '.join(sorted(missing))} inside; not a run checkpoint")
            policy = _tensors(z, "policy.pth", path)
            optimizer = _tensors(z, "policy.optimizer.pth", path)
            data = json.loads(read_member(z, "data", str(path)))
    except (zipfile.BadZipFile, OSError, EOFError, zlib.error, NotImplementedError) as e:
        raise ValueError(f"{path}: unreadable ({type(e).__name__}: {e})") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ValueError(f"{path}: its data member is not JSON ({e})") from None
    check_finite_state(policy, f"{path}: policy.pth")
    check_finite_state(optimizer, f"{path}: policy.optimizer.pth")
    counters = _counters(data, path)
    if meta.get("step") != counters["num_timesteps"]:
        raise ValueError(
            f"{path}: its metadata says step {meta.get('step')}, its data {counters['num_timesteps']}"
        )
    return RunCheckpoint(path, meta, policy, optimizer, counters)


def _counters(data: Any, path: Path) -> dict[str, int]:
    """SB3's step counters from the ``data`` member (plain JSON numbers)."""
    if not isinstance(data, dict):
        raise ValueError(f"{path}: its data member is not a JSON object")
    counters = {}
    for key in _COUNTERS:
        value = data.get(key, 0)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"{path}: {key}={value!r} in its data is not a step count")
        counters[key] = value
    if "num_timesteps" not in data:
        raise ValueError(f"{path}: no step count (num_timesteps) in its data")
    return counters


def _tensors(z: zipfile.ZipFile, name: str, path: Path) -> dict[str, Any]:
    """A ``torch.save``d state dict read with ``weights_only=True`` (no pickled code runs)."""
    try:
        state = torch.load(io.BytesIO(read_member(z, name, str(path))), map_location="cpu", weights_only=True)
    except Exception as e:  # a truncated or planted member fails in zipfile, zlib or torch's safe unpickler
        raise ValueError(f"{path}: cannot read {name} safely ({torch_load_message(e)})") from None
    if not isinstance(state, dict):
        raise ValueError(f"{path}: {name} holds a {type(state).__name__}, not a state dict")
    return state


def _mismatch(e: BaseException) -> str:
    """The line of torch's ``load_state_dict`` error that names the first mismatch (its second line)."""
    lines = str(e).strip().splitlines()
    return lines[1].strip() if len(lines) > 1 else lines[0] if lines else type(e).__name__


def restore_checkpoint(model: Any, ckpt: RunCheckpoint) -> None:
    """Load a checkpoint's weights, optimizer state and step counters into ``model``.

    ``model`` is built from the run's config (as a fresh run's is); a network
    of other sizes is a ``ValueError`` naming the file.
    """
    try:
        model.policy.load_state_dict(ckpt.policy)
        model.policy.optimizer.load_state_dict(ckpt.optimizer)
    except (RuntimeError, ValueError, KeyError) as e:
        raise ValueError(
            f"{ckpt.path}: its network does not fit this run's net sizes ({_mismatch(e)}); "
            "resume with the net.pi, net.vf and net.critic the run was trained with"
        ) from None
    for key, value in ckpt.counters.items():
        setattr(model, key, value)


def init_from_checkpoint(model: Any, path: str | Path, rules: TonkRules, num_players: int) -> Path:
    """Copy a checkpoint's policy and value weights into ``model`` (a fresh run's warm start).

    The checkpoint must be for the same rules, player count and observation
    layout, with the same network sizes; otherwise ``ValueError`` names the
    file and the difference. Only weights are read (``weights_only``).
    """
    p, meta, state = load_policy_state(path)
    if meta.get("rules_hash") != rules.hash:
        raise ValueError(f"{p}: trained for rules {meta.get('rules_hash')}, this run uses {rules.hash}")
    if meta.get("num_players") != num_players:
        raise ValueError(f"{p}: trained for {meta.get('num_players')} players, this run has {num_players}")
    try:
        model.policy.load_state_dict(state)
    except RuntimeError as e:
        raise ValueError(
            f"{p}: its network does not fit this run's net sizes ({_mismatch(e)}); set net.pi, net.vf and "
            "net.critic to those it was trained with, or warm-start from its run folder"
        ) from None
    return p


def init_from_network(model: Any, spec: str, rules: TonkRules, num_players: int) -> str:
    """Copy a policy network's layers (``zoo:NAME``, ``npz:FILE``) into ``model``'s policy branch.

    The network must be for this table (rules, players, observation layout) and have the run's
    ``net.pi`` hidden sizes and activation; otherwise ``ValueError`` names ``init_from`` and the
    difference. Only the policy is copied: the value network keeps its fresh initialisation.
    """
    net = policy_network(spec, f"init_from {spec}", seed=0, players=num_players, rules=rules)
    state = model.policy.state_dict()
    names = [
        k[: -len(".weight")]
        for k in state
        if k.startswith("mlp_extractor.policy_net.") and k.endswith(".weight")
    ]
    names.append("action_net")
    hidden = net.sizes[1:-1]
    want = [int(state[f"{n}.weight"].shape[0]) for n in names[:-1]]
    if hidden != want:
        # tonk widen's case: as many layers, each no wider than the run's one width
        widens = len(hidden) == len(want) and len(set(want)) == 1 and max(hidden) <= want[0]
        hint = f", or grow it with tonk widen {spec} --width {want[0]}" if widens else ""
        raise ValueError(
            f"init_from {spec}: its hidden layers are {hidden}; set net.pi to them (the run has {want}){hint}"
        )
    activation = getattr(model.policy, "activation_fn", None)
    if activation is not None and activation.__name__.lower() != net.activation:
        raise ValueError(
            f"init_from {spec}: its activation is {net.activation}; set net.activation to it "
            f"(the run has {activation.__name__.lower()})"
        )
    new = dict(state)
    for name, (w, b) in zip(names, net.layers, strict=True):  # MLPPolicy keeps (in, out); torch (out, in)
        new[f"{name}.weight"] = torch.as_tensor(w.T.copy())
        new[f"{name}.bias"] = torch.as_tensor(b.copy())
    model.policy.load_state_dict(new)
    return spec
