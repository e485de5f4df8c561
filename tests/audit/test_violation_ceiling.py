"""The oracle's probability of VIOLATION (:func:`dpaudit.audit.stats.violation_ceiling`)
is computed on the rejection set of the test that decides: the set agrees with the
verdict of :func:`dpaudit.audit.stats.calibrated.judge` count by count, the
probability of a true claim stays at most the level (the exact test's size), and an
overclaim's is the figure the zoo's calibration reports."""

from __future__ import annotations

import numpy as np
from scipy import stats

from dpaudit.audit.stats import (
    ClaimedProfile,
    calibrated,
    gdp_mu_of_eps,
    violation_ceiling,
)

ORDERS = (2.0, 4.0, 8.0)
N, ALPHA = 400, 0.025


def _gaussian_claim(epsilon: float) -> ClaimedProfile:
    mu = gdp_mu_of_eps(epsilon, 1e-5)
    return ClaimedProfile(
        epsilon=epsilon,
        delta=1e-5,
        gdp_mu=mu,
        rdp_orders=ORDERS,
        rdp_epsilons=tuple(o * mu * mu / 2 for o in ORDERS),
    )


def _np_tests(mu: float) -> tuple[np.ndarray, np.ndarray]:
    """(FPR, FNR) of the thresholds of N(0, 1) against N(mu, 1)."""
    t = np.linspace(-3.0, 6.0, 181)
    return stats.norm.sf(t), stats.norm.cdf(t - mu)


def test_the_rejection_set_is_the_verdicts() -> None:
    claim = _gaussian_claim(2.5)
    g = calibrated.deciding_counts(claim, N, N, alpha=ALPHA, delta=1e-5)
    gen = np.random.default_rng(7)
    # Counts on both sides of the boundary, where a disagreement would show.
    for fp in gen.choice(np.flatnonzero(g >= 0), size=12, replace=False):
        for fn in (int(g[fp]), int(g[fp]) + 1):
            judged = calibrated.judge(
                int(fp), N, fn, N, delta=1e-5, alpha=ALPHA, profile=claim
            )
            assert (judged.point.ratio > 1.0) == (fn <= g[fp]), (fp, fn)


def test_a_true_claim_is_refuted_at_most_at_the_level() -> None:
    """The best threshold test of the exactly (2.5, 1e-5)-DP Gaussian against its own
    claim: a VIOLATION is a false alarm, at most alpha for every threshold."""
    claim = _gaussian_claim(2.5)
    fpr, fnr = _np_tests(claim.gdp_mu or 0.0)
    assert violation_ceiling(claim, fpr, fnr, N, N, alpha=ALPHA) <= ALPHA


def test_an_overclaim_is_refuted_by_the_best_threshold() -> None:
    """The exactly (4, 1e-5)-DP Gaussian claiming 2.5 (the zoo calibration's
    overclaim): the oracle refutes it in about 92% of audits of 400 + 400 test
    rounds at 0.05 / 2; more rounds, more often."""
    claim = _gaussian_claim(2.5)
    fpr, fnr = _np_tests(gdp_mu_of_eps(4.0, 1e-5))
    at_400 = violation_ceiling(claim, fpr, fnr, N, N, alpha=ALPHA)
    assert 0.85 < at_400 < 0.97
    assert violation_ceiling(claim, fpr, fnr, 200, 200, alpha=ALPHA) < at_400
