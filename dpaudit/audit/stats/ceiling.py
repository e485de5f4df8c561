"""The power of the profile test: what a test of a given size can show, and what
the best possible test is expected to show (the ceiling).

Pure functions: no I/O, no random numbers, no global state; float64 throughout.
:func:`mu_max_attainable` and :func:`profile_rounds_needed` are the profile test's
attainable maximum and rounds needed (a perfect attack); :func:`mu_ceiling` and
:func:`eps_ceiling` the expected mu_emp and eps_emp of the Neyman-Pearson oracle on
an exactly mu-GDP mechanism, computed exactly over the binomial laws of the errors.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from dpaudit.audit.stats import calibrated, families
from dpaudit.audit.stats.estimators import (
    EstimatorMethod,
    _check_alpha,
    _check_count,
    _check_delta,
    _check_method,
    _eps_from_rates,
    rate_upper_bounds,
)
from dpaudit.audit.stats.profile import ClaimedProfile, refutation_ratios
from dpaudit.audit.stats.sizing import fewest_rounds
from dpaudit.audit.stats.tradeoff import _finite_nonneg, _ndtr, mu_lower_bound

__all__ = [
    "eps_ceiling",
    "mu_ceiling",
    "mu_max_attainable",
    "profile_rounds_needed",
]


def _upper(errors: int, n: int, alpha: float, method: str) -> float:
    return float(rate_upper_bounds(np.array(errors), np.array(n), alpha, method))


def mu_max_attainable(
    n_non_members: int,
    n_members: int,
    *,
    alpha: float = 0.05,
    method: EstimatorMethod = "clopper_pearson",
) -> float:
    """The largest mu_emp a test of this size can show (zero errors): no mu-GDP
    claim at or above it can be refuted with these test rounds.

    >>> round(mu_max_attainable(400, 400, alpha=0.05 / 3), 3)
    4.849
    >>> round(mu_max_attainable(400, 400, alpha=0.05 / 3, method="jeffreys"), 3)
    4.76
    """
    n0 = _check_count("n_non_members", n_non_members)
    n1 = _check_count("n_members", n_members)
    level = _check_alpha(alpha)
    name = _check_method(method)
    if name == "clopper_pearson" and calibrated.applies(n0, n1):
        return calibrated.mu_max_attainable(n0, n1, alpha=level)
    half = level / 2.0
    return float(mu_lower_bound(_upper(0, n0, half, name), _upper(0, n1, half, name)))


def profile_rounds_needed(
    claim: ClaimedProfile,
    *,
    alpha: float = 0.05,
    split: tuple[float, float, float] = (0.4, 0.2, 0.4),
    method: EstimatorMethod = "clopper_pearson",
    max_rounds: int = 10_000_000,
) -> int | None:
    """The fewest rounds per world whose perfect attack (zero test errors) refutes
    ``claim`` (refutation ratio > 1), splitting rounds as
    :func:`~dpaudit.audit.stats.estimators.rounds_needed` does.

    >>> profile_rounds_needed(ClaimedProfile(epsilon=4.0, delta=1e-5, gdp_mu=0.925))
    10
    >>> profile_rounds_needed(ClaimedProfile(epsilon=4.0, delta=1e-5))
    255
    """
    level = _check_alpha(alpha) / 2.0
    name = _check_method(method)

    def box_refutes(n: int) -> bool:
        u = _upper(0, n, level, name)
        return bool(refutation_ratios(u, u, claim) > 1.0)

    if name != "clopper_pearson":
        return fewest_rounds(box_refutes, split=split, max_rounds=max_rounds)
    # The exact test, its search started at the box's answer (a close guess).
    guess = fewest_rounds(box_refutes, split=(0.0, 0.0, 1.0), max_rounds=max_rounds)
    if guess is None:  # not even the box at the search limit: none feasible
        return None

    def refutes(n: int) -> bool:
        if not calibrated.applies(n, n):  # the box beyond the exact test's sizes
            return box_refutes(n)
        return calibrated.refutes_perfectly(
            claim, n, n, alpha=2.0 * level, delta=claim.delta
        )

    return fewest_rounds(refutes, split=split, max_rounds=max_rounds, start=guess or 1)


def _expected_best(
    n0: int,
    n1: int,
    mu_true: float,
    statistic: Callable[
        [NDArray[np.float64], NDArray[np.float64]], NDArray[np.float64]
    ],
    alpha: float,
    method: str,
    kind: str,
    delta: float = 0.0,
) -> float:
    """max over thresholds t of the expected figure (eps_emp or mu_emp, ``kind``) of
    the Gaussian test ``score >= t`` with non-member N(0, 1) and member N(mu_true, 1),
    exactly over the binomial laws of FP and FN: with Clopper-Pearson the exact
    test's family (:mod:`dpaudit.audit.stats.calibrated`), with Jeffreys
    ``statistic`` of the corner at ``alpha / 2`` per rate."""
    from scipy import stats
    from scipy.optimize import minimize_scalar

    k0, k1 = np.arange(n0 + 1), np.arange(n1 + 1)
    if method == "clopper_pearson" and calibrated.applies(n0, n1):
        table = families.family_table(kind, n0, n1, alpha=alpha, delta=delta)
    else:
        u0 = rate_upper_bounds(k0, np.full(k0.size, n0), alpha / 2.0, method)
        u1 = rate_upper_bounds(k1, np.full(k1.size, n1), alpha / 2.0, method)
        table = statistic(u0[:, None], u1[None, :])

    def expected(t: float) -> float:
        p0 = float(_ndtr(-t))  # FPR of "score >= t" without the target
        p1 = float(_ndtr(t - mu_true))  # FNR with it
        # A rate below 1e-200 is 0 here (no error in any round, to far below
        # 1e-15): scipy's binomial overflows on the tiniest (mu_true of 250).
        p0, p1 = (0.0 if p < 1e-200 else p for p in (p0, p1))
        w0 = stats.binom.pmf(k0, n0, p0)
        w1 = stats.binom.pmf(k1, n1, p1)
        # Only the counts with non-negligible mass (the rest adds < 1e-15).
        i0 = np.flatnonzero(w0 > 1e-18)
        i1 = np.flatnonzero(w1 > 1e-18)
        return float(w0[i0] @ table[np.ix_(i0, i1)] @ w1[i1])

    grid = np.linspace(-2.0, mu_true + 6.0, 161)
    values = np.array([expected(float(t)) for t in grid])
    i = int(np.argmax(values))
    lo, hi = float(grid[max(i - 1, 0)]), float(grid[min(i + 1, grid.size - 1)])
    res = minimize_scalar(
        lambda t: -expected(float(t)), bounds=(lo, hi), method="bounded"
    )
    return max(float(values[i]), -float(res.fun))


def mu_ceiling(
    mu_true: float,
    n_non_members: int,
    n_members: int,
    *,
    alpha: float = 0.05,
    method: EstimatorMethod = "clopper_pearson",
) -> float:
    """The expected mu_emp of the best possible test of an exactly mu_true-GDP
    mechanism at this test size and level.

    The oracle thresholds the exact likelihood ratio (the score itself, member
    N(mu, 1) against non-member N(0, 1): Neyman-Pearson), at the threshold that
    maximises the expected mu_emp, known in advance (no validation rounds spent);
    the expectation is exact over the binomial laws of FP and FN, not simulated. No
    audit of such a mechanism at this size can expect more; a ratio
    ``mean mu_emp / mu_ceiling`` near 1 means the attack is as strong as any.

    >>> round(mu_ceiling(0.925, 400, 400, alpha=0.05 / 3) / 0.925, 2)
    0.76
    """
    m = _finite_nonneg("mu_true", mu_true)
    n0 = _check_count("n_non_members", n_non_members)
    n1 = _check_count("n_members", n_members)
    return _expected_best(
        n0, n1, m, mu_lower_bound, _check_alpha(alpha), _check_method(method), "mu"
    )


def eps_ceiling(
    mu_true: float,
    n_non_members: int,
    n_members: int,
    *,
    delta: float,
    alpha: float = 0.05,
    method: EstimatorMethod = "clopper_pearson",
) -> float:
    """The expected eps_emp (the (epsilon, delta)-line bound) of the same oracle test
    as :func:`mu_ceiling`, at its own best threshold.

    >>> round(eps_ceiling(0.925, 400, 400, delta=1e-5, alpha=0.05 / 3), 2)
    0.96
    """
    m = _finite_nonneg("mu_true", mu_true)
    d = _check_delta(delta)
    n0 = _check_count("n_non_members", n_non_members)
    n1 = _check_count("n_members", n_members)
    return _expected_best(
        n0,
        n1,
        m,
        lambda a, b: _eps_from_rates(a, b, d),
        _check_alpha(alpha),
        _check_method(method),
        "eps",
        d,
    )
