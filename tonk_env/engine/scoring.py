"""Who pays whom when a hand ends (RULES.md §2.4 and §5), in stakes.

Every function returns per-seat payoffs that sum to zero. Worked example of a
caught drop under ``caught_pay="standard"`` (three players): A drops with 6,
B has 4, C has 12. A is caught and pays 2 S to B (4 <= 6). B is the lowest of
the others and also receives 1 S from C, who is neither the dropper nor
lowest. Net: A -2, B +3, C -1.
"""

from __future__ import annotations

from collections.abc import Sequence

from .rules import TonkRules


def win_from_each(n: int, winner: int, pay: float) -> list[float]:
    """``winner`` receives ``pay`` from every other seat."""
    out: list[float] = [-pay] * n
    out[winner] = pay * (n - 1)
    return out


def instant_winners(counts: Sequence[int], rules: TonkRules) -> list[int]:
    """Seats whose dealt count is an instant win (49/50, or low with the option)."""
    low = rules.instant_win_low_max
    return [
        s for s, c in enumerate(counts) if c in rules.instant_win_totals or (low is not None and c <= low)
    ]


def instant_win(counts: Sequence[int], rules: TonkRules) -> tuple[str, list[float], int | None] | None:
    """Score the deal: ``None`` if nobody wins at once, else ``(kind, payoffs, winner)``.

    With ``instant_win_tie="rank"``, a low count beats 50 beats 49, and a lower
    low count beats a higher one; an unbroken tie is void.
    """
    seats = instant_winners(counts, rules)
    n = len(counts)
    if not seats:
        return None
    if len(seats) > 1:
        if rules.instant_win_tie == "void":
            return ("void", [0] * n, None)
        low = rules.instant_win_low_max

        def strength(s: int) -> tuple[int, int]:
            c = counts[s]
            return (1, -c) if low is not None and c <= low else (0, c)

        best = max(strength(s) for s in seats)
        top = [s for s in seats if strength(s) == best]
        if len(top) > 1:
            return ("void", [0] * n, None)
        seats = top
    return ("instant_win", win_from_each(n, seats[0], rules.instant_win_pay), seats[0])


def drop(counts: Sequence[int], dropper: int, rules: TonkRules) -> tuple[str, list[float]]:
    """Score a drop: ``("drop_won", ...)`` or ``("caught", ...)`` under ``caught_pay``."""
    n = len(counts)
    mine = counts[dropper]
    others = [s for s in range(n) if s != dropper]
    if all(mine < counts[s] for s in others):
        return ("drop_won", win_from_each(n, dropper, 1))
    pay: list[float] = [0] * n
    lowest_count = min(counts[s] for s in others)
    lowest = [s for s in others if counts[s] == lowest_count]

    def transfer(src: int, dst: int, amount: float) -> None:
        pay[src] -= amount
        pay[dst] += amount

    if rules.caught_pay == "standard":
        for s in others:
            if counts[s] <= mine:
                transfer(dropper, s, 2)
        for s in others:
            if s not in lowest:
                for w in lowest:
                    transfer(s, w, 1)
    elif rules.caught_pay == "double_to_lowest_only":
        for w in lowest:
            transfer(dropper, w, 2)
    else:  # everyone_double
        for s in others:
            transfer(dropper, s, 2)
    return ("caught", pay)


def stock_out(counts: Sequence[int], rules: TonkRules) -> tuple[str, list[float]]:
    """Score an exhausted stock (or ``max_turns``): the lowest count wins 1 S from each."""
    n = len(counts)
    low = min(counts)
    lowest = [s for s in range(n) if counts[s] == low]
    if len(lowest) == 1:
        return ("stock_out", win_from_each(n, lowest[0], 1))
    if rules.stock_out_tie == "void" or len(lowest) == n:
        return ("void", [0] * n)
    pay: list[float] = [0] * n
    for s in range(n):
        if s not in lowest:
            for w in lowest:
                pay[s] -= 1
                pay[w] += 1
    return ("stock_out", pay)
