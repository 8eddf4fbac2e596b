"""``vec_env: core`` in a worker process: the training envs of ``ppo.overlap``, beside the update.

With ``ppo.overlap`` (:mod:`train.sb3.overlap`) a thread plays the next rollout
while the update runs. Both want Python: the envs' step (the core's glue, the
opponents' batches, the episode bookkeeping) and the update's dispatch of
torch operations. In one process they take turns on one interpreter lock and
each slows the other (docs/RESULTS.md, "Overlapped collection"), so
:class:`CoreVecEnvProcess` keeps the :class:`~train.sb3.core_vec.CoreVecEnv`
of the config in a process of its own and answers the same calls over a pipe:
the rollout thread only runs the network and fills the buffer, and waits for
the envs without holding the lock. A step's arrays (observations, masks,
rewards, dones) pass through shared memory and only its infos through the
pipe; the masks come with every reset and step, so asking for them costs no
second round trip.

The worker is forked where the platform can (``spawn`` elsewhere, which needs
the ``if __name__ == "__main__":`` guard of a script, as any
``multiprocessing`` code does) and builds the envs from the config: the same
envs, pools and seeds as in this process, so the same run. It ignores SIGINT
(the trainer's handler stops the run), its errors come back as the same
exception in the trainer, and one that fails to start or dies is reported in
one line with its exit code; nothing waits on it forever. If the trainer dies,
the worker reads the end of its pipe and exits.
"""

from __future__ import annotations

import multiprocessing as mp
import signal
from collections.abc import Sequence
from typing import Any

import numpy as np
from stable_baselines3.common.vec_env import VecEnv
from threadpoolctl import threadpool_limits

from tonk_env.engine import make_rules
from tonk_env.vector import TonkVectorEnv
from tonk_env.workers import WorkerDiedError, default_method, how_it_died, one_torch_thread, signals_held

from ..config import TrainConfig, config_from_dict
from .core_vec import make_core_vec_env

__all__ = ["CoreVecEnvProcess"]

#: Seconds between checks that the worker is alive while waiting for its answer.
POLL_S = 1.0


class EnvWorkerError(WorkerDiedError):
    """The env worker process exited, or could not start."""


class CoreVecEnvProcess(VecEnv):
    """The ``vec_env: core`` envs of ``cfg``, stepped in a worker process (same calls as ``CoreVecEnv``)."""

    def __init__(self, cfg: TrainConfig) -> None:
        ctx: Any = mp.get_context(default_method())  # fork where there is one: no re-import, a fast start
        self._shared = _SharedStep.allocate(ctx, cfg)
        self._conn, child = ctx.Pipe()
        self._proc = ctx.Process(
            target=_serve, args=(child, cfg.to_dict(), self._shared), name="tonk-core-envs", daemon=True
        )
        with signals_held():  # a SIGTERM while it forks is taken after, not lost (tonk_env.workers)
            self._proc.start()
        child.close()
        self._closed = False
        self._dealt = False  # the shared masks hold the last reset's or step's
        try:
            num_envs, obs_space, action_space = self._answer()
        except BaseException:
            self.close()
            raise
        super().__init__(num_envs, obs_space, action_space)

    # -- the pipe ------------------------------------------------------------------------------

    def _call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        self._send((name, args, kwargs))
        return self._answer()

    def _send(self, message: tuple[str, tuple[Any, ...], dict[str, Any]]) -> None:
        try:
            self._conn.send(message)
        except OSError:  # a broken pipe: the worker is gone
            raise self._gone() from None

    def _answer(self) -> Any:
        while not self._conn.poll(POLL_S):
            if not self._proc.is_alive():
                raise self._gone()
        try:
            ok, value = self._conn.recv()
        except (EOFError, OSError):
            raise self._gone() from None
        if not ok:
            raise value
        return value

    def _gone(self) -> EnvWorkerError:
        self._proc.join(POLL_S)
        return EnvWorkerError(
            f"the training envs' worker process {how_it_died(self._proc.exitcode)} without answering"
        )

    # -- VecEnv API ------------------------------------------------------------------------------

    def seed(self, seed: int | None = None) -> Sequence[int | None]:
        """The seed of the next reset."""
        return self._call("seed", seed)

    def reset(self) -> np.ndarray:
        """Deal every game a hand."""
        self._call("reset")
        self._dealt = True
        return self._shared.obs.copy()

    def step_async(self, actions: np.ndarray) -> None:
        """Send the actions; the worker steps while this process goes on."""
        self._send(("step", (np.asarray(actions),), {}))

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        """The step's observations, rewards, dones and infos."""
        infos = self._answer()
        shared = self._shared
        return shared.obs.copy(), shared.rewards.copy(), shared.dones.copy(), infos

    def close(self) -> None:
        """Stop the worker (and wait for it, a few seconds at most)."""
        if self._closed:
            return
        self._closed = True
        try:
            if self._proc.is_alive():
                self._conn.send(("close", (), {}))
                self._conn.poll(5 * POLL_S) and self._conn.recv()
        except (BrokenPipeError, EOFError, OSError):
            pass
        self._proc.join(5 * POLL_S)
        if self._proc.is_alive():
            self._proc.kill()
            self._proc.join()
        self._conn.close()

    def has_attr(self, attr_name: str) -> bool:
        """Whether the envs answer ``attr_name``."""
        return self._call("has_attr", attr_name)

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        """An attribute of the vector env, once per game of ``indices``."""
        return self._call("get_attr", attr_name, indices)

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        """Refused, as by ``CoreVecEnv``."""
        self._call("set_attr", attr_name, value, indices)

    def env_method(
        self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any
    ) -> list[Any]:
        """``action_masks``, ``update_pool`` or ``pool_counts``, as ``CoreVecEnv`` answers them."""
        if method_name == "action_masks" and not method_args and not method_kwargs:
            masks = self.action_masks()
            return [masks[g] for g in self._get_indices(indices)]
        return self._call("env_method", method_name, *method_args, indices=indices, **method_kwargs)

    def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
        """No game is a wrapped gymnasium env."""
        return [False for _ in self._get_indices(indices)]

    def action_masks(self) -> np.ndarray:
        """Every game's mask, int8 ``(n_envs, A)`` (a copy, as ``CoreVecEnv`` gives it)."""
        return self._shared.masks.copy() if self._dealt else self._call("action_masks")

    def random_state(self) -> dict[str, Any]:
        """The games' and pools' random streams (``CoreVecEnv.random_state``)."""
        return self._call("random_state")

    def set_random_state(self, state: dict[str, Any]) -> None:
        """Restore :meth:`random_state`."""
        self._call("set_random_state", state)


class _SharedStep:
    """A step's arrays in memory shared with the worker: observations, masks, rewards, dones."""

    def __init__(self, raw: Any, n: int, obs_size: int, num_actions: int) -> None:
        self.raw, self.n, self.obs_size, self.num_actions = raw, n, obs_size, num_actions
        buf = np.frombuffer(raw, dtype=np.uint8)
        at = 0

        def take(shape: tuple[int, ...], dtype: Any) -> np.ndarray:
            nonlocal at
            size = int(np.prod(shape)) * np.dtype(dtype).itemsize
            view = buf[at : at + size].view(dtype).reshape(shape)
            at += size
            return view

        self.obs = take((n, obs_size), np.float32)
        self.rewards = take((n,), np.float32)
        self.masks = take((n, num_actions), np.int8)
        self.dones = take((n,), np.bool_)

    @staticmethod
    def nbytes(n: int, obs_size: int, num_actions: int) -> int:
        return n * (obs_size * 4 + 4 + num_actions + 1)

    @classmethod
    def allocate(cls, ctx: Any, cfg: TrainConfig) -> _SharedStep:
        """Shared arrays for the envs of ``cfg`` (sized by a one-game env of its table)."""
        probe = TonkVectorEnv(
            num_envs=1,
            num_players=cfg.players,
            rules=make_rules(cfg.rules, **cfg.rule_options),
            oracle=cfg.net.critic == "oracle",
        )
        shape = probe.single_observation_space.shape
        assert shape is not None  # a Box
        obs_size, num_actions = int(shape[0]), int(probe.num_actions)
        probe.close()
        raw = ctx.RawArray("B", cls.nbytes(cfg.n_envs, obs_size, num_actions))
        return cls(raw, cfg.n_envs, obs_size, num_actions)

    def __reduce__(self) -> Any:  # for a spawned worker: the same shared block
        return (_SharedStep, (self.raw, self.n, self.obs_size, self.num_actions))


def _serve(conn: Any, cfg_dict: dict[str, Any], shared: _SharedStep) -> None:
    """The worker: build the envs, then answer calls until ``close``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the trainer's: it stops the run
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # not the trainer's handler, which a fork copies
    one_torch_thread()  # a forked child has none of torch's threads (tonk_env/workers.py)
    threadpool_limits(limits=1, user_api="blas")  # the opponents' batches: one core, as in the trainer
    try:
        env = make_core_vec_env(config_from_dict(cfg_dict))
    except BaseException as e:
        conn.send((False, e))
        return
    conn.send((True, (env.num_envs, env.observation_space, env.action_space)))
    while True:
        try:
            name, args, kwargs = conn.recv()
        except (EOFError, OSError):  # the trainer is gone
            return
        if name == "close":
            env.close()
            conn.send((True, None))
            return
        try:
            if name == "step":
                env.step_async(*args)
                obs, rewards, dones, result = env.step_wait()
                shared.rewards[:] = rewards
                shared.dones[:] = dones
            elif name == "reset":
                obs, result = env.reset(), None
            else:
                result = getattr(env, name)(*args, **kwargs)
            if name in ("step", "reset"):
                shared.obs[:] = obs
                shared.masks[:] = env.action_masks()
        except BaseException as e:
            conn.send((False, e))
            continue
        conn.send((True, result))
