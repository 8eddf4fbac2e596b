"""The agent contract: what every agent implements and every consumer calls.

It lives in the env layer because the single-agent env seats agents as
opponents; everything above (``agents/``, ``eval/``, ``train/``, the front
ends) uses this one definition. At each decision of seat ``seat``::

    action = agent.act(obs, info)

- ``obs`` is a mapping with ``"observation"`` (the float32 tensor of
  :func:`tonk_env.obs.observation`) and ``"action_mask"`` (the int8 0/1 legal
  mask). The hand loop (:mod:`tonk_env.play`) passes a
  :class:`~tonk_env.obs.LazyObs`, which computes each entry on first access,
  so agents that never read the tensors (heuristics, search) do not pay for
  them.
- ``info`` is the seat's :class:`~tonk_env.engine.SeatInfo`: its hand, the
  public table, pile, history and known cards, as bitmasks; ``info.legal`` is
  the tuple of legal action ids. An agent whose ``reads_info`` attribute is
  false (a network acting on the observation alone) gets ``info=None``, which
  saves building it.

The returned action must be legal; an agent sees nothing else, never the
hidden state. Optional parts, each called only when the agent has it:

=====================================  =========================================================
``reset_hand(seat, num_players, rules)``  at the start of every hand, once per seat the agent plays
``reseed(seed)``                       before a hand, by consumers that fix each hand's randomness
                                       (evaluation, tables, the server)
``act_batch(obs, infos)``              many independent positions at once: ``obs["observation"]``
                                       of shape ``(B, size)``, ``obs["action_mask"]`` ``(B, actions)``,
                                       ``infos`` one ``SeatInfo`` (or None) per row; returns ``B``
                                       legal ids. :func:`act_batch` falls back to ``act`` row by row
``act_arrays(obs, mask, rules, n)``    the choices of ``act`` for ``B`` positions from their tensors
                                       ``(B, size)`` and masks ``(B, actions)`` alone, as an int
                                       array (``heuristic:greedy``): the vector env then plays the
                                       agent without an engine mirror, one call for all agents
                                       of an equal ``arrays_key`` attribute (they choose alike)
``core_policy``                        ``("greedy", drop_at)``: the compiled core plays the agent
                                       itself (``tonk_env.core.greedy``; ``heuristic:greedy``),
                                       so the vector env never calls it; ``check=True``
                                       compares each such move with ``act``
``reads_info``                         False: ``act`` gets ``info=None``
``deadline``                           an attribute the hand loop sets to a ``time.monotonic()``
                                       instant when its consumer bounds a decision's time (the
                                       server); an agent that searches checks it and raises
                                       :class:`DecisionTimeout` once it has passed (None: no limit)
``peeks``                              True: a *peek agent*, a cheat that reads the hidden state.
                                       The hand loop seats it only when its consumer allows
                                       cheats (``allow_peek``; else :class:`PeekNotAllowed`) and
                                       then sets its ``true_state`` to the live game state for
                                       each decision (None after it); the agent must not change it
=====================================  =========================================================

A plain function ``f(obs, info) -> int`` is accepted wherever an agent is
(:func:`as_agent` wraps it), and so is an agent *spec string*
(``"heuristic:greedy"``, ``"zoo:2p"``; see :mod:`agents.registry`).
:class:`RandomPolicy` is the envs' default opponent.

Spec strings and the layers
---------------------------
The specs are parsed by the ``agents`` package, one layer above this one, so
this module never imports it: ``agents.registry`` installs its ``make_agent``
with :func:`register_spec_resolver` when it is imported, and an installed
``tonk-rl`` also names it under the entry-point group :data:`SPEC_ENTRY_POINTS`,
which :func:`agent_from_spec` loads on first use. So
``gymnasium.make("tonk_env/TonkSingle-v0", opponents="heuristic:greedy")``
works without importing ``agents`` first.
"""

from __future__ import annotations

import operator
import time
from collections.abc import Callable, Mapping, Sequence
from importlib import metadata
from typing import Any, Protocol, runtime_checkable

import numpy as np

from .engine import IllegalActionError, SeatInfo
from .obs import OBS_KEYS, LazyObs


@runtime_checkable
class Agent(Protocol):
    """Anything with ``act(obs, info) -> action id`` (see the module docstring for the optional parts)."""

    def act(self, obs: Mapping[str, Any], info: Any) -> int:
        """Return a legal action id for the seat to act (``info``: a ``SeatInfo``, or None, see above)."""
        ...


class DecisionTimeout(Exception):
    """An agent gave up a decision because its ``deadline`` passed (the decision is not made)."""


def check_deadline(deadline: float | None, who: str) -> None:
    """Raise :class:`DecisionTimeout` naming ``who`` once the monotonic instant ``deadline`` has passed."""
    if deadline is not None and time.monotonic() > deadline:
        raise DecisionTimeout(f"{who} ran past its deadline")


class PeekNotAllowed(ValueError):
    """A peek agent (one that reads the hidden state, a cheat) was seated where cheats are not allowed."""


def peek_refusal(who: str, where: str, flag: str | None = None) -> str:
    """The one-line message refusing the peek agent ``who`` in ``where`` (``flag`` allows it, if any)."""
    how = f"; pass {flag} to allow it" if flag else ""
    return f"{who} is a peek agent: it reads the hidden cards (a cheat), so {where} refuses it{how}"


AgentFn = Callable[[Mapping[str, Any], Any], int]
AgentLike = Agent | AgentFn


class FunctionAgent:
    """A plain ``f(obs, info) -> int`` as an agent."""

    def __init__(self, fn: AgentFn) -> None:
        self.fn = fn

    def act(self, obs: Mapping[str, Any], info: SeatInfo | None) -> int:
        """Call the function."""
        return self.fn(obs, info)

    def __repr__(self) -> str:
        return repr(self.fn)


def as_agent(x: AgentLike | str) -> Agent:
    """``x`` itself when it has ``act``, a :class:`FunctionAgent` for a plain callable, the agent
    a spec string names (:func:`agent_from_spec`); else TypeError."""
    if isinstance(x, str):
        return agent_from_spec(x)
    if callable(getattr(x, "act", None)):
        return x  # type: ignore[return-value]  # it has act: the protocol's one required method
    if callable(x):
        return FunctionAgent(x)
    raise TypeError(
        f"an agent (a policy) needs an act(obs, info) method, must be callable or a spec string, got {x!r}"
    )


SPEC_ENTRY_POINTS = "tonk_env.agent_specs"
"""The entry-point group whose ``make_agent(spec, seed=None)`` builds agents from spec strings."""

SpecResolver = Callable[..., Agent]
_spec_resolver: SpecResolver | None = None


def register_spec_resolver(resolver: SpecResolver) -> None:
    """Install ``resolver(spec, seed=None) -> Agent`` as the builder of agents from spec strings."""
    global _spec_resolver
    _spec_resolver = resolver


def agent_from_spec(spec: str, seed: int | None = None) -> Agent:
    """The agent a spec string names (``"heuristic:greedy"``), built by the registered resolver.

    The resolver is the one :func:`register_spec_resolver` installed (importing
    ``agents`` does), else the first of the entry-point group
    :data:`SPEC_ENTRY_POINTS`; without either, a one-line ``ValueError``.
    """
    resolver = _spec_resolver
    if resolver is None:
        for ep in metadata.entry_points(group=SPEC_ENTRY_POINTS):
            resolver = ep.load()
            break
    if resolver is None:
        raise ValueError(
            f"agent spec {spec!r}: no spec resolver is installed (install tonk-rl, whose agents "
            "package resolves specs, or `import agents` first); or pass an agent object"
        )
    return resolver(spec, seed=seed)


def agents_from_specs(policies: Any, count: int) -> Any:
    """``policies`` with spec strings built into agents: a string is ``count`` agents, one per seat.

    A list or tuple has its strings built one each; anything else is returned
    as it is (an agent, a callable, a sampler or None).
    """
    if isinstance(policies, str):
        return [agent_from_spec(policies) for _ in range(count)]
    if isinstance(policies, (list, tuple)) and any(isinstance(p, str) for p in policies):
        return [agent_from_spec(p) if isinstance(p, str) else p for p in policies]
    return policies


def action_id(action: Any) -> int:
    """An action as a Python int (NumPy integers and 0-d arrays accepted); IllegalActionError otherwise."""
    if action.__class__ is int:
        return action
    try:
        return operator.index(action)
    except TypeError:
        raise IllegalActionError(
            f"an action must be an integer id (use action_from_string for text), got {action!r}"
        ) from None


def act_batch(agent: Agent, obs: Mapping[str, np.ndarray], infos: Sequence[SeatInfo | None]) -> list[int]:
    """Decide a batch with ``agent.act_batch`` when it has one, else row by row with ``act``."""
    fn = getattr(agent, "act_batch", None)
    if fn is not None:
        return [int(a) for a in fn(obs, infos)]
    out = []
    for i, info in enumerate(infos):
        row = {k: obs[k][i] for k in OBS_KEYS if k in obs}
        out.append(action_id(agent.act(row, info)))
    return out


class RandomPolicy:
    """Uniform over the legal actions, with its own numpy generator: the envs' default opponent."""

    reads_info = False

    def __init__(self, rng: np.random.Generator | int | None = None) -> None:
        self.rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)

    def act(self, obs: Mapping[str, Any], info: SeatInfo | None = None) -> int:
        """A uniformly random action among those the mask allows."""
        legal = obs.legal() if isinstance(obs, LazyObs) else np.flatnonzero(obs["action_mask"]).tolist()
        return self.choose(legal)

    def choose(self, legal: Sequence[int]) -> int:
        """A uniformly random element of ``legal``."""
        return legal[int(self.rng.random() * len(legal))]

    def __repr__(self) -> str:
        return "RandomPolicy()"


def random_policy(rng: np.random.Generator | int | None = None) -> RandomPolicy:
    """An agent that plays uniformly among the legal actions, drawing from ``rng``."""
    return RandomPolicy(rng)
