"""The one agent interface: :class:`Policy`, used by every consumer.

Evaluation, tournaments, training opponents, the terminal game and the
server all drive agents the same way. At each decision of seat ``seat`` the
consumer calls::

    action = policy.act(obs, info)

- ``obs`` is what the environments give a seat: a mapping with
  ``"observation"`` (the float32 tensor of :func:`tonk_env.engine.observation`)
  and ``"action_mask"`` (the int8 0/1 legal mask). Consumers may pass a
  :class:`LazyObs`, which computes each entry on first access, so agents that
  never look at the tensors (heuristics, search) do not pay for them.
- ``info`` is the seat's :class:`~tonk_env.engine.SeatInfo`: its hand, the
  public table, pile, history and known cards, as bitmasks; ``info.legal``
  is the tuple of legal action ids and ``info.view()`` the JSON view dict.

The returned action must be one of ``info.legal``. An agent sees nothing
else: never the hidden state.

Optional parts of the protocol:

- ``reset_hand(seat, num_players, rules)`` is called at the start of every
  hand. Agents are stateless between hands or reset here.
- ``act_batch(obs, infos)`` decides many independent positions at once
  (``obs["observation"]`` of shape ``(B, size)``, ``obs["action_mask"]`` of
  shape ``(B, actions)``); neural agents implement it, :func:`act_batch`
  falls back to calling ``act`` row by row.
- ``reseed(seed)`` resets the agent's random generator; the evaluation
  harness calls it before every hand so results do not depend on which
  worker played which hands.

:class:`Agent` is a convenient base class with all three.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from tonk_env.engine import SeatInfo
from tonk_env.engine.rules import TonkRules
from tonk_env.engine.view import OBS_KEYS, LazyObs  # noqa: F401 (LazyObs is re-exported)


@runtime_checkable
class Policy(Protocol):
    """Anything with ``act(obs, info) -> action id``."""

    def act(self, obs: Mapping[str, Any], info: SeatInfo) -> int:
        """Return one of ``info.legal``."""
        ...


@runtime_checkable
class BatchPolicy(Policy, Protocol):
    """A policy that can also decide a batch of positions in one call."""

    def act_batch(self, obs: Mapping[str, np.ndarray], infos: Sequence[SeatInfo]) -> list[int]:
        """Return one legal action per row."""
        ...


class Agent:
    """Base class for our agents: a seeded ``random.Random``, no-op reset, row-by-row batches."""

    #: The canonical spec string (set by :func:`agents.registry.make_agent`).
    spec: str = "?"
    #: Whether ``act`` reads ``obs`` (heuristics and search do not).
    needs_obs: bool = False

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def reseed(self, seed: int) -> None:
        """Reset the random generator (the harness does this before every hand)."""
        self.rng.seed(seed)

    def reset_hand(self, seat: int, num_players: int, rules: TonkRules) -> None:
        """Forget everything about the previous hand (nothing to forget by default)."""

    def act(self, obs: Mapping[str, Any], info: SeatInfo) -> int:
        """Return one of ``info.legal``."""
        raise NotImplementedError

    def act_batch(self, obs: Mapping[str, np.ndarray], infos: Sequence[SeatInfo]) -> list[int]:
        """Decide each row with :meth:`act`."""
        return _rows(self, obs, infos)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.spec}>"


def _rows(policy: Policy, obs: Mapping[str, np.ndarray], infos: Sequence[SeatInfo]) -> list[int]:
    out = []
    for i, info in enumerate(infos):
        row = {k: obs[k][i] for k in OBS_KEYS if k in obs}
        out.append(int(policy.act(row, info)))
    return out


def act_batch(policy: Policy, obs: Mapping[str, np.ndarray], infos: Sequence[SeatInfo]) -> list[int]:
    """Decide a batch with ``policy.act_batch`` when it has one, else row by row."""
    fn = getattr(policy, "act_batch", None)
    if fn is not None:
        return [int(a) for a in fn(obs, infos)]
    return _rows(policy, obs, infos)
