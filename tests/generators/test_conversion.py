"""RDP (and log-moments) to (epsilon, delta): dpaudit's conversions against dp-accounting.

Tolerances: where dpaudit and dp-accounting evaluate the same formula on the same
orders the results agree to a relative 1e-12 (float64 rounding of a few operations);
between dpaudit's order grid and dp-accounting's default orders the optimum moves by
at most 5e-4 in epsilon on the curves tested here (both grids are dense near the
optimum).
"""

from __future__ import annotations

import math

import dp_accounting
import numpy as np
import pytest
from dp_accounting.rdp import rdp_privacy_accountant
from hypothesis import given, settings
from hypothesis import strategies as st

from dpaudit.errors import InvalidParameterError
from dpaudit.generators import accountants as acc
from dpaudit.generators.accountants import reference


def _dp_accounting(rdp: np.ndarray, orders: np.ndarray, delta: float) -> float:
    eps, _ = rdp_privacy_accountant.compute_epsilon(list(orders), list(rdp), delta)
    return float(eps)


# ------------------------------------------------------------- the figure
def test_the_published_g_pate_setting_reproduces_0_990_against_1_206() -> None:
    """10,000 Confident-GNMax queries, all answered, sigma1 = 1500, sigma2 = 600,
    delta = 1e-5 (issue 14: dp-accounting 0.6.0 gives 0.990, the classic 1.206)."""
    ledger = acc.ConfidentGnmaxLedger(
        sigma1=1500.0,
        sigma2=600.0,
        num_classes=10,
        num_queries=10_000,
        num_answered=10_000,
    )
    improved = acc.confident_gnmax_epsilon(ledger, delta=1e-5)
    classic = acc.confident_gnmax_epsilon(ledger, delta=1e-5, conversion="classic")
    assert round(improved, 3) == 0.990
    assert round(classic, 3) == 1.206
    # dp-accounting on dpaudit's own grid: the same numbers.
    rdp = acc.confident_gnmax_rdp(ledger)
    assert improved == pytest.approx(
        _dp_accounting(rdp, acc.RDP_ORDERS, 1e-5), rel=1e-12
    )
    # dp-accounting end to end (events, its default orders): 0.99005 at order 18.
    eps, order = reference.confident_gnmax_epsilon_dp_accounting(
        10_000, 10_000, sigma1=1500.0, sigma2=600.0, delta=1e-5
    )
    assert round(eps, 3) == 0.990
    assert order == 18.0
    assert improved == pytest.approx(eps, abs=5e-4)
    assert improved - classic < -0.2


@pytest.mark.parametrize(
    ("queries", "answered", "sigma1", "sigma2"),
    [
        (10_000, 10_000, 1500.0, 600.0),
        (16_000, 8_000, 1500.0, 600.0),
        (1_000, 1_000, 50.0, 40.0),
        (200, 0, 10.0, 5.0),
        (5, 5, 3.0, 2.0),
    ],
)
def test_composed_curve_equals_dp_accountings_gaussian_events(
    queries: int, answered: int, sigma1: float, sigma2: float
) -> None:
    accountant = rdp_privacy_accountant.RdpAccountant(list(acc.RDP_ORDERS))
    accountant.compose(
        reference.confident_gnmax_dp_event(
            queries, answered, sigma1=sigma1, sigma2=sigma2
        )
    )
    ours = acc.confident_gnmax_rdp_data_independent(
        queries, answered, sigma1=sigma1, sigma2=sigma2
    )
    np.testing.assert_allclose(ours, accountant.rdp, rtol=1e-12, atol=0.0)
    for delta in (1e-3, 1e-5, 1e-8):
        assert float(acc.epsilon_from_rdp(ours, delta=delta)) == pytest.approx(
            accountant.get_epsilon(delta), rel=1e-12
        )


# -------------------------------------------------------- the conversion itself
@settings(max_examples=60, deadline=None)
@given(
    scale=st.floats(1e-9, 50.0),
    power=st.floats(0.5, 2.0),
    delta=st.sampled_from([1e-2, 1e-5, 1e-9, 0.5]),
)
def test_improved_conversion_equals_dp_accounting(
    scale: float, power: float, delta: float
) -> None:
    # Curves from near zero (the KL branch: epsilon 0) to large; orders from 1.001
    # (below dp-accounting's 1.01 cut-off) to 10,001.
    orders = np.concatenate(
        [[1.001, 1.005, 1.01], acc.RDP_ORDERS[1:], [2.0, 3.0, 32.0, 256.0]]
    )
    rdp = scale * orders**power
    ours = float(acc.epsilon_from_rdp(rdp, delta=delta, orders=orders))
    assert ours == pytest.approx(
        _dp_accounting(rdp, orders, delta), rel=1e-12, abs=1e-15
    )
    assert (
        ours
        <= float(
            acc.epsilon_from_rdp(rdp, delta=delta, orders=orders, conversion="classic")
        )
        + 1e-15
    )


def test_improved_is_lower_than_classic_at_every_order() -> None:
    rdp = acc.confident_gnmax_rdp_data_independent(1_000, 500, sigma1=50.0, sigma2=20.0)
    usable = acc.RDP_ORDERS > 1.01
    improved = acc.epsilon_per_order(rdp, delta=1e-5)[usable]
    classic = acc.epsilon_per_order(rdp, delta=1e-5, conversion="classic")[usable]
    a = acc.RDP_ORDERS[usable]
    np.testing.assert_allclose(
        classic - improved,
        np.log(a / (a - 1)) + np.log(a) / (a - 1),
        rtol=1e-9,
        atol=1e-10,
    )  # cancellation at large a
    assert np.all(improved < classic)


def test_conversion_name_is_checked() -> None:
    with pytest.raises(InvalidParameterError, match="`conversion` must be one of"):
        acc.epsilon_from_rdp(
            np.ones(3), delta=1e-5, orders=[2.0, 3.0, 4.0], conversion="tight"
        )  # type: ignore[arg-type]


def test_the_improved_conversion_calibrates_less_noise() -> None:
    improved = acc.calibrate_confident_gnmax_sigmas(
        epsilon=1.0, delta=1e-5, num_queries=16_000
    )
    classic = acc.calibrate_confident_gnmax_sigmas(
        epsilon=1.0, delta=1e-5, num_queries=16_000, conversion="classic"
    )
    assert improved[1] < classic[1]
    rdp = acc.confident_gnmax_rdp_data_independent(
        16_000, 16_000, sigma1=improved[0], sigma2=improved[1]
    )
    assert _dp_accounting(rdp, acc.RDP_ORDERS, 1e-5) == pytest.approx(1.0, rel=1e-9)


# ------------------------------------------------------------------ log-moments
def _gap_ledger_moments(lam: float) -> np.ndarray:
    spec = acc.MomentsAccountantSpec(lam=lam, orders=100)
    return acc.moments_from_gap_counts([0, 32, 0, 128, 0, 160], spec)


@pytest.mark.parametrize("lam", [1e-4, 1e-3, 0.1, 0.4, 1.0, 2.0])
def test_improved_moments_conversion_is_the_rdp_conversion_of_alpha_over_l(
    lam: float,
) -> None:
    alpha = _gap_ledger_moments(lam)
    ls = np.arange(1, alpha.size + 1, dtype=np.float64)
    improved = float(acc.epsilon_from_moments(alpha, delta=1e-5, conversion="improved"))
    # dp-accounting on the RDP curve alpha(l) / l at orders l + 1.
    assert improved == pytest.approx(
        _dp_accounting(alpha / ls, ls + 1.0, 1e-5), rel=1e-12
    )
    # The offset form a batched (torch) accountant uses gives the same minimum.
    offset = acc.moments_offset(alpha.size, delta=1e-5, conversion="improved")
    assert float(np.min((alpha + offset) / ls)) == pytest.approx(improved, rel=1e-12)
    classic = float(acc.epsilon_from_moments(alpha, delta=1e-5))
    assert improved < classic


def test_classic_moments_conversion_is_unchanged_bit_for_bit() -> None:
    """The variants reproduce PATE-GAN's formula: the default must stay exactly it."""
    alpha = np.stack([_gap_ledger_moments(lam) for lam in (1e-3, 0.4, 1.0)])
    ls = np.arange(1, alpha.shape[1] + 1, dtype=np.float64)
    by_hand = np.min((alpha + math.log(1.0 / 1e-5)) / ls, axis=-1)
    assert np.array_equal(acc.epsilon_from_moments(alpha, delta=1e-5), by_hand)
    offset = acc.moments_offset(alpha.shape[1], delta=np.full(3, 1e-5))
    assert np.array_equal(np.min((alpha + offset) / ls, axis=-1), by_hand)
    spec = acc.MomentsAccountantSpec(lam=0.4, orders=100, index_bug=True)
    counts = [0, 32, 0, 128, 0, 160]
    assert np.array_equal(
        acc.pate_gan_epsilon(counts, spec, delta=1e-5),
        np.min(
            (acc.moments_from_gap_counts(counts, spec) + math.log(1e5)) / ls, axis=-1
        ),
    )


def test_per_model_delta_gives_per_model_offsets() -> None:
    deltas = np.array([1e-5, 1e-3])
    offset = acc.moments_offset(4, delta=deltas, conversion="improved")
    assert offset.shape == (2, 4)
    for i, d in enumerate(deltas):
        np.testing.assert_array_equal(
            offset[i], acc.moments_offset(4, delta=float(d), conversion="improved")
        )
    with pytest.raises(InvalidParameterError, match="`delta` must be in"):
        acc.moments_offset(4, delta=np.array([1e-5, 0.0]))


def test_dp_accounting_helpers_check_their_inputs() -> None:
    with pytest.raises(InvalidParameterError, match="`num_answered`"):
        reference.confident_gnmax_dp_event(3, 4, sigma1=1.0, sigma2=1.0)
    with pytest.raises(InvalidParameterError, match="`rdp`"):
        reference.dp_accounting_epsilon([1.0], delta=1e-5, orders=[2.0, 3.0])
    assert isinstance(
        reference.confident_gnmax_dp_event(1, 1, sigma1=1.0, sigma2=1.0),
        dp_accounting.ComposedDpEvent,
    )
