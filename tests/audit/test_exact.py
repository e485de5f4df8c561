"""The exact test of a claimed region (dpaudit/audit/stats/exact.py, calibrated.py):
its size bound against a dense scan of the boundary, the calibrated levels, and the
eps and mu families' coverage computed exactly over the two binomials."""

from __future__ import annotations

import doctest
import math

import numpy as np
import pytest
from scipy import stats

from dpaudit.audit.stats import calibrated, exact, sizing
from dpaudit.audit.stats.estimators import _eps_from_rates
from dpaudit.audit.stats.profile import ClaimedProfile
from dpaudit.audit.stats.tradeoff import gdp_mu_of_eps, gdp_tradeoff, mu_lower_bound

DELTA = 1e-5
CP = "clopper_pearson"


@pytest.mark.parametrize("module", [exact, calibrated, sizing])
def test_doctests_pass(module: object) -> None:
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)  # type: ignore[arg-type]
    assert result.failed == 0


def _dense_sup(g: np.ndarray, f: np.ndarray, xs: np.ndarray, n1: int) -> float:
    """``max over xs of P_{x, f(x)}(k1 <= g(k0))``, exactly (SciPy's binomial)."""
    k0 = np.arange(g.size)
    pmf = stats.binom.pmf(k0[None, :], g.size - 1, xs[:, None])
    cdf = np.where(
        g[None, :] < 0, 0.0, stats.binom.cdf(np.maximum(g, 0)[None, :], n1, f[:, None])
    )
    return float(np.max(np.sum(pmf * cdf, axis=1)))


@pytest.mark.parametrize("region", ["lines", "gdp"])
def test_size_bound_is_above_a_dense_scan_and_close_to_it(region: str) -> None:
    """The grid bound is an upper bound of the size (rigour) and within 10% of the
    supremum over 4,001 boundary points (tightness), for the box's level on 120 + 100
    test rounds."""
    n0, n1, level = 120, 100, int(np.argmin(np.abs(exact.LEVELS - 0.01)))
    u0, u1 = exact.corner(n0, CP, level), exact.corner(n1, CP, level)
    xs = np.linspace(0.0, 1.0, 4001)
    if region == "lines":
        eps = 1.5
        g = exact.boundary_counts(
            u0, u1, lambda a, b: _eps_from_rates(a, b, DELTA) > eps
        )
        f = np.maximum(
            np.maximum(
                1 - DELTA - math.exp(eps) * xs, (1 - DELTA - xs) / math.exp(eps)
            ),
            0.0,
        )
        boundary = exact.lines_boundary(eps, DELTA)
    else:
        mu = 1.0
        g = exact.boundary_counts(u0, u1, lambda a, b: mu_lower_bound(a, b) > mu)
        f = gdp_tradeoff(xs, mu=mu)
        boundary = exact.gdp_boundary(mu)
    dense = _dense_sup(g, f, xs, n1)
    bound = exact.size(g, boundary, n1)
    assert dense > 1e-4
    assert dense <= bound <= 1.1 * dense


def test_the_calibrated_level_exceeds_the_box() -> None:
    """On a claimed GDP curve the box's size is far below alpha: the calibrated level
    is several times alpha / 2, and its size is at most alpha."""
    alpha = 0.05 / 3
    claim = ClaimedProfile(epsilon=2.5, delta=DELTA, gdp_mu=gdp_mu_of_eps(2.5, DELTA))
    level = calibrated.claim_level(claim, 400, 400, alpha=alpha, method=CP)
    assert level is not None and exact.LEVELS[level] > 5 * alpha / 2
    g = calibrated.deciding_counts(claim, 400, 400, alpha=alpha, delta=DELTA)
    assert exact.size(g, exact.gdp_boundary(claim.gdp_mu or 0.0), 400) <= alpha


@pytest.mark.parametrize("kind", ["eps", "mu"])
def test_the_families_cover_exactly(kind: str) -> None:
    """For true rates on the boundary of each value v (the lines of (v, delta), or the
    mu = v GDP curve), ``P(value > v) <= alpha``, computed exactly over both binomials
    from the family's table of every count pair (80 + 80 test rounds, alpha 0.05)."""
    n, alpha = 80, 0.05
    fam = calibrated.family(kind, n, n, alpha=alpha, delta=DELTA)
    table = fam.table()
    k = np.arange(n + 1)
    xs = np.linspace(0.0, 1.0, 401)
    for v in (0.3, 1.0, 2.01, 2.5):
        if kind == "eps":
            f = np.maximum(
                np.maximum(
                    1 - DELTA - math.exp(v) * xs, (1 - DELTA - xs) / math.exp(v)
                ),
                0.0,
            )
        else:
            f = gdp_tradeoff(xs, mu=v)
        over = table > v
        worst = 0.0
        for x, y in zip(xs, f):
            p = stats.binom.pmf(k, n, x)[:, None] * stats.binom.pmf(k, n, y)[None, :]
            worst = max(worst, float(p[over].sum()))
        assert worst <= alpha, (v, worst)
    # The family's value of each count pair is monotone: fewer errors, no smaller.
    assert np.all(np.diff(table, axis=0) <= 1e-12)
    assert np.all(np.diff(table, axis=1) <= 1e-12)


def test_small_tests_gain_most() -> None:
    """7 + 7 test rounds without an error refute epsilon 1 (no (1, 1e-5)-DP mechanism
    errs nowhere in 14 rounds with probability above 0.0125) where the box cannot."""
    from dpaudit.audit.stats.estimators import eps_max_attainable

    assert eps_max_attainable(7, 7, delta=DELTA, alpha=0.05) < 1.0
    assert calibrated.eps_max_attainable(7, 7, alpha=0.05, delta=DELTA) > 1.0


def test_lines_only_claims_decide_by_the_family() -> None:
    """A claim of the lines alone: VIOLATION (ratio > 1) iff eps_emp > epsilon; a claim
    with a profile that is not refuted reports eps_emp and mu_emp at most its own."""
    lines = ClaimedProfile(epsilon=1.0, delta=DELTA)
    for fp, fn in ((0, 0), (5, 40), (20, 60), (40, 40)):
        r = calibrated.judge(fp, 200, fn, 200, delta=DELTA, alpha=0.05, profile=lines)
        assert (r.point.ratio > 1.0) == (r.eps_emp > 1.0)
    mu = gdp_mu_of_eps(1.0, DELTA)
    gdp = ClaimedProfile(epsilon=1.0, delta=DELTA, gdp_mu=mu)
    for fp, fn in ((0, 0), (5, 40), (20, 60), (40, 40), (60, 60)):
        r = calibrated.judge(fp, 200, fn, 200, delta=DELTA, alpha=0.05, profile=gdp)
        if r.point.ratio <= 1.0:
            assert r.eps_emp <= 1.0 and r.mu_emp <= mu
