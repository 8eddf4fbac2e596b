"""Starting Ray for ``backend: rllib``, importable without Ray: install check, address check, ``ray.init``.

``tonk train`` calls :func:`require_rllib` before it imports anything that
needs RLlib, so a missing install is one line naming the extra to install.
"""

from __future__ import annotations

import socket
from typing import Any

from ..config import TrainConfig

__all__ = ["INSTALL_HINT", "check_address", "init_ray", "require_rllib"]

INSTALL_HINT = "pip install 'tonk-rl[rllib]'"


def require_rllib() -> None:
    """Raise ``ValueError`` with the install command when Ray's RLlib cannot be imported."""
    try:
        import ray.rllib  # noqa: F401
        from ray.rllib.algorithms.ppo import PPOConfig  # noqa: F401
    except ImportError as e:
        raise ValueError(
            f"backend: rllib needs Ray's RLlib, which is not installed ({e}); install it with: {INSTALL_HINT}"
        ) from None


def check_address(address: str, timeout: float = 5.0) -> None:
    """Raise ``ValueError`` unless a Ray head answers at ``HOST:PORT`` (``auto`` is left to Ray)."""
    if not address or address == "auto":
        return
    hostport = address.removeprefix("ray://")
    host, _, port = hostport.rpartition(":")
    host = host.strip("[]")
    try:
        with socket.create_connection((host, int(port)), timeout=timeout):
            pass
    except (OSError, ValueError) as e:
        raise ValueError(
            f"cannot reach a Ray cluster at {address} ({e}); start one with `ray start --head` and give the "
            "address it prints (HOST:6379), or leave rllib.address empty for a local Ray"
        ) from None


def init_ray(cfg: TrainConfig) -> bool:
    """Start a local Ray instance or join ``rllib.address``; True when this call started or joined it."""
    import ray

    address = cfg.rllib.address
    if ray.is_initialized():  # a session of this process (a notebook's, a test's): the run uses it
        if address:
            check_address(address)
            raise ValueError(
                f"rllib.address={address}: Ray is already running in this process; call ray.shutdown() "
                "first, or leave rllib.address empty to train on the running instance"
            )
        return False
    check_address(address)
    kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
    if address:
        kwargs["address"] = address
    else:
        # "local": a new instance; without it ray.init joins a cluster that `ray start` (or a test's
        # ray.cluster_utils.Cluster) runs on this machine, which rllib.address did not ask for
        kwargs["address"] = "local"
        if cfg.rllib.num_cpus:
            kwargs["num_cpus"] = cfg.rllib.num_cpus
    # on a cluster every node needs this package installed: env runners import train.rllib.vector there
    try:
        ray.init(**kwargs)
    except (ConnectionError, RuntimeError, ValueError) as e:
        where = f"the Ray cluster at {address}" if address else "a local Ray instance"
        raise ValueError(f"cannot start or join {where}: {e}") from None
    try:
        check_cpus(cfg, float(ray.cluster_resources().get("CPU", 0)))
    except ValueError:
        ray.shutdown()
        raise
    return True


def check_cpus(cfg: TrainConfig, cpus: float) -> None:
    """Raise ``ValueError`` when the env runners and learners ask Ray for more CPUs than it has.

    Ray would otherwise wait for them forever (a learner actor takes one CPU).
    """
    r = cfg.rllib
    need = r.env_runners * r.cpus_per_runner + r.learners
    where = "cluster" if r.address else "instance"
    if need > cpus + 1e-9:
        raise ValueError(
            f"rllib.env_runners={r.env_runners} x rllib.cpus_per_runner={r.cpus_per_runner:g} "
            f"+ rllib.learners={r.learners} need {need:g} CPUs, the Ray {where} "
            f"has {cpus:g}; lower them (cpus_per_runner=0.5 packs two runners on a core), raise "
            "rllib.num_cpus, or add nodes"
        )
