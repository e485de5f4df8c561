"""Sizing an audit: the fewest rounds per world whose test rounds let a perfect
attack refute a claim. Shared by the (epsilon, delta) lines
(:func:`dpaudit.audit.stats.estimators.rounds_needed`) and the claim's profile
(:func:`dpaudit.audit.stats.ceiling.profile_rounds_needed`); and the best probability
of VIOLATION that any threshold of a known mechanism reaches at a given size
(:func:`violation_ceiling`). Pure."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dpaudit.audit.stats.profile import ClaimedProfile

__all__ = ["fewest_rounds", "violation_ceiling"]


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


def violation_ceiling(
    claim: ClaimedProfile,
    fpr: Sequence[float],
    fnr: Sequence[float],
    n0: int,
    n1: int,
    *,
    alpha: float,
) -> float:
    """The largest probability, over thresholds with the given true error rates
    (``fpr[i]``, ``fnr[i]``), that the test deciding the audit (the exact test of
    ``claim``'s region at per-attack level ``alpha`` on ``n0`` + ``n1`` test rounds,
    :func:`~dpaudit.audit.stats.calibrated.deciding_counts`) returns VIOLATION: the
    detection rate of the best attack with its threshold known in advance, exact
    over the two binomial laws of the test errors. Pass the Neyman-Pearson tests of
    the mechanism's own output and this is what no attack on it can exceed at this
    size and level (an audit's attacks also spend rounds choosing a threshold).

    A perfect attack (no error) refutes ``(1, 1e-5)`` on 400 + 400 test rounds; one
    that errs half the time refutes nothing:

    >>> from dpaudit.audit.stats.profile import ClaimedProfile
    >>> claim = ClaimedProfile(epsilon=1.0, delta=1e-5, gdp_mu=0.27)
    >>> violation_ceiling(claim, [0.0, 0.5], [0.0, 0.5], 400, 400, alpha=0.05)
    1.0
    >>> violation_ceiling(claim, [0.5], [0.5], 400, 400, alpha=0.05) < 0.05
    True
    """
    import numpy as np
    from scipy import stats

    from dpaudit.audit.stats.calibrated import deciding_counts

    rejection = deciding_counts(claim, n0, n1, alpha=alpha, delta=claim.delta)
    p0 = np.clip(np.asarray(fpr, dtype=np.float64), 0.0, 1.0)[:, None]
    p1 = np.clip(np.asarray(fnr, dtype=np.float64), 0.0, 1.0)[:, None]
    k0 = np.arange(n0 + 1)[None, :]
    # P(FP = k0) P(FN <= g[k0]); g = -1 (nothing rejected) gives 0.
    inside = stats.binom.pmf(k0, n0, p0) * stats.binom.cdf(rejection[None, :], n1, p1)
    return float(np.max(inside.sum(axis=1), initial=0.0))
