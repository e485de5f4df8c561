"""Sizing an audit: the fewest rounds per world whose test rounds let a perfect
attack refute a claim. Shared by the (epsilon, delta) lines
(:func:`dpaudit.audit.stats.estimators.rounds_needed`) and the claim's profile
(:func:`dpaudit.audit.stats.ceiling.profile_rounds_needed`). Pure; no imports of its own
beyond the standard library."""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["fewest_rounds"]


def fewest_rounds(
    refutes: Callable[[int], bool],
    *,
    split: tuple[float, float, float] = (0.4, 0.2, 0.4),
    max_rounds: int = 10_000_000,
    start: int = 1,
) -> int | None:
    """The fewest rounds per world whose test rounds (``n`` per world, as
    :class:`~dpaudit.audit.games.plan.GamePlan` splits them) make ``refutes(n)`` true, for
    a ``refutes`` monotone in ``n`` (a perfect attack shows more on more rounds);
    ``None`` when no ``R <= max_rounds`` suffices. ``start``: a guess of the test
    rounds per world (the search halves or doubles from it: fewer calls of
    ``refutes`` near a good guess, the same answer).

    >>> fewest_rounds(lambda n: n >= 12)
    30
    >>> fewest_rounds(lambda n: n >= 12, start=100)
    30
    """

    def test_rounds(rounds: int) -> int:
        return rounds - round(split[0] * rounds) - round(split[1] * rounds)

    # The fewest test rounds per world first (doubling, then bisection), then the
    # fewest rounds giving them.
    hi = max(int(start), 1)
    if refutes(hi):
        lo = hi // 2
        while lo >= 1 and refutes(lo):
            hi, lo = lo, lo // 2
    else:
        while not refutes(hi):
            if hi >= max_rounds:
                return None
            hi = min(2 * hi, max_rounds)
        lo = hi // 2  # refutes(lo) is False (0 test rounds show nothing)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if refutes(mid):
            hi = mid
        else:
            lo = mid
    rounds = max(5, int(hi / max(split[2], 1e-12)) - 10)
    while test_rounds(rounds) < hi:
        rounds += 1
    return rounds if rounds <= max_rounds else None
