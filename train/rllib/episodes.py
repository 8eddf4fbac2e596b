"""Finished numpy episodes for RLlib, built from arrays at a fraction of the constructor's cost.

The batched env runner (:mod:`train.rllib.runner`) cuts its ``(T, num_envs)``
arrays into one :class:`SingleAgentEpisode` per hand. RLlib's constructor
spends most of its time on what such an episode does not need: it wraps each
column in a buffer that walks its (absent) space, then checks the lengths it
was just given. :class:`EpisodeMaker` fills the same slots directly, with the
values the constructor gives them.

It does so only where it can prove the result is the constructor's: when made,
it builds one episode both ways and compares every slot and every buffer's
attributes. Another RLlib version whose episodes hold other fields fails that
comparison, and the maker then calls the constructor for every episode (slower,
never different). ``EpisodeMaker.fast`` says which it does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from ray.rllib.env.single_agent_episode import SingleAgentEpisode
from ray.rllib.env.utils.infinite_lookback_buffer import InfiniteLookbackBuffer

__all__ = ["EpisodeMaker", "same_episode"]

#: The slots the maker sets from its arguments; every other slot keeps the constructor's (immutable) value.
_SET = frozenset(
    {"id_", "observations", "infos", "actions", "rewards", "extra_model_outputs"}
    | {"is_terminated", "t_started", "t"}
)
#: The attributes of a buffer (``InfiniteLookbackBuffer``) that the maker writes.
_BUFFER_KEYS = frozenset({"data", "lookback", "finalized", "_space", "_space_struct"})


def _official(
    id_: str,
    obs: np.ndarray,
    actions: np.ndarray,
    rewards: np.ndarray,
    extra: dict[str, np.ndarray],
    terminated: bool,
    t_started: int,
) -> SingleAgentEpisode:
    """The episode through RLlib's constructor (buffers without lookback or spaces)."""
    return SingleAgentEpisode(
        id_=id_,
        observations=InfiniteLookbackBuffer(data=obs, lookback=0),
        infos=[{} for _ in range(len(obs))],
        actions=InfiniteLookbackBuffer(data=actions, lookback=0),
        rewards=InfiniteLookbackBuffer(data=rewards, lookback=0),
        extra_model_outputs={k: InfiniteLookbackBuffer(data=v, lookback=0) for k, v in extra.items()},
        terminated=terminated,
        t_started=t_started,
        len_lookback_buffer=0,
    )


def _same_value(a: Any, b: Any) -> bool:
    if isinstance(a, InfiniteLookbackBuffer) or isinstance(b, InfiniteLookbackBuffer):
        return (
            type(a) is type(b)
            and set(vars(a)) == set(vars(b))
            and all(_same_value(vars(a)[k], vars(b)[k]) for k in vars(a))
        )
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return type(a) is type(b) and a.dtype == b.dtype and a.shape == b.shape and bool(np.array_equal(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return set(a) == set(b) and all(_same_value(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same_value(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and bool(a == b)


def same_episode(a: SingleAgentEpisode, b: SingleAgentEpisode) -> bool:
    """Whether two episodes hold the same values in every slot (buffers compared attribute by attribute)."""
    slots = SingleAgentEpisode.__slots__
    return all(
        hasattr(a, s) == hasattr(b, s) and (not hasattr(a, s) or _same_value(getattr(a, s), getattr(b, s)))
        for s in slots
    )


class EpisodeMaker:
    """Finished numpy episodes equal to RLlib's constructor's, built directly where proven (the module)."""

    def __init__(self) -> None:
        self._fixed: dict[str, Any] = {}
        self._rewards_space: tuple[Any, Any] = (None, None)
        self.fast = self._probe()
        #: ``make(id_, obs, actions, rewards, extra, terminated, t_started)``: one finished episode,
        #: ``len(obs)`` = ``len(actions)`` + 1 observations, no lookback, no spaces
        self.make: Callable[..., SingleAgentEpisode] = self._direct if self.fast else _official

    def _probe(self) -> bool:
        """Learn the constructor's fixed slot values, then check a direct build against it (both outcomes)."""
        slots = getattr(SingleAgentEpisode, "__slots__", None)
        if not isinstance(slots, tuple) or not _SET <= set(slots):
            return False
        obs = np.arange(12, dtype=np.float32).reshape(3, 4)
        extra = {"logp": np.array([-0.5, -1.5], dtype=np.float32)}
        args = (obs, np.array([1, 2]), np.array([0.0, 1.0], dtype=np.float32), extra)
        proto = _official("probe", *args, terminated=True, t_started=0)
        fixed = {s: getattr(proto, s) for s in slots if s not in _SET and s != "_custom_data"}
        if any(v is not None and not isinstance(v, (bool, int, str)) for v in fixed.values()):
            return False
        rewards = vars(proto.rewards)
        if set(rewards) != _BUFFER_KEYS or set(vars(proto.observations)) != _BUFFER_KEYS:
            return False
        self._fixed = fixed
        self._rewards_space = (rewards["_space"], rewards["_space_struct"])
        for terminated, t0 in ((True, 0), (False, 7)):
            want = _official("probe", *args, terminated=terminated, t_started=t0)
            got = self._direct("probe", *args, terminated=terminated, t_started=t0)
            if not same_episode(want, got):
                return False
        return True

    def _direct(
        self,
        id_: str,
        obs: np.ndarray,
        actions: np.ndarray,
        rewards: np.ndarray,
        extra: dict[str, np.ndarray],
        terminated: bool,
        t_started: int,
    ) -> SingleAgentEpisode:
        ep = SingleAgentEpisode.__new__(SingleAgentEpisode)
        for slot, value in self._fixed.items():
            setattr(ep, slot, value)
        ep.id_ = id_
        ep.observations = _buffer(obs)
        ep.infos = _buffer([{} for _ in range(len(obs))], finalized=False)  # a list, as given
        ep.actions = _buffer(actions)
        ep.rewards = _buffer(rewards, *self._rewards_space)
        ep.extra_model_outputs = {k: _buffer(v) for k, v in extra.items()}
        ep.is_terminated = terminated
        ep.t_started = t_started
        ep.t = len(rewards) + t_started
        ep._custom_data = {}
        return ep


def _buffer(
    data: Any, space: Any = None, struct: Any = None, finalized: bool = True
) -> InfiniteLookbackBuffer:
    """A buffer of ``data`` without lookback, as ``InfiniteLookbackBuffer(data, 0, space)`` holds it.

    ``finalized``: the constructor's flag, True for an array and False for a list.
    """
    b = InfiniteLookbackBuffer.__new__(InfiniteLookbackBuffer)
    b.__dict__ = {
        "data": data,
        "lookback": 0,
        "finalized": finalized,
        "_space": space,
        "_space_struct": struct,
    }
    return b
