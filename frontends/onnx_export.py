"""``tonk export --format onnx``: a policy network (``ppo:``/``npz:`` agent) as an ONNX model.

The export writes a folder::

    DIR/model.onnx     the network, masked
    DIR/meta.json      what the network was trained for (see below)

``model.onnx`` (opset 13, built from the numpy weights with the ``onnx``
helper API; no torch involved):

==================  =================  =======================================
name                type, shape        meaning
==================  =================  =======================================
``observation``     float32 [B, obs]   the observation tensor (layout 3)
``action_mask``     int8 [B, actions]  1 where the action is legal
``masked_logits``   float32 [B, act.]  the policy's logits, -1e9 where masked
``action``          int64 [B]          argmax of ``masked_logits``
==================  =================  =======================================

The graph is ``Gemm`` + ``Tanh``/``Relu`` per hidden layer, a last ``Gemm``
for the logits, then ``Where(Cast(mask, bool), logits, -1e9)`` and
``ArgMax`` (ties go to the lowest id, as ``numpy.argmax``).

``meta.json`` holds ``format`` (``tonk-onnx-policy/1``), ``rules`` and
``rules_hash``, ``num_players``, ``obs_version``, ``obs_size``,
``num_actions``, ``activation``, ``source`` (the agent spec exported),
``inputs``/``outputs`` and ``observation_slices`` (``[name, start, size]``).
The observation layout is the engine's ``OBS_VERSION`` (4 in this release),
stored as ``obs_version``. The ``onnx:DIR`` agent (:mod:`agents.onnx_agent`)
reads both files.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from agents.onnx_agent import FORMAT
from agents.registry import make_agent
from tonk_env.obs import OBS_VERSION, obs_layout

OPSET = 13
#: The logit given to illegal actions.
MASKED = -1.0e9


def players_from_obs_size(size: int) -> int | None:
    """The number of players whose observation has ``size`` entries (None if none fits)."""
    for n in range(2, 7):
        if obs_layout(n).size == size:
            return n
    return None


def policy_meta(policy: Any, source: str) -> dict[str, Any]:
    """The ``meta.json`` of an exported :class:`agents.mlp.MLPPolicy`."""
    meta = dict(getattr(policy, "meta", {}) or {})
    n = meta.get("num_players") or players_from_obs_size(policy.obs_size)
    if n is None:
        raise ValueError(f"{source}: observation size {policy.obs_size} fits no table of 2..6 players")
    if obs_layout(n).size != policy.obs_size:
        raise ValueError(f"{source}: observation size {policy.obs_size} does not fit {n} players")
    version = meta.get("obs_version", OBS_VERSION)
    return {
        "format": FORMAT,
        "source": source,
        "rules": meta.get("rules"),
        "rules_hash": meta.get("rules_hash"),
        "num_players": n,
        "obs_version": version,
        "obs_size": policy.obs_size,
        "num_actions": policy.num_actions,
        "activation": policy.activation,
        "inputs": {
            "observation": ["float32", ["batch", policy.obs_size]],
            "action_mask": ["int8", ["batch", policy.num_actions]],
        },
        "outputs": {
            "masked_logits": ["float32", ["batch", policy.num_actions]],
            "action": ["int64", ["batch"]],
        },
        "masked_value": MASKED,
        "observation_slices": [list(x) for x in obs_layout(n).describe()],
    }


def build_model(layers: list[tuple[np.ndarray, np.ndarray]], activation: str) -> Any:
    """The ONNX ``ModelProto`` of an MLP; ``layers`` are ``(W, b)`` with ``W`` of shape (in, out)."""
    from onnx import TensorProto, helper, numpy_helper

    act_op = {"tanh": "Tanh", "relu": "Relu"}.get(activation)
    if act_op is None:
        raise ValueError(f"cannot export activation {activation!r}; known: tanh, relu")
    obs_size = layers[0][0].shape[0]
    num_actions = layers[-1][0].shape[1]
    inits = []
    nodes = []
    x = "observation"
    for i, (w, b) in enumerate(layers):
        inits.append(numpy_helper.from_array(np.asarray(w, np.float32), f"W{i}"))
        inits.append(numpy_helper.from_array(np.asarray(b, np.float32), f"b{i}"))
        last = i == len(layers) - 1
        y = "logits" if last else f"h{i}_pre"
        nodes.append(helper.make_node("Gemm", [x, f"W{i}", f"b{i}"], [y], name=f"dense{i}"))
        if not last:
            nodes.append(helper.make_node(act_op, [y], [f"h{i}"], name=f"act{i}"))
            x = f"h{i}"
    inits.append(numpy_helper.from_array(np.array(MASKED, np.float32), "masked_value"))
    nodes += [
        helper.make_node("Cast", ["action_mask"], ["legal"], to=TensorProto.BOOL, name="legal"),
        helper.make_node("Where", ["legal", "logits", "masked_value"], ["masked_logits"], name="mask"),
        helper.make_node("ArgMax", ["masked_logits"], ["action"], axis=1, keepdims=0, name="argmax"),
    ]
    graph = helper.make_graph(
        nodes,
        "tonk_policy",
        [
            helper.make_tensor_value_info("observation", TensorProto.FLOAT, ["batch", obs_size]),
            helper.make_tensor_value_info("action_mask", TensorProto.INT8, ["batch", num_actions]),
        ],
        [
            helper.make_tensor_value_info("masked_logits", TensorProto.FLOAT, ["batch", num_actions]),
            helper.make_tensor_value_info("action", TensorProto.INT64, ["batch"]),
        ],
        initializer=inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="tonk-rl")
    model.ir_version = 8  # readable by onnxruntime >= 1.14
    return model


def export_onnx(spec: str, out_dir: str | Path) -> Path:
    """Export the policy network of a ``ppo:``/``npz:`` agent spec to ``out_dir``; return the folder."""
    try:
        import onnx
    except ImportError:
        raise ValueError("ONNX export needs the onnx package: pip install onnx") from None
    policy = make_agent(spec)
    if not hasattr(policy, "layers_for_export") or not hasattr(policy, "activation"):
        raise ValueError(
            f"{spec}: only policy networks (ppo:PATH, npz:PATH agents) can be exported to ONNX, "
            f"not a {type(policy).__name__}"
        )
    meta = policy_meta(policy, spec)
    layers = [(w.T, b) for w, b in policy.layers_for_export()]  # (in, out) for Gemm
    model = build_model(layers, policy.activation)
    onnx.checker.check_model(model)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    onnx.save(model, out / "model.onnx")
    (out / "meta.json").write_text(json.dumps(meta, indent=1) + "\n")
    return out


def export_npz(spec: str, out_dir: str | Path) -> Path:
    """Export the policy network of a ``ppo:``/``npz:`` agent as ``DIR/model.npz`` + ``meta.json``."""
    policy = make_agent(spec)
    if not hasattr(policy, "save_npz"):
        raise ValueError(f"{spec}: only policy networks (ppo:PATH, npz:PATH agents) can be exported")
    meta = policy_meta(policy, spec)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    policy.save_npz(out / "model.npz")
    (out / "meta.json").write_text(json.dumps({**meta, "format": "tonk-npz-policy/1"}, indent=1) + "\n")
    return out
