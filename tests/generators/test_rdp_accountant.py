"""The Confident-GNMax RDP accountant (G-PATE), against independent mpmath oracles."""

from __future__ import annotations

import doctest
import importlib
import json
import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpaudit.errors import InvalidParameterError, UnsupportedEventError
from dpaudit.generators.accountants import (
    RDP_ORDERS,
    ConfidentGnmaxLedger,
    calibrate_confident_gnmax_sigmas,
    compress_vote_histograms,
    confident_gnmax_epsilon,
    confident_gnmax_rdp,
    confident_gnmax_rdp_data_independent,
    epsilon_from_rdp,
    gnmax_log_error_bound,
    gnmax_rdp_data_dependent,
    gnmax_rdp_data_independent,
    optimal_order,
    threshold_rdp,
)

mp.mp.dps = 60


# ----------------------------------------------------------------- mpmath oracles
def mp_log_q(counts: list[int], sigma: float) -> mp.mpf:
    """Prop. 7 union bound, in high precision, capped at 1 - 1/C."""
    top = max(counts)
    i_star = counts.index(top)
    q = mp.fsum(
        mp.erfc(mp.mpf(top - c) / (2 * mp.mpf(sigma))) / 2
        for j, c in enumerate(counts)
        if j != i_star
    )
    return min(mp.log(q), mp.log(1 - mp.mpf(1) / len(counts)))


def mp_theorem6(log_q: mp.mpf, sigma: float, order: float) -> mp.mpf | None:
    """Theorem 6 with Prop. 10's orders, or None where a condition fails."""
    q = mp.exp(log_q)
    s2 = mp.mpf(sigma) ** 2
    mu2 = mp.mpf(sigma) * mp.sqrt(-log_q)
    mu1 = mu2 + 1
    eps1, eps2 = mu1 / s2, mu2 / s2
    lam = mp.mpf(order)
    if not (mu2 > 1 and lam < mu1 and q * mp.exp(eps2) < 1):
        return None
    if q > mp.exp((mu2 - 1) * eps2) / ((mu1 / (mu1 - 1)) * (mu2 / (mu2 - 1))) ** mu2:
        return None
    big_a = (1 - q) / (1 - (q * mp.exp(eps2)) ** ((mu2 - 1) / mu2))
    big_b = mp.exp(eps1) / q ** (1 / (mu1 - 1))
    return mp.log((1 - q) * big_a ** (lam - 1) + q * big_b ** (lam - 1)) / (lam - 1)


def mp_epsilon_on_grid(c: mp.mpf, delta: float, orders: np.ndarray) -> mp.mpf:
    """min over the grid of c * a + log(1/delta) / (a - 1), in high precision."""
    log_inv_delta = mp.log(1 / mp.mpf(delta))
    return min(
        c * mp.mpf(float(a)) + log_inv_delta / (mp.mpf(float(a)) - 1) for a in orders
    )


def mp_improved_epsilon_on_grid(c: mp.mpf, delta: float, orders: np.ndarray) -> mp.mpf:
    """min over the grid (orders > 1.01) of
    c a + log((a - 1)/a) - (log delta + log a) / (a - 1), in high precision."""
    log_delta = mp.log(mp.mpf(delta))
    values = []
    for order in orders:
        a = mp.mpf(float(order))
        if a > mp.mpf(1.01):
            values.append(
                c * a + mp.log((a - 1) / a) - (log_delta + mp.log(a)) / (a - 1)
            )
    return min(values)


# ------------------------------------------------------------------------ doctests
@pytest.mark.parametrize("module", ["conversion", "gnmax", "moments", "reference"])
def test_doctests_of_the_accountants_modules_pass(module: str) -> None:
    mod = importlib.import_module(f"dpaudit.generators.accountants.{module}")
    failures, tried = doctest.testmod(mod, optionflags=doctest.ELLIPSIS)
    assert tried >= 3
    assert failures == 0


# ------------------------------------------------------------ data-independent RDP
def test_threshold_and_gnmax_rdp_are_linear_in_the_order() -> None:
    orders = np.array([1.5, 2.0, 10.0, 100.0])
    np.testing.assert_array_equal(threshold_rdp(orders, sigma1=2.0), orders / 8.0)
    np.testing.assert_array_equal(
        gnmax_rdp_data_independent(orders, sigma2=2.0), orders / 4.0
    )


@pytest.mark.parametrize(
    ("queries", "answered", "sigma1", "sigma2", "delta"),
    [
        (16_000, 8_000, 1500.0, 600.0, 1e-5),  # G-PATE Credit scale
        (1_000, 1_000, 50.0, 40.0, 1e-6),
        (200, 0, 10.0, 5.0, 1e-5),  # nothing answered: threshold cost only
        (5, 5, 3.0, 2.0, 1e-3),  # a large epsilon: optimum at a small order
    ],
)
def test_data_independent_epsilon_matches_mpmath(
    queries: int, answered: int, sigma1: float, sigma2: float, delta: float
) -> None:
    ledger = ConfidentGnmaxLedger(
        sigma1=sigma1,
        sigma2=sigma2,
        num_classes=10,
        num_queries=queries,
        num_answered=answered,
    )
    got = confident_gnmax_epsilon(ledger, delta=delta, conversion="classic")
    # The RDP curve is c * a with c below; on the grid the epsilon is exact.
    c = (
        mp.mpf(queries) / (2 * mp.mpf(sigma1) ** 2)
        + mp.mpf(answered) / mp.mpf(sigma2) ** 2
    )
    improved = confident_gnmax_epsilon(ledger, delta=delta)
    assert improved == pytest.approx(
        float(mp_improved_epsilon_on_grid(c, delta, RDP_ORDERS)), rel=1e-12
    )
    assert improved < got
    on_grid = mp_epsilon_on_grid(c, delta, RDP_ORDERS)
    assert got == pytest.approx(float(on_grid), rel=1e-12)
    # Continuous optimum: a* = 1 + sqrt(L / c), epsilon* = c + 2 sqrt(c L). The grid
    # can only be above it, and by at most about 0.03%.
    log_inv_delta = mp.log(1 / mp.mpf(delta))
    best = c + 2 * mp.sqrt(c * log_inv_delta)
    assert got >= float(best) * (1 - 1e-12)
    assert got <= float(best) * (1 + 5e-4)


def test_composition_is_additive_over_queries() -> None:
    one = confident_gnmax_rdp_data_independent(1, 1, sigma1=3.0, sigma2=2.0)
    many = confident_gnmax_rdp_data_independent(70, 70, sigma1=3.0, sigma2=2.0)
    np.testing.assert_allclose(many, 70 * one, rtol=1e-14)
    batched = confident_gnmax_rdp_data_independent(
        np.array([10, 20]), np.array([3, 20]), sigma1=3.0, sigma2=2.0
    )
    assert batched.shape == (2, RDP_ORDERS.size)
    np.testing.assert_allclose(
        batched[0], confident_gnmax_rdp_data_independent(10, 3, sigma1=3.0, sigma2=2.0)
    )


def test_answered_above_queries_is_refused() -> None:
    with pytest.raises(InvalidParameterError, match="num_answered"):
        confident_gnmax_rdp_data_independent(3, 4, sigma1=1.0, sigma2=1.0)


# --------------------------------------------------------------------- the q bound
@pytest.mark.parametrize(
    ("counts", "sigma"),
    [
        ([10, 0], 1.0),
        ([7, 2, 1, 0], 2.0),
        ([2100, 0, 0, 0, 0, 0, 0, 0, 0, 0], 600.0),
        ([1500, 400, 200, 0, 0, 0, 0, 0, 0, 0], 100.0),
        ([2000, 0], 10.0),  # erfc(100): far below double precision's range
        ([9, 8], 0.5),
    ],
)
def test_log_error_bound_matches_mpmath(counts: list[int], sigma: float) -> None:
    got = float(gnmax_log_error_bound(counts, sigma2=sigma))
    assert got == pytest.approx(float(mp_log_q(counts, sigma)), rel=1e-9)


def test_log_error_bound_ignores_the_order_of_counts() -> None:
    a = gnmax_log_error_bound([0, 3, 9, 1], sigma2=2.0)
    b = gnmax_log_error_bound([9, 3, 1, 0], sigma2=2.0)
    assert float(a) == float(b)


def test_ties_hit_the_cap() -> None:
    # Three-way tie: the union bound gives q = 1 > 2/3, so the cap applies.
    assert float(gnmax_log_error_bound([5, 5, 5], sigma2=1.0)) == pytest.approx(
        math.log(1 - 1 / 3)
    )
    # Two-way tie among three classes: q = 1/2 + erfc(5/2)/2, below the cap.
    assert float(gnmax_log_error_bound([5, 5, 0], sigma2=1.0)) == pytest.approx(
        math.log(0.5 + math.erfc(2.5) / 2)
    )


def test_top_m_counts_give_a_conservative_bound() -> None:
    full = [50, 30, 20, 10, 0, 0]
    top2 = float(gnmax_log_error_bound([50, 30], sigma2=10.0, num_classes=6))
    top3 = float(gnmax_log_error_bound([50, 30, 20], sigma2=10.0, num_classes=6))
    exact = float(gnmax_log_error_bound(full, sigma2=10.0))
    assert top2 >= top3 >= exact


def test_single_class_is_never_wrong() -> None:
    assert float(gnmax_log_error_bound([4], sigma2=1.0)) == -math.inf
    np.testing.assert_array_equal(
        gnmax_rdp_data_dependent(-math.inf, sigma2=1.0, orders=[2.0, 5.0]), [0.0, 0.0]
    )


def test_too_few_classes_declared_is_refused() -> None:
    with pytest.raises(InvalidParameterError, match="num_classes"):
        gnmax_log_error_bound([3, 2, 1], sigma2=1.0, num_classes=2)


# ------------------------------------------------------------ data-dependent RDP
@pytest.mark.parametrize(
    ("counts", "sigma"),
    [
        ([100, 0], 5.0),
        ([2000, 0, 0, 0, 0, 0, 0, 0, 0, 0], 100.0),  # MNIST epsilon = 10 scale
        ([900, 50, 50], 40.0),
        ([60, 20, 20], 4.0),
    ],
)
def test_data_dependent_rdp_matches_mpmath(counts: list[int], sigma: float) -> None:
    orders = np.array([1.5, 2.0, 5.0, 20.0, 100.0, 1000.0])
    log_q = gnmax_log_error_bound(counts, sigma2=sigma)
    got = gnmax_rdp_data_dependent(log_q, sigma2=sigma, orders=orders)
    mp_lq = mp_log_q(counts, sigma)
    applied = 0
    for a, value in zip(orders, got):
        independent = float(a) / sigma**2
        bound = mp_theorem6(mp_lq, sigma, float(a))
        if bound is None:
            assert value == pytest.approx(independent, rel=1e-12)
        else:
            applied += 1
            assert value == pytest.approx(min(independent, float(bound)), rel=1e-7)
    assert applied > 0  # each case exercises Theorem 6 at some order


def test_unanimous_votes_cost_far_less_than_the_data_independent_bound() -> None:
    orders = np.array([2.0, 10.0, 50.0])
    log_q = gnmax_log_error_bound([2000] + [0] * 9, sigma2=100.0)
    dd = gnmax_rdp_data_dependent(log_q, sigma2=100.0, orders=orders)
    di = gnmax_rdp_data_independent(orders, sigma2=100.0)
    assert np.all(dd < 1e-3 * di)
    assert np.all(dd >= 0)


@pytest.mark.parametrize("counts", [[5, 5], [3, 3, 3], [4, 4, 4, 0]])
def test_q_at_its_cap_falls_back_to_data_independent(counts: list[int]) -> None:
    log_q = gnmax_log_error_bound(counts, sigma2=3.0)
    assert float(log_q) == pytest.approx(math.log(1 - 1 / len(counts)))
    dd = gnmax_rdp_data_dependent(log_q, sigma2=3.0)
    np.testing.assert_array_equal(dd, gnmax_rdp_data_independent(sigma2=3.0))


def test_close_votes_fall_back_to_data_independent() -> None:
    # q = erfc(1/6)/2 = 0.41: far too large for Theorem 6's conditions.
    log_q = gnmax_log_error_bound([1, 0], sigma2=3.0)
    assert float(log_q) == pytest.approx(math.log(math.erfc(1 / 6) / 2))
    dd = gnmax_rdp_data_dependent(log_q, sigma2=3.0)
    np.testing.assert_array_equal(dd, gnmax_rdp_data_independent(sigma2=3.0))


def test_positive_log_q_is_refused() -> None:
    with pytest.raises(InvalidParameterError, match="log_q"):
        gnmax_rdp_data_dependent(0.1, sigma2=1.0)


@settings(max_examples=200, deadline=None)
@given(
    counts=st.lists(st.integers(0, 3000), min_size=2, max_size=10),
    sigma=st.floats(0.5, 2000.0),
)
def test_data_dependent_never_above_data_independent(
    counts: list[int], sigma: float
) -> None:
    log_q = gnmax_log_error_bound(counts, sigma2=sigma)
    dd = gnmax_rdp_data_dependent(log_q, sigma2=sigma)
    di = gnmax_rdp_data_independent(sigma2=sigma)
    assert np.all(np.isfinite(dd))
    assert np.all(dd >= 0)
    assert np.all(dd <= di)


@settings(max_examples=50, deadline=None)
@given(
    rows=st.lists(
        st.lists(st.integers(0, 200), min_size=4, max_size=4), min_size=1, max_size=20
    ),
    unanswered=st.integers(0, 50),
    sigma2=st.floats(1.0, 200.0),
)
def test_ledger_data_dependent_epsilon_never_above_data_independent(
    rows: list[list[int]], unanswered: int, sigma2: float
) -> None:
    top, mult = compress_vote_histograms(rows)
    ledger = ConfidentGnmaxLedger(
        sigma1=2 * sigma2,
        sigma2=sigma2,
        num_classes=4,
        num_queries=len(rows) + unanswered,
        num_answered=len(rows),
        top_counts=tuple(map(tuple, top.tolist())),
        multiplicity=tuple(mult.tolist()),
    )
    di = confident_gnmax_epsilon(ledger, delta=1e-5)
    dd = confident_gnmax_epsilon(ledger, delta=1e-5, data_dependent=True)
    assert dd <= di * (1 + 1e-12)


# -------------------------------------------------------------------------- ledger
def test_ledger_composes_the_data_dependent_bound_per_histogram() -> None:
    rows = [[90, 10, 0], [90, 10, 0], [50, 50, 0]]
    top, mult = compress_vote_histograms(rows)
    assert top.tolist() == [[50, 50, 0], [90, 10, 0]]
    assert mult.tolist() == [1, 2]
    ledger = ConfidentGnmaxLedger(
        sigma1=20.0,
        sigma2=5.0,
        num_classes=3,
        num_queries=5,
        num_answered=3,
        top_counts=tuple(map(tuple, top.tolist())),
        multiplicity=tuple(mult.tolist()),
    )
    expected = 5 * threshold_rdp(sigma1=20.0)
    for row in rows:
        expected = expected + gnmax_rdp_data_dependent(
            gnmax_log_error_bound(row, sigma2=5.0), sigma2=5.0
        )
    np.testing.assert_allclose(
        confident_gnmax_rdp(ledger, data_dependent=True), expected, rtol=1e-12
    )


def test_ledger_json_round_trip() -> None:
    ledger = ConfidentGnmaxLedger(
        sigma1=3.0,
        sigma2=2.0,
        num_classes=3,
        num_queries=4,
        num_answered=2,
        top_counts=((2, 1, 0),),
        multiplicity=(2,),
    )
    again = ConfidentGnmaxLedger.from_json(json.loads(json.dumps(ledger.to_json())))
    assert again == ledger


def test_data_dependent_needs_histograms() -> None:
    ledger = ConfidentGnmaxLedger(
        sigma1=3.0, sigma2=2.0, num_classes=3, num_queries=4, num_answered=2
    )
    with pytest.raises(UnsupportedEventError, match="histograms"):
        confident_gnmax_rdp(ledger, data_dependent=True)


def test_empty_ledger_spends_nothing() -> None:
    ledger = ConfidentGnmaxLedger(sigma1=3.0, sigma2=2.0, num_classes=3)
    assert confident_gnmax_epsilon(ledger, delta=1e-5) == 0.0
    assert confident_gnmax_epsilon(ledger, delta=1e-5, data_dependent=True) == 0.0


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"sigma1": 0.0}, "`sigma1` must be a positive number"),
        ({"sigma2": -1.0}, "`sigma2` must be a positive number"),
        ({"num_answered": 5}, "`num_answered` must be an integer in"),
        ({"num_classes": 0}, "`num_classes` must be an integer >= 1"),
        ({"top_counts": ((1, 0),), "multiplicity": ()}, "same length"),
        ({"top_counts": ((1, 0),), "multiplicity": (1,)}, "must sum to `num_answered`"),
    ],
)
def test_malformed_ledgers_are_refused(kwargs: dict[str, object], match: str) -> None:
    base: dict[str, object] = {
        "sigma1": 1.0,
        "sigma2": 1.0,
        "num_classes": 2,
        "num_queries": 3,
        "num_answered": 2,
    }
    base.update(kwargs)
    with pytest.raises(InvalidParameterError, match=match):
        ConfidentGnmaxLedger(**base)  # type: ignore[arg-type]


# ---------------------------------------------------------------------- conversion
def test_epsilon_from_rdp_is_monotone_and_picks_its_order() -> None:
    rdp = confident_gnmax_rdp_data_independent(1000, 500, sigma1=50.0, sigma2=20.0)
    for conversion in ("classic", "improved"):
        eps = float(epsilon_from_rdp(rdp, delta=1e-5, conversion=conversion))
        assert (
            float(epsilon_from_rdp(rdp * 1.1, delta=1e-5, conversion=conversion)) > eps
        )
        assert float(epsilon_from_rdp(rdp, delta=1e-6, conversion=conversion)) > eps
        a = float(optimal_order(rdp, delta=1e-5, conversion=conversion))
        i = int(np.argmin(np.abs(RDP_ORDERS - a)))
        if conversion == "classic":
            expected = rdp[i] + math.log(1e5) / (a - 1)
        else:
            expected = (
                rdp[i]
                + math.log((a - 1) / a)
                - (math.log(1e-5) + math.log(a)) / (a - 1)
            )
        assert eps == pytest.approx(expected, rel=1e-14)


@pytest.mark.parametrize("delta", [0.0, 1.0, -0.1])
def test_bad_delta_is_refused(delta: float) -> None:
    with pytest.raises(InvalidParameterError, match="`delta` must be in"):
        epsilon_from_rdp(np.zeros(RDP_ORDERS.size), delta=delta)


def test_bad_orders_are_refused() -> None:
    with pytest.raises(InvalidParameterError, match="`orders`"):
        threshold_rdp([1.0, 2.0], sigma1=1.0)


@pytest.mark.parametrize("queries", [1, 160, 16_000, 1_600_000])
@pytest.mark.parametrize("epsilon", [0.5, 1.0, 8.0])
def test_calibrated_sigmas_spend_exactly_the_budget(
    queries: int, epsilon: float
) -> None:
    """At the calibrated noise, ``queries`` answered queries cost epsilon (to 1e-9);
    1% less noise would exceed it."""
    s1, s2 = calibrate_confident_gnmax_sigmas(
        epsilon=epsilon, delta=1e-5, num_queries=queries
    )
    assert s1 / s2 == pytest.approx(2.5)

    def spent(scale: float) -> float:
        rdp = confident_gnmax_rdp_data_independent(
            queries, queries, sigma1=s1 * scale, sigma2=s2 * scale
        )
        return float(epsilon_from_rdp(rdp, delta=1e-5))

    assert spent(1.0) == pytest.approx(epsilon, abs=1e-9)
    assert spent(0.99) > epsilon


def test_calibrated_noise_grows_with_the_queries() -> None:
    scales = [
        calibrate_confident_gnmax_sigmas(epsilon=1.0, delta=1e-5, num_queries=q)[1]
        for q in (10, 100, 1_000, 10_000)
    ]
    assert np.all(np.diff(scales) > 0)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"epsilon": 0.0}, "`epsilon` must be a positive number"),
        ({"num_queries": 0}, "`num_queries` must be a positive integer"),
        ({"ratio": -1.0}, "`ratio` must be a positive number"),
    ],
)
def test_calibration_refuses_bad_input(kwargs: dict, message: str) -> None:
    args = {"epsilon": 1.0, "delta": 1e-5, "num_queries": 10, **kwargs}
    with pytest.raises(InvalidParameterError, match=message):
        calibrate_confident_gnmax_sigmas(**args)
