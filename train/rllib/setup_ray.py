"""Starting Ray for ``backend: rllib``, importable without Ray: install check, ``ray.init``, CPU check.

``tonk train`` calls :func:`require_rllib` before it imports anything that
needs RLlib, so a missing install is one line naming the extra to install.
Ray itself starts through :func:`tonk_env.runtime.start_ray`, as the
tournaments' Ray backend does.
"""

from __future__ import annotations

from tonk_env.runtime import check_address, start_ray

from ..config import TrainConfig

__all__ = ["INSTALL_HINT", "init_ray", "require_rllib"]

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


def init_ray(cfg: TrainConfig) -> bool:
    """Start a local Ray instance or join ``rllib.address``; True when this call started or joined it."""
    import ray

    address = cfg.rllib.address
    if ray.is_initialized() and address:  # a session of this process (a notebook's, a test's) is used as is
        check_address(address, "rllib.address")
        raise ValueError(
            f"rllib.address={address}: Ray is already running in this process; call ray.shutdown() "
            "first, or leave rllib.address empty to train on the running instance"
        )
    # on a cluster every node needs this package installed: env runners import train.rllib.vector there
    started = start_ray(
        address,
        cfg.rllib.num_cpus,
        setting="rllib.address",
        install_hint=INSTALL_HINT,
        log_to_driver=False,
    )
    if not started:
        return False
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
