"""The schedule: which tables of entrants a tournament plays, in a fixed order.

- ``round-robin``, 2 players: every pair once.
- ``round-robin``, K = 3..4 players: every K-subset of the entrants (each
  pair then meets equally often); when there are more than ``max_tables``
  subsets, a greedy balanced design: tables are added, keeping the tables
  already scheduled, until every pair has met ``ceil(max_tables * C(K,2) /
  C(N,2))`` times.
- ``gauntlet``: every entrant against the ``fixed`` set: with 2 players one
  match against each fixed agent; with K players every (K-1)-subset of the
  fixed set joins it.

A table is a sorted tuple of distinct specs. Adding an entrant adds only the
tables it sits at; the other tables stay as they were.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

from .config import FORMATS


def schedule(
    entrants: Sequence[str],
    players: int,
    fmt: str = "round-robin",
    fixed: Sequence[str] = (),
    max_tables: int = 1000,
    previous: Sequence[Sequence[str]] = (),
) -> list[tuple[str, ...]]:
    """The tables (sorted spec tuples) of a tournament, in a fixed order."""
    if fmt == "gauntlet":
        fixed = list(dict.fromkeys(fixed))
        challengers = [e for e in entrants if e not in fixed]
        if len(fixed) < players - 1:
            raise ValueError(
                f"a {players}-player gauntlet needs at least {players - 1} fixed agents, got {len(fixed)}"
            )
        if not challengers:
            raise ValueError("the gauntlet has no entrant outside the fixed set")
        tables = [
            tuple(sorted((e, *opp)))
            for e in challengers
            for opp in itertools.combinations(fixed, players - 1)
        ]
        return list(dict.fromkeys(tables))
    if fmt != "round-robin":
        raise ValueError(f"unknown format {fmt!r}; known: {', '.join(FORMATS)}")
    if len(entrants) < players:
        raise ValueError(
            f"a {players}-player round robin needs at least {players} entrants, got {len(entrants)}"
        )
    if math.comb(len(entrants), players) <= max_tables:
        return [tuple(sorted(t)) for t in itertools.combinations(entrants, players)]
    return balanced_tables(entrants, players, max_tables, previous)


def balanced_tables(
    entrants: Sequence[str], players: int, max_tables: int, previous: Sequence[Sequence[str]] = ()
) -> list[tuple[str, ...]]:
    """A greedy design of tables of ``players`` where every pair meets about equally often.

    Starts from the ``previous`` tables whose agents are all entrants (so a
    resumed or extended tournament keeps its tables), then adds tables around
    the pair that met least until every pair met ``lambda`` times.
    """
    n = len(entrants)
    pos = {e: i for i, e in enumerate(entrants)}
    lam = max(1, math.ceil(max_tables * math.comb(players, 2) / math.comb(n, 2)))
    count = [[0] * n for _ in range(n)]
    seats = [0] * n
    tables: list[tuple[str, ...]] = []
    seen: set[tuple[str, ...]] = set()

    def add(t: tuple[str, ...]) -> None:
        tables.append(t)
        seen.add(t)
        for a, b in itertools.combinations([pos[x] for x in t], 2):
            count[a][b] += 1
            count[b][a] += 1
        for x in t:
            seats[pos[x]] += 1

    for t in previous:
        tt = tuple(sorted(t))
        if len(tt) == players and all(x in pos for x in tt) and tt not in seen:
            add(tt)
    while True:
        a, b = min(itertools.combinations(range(n), 2), key=lambda p: (count[p[0]][p[1]], p))
        if count[a][b] >= lam:
            break
        # complete the table around (a, b) with the agents that met its members least
        best: tuple[str, ...] | None = None
        members = [a, b]
        while len(members) < players:
            cands = sorted(
                (x for x in range(n) if x not in members),
                key=lambda x: (sum(count[x][y] for y in members), seats[x], x),
            )
            for x in cands:
                trial = tuple(sorted(entrants[i] for i in (*members, x)))
                if len(members) + 1 < players or trial not in seen:
                    members.append(x)
                    break
            else:
                break
        if len(members) == players:
            best = tuple(sorted(entrants[i] for i in members))
        if best is None or best in seen:
            # every completion of this pair is already a table: fall back to any unused table with the pair
            rest = [x for x in range(n) if x not in (a, b)]
            for extra in itertools.combinations(rest, players - 2):
                t = tuple(sorted(entrants[i] for i in (a, b, *extra)))
                if t not in seen:
                    best = t
                    break
            else:
                count[a][b] = count[b][a] = lam  # the pair cannot meet more often: give up on it
                continue
        add(best)
    return tables
