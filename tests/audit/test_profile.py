"""Tests of dpaudit.audit.stats.profile: oracles (dp_accounting, mpmath, riskcal), the
monotonicity the soundness argument rests on, and the ceiling's anchors."""

from __future__ import annotations

import doctest
import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpaudit.audit.stats import calibrated, ceiling, profile, tradeoff
from dpaudit.audit.stats.ceiling import (
    mu_ceiling,
    mu_max_attainable,
    profile_rounds_needed,
)
from dpaudit.audit.stats.estimators import (
    AttackCounts,
    eps_lower_bound,
    rate_upper_bound,
)
from dpaudit.audit.stats.profile import (
    ClaimedProfile,
    bernoulli_renyi,
    box_renyi,
    eps_of_gdp,
    gdp_mu_of_eps,
    gdp_tradeoff,
    judge_point,
    mu_lower_bound,
    rdp_boundary,
    refutation_ratios,
    zcdp_ratio,
)
from dpaudit.errors import InvalidParameterError

FAST = settings(max_examples=100, deadline=None)
rates = st.floats(0.0, 1.0, allow_nan=False)


@pytest.mark.parametrize("module", [profile, tradeoff, ceiling])
def test_doctests_pass(module: object) -> None:
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)  # type: ignore[arg-type]
    assert result.attempted > 4 and result.failed == 0


# ------------------------------------------------------------------------------ GDP


@pytest.mark.parametrize("mu", [0.3, 0.925, 2.0])
@pytest.mark.parametrize("delta", [1e-5, 1e-3])
def test_eps_of_gdp_matches_dp_accounting_pld(mu: float, delta: float) -> None:
    """The Gaussian mechanism with sigma = 1/mu and sensitivity 1 is exactly mu-GDP;
    dp_accounting's PLD (pessimistic, discretised) gives its epsilon at delta."""
    from dp_accounting.pld import privacy_loss_distribution as pld

    dist = pld.from_gaussian_mechanism(
        standard_deviation=1.0 / mu, sensitivity=1.0, value_discretization_interval=1e-4
    )
    reference = dist.get_epsilon_for_delta(delta)
    assert eps_of_gdp(mu, delta) == pytest.approx(reference, abs=2e-3)
    assert eps_of_gdp(mu, delta) <= reference + 1e-9  # the PLD is pessimistic


def test_gdp_mu_of_eps_inverts_eps_of_gdp() -> None:
    for mu in (0.1, 0.5016, 0.925, 3.0):
        eps = eps_of_gdp(mu, 1e-5)
        assert gdp_mu_of_eps(eps, 1e-5) == pytest.approx(mu, rel=1e-8)


def test_gdp_curve_matches_riskcal() -> None:
    analysis = pytest.importorskip("riskcal.analysis")
    xs = np.linspace(0.0, 1.0, 41)
    for mu in (0.2, 0.925, 3.0):
        np.testing.assert_allclose(
            gdp_tradeoff(xs, mu=mu), analysis.get_beta_for_mu(mu, xs), atol=1e-12
        )


def test_exact_gaussian_points_lie_on_the_curve() -> None:
    """The threshold test of N(0,1) against N(mu,1) attains f_mu exactly, so the
    exact (unbounded) rates give mu_lower_bound == mu and never refute mu-GDP."""
    from scipy.stats import norm

    mu = 0.925
    for t in np.linspace(-1.0, 3.0, 9):
        fpr, fnr = norm.sf(t), norm.cdf(t - mu)
        assert float(gdp_tradeoff(fpr, mu=mu)) == pytest.approx(fnr, rel=1e-10)
        assert float(mu_lower_bound(fpr, fnr)) == pytest.approx(mu, rel=1e-9)


@FAST
@given(rates, rates, rates, rates)
def test_every_ratio_is_monotone_in_the_box(
    a: float, b: float, da: float, db: float
) -> None:
    """The soundness argument: each region is upward closed, so a corner with larger
    rates never refutes more (docs/soundness.md, "Testing the claim's profile")."""
    claim = ClaimedProfile(
        epsilon=1.0,
        delta=1e-5,
        gdp_mu=0.5,
        zcdp_rho=0.1,
        rdp_orders=(1.5, 2.0, 8.0, 64.0),
        rdp_epsilons=(0.1, 0.2, 0.5, 2.0),
    )
    a2, b2 = a + (1 - a) * da, b + (1 - b) * db
    small = float(refutation_ratios(a, b, claim))
    large = float(refutation_ratios(a2, b2, claim))
    assert large <= small * (1 + 1e-9) + 1e-12
    assert float(mu_lower_bound(a2, b2)) <= float(mu_lower_bound(a, b)) + 1e-12
    for order in (1.5, 8.0):
        assert (
            float(box_renyi(a2, b2, order))
            <= float(box_renyi(a, b, order)) * (1 + 1e-9) + 1e-12
        )


# ------------------------------------------------------------------------------ RDP


def _mp_renyi(p: float, q: float, lam: float) -> float:
    mpmath.mp.dps = 60
    p_, q_, l_ = mpmath.mpf(p), mpmath.mpf(q), mpmath.mpf(lam)
    total = mpmath.mpf(0)
    for x, y in ((p_, q_), (1 - p_, 1 - q_)):
        if x > 0:
            total += x**l_ * y ** (1 - l_)
    return float(mpmath.log(total) / (l_ - 1))


@FAST
@given(
    st.floats(1e-12, 1 - 1e-12),
    st.floats(1e-12, 1 - 1e-12),
    st.floats(1.0001, 500.0),
)
def test_bernoulli_renyi_matches_mpmath(p: float, q: float, lam: float) -> None:
    ours = float(bernoulli_renyi(p, q, lam))
    reference = max(_mp_renyi(p, q, lam), 0.0)
    assert ours == pytest.approx(reference, rel=1e-9, abs=1e-12)


def test_bernoulli_renyi_edges() -> None:
    assert float(bernoulli_renyi(0.0, 0.3, 2.0)) == pytest.approx(-math.log(0.7))
    assert float(bernoulli_renyi(1.0, 0.3, 4.0)) == pytest.approx(
        (4 * 0 + (1 - 4) * math.log(0.3)) / 3
    )
    assert float(bernoulli_renyi(0.2, 0.0, 2.0)) == math.inf
    assert float(bernoulli_renyi(0.0, 0.0, 2.0)) == 0.0
    assert float(bernoulli_renyi(1.0, 1.0, 3.0)) == 0.0
    with pytest.raises(InvalidParameterError, match="`order` must be"):
        bernoulli_renyi(0.2, 0.3, 1.0)
    with pytest.raises(InvalidParameterError, match="`p` must be"):
        bernoulli_renyi(1.2, 0.3, 2.0)


def test_gaussian_rdp_from_dp_accounting_is_never_refuted_and_tight() -> None:
    """dp_accounting's RDP of the Gaussian mechanism (lambda / (2 sigma^2)) bounds
    every exact threshold test of N(0,1) against N(1/sigma,1) (data processing); the
    claim at half that curve is refuted by some exact test."""
    from dp_accounting import dp_event
    from dp_accounting.rdp import rdp_privacy_accountant as rdp
    from scipy.stats import norm

    sigma = 1.0 / 0.925
    orders = (1.5, 2.0, 4.0, 8.0, 32.0)
    accountant = rdp.RdpAccountant(orders=list(orders))
    accountant.compose(dp_event.GaussianDpEvent(noise_multiplier=sigma))
    curve = tuple(float(v) for v in accountant._rdp)
    np.testing.assert_allclose(curve, [o / (2 * sigma**2) for o in orders])
    claim = ClaimedProfile(
        epsilon=100.0, delta=1e-5, rdp_orders=orders, rdp_epsilons=curve
    )
    half = ClaimedProfile(
        epsilon=100.0,
        delta=1e-5,
        rdp_orders=orders,
        rdp_epsilons=tuple(v / 2 for v in curve),
    )
    ts = np.linspace(-2.0, 5.0, 71)
    fpr, fnr = norm.sf(ts), norm.cdf(ts - 1.0 / sigma)
    assert float(np.max(refutation_ratios(fpr, fnr, claim))) <= 1.0
    assert float(np.max(refutation_ratios(fpr, fnr, half))) > 1.0
    rho = 1.0 / (2 * sigma**2)
    assert max(zcdp_ratio(f, n, rho=rho)[0] for f, n in zip(fpr, fnr)) <= 1.0
    assert max(zcdp_ratio(f, n, rho=rho / 2)[0] for f, n in zip(fpr, fnr)) > 1.0


def test_rdp_and_zcdp_boundaries_match_riskcal() -> None:
    """riskcal (Kulynych et al., NeurIPS 2024) converts one RDP order, and a zCDP
    rho, to a trade-off curve; ours comes from the two-point Renyi test."""
    analysis = pytest.importorskip("riskcal.analysis")
    xs = np.array([0.001, 0.01, 0.05, 0.1, 0.3, 0.5])
    for order, eps in ((1.5, 0.2), (2.0, 0.5), (8.0, 1.0)):
        claim = ClaimedProfile(
            epsilon=1.0, delta=1e-5, rdp_orders=(order,), rdp_epsilons=(eps,)
        )
        x, y = rdp_boundary(claim, points=1001)
        np.testing.assert_allclose(
            np.interp(xs, x, y), analysis.get_beta_from_rdp(eps, xs, order), atol=2e-5
        )
    x, y = rdp_boundary(
        ClaimedProfile(epsilon=1.0, delta=1e-5, zcdp_rho=0.4), points=1001
    )
    ours = np.interp(xs, x, y)
    theirs = analysis.get_beta_from_zcdp(0.4, xs)
    # Our grid can only under-state the supremum over orders: never a lower curve.
    np.testing.assert_allclose(ours, theirs, atol=3e-4)


# ------------------------------------------------------------------ the test point


def test_judge_point_names_the_regions() -> None:
    claim = ClaimedProfile(
        epsilon=4.0,
        delta=1e-5,
        gdp_mu=0.925,
        zcdp_rho=0.4278,
        rdp_orders=(2.0, 8.0),
        rdp_epsilons=(0.8556, 3.4225),
    )
    quiet = judge_point(0.3, 0.6, claim)
    assert quiet.regions_violated == () and quiet.ratio < 1.0
    loud = judge_point(0.02, 0.5, claim)
    assert loud.regions_violated[0] == "gdp"
    assert "lines" not in loud.regions_violated
    assert loud.zcdp_ratio is not None and loud.rdp_ratio is not None
    assert loud.ratio == pytest.approx(
        max(loud.mu_emp / 0.925, loud.zcdp_ratio, loud.rdp_ratio, loud.eps_lo / 4.0)
    )
    assert any(r.startswith("zcdp@") for r in loud.regions_violated)
    assert loud.rdp_order in (2.0, 8.0)
    # The lines agree with the estimator's own bound.
    counts = AttackCounts(tp=200, fp=2, tn=198, fn=200)
    a = rate_upper_bound(2, 200, alpha=0.025)
    b = rate_upper_bound(200, 400, alpha=0.025)
    assert judge_point(a, b, claim).eps_lo == pytest.approx(
        eps_lower_bound(counts, delta=1e-5)
    )


def test_claimed_profile_checks_its_input() -> None:
    with pytest.raises(InvalidParameterError, match=r"`rdp\.orders` must be"):
        ClaimedProfile(epsilon=1.0, delta=1e-5, rdp_orders=(1.0,), rdp_epsilons=(1.0,))
    with pytest.raises(InvalidParameterError, match="as many epsilons"):
        ClaimedProfile(epsilon=1.0, delta=1e-5, rdp_orders=(2.0,), rdp_epsilons=())
    with pytest.raises(InvalidParameterError, match="`gdp_mu` must be"):
        ClaimedProfile(epsilon=1.0, delta=1e-5, gdp_mu=-1.0)


# ------------------------------------------------------------------------- power


def test_mu_max_attainable_is_the_perfect_corner() -> None:
    """With Jeffreys the box's perfect corner; with Clopper-Pearson the exact test's
    mu_emp of a perfect attack, at least the box's (the exact test is calibrated at a
    larger per-rate level)."""
    u = rate_upper_bound(0, 400, alpha=0.05 / 6, method="jeffreys")
    assert mu_max_attainable(
        400, 400, alpha=0.05 / 3, method="jeffreys"
    ) == pytest.approx(float(mu_lower_bound(u, u)))
    box = float(mu_lower_bound(*[rate_upper_bound(0, 400, alpha=0.05 / 6)] * 2))
    assert mu_max_attainable(400, 400, alpha=0.05 / 3) == pytest.approx(
        calibrated.judge(0, 400, 0, 400, delta=1e-5, alpha=0.05 / 3).mu_emp
    )
    assert mu_max_attainable(400, 400, alpha=0.05 / 3) > box


def test_profile_rounds_needed_is_the_fewest() -> None:
    claim = ClaimedProfile(epsilon=4.0, delta=1e-5, gdp_mu=2.0)
    rounds = profile_rounds_needed(claim, alpha=0.05)
    assert rounds is not None

    def refutes(r: int) -> bool:
        n = r - round(0.4 * r) - round(0.2 * r)
        return calibrated.refutes_perfectly(claim, n, n, alpha=0.05, delta=1e-5)

    assert refutes(rounds) and not refutes(rounds - 1)


def test_mu_ceiling_anchors() -> None:
    """400 + 400 test rounds, alpha 0.05 / 3: the exact test's oracle shows 0.757 of
    mu 0.925 (the (4, 1e-5) Gaussian; the per-rate box's 0.658) and 0.563 of mu
    0.5016 (the (2, 1e-5) Gaussian; the box's 0.386)."""
    alpha = 0.05 / 3
    mu4 = gdp_mu_of_eps(4.0, 1e-5)
    mu2 = gdp_mu_of_eps(2.0, 1e-5)
    assert mu4 == pytest.approx(0.925, abs=5e-4)
    assert mu_ceiling(mu4, 400, 400, alpha=alpha) / mu4 == pytest.approx(
        0.757, abs=0.005
    )
    assert mu_ceiling(mu2, 400, 400, alpha=alpha) / mu2 == pytest.approx(
        0.563, abs=0.005
    )
    box = mu_ceiling(mu4, 400, 400, alpha=alpha, method="jeffreys")
    assert box / mu4 == pytest.approx(0.666, abs=0.005)
    # The ceiling never exceeds the attainable maximum nor the true mu much.
    assert mu_ceiling(5.0, 100, 100, alpha=alpha) <= mu_max_attainable(
        100, 100, alpha=alpha
    )
