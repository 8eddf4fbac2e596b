"""Agents by name: spec strings, typed parameters, and a registry others can extend.

A spec string names an agent and its parameters::

    KIND[:NAME][?PARAM=VALUE&PARAM=VALUE...]

    random
    heuristic:greedy?drop_at=10
    heuristic:expert
    search:ismcts?budget=200&candidates=2
    ppo:runs/quick__0__20250101-120000/best.zip?deterministic=false
    rllib:runs/rllib_2p__1__20250101-120000
    npz:model.npz
    onnx:exported/
    zoo:2p
    search:ismcts?budget=100&rollout=zoo:2p

Built-in agents declare typed parameters (:class:`Param`): values are
parsed and range-checked, and an unknown kind, name or parameter is a
``ValueError`` that lists what is known. :func:`make_agent` builds an agent
from a spec; :func:`list_agents` lists the registered agents, one line each
(``tonk agents``).

This module registers every built-in agent when it is imported: ``random``,
``heuristic:*``, ``search:*`` and the path kinds ``ppo:PATH``
(:mod:`agents.ppo`), ``rllib:PATH`` (:mod:`agents.rllib_agent`), ``npz:PATH`` (:mod:`agents.mlp`) and
``onnx:DIR`` (:mod:`agents.onnx_agent`), and the *family* ``zoo:NAME``
(:mod:`agents.zoo`: the shipped agents, one per card in the zoo folder,
found when a spec is looked up). Each factory is named by an import
path into ``agents``, so the heavy modules (torch for ``ppo:``, onnxruntime
for ``onnx:``) are imported only when such an agent is built.

Two ways to extend the registry:

- :func:`register_agent` adds a named agent with declared parameters; its
  factory is a callable or an import path ``"module:function"``, imported
  only when the agent is built.
- :func:`register_kind` adds a *path kind* ``KIND:PATH`` whose loader is a
  callable or an import path (as ``"agents.ppo:load_ppo_agent"`` for
  ``ppo:PATH``). The loader is called as ``loader(path, seed=seed, **params)``
  with the parameters as strings and validates them itself (raising
  ``ValueError``).
- :func:`register_family` adds a kind whose named agents are listed when a
  spec is looked up (``zoo:NAME``): ``lister()`` gives ``(name, doc)`` pairs,
  ``loader(name, seed=seed, **params)`` builds one. Its members are ordinary
  named agents (:class:`AgentEntry`) with declared parameters, so an unknown
  name is a ``ValueError`` listing the available ones.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from tonk_env.agent import Agent, register_spec_resolver
from tonk_env.engine.numbers import parse_float, parse_int

__all__ = [
    "AgentEntry", "FamilyEntry", "KindEntry", "Param", "Spec", "canonical_spec", "list_agents", "make_agent",
    "parse_spec", "register_agent", "register_family", "register_kind",
]  # fmt: skip

_TRUE = ("1", "true", "on", "yes")
_FALSE = ("0", "false", "off", "no")


@dataclass(frozen=True)
class Param:
    """One typed, documented agent parameter."""

    name: str
    type: type
    default: Any
    doc: str
    min: float | None = None
    max: float | None = None
    choices: tuple[str, ...] | None = None
    #: The value is itself an agent spec (consumers that restrict specs check it too, e.g. the server).
    agent_spec: bool = False
    #: The value may be a path to a file (``belief=``): a server accepts only plain names for it.
    file_ref: bool = False

    def parse(self, text: str, where: str) -> Any:
        """Convert and check a spec value; ``ValueError`` names the parameter and what is allowed."""
        t = text.strip()
        try:
            if self.type is bool:
                if t.lower() in _TRUE:
                    v: Any = True
                elif t.lower() in _FALSE:
                    v = False
                else:
                    raise ValueError
            elif self.type is int:
                v = parse_int(t)  # ASCII digits only: int("١٠٠") would be 100
            elif self.type is float:
                v = parse_float(t)
            else:
                v = t
        except ValueError:
            raise ValueError(
                f"{where}: parameter {self.name}={text!r} is not {self.describe_type()}"
            ) from None
        if self.choices is not None and v not in self.choices:
            raise ValueError(f"{where}: parameter {self.name}={text!r}; allowed: {', '.join(self.choices)}")
        if self.min is not None and v < self.min:
            raise ValueError(f"{where}: parameter {self.name}={text!r} is below its minimum {self.min:g}")
        if self.max is not None and v > self.max:
            raise ValueError(f"{where}: parameter {self.name}={text!r} is above its maximum {self.max:g}")
        return v

    def describe_type(self) -> str:
        """``an int``, ``a number``, ``on/off`` or the choices."""
        if self.choices:
            return "one of " + ", ".join(self.choices)
        return {bool: "on/off", int: "an int", float: "a number"}.get(self.type, "a string")

    def describe(self) -> str:
        """``name=default (type[, range]): doc``."""
        rng = ""
        if self.min is not None or self.max is not None:
            lo = "" if self.min is None else f"{self.min:g}"
            hi = "" if self.max is None else f"{self.max:g}"
            rng = f" {lo}..{hi}"
        default = str(self.default).lower() if isinstance(self.default, bool) else self.default
        return f"{self.name}={default} ({self.describe_type()}{rng}): {self.doc}"


@dataclass(frozen=True)
class AgentEntry:
    """A named agent: ``kind[:name]`` with its parameters and a factory."""

    kind: str
    name: str | None
    factory: Callable[..., Agent] | str
    doc: str
    params: tuple[Param, ...] = ()

    @property
    def key(self) -> str:
        """``kind`` or ``kind:name``."""
        return self.kind if self.name is None else f"{self.kind}:{self.name}"

    def param(self, name: str) -> Param | None:
        """The parameter called ``name``, or None."""
        for p in self.params:
            if p.name == name:
                return p
        return None


@dataclass(frozen=True)
class KindEntry:
    """A path kind (``ppo:PATH``): the name is a path handed to a lazily imported loader."""

    kind: str
    loader: Callable[..., Agent] | str
    doc: str

    @property
    def key(self) -> str:
        """``kind:PATH``."""
        return f"{self.kind}:PATH"


@dataclass(frozen=True)
class FamilyEntry:
    """A kind whose named agents are found at lookup time (``zoo:NAME``: one per card in the zoo)."""

    kind: str
    lister: Callable[[], list[tuple[str, str]]] | str
    loader: Callable[..., Agent] | str
    doc: str
    params: tuple[Param, ...] = ()
    empty: str = "none registered"
    """Why there may be no member (said in the error of an unknown name)."""

    @property
    def key(self) -> str:
        """``kind:NAME``."""
        return f"{self.kind}:NAME"

    def members(self) -> list[AgentEntry]:
        """The family's agents now, each an :class:`AgentEntry` whose factory calls the loader."""
        return [
            AgentEntry(self.kind, name, functools.partial(_load_member, self.loader, name), doc, self.params)
            for name, doc in _resolve(self.lister)()
        ]


def _load_member(loader: Callable[..., Agent] | str, name: str, **kwargs: Any) -> Agent:
    """Build the family member ``name`` with the family's loader."""
    return _resolve(loader)(name, **kwargs)


@dataclass(frozen=True)
class Spec:
    """A parsed spec string."""

    kind: str
    name: str | None
    params: dict[str, str] = field(default_factory=dict)

    def __str__(self) -> str:
        return canonical_spec(self.kind, self.name, self.params)


_AGENTS: dict[str, AgentEntry] = {}
_KINDS: dict[str, KindEntry] = {}
_FAMILIES: dict[str, FamilyEntry] = {}


def canonical_spec(kind: str, name: str | None, params: Mapping[str, Any]) -> str:
    """The spec string of a kind, name and parameters (in the order given)."""
    s = kind if name is None else f"{kind}:{name}"
    if params:
        s += "?" + "&".join(f"{k}={_fmt(v)}" for k, v in params.items())
    return s


def _fmt(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and v.is_integer():
        return str(int(v)) if abs(v) < 1e15 else repr(v)
    return str(v)


def parse_spec(spec: str) -> Spec:
    """Split ``KIND[:NAME][?k=v&...]``; only the syntax is checked here."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"agent spec must be a non-empty string, got {spec!r}")
    text = spec.strip()
    head, sep, query = text.partition("?")
    kind, colon, name = head.partition(":")
    kind = kind.strip()
    if not kind:
        raise ValueError(f"agent spec {spec!r}: missing the kind before ':'")
    params: dict[str, str] = {}
    if sep:
        for item in query.split("&"):
            if not item:
                continue
            k, eq, v = item.partition("=")
            if not eq or not k.strip():
                raise ValueError(f"agent spec {spec!r}: expected PARAM=VALUE, got {item!r}")
            if k.strip() in params:
                raise ValueError(f"agent spec {spec!r}: parameter {k.strip()!r} given twice")
            params[k.strip()] = v.strip()
    if colon and not name.strip():
        raise ValueError(f"agent spec {spec!r}: missing the name after ':'")
    return Spec(kind, name.strip() if colon else None, params)


def register_agent(
    kind: str,
    name: str | None,
    factory: Callable[..., Agent] | str,
    doc: str,
    params: tuple[Param, ...] = (),
    replace: bool = False,
) -> AgentEntry:
    """Register ``kind[:name]``; the factory is called as ``factory(seed=seed, **params)``."""
    entry = AgentEntry(kind, name, factory, doc, tuple(params))
    if kind in _FAMILIES:
        raise ValueError(f"agent kind {kind!r} is already registered as a family")
    if kind in _KINDS:
        raise ValueError(f"agent kind {kind!r} is already registered as a path kind")
    if entry.key in _AGENTS and not replace:
        raise ValueError(f"agent {entry.key!r} is already registered")
    _AGENTS[entry.key] = entry
    return entry


def register_kind(
    kind: str, loader: Callable[..., Agent] | str, doc: str, replace: bool = False
) -> KindEntry:
    """Register a path kind ``kind:PATH``, loaded by ``loader(path, seed=seed, **params)``."""
    if any(e.kind == kind for e in _AGENTS.values()) or kind in _FAMILIES:
        raise ValueError(f"agent kind {kind!r} is already registered with named agents")
    if kind in _KINDS and not replace:
        raise ValueError(f"agent kind {kind!r} is already registered")
    entry = KindEntry(kind, loader, doc)
    _KINDS[kind] = entry
    return entry


def register_family(
    kind: str,
    lister: Callable[[], list[tuple[str, str]]] | str,
    loader: Callable[..., Agent] | str,
    doc: str,
    params: tuple[Param, ...] = (),
    empty: str = "none registered",
    replace: bool = False,
) -> FamilyEntry:
    """Register a family ``kind:NAME``: ``lister()`` names its agents, ``loader(name, ...)`` builds one."""
    if any(e.kind == kind for e in _AGENTS.values()) or kind in _KINDS:
        raise ValueError(f"agent kind {kind!r} is already registered")
    if kind in _FAMILIES and not replace:
        raise ValueError(f"agent family {kind!r} is already registered")
    entry = FamilyEntry(kind, lister, loader, doc, tuple(params), empty)
    _FAMILIES[kind] = entry
    return entry


def _resolve(target: Callable[..., Any] | str) -> Callable[..., Any]:
    if callable(target):
        return target
    module, _, attr = target.partition(":")
    try:
        obj = getattr(importlib.import_module(module), attr)
    except ModuleNotFoundError as e:
        raise ValueError(f"cannot load {target!r}: {e}") from None
    except AttributeError:
        raise ValueError(f"cannot load {target!r}: module {module!r} has no {attr!r}") from None
    return obj


def _known() -> str:
    keys = [e.key for e in _AGENTS.values()] + [e.key for e in _KINDS.values()]
    return ", ".join(keys + [e.key for e in _FAMILIES.values()])


def _family_member(sp: Spec, family: FamilyEntry) -> AgentEntry:
    """The member ``sp.name`` of a family, or ``ValueError`` listing the available members."""
    members = family.members()
    if members:
        available = f"available {sp.kind} agents: " + ", ".join(m.key for m in members)
    else:
        available = f"no {sp.kind} agents are installed ({family.empty})"
    if sp.name is None:
        raise ValueError(f"agent spec {str(sp)!r}: {sp.kind} needs a name, as in {sp.kind}:NAME; {available}")
    for m in members:
        if m.name == sp.name:
            return m
    raise ValueError(f"unknown agent '{sp.kind}:{sp.name}'; {available}")


def lookup(spec: str | Spec) -> tuple[Spec, AgentEntry | KindEntry]:
    """Parse a spec and find its registry entry, or raise ``ValueError`` listing the known agents."""
    sp = parse_spec(spec) if isinstance(spec, str) else spec
    if sp.kind in _KINDS:
        if sp.name is None:
            raise ValueError(f"agent spec {str(sp)!r}: {sp.kind} needs a path, as in {sp.kind}:PATH")
        return sp, _KINDS[sp.kind]
    if sp.kind in _FAMILIES:
        return sp, _family_member(sp, _FAMILIES[sp.kind])
    kinds = {e.kind for e in _AGENTS.values()}
    if sp.kind not in kinds:
        raise ValueError(f"unknown agent kind {sp.kind!r} in {str(sp)!r}; known agents: {_known()}")
    key = sp.kind if sp.name is None else f"{sp.kind}:{sp.name}"
    if key not in _AGENTS:
        names = [e.key for e in _AGENTS.values() if e.kind == sp.kind]
        raise ValueError(f"unknown agent {key!r}; known {sp.kind} agents: {', '.join(names)}")
    return sp, _AGENTS[key]


def resolve_params(spec: str | Spec) -> tuple[Spec, AgentEntry | KindEntry, dict[str, Any]]:
    """Parse and type-check a spec's parameters (path kinds keep them as strings)."""
    sp, entry = lookup(spec)
    if isinstance(entry, KindEntry):
        return sp, entry, dict(sp.params)
    values: dict[str, Any] = {}
    for k, v in sp.params.items():
        p = entry.param(k)
        if p is None:
            known = ", ".join(p.name for p in entry.params) or "none"
            raise ValueError(f"agent {entry.key!r} has no parameter {k!r}; known parameters: {known}")
        values[k] = p.parse(v, f"agent {entry.key!r}")
    return sp, entry, values


def canonical(spec: str) -> str:
    """The canonical form of a spec (checked, parameters normalised)."""
    sp, entry, values = resolve_params(spec)
    return canonical_spec(sp.kind, sp.name, values)


def make_agent(spec: str, seed: int | None = None) -> Agent:
    """Build the agent a spec names, with its own random generator seeded from ``seed``."""
    sp, entry, values = resolve_params(spec)
    if isinstance(entry, KindEntry):
        agent = _resolve(entry.loader)(sp.name, seed=seed, **values)
    else:
        agent = _resolve(entry.factory)(seed=seed, **values)
    try:
        agent.spec = canonical_spec(sp.kind, sp.name, values)  # type: ignore[attr-defined]  # the contract has no spec; we label the built agent
    except AttributeError:
        pass
    return agent


def check_spec(spec: str) -> str:
    """Validate a spec without building the agent (path kinds: only the syntax); return it canonical."""
    return canonical(spec)


def list_agents() -> list[AgentEntry | KindEntry | FamilyEntry]:
    """Every registered agent and path kind, in registration order, then each family and its members now."""
    out: list[AgentEntry | KindEntry | FamilyEntry] = [*_AGENTS.values(), *_KINDS.values()]
    for family in _FAMILIES.values():
        out += [family, *family.members()]
    return out


def describe_agents(verbose: bool = False) -> list[str]:
    """One line per agent (``tonk agents``), a family's members under it; ``verbose`` adds the parameters."""
    entries = list_agents()
    width = max(len(e.key) for e in entries) if entries else 0
    lines = []
    for e in entries:
        doc = e.doc
        if isinstance(e, FamilyEntry) and not any(
            m.kind == e.kind for m in entries if isinstance(m, AgentEntry)
        ):
            doc += " (none installed)"
        lines.append(f"{e.key:{width}s}  {doc}")
        if (
            verbose
            and not isinstance(e, KindEntry)
            and not (isinstance(e, AgentEntry) and e.kind in _FAMILIES)
        ):
            lines += [f"{'':{width}s}    {p.describe()}" for p in e.params]
    return lines


# --- the built-in agents -------------------------------------------------------------------------

#: The ``belief=`` parameter of the agents that read the hidden cards (:mod:`agents.beliefs`).
_BELIEF_DOC = (
    "a learned opponent model (a name in agents/beliefs/, e.g. 2p, or a path to its .npz) that draws the "
    "opponents' hands (default: the hand-written selection model)"
)

register_agent("random", None, "agents.random_agent:RandomAgent", "uniform over the legal actions")

register_agent(
    "heuristic",
    "greedy",
    "agents.heuristic:GreedyAgent",
    "spreads and hits whenever it can, discards its highest loose card, takes the discard only "
    "to complete a spread, drops at a fixed count",
    (Param("drop_at", int, 10, "drop when the count is at or below this", 0, 50),),
)

register_agent(
    "heuristic",
    "expert",
    "agents.heuristic:ExpertAgent",
    "estimates the opponents' counts from what it has seen and drops on the estimated risk of being "
    "caught; keeps partial spreads, sheds by hitting, avoids feeding, adapts to rules and players",
    (
        Param("drop_margin", float, 0.1, "drop when the estimated mean payoff of dropping beats this", -2, 4),
        Param("samples", int, 96, "opponent hands sampled to estimate the drop", 8, 10000),
        Param("selection", float, 0.6, "opponent model: how strongly players keep their lowest cards", 0, 3),
        Param("horizon", float, 4.0, "draws expected before the hand ends (values partial spreads)", 0, 50),
        Param("feed", float, 1.0, "weight of the penalty for discards the next player can use", 0, 10),
        Param("belief", str, "", _BELIEF_DOC, file_ref=True),
    ),
)

register_agent(
    "heuristic",
    "fast",
    "agents.fast:FastAgent",
    "the search's rollout policy: table-estimated drop, takes to spread or hit, discards by count and "
    "partial spreads",
    (
        Param("drop_margin", float, 0.1, "drop when the estimated mean payoff of dropping beats this", -2, 4),
        Param("selection", float, 0.6, "opponent model: how strongly players keep their lowest cards", 0, 3),
    ),
)

register_agent(
    "search",
    "ismcts",
    "agents.search:SearchAgent",
    "determinized Monte Carlo: samples worlds consistent with its view and what the opponents did, "
    "plays each candidate out on the engine; the strongest non-learned agent",
    (
        Param(
            "budget",
            int,
            300,
            "sampled worlds per searched decision (each candidate played in each)",
            0,
            100000,
        ),
        Param("drop_samples", int, 400, "sampled worlds to value a drop (no rollout needed)", 8, 100000),
        Param("candidates", int, 1, "discards searched in the play phase (the expert's best k)", 1, 10),
        Param(
            "takes",
            str,
            "some",
            "start-of-turn takes searched: all, or promising ones",
            choices=("all", "some"),
        ),
        Param("selection", float, 0.5, "opponent model: how strongly players keep their lowest cards", 0, 3),
        Param("doubt", float, 0.1, "weight of a world where an opponent would have dropped last turn", 0, 1),
        Param(
            "caution",
            float,
            0.3,
            "weight of a world where an opponent keeps a loose card above its last discard",
            0,
            1,
        ),
        Param(
            "opp_margin", float, 0.1, "drop margin assumed for opponents when reading their last turn", -2, 4
        ),
        Param("drop_margin", float, 0.1, "the rollout policy's drop margin", -2, 4),
        Param(
            "self_margin",
            float,
            None,
            "the rollout policy's drop margin for the searcher's own seat (default: drop_margin)",
            -2,
            4,
        ),
        Param("bias", float, 0.0, "added to the searched value of dropping", -2, 2),
        Param("hopeless", float, -0.5, "drops valued at or below this are not searched", -3, 3),
        Param("sure", float, 0.95, "drops valued at or above this are played without search", -3, 3),
        Param(
            "discard",
            str,
            "expert",
            "discard rule when discards are not searched",
            choices=("expert", "fast"),
        ),
        Param(
            "rollout",
            str,
            "",
            "a network agent's spec (zoo:NAME, npz:FILE, ppo:RUN) that plays the playouts for every "
            "seat, batched (default: the fast policy)",
            agent_spec=True,
        ),
        Param(
            "prior",
            str,
            "",
            "a network agent's spec whose choice is searched as one more candidate (default: none)",
            agent_spec=True,
        ),
        Param("belief", str, "", _BELIEF_DOC, file_ref=True),
    ),
)

register_agent(
    "search",
    "playouts",
    "agents.playout_search:PlayoutSearchAgent",
    "a policy network improved at play time: its top candidates played out by the network itself in "
    "worlds dealt by the learned opponent model, the best by value (hundreds of playouts a decision)",
    (
        Param(
            "net",
            str,
            "zoo:2p",
            "the policy network that proposes the candidates and plays the playouts (zoo:NAME, "
            "npz:FILE, ppo:RUN)",
            agent_spec=True,
        ),
        Param("worlds", int, 256, "sampled deals of the hidden cards per decision", 1, 4096),
        Param("candidates", int, 3, "actions valued: the network's choice and Gumbel top-k others", 2, 16),
        Param("tau", float, 0.015, "weight of the network's log-probability added to a value", 0, 10),
        Param(
            "belief",
            str,
            "2p",
            "the learned opponent model that deals the worlds (a name in agents/beliefs/ or a path to "
            "its .npz; empty: the search's hand-written selection model)",
            file_ref=True,
        ),
        Param(
            "opponent",
            str,
            "",
            "a policy network that plays the other seats of the playouts (zoo:NAME, npz:FILE, "
            "ppo:RUN); empty: the network itself",
            agent_spec=True,
        ),
    ),
)

register_agent(
    "peek",
    "ismcts",
    "agents.peek:PeekSearchAgent",
    "A CHEAT, a diagnostic of headroom: search:ismcts whose worlds hold the opponents' true hands "
    "(stock=true: the true stock order too); only tonk eval --allow-peek and tournaments with "
    "allow_peek seat it",
    (
        *_AGENTS["search:ismcts"].params,
        Param("stock", bool, False, "read the true stock order too (every world is the true state)"),
    ),
)

register_kind(
    "ppo",
    "agents.ppo:load_ppo_agent",
    "a MaskablePPO checkpoint (.zip) or run folder (its best.zip); ?deterministic=false samples",
)

register_kind(
    "npz",
    "agents.mlp:load_npz_agent",
    "a policy network saved as .npz (safe: runs no pickled code); ?deterministic=false samples",
)

register_kind(
    "rllib",
    "agents.rllib_agent:load_rllib_agent",
    "a checkpoint of tonk train's RLlib backend: a run folder (its best/) or checkpoints/step_N "
    "(reads its policy.npz; safe); ?deterministic=false samples",
)

register_kind(
    "onnx",
    "agents.onnx_agent:load_onnx_agent",
    "a policy network exported to ONNX (tonk export --format onnx), run with onnxruntime; "
    "?deterministic=false samples",
)

register_family(
    "zoo",
    "agents.zoo:zoo_listing",
    "agents.zoo:load_zoo_agent",
    "a trained agent shipped with a model card in agents/zoo/ (or $TONK_ZOO_DIR); tonk zoo list",
    (Param("deterministic", bool, True, "play the argmax (false: sample from the policy)"),),
    empty="the zoo folder, agents/zoo/ or $TONK_ZOO_DIR, holds no cards",
)

# spec strings wherever the env layer takes an agent (tonk_env.agent.agent_from_spec)
register_spec_resolver(make_agent)
