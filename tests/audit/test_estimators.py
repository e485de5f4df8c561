"""Tests of dpaudit.audit.stats.estimators: oracles, pinned values, properties."""

from __future__ import annotations

import doctest
import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from dpaudit.audit.games.estimate import EpsilonEstimate, estimate
from dpaudit.audit.stats import estimators
from dpaudit.audit.stats.bayesian import eps_bayesian
from dpaudit.audit.stats.estimators import (
    AttackCounts,
    bonferroni_alpha,
    eps_lower_bound,
    eps_max_attainable,
    rate_upper_bound,
)
from dpaudit.audit.stats.thresholds import roc_auc, roc_curve, select_threshold
from dpaudit.errors import InvalidParameterError

TEMPLATE = re.compile(r"^`\w+` must be .+\. Got .+\.$", re.DOTALL)
DELTA = 1e-5
FAST = settings(max_examples=100, deadline=None)


def _eps_reference(counts: AttackCounts, delta: float, alpha: float) -> float:
    """DESIGN.md rule 5, written independently with statsmodels' two-sided interval."""

    def upper(k: int, n: int) -> float:
        # With no rounds there is nothing to bound: the rate may be anything.
        return proportion_confint(k, n, alpha=alpha, method="beta")[1] if n else 1.0

    a = upper(counts.fp, counts.n_non_members)
    b = upper(counts.fn, counts.n_members)
    terms = [0.0]
    if 1 - a - delta > 0:
        terms.append(math.log((1 - a - delta) / b))
    if 1 - b - delta > 0:
        terms.append(math.log((1 - b - delta) / a))
    return max(terms)


counts_strategy = st.builds(
    AttackCounts,
    tp=st.integers(0, 300),
    fp=st.integers(0, 300),
    tn=st.integers(0, 300),
    fn=st.integers(0, 300),
)
alphas = st.floats(1e-4, 0.5)
deltas = st.sampled_from([0.0, 1e-6, 1e-5, 1e-3, 0.05])


def test_doctests_pass() -> None:
    result = doctest.testmod(estimators, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0


# ------------------------------------------------------------------- rate bounds


@given(n=st.integers(1, 2000), frac=st.floats(0, 1), alpha=alphas)
@FAST
def test_clopper_pearson_matches_statsmodels(n: int, frac: float, alpha: float) -> None:
    k = min(n, int(frac * n))
    expected = proportion_confint(k, n, alpha=2 * alpha, method="beta")[1]
    got = rate_upper_bound(k, n, alpha=alpha, method="clopper_pearson")
    assert got == pytest.approx(expected, rel=1e-12, abs=1e-15)


@given(n=st.integers(1, 2000), frac=st.floats(0, 1), alpha=alphas)
@FAST
def test_jeffreys_matches_statsmodels(n: int, frac: float, alpha: float) -> None:
    k = min(n - 1, int(frac * n))  # statsmodels does not clip the k == n case to 1
    expected = proportion_confint(k, n, alpha=2 * alpha, method="jeffreys")[1]
    got = rate_upper_bound(k, n, alpha=alpha, method="jeffreys")
    assert got == pytest.approx(expected, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("method", ["clopper_pearson", "jeffreys"])
def test_rate_bound_edge_cases(method: str) -> None:
    assert rate_upper_bound(7, 7, alpha=0.05, method=method) == 1.0
    assert rate_upper_bound(0, 0, alpha=0.05, method=method) == 1.0
    # k = 0: Clopper-Pearson has the closed form 1 - alpha ** (1 / n).
    assert rate_upper_bound(0, 400, alpha=0.05) == pytest.approx(1 - 0.05 ** (1 / 400))


# ----------------------------------------------------------------- eps_lower_bound


@pytest.mark.parametrize(("n", "expected"), [(400, 4.68), (1000, 5.60)])
def test_max_attainable_matches_references(n: int, expected: float) -> None:
    """REFERENCES.md, "Empirical epsilon": 4.68 (400 + 400) and 5.60 (1,000 + 1,000)."""
    value = eps_max_attainable(n, n, delta=DELTA)
    assert round(value, 2) == expected
    perfect = AttackCounts(tp=n, fp=0, tn=n, fn=0)
    assert eps_lower_bound(perfect, delta=DELTA) == value


@given(counts=counts_strategy, alpha=alphas, delta=deltas)
@FAST
def test_eps_lower_bound_matches_reference(
    counts: AttackCounts, alpha: float, delta: float
) -> None:
    expected = _eps_reference(counts, delta, alpha)
    got = eps_lower_bound(counts, delta=delta, alpha=alpha)
    assert got == pytest.approx(expected, rel=1e-10, abs=1e-12)


def test_eps_lower_bound_pinned_value() -> None:
    counts = AttackCounts(tp=300, fp=20, tn=380, fn=100)
    assert eps_lower_bound(counts, delta=DELTA) == pytest.approx(
        2.224628921475, abs=1e-9
    )


@given(
    counts=counts_strategy,
    alpha=alphas,
    delta=deltas,
    method=st.sampled_from(["clopper_pearson", "jeffreys"]),
)
@FAST
def test_eps_lower_bound_properties(
    counts: AttackCounts, alpha: float, delta: float, method: str
) -> None:
    eps = eps_lower_bound(counts, delta=delta, alpha=alpha, method=method)
    assert eps >= 0.0
    ceiling = eps_max_attainable(
        counts.n_non_members, counts.n_members, delta=delta, alpha=alpha, method=method
    )
    assert eps <= ceiling + 1e-12
    # One more false positive (same number of non-member rounds) never helps.
    if counts.tn > 0:
        worse = AttackCounts(
            tp=counts.tp, fp=counts.fp + 1, tn=counts.tn - 1, fn=counts.fn
        )
        assert eps_lower_bound(worse, delta=delta, alpha=alpha, method=method) <= eps
    # Nor does one more false negative.
    if counts.tp > 0:
        worse = AttackCounts(
            tp=counts.tp - 1, fp=counts.fp, tn=counts.tn, fn=counts.fn + 1
        )
        assert eps_lower_bound(worse, delta=delta, alpha=alpha, method=method) <= eps
    # Asking for more confidence (smaller alpha) gives a smaller bound.
    stricter = eps_lower_bound(counts, delta=delta, alpha=alpha / 2, method=method)
    assert stricter <= eps


@given(counts=counts_strategy, alpha=alphas, delta=deltas)
@FAST
def test_jeffreys_is_at_least_clopper_pearson(
    counts: AttackCounts, alpha: float, delta: float
) -> None:
    cp = eps_lower_bound(counts, delta=delta, alpha=alpha, method="clopper_pearson")
    jeffreys = eps_lower_bound(counts, delta=delta, alpha=alpha, method="jeffreys")
    assert jeffreys >= cp


@given(counts=counts_strategy)
@FAST
def test_eps_lower_bound_symmetric_in_the_two_rates(counts: AttackCounts) -> None:
    swapped = AttackCounts(tp=counts.tn, fp=counts.fn, tn=counts.tp, fn=counts.fp)
    assert eps_lower_bound(swapped, delta=DELTA) == eps_lower_bound(counts, delta=DELTA)


def test_eps_lower_bound_trivial_attack_is_zero() -> None:
    coin = AttackCounts(tp=200, fp=200, tn=200, fn=200)
    assert eps_lower_bound(coin, delta=DELTA) == 0.0
    assert eps_lower_bound(AttackCounts(tp=0, fp=0, tn=0, fn=0), delta=DELTA) == 0.0


# --------------------------------------------------------------------- counts


@given(
    data=st.lists(
        st.tuples(st.floats(-5, 5, allow_nan=False), st.integers(0, 1)), max_size=60
    ),
    threshold=st.floats(-5, 5, allow_nan=False),
    direction=st.sampled_from([1, -1]),
)
@FAST
def test_from_scores_agrees_with_from_guesses(
    data: list[tuple[float, int]], threshold: float, direction: int
) -> None:
    scores = np.array([s for s, _ in data], dtype=np.float64)
    labels = np.array([y for _, y in data], dtype=np.int64)
    if direction == 1:
        guesses = scores >= threshold
    else:
        guesses = scores <= threshold
    by_scores = AttackCounts.from_scores(
        scores, labels, threshold=threshold, direction=direction
    )
    by_guesses = AttackCounts.from_guesses(guesses.astype(int), labels)
    assert by_scores == by_guesses
    assert by_scores.n_members == int(labels.sum())
    assert by_scores.n_non_members == len(labels) - int(labels.sum())


def test_counts_properties_and_json_round_trip() -> None:
    counts = AttackCounts(tp=90, fp=10, tn=390, fn=310)
    assert counts.fpr == pytest.approx(10 / 400)
    assert counts.fnr == pytest.approx(310 / 400)
    assert counts.to_json() == {"tp": 90, "fp": 10, "tn": 390, "fn": 310}
    assert AttackCounts.from_json(counts.to_json()) == counts
    assert math.isnan(AttackCounts(tp=1, fp=0, tn=0, fn=0).fpr)
    normalised = AttackCounts(tp=np.int64(3), fp=0, tn=0, fn=0)
    assert type(normalised.tp) is int


def test_from_guesses_accepts_booleans() -> None:
    counts = AttackCounts.from_guesses(
        np.array([True, False, True]), np.array([True, True, False])
    )
    assert counts == AttackCounts(tp=1, fp=1, tn=0, fn=1)


# ---------------------------------------------------------------- select_threshold


def _brute_force_best(scores: np.ndarray, labels: np.ndarray, alpha: float) -> float:
    best = 0.0
    for threshold in np.unique(scores):
        for direction in (1, -1):
            counts = AttackCounts.from_scores(
                scores, labels, threshold=float(threshold), direction=direction
            )
            best = max(best, eps_lower_bound(counts, delta=DELTA, alpha=alpha))
    return best


def test_select_threshold_recovers_perfect_separation() -> None:
    members = np.linspace(0.6, 1.0, 100)
    non_members = np.linspace(0.0, 0.4, 100)
    scores = np.concatenate([non_members, members])
    labels = np.concatenate([np.zeros(100, int), np.ones(100, int)])
    threshold, direction = select_threshold(scores, labels, delta=DELTA)
    assert (threshold, direction) == (0.6, 1)
    counts = AttackCounts.from_scores(
        scores, labels, threshold=threshold, direction=direction
    )
    assert counts == AttackCounts(tp=100, fp=0, tn=100, fn=0)


def test_select_threshold_finds_reversed_direction() -> None:
    members = np.linspace(-1.0, -0.6, 100)
    non_members = np.linspace(-0.4, 0.0, 100)
    scores = np.concatenate([members, non_members])
    labels = np.concatenate([np.ones(100, int), np.zeros(100, int)])
    threshold, direction = select_threshold(scores, labels, delta=DELTA)
    assert (threshold, direction) == (-0.6, -1)


def test_select_threshold_tie_break_is_deterministic() -> None:
    # Too few rounds for any positive bound: every candidate ties at 0, so the
    # choice is direction +1 and the (lower) middle unique value.
    threshold, direction = select_threshold(
        [0.1, 0.2, 0.3, 0.4], [0, 1, 0, 1], delta=DELTA
    )
    assert (threshold, direction) == (0.2, 1)


@pytest.mark.parametrize("alpha", [0.05, 0.2])
def test_select_threshold_matches_brute_force(seed: int, alpha: float) -> None:
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 2, size=300)
    # Rounded scores create ties between rounds, which the cumulative counts must handle.
    scores = np.round(rng.normal(loc=1.5 * labels, scale=1.0), 1)
    threshold, direction = select_threshold(scores, labels, delta=DELTA, alpha=alpha)
    chosen = AttackCounts.from_scores(
        scores, labels, threshold=threshold, direction=direction
    )
    value = eps_lower_bound(chosen, delta=DELTA, alpha=alpha)
    assert value == pytest.approx(_brute_force_best(scores, labels, alpha), abs=1e-12)
    assert value > 0.0


# --------------------------------------------------------------------- Bayesian


@pytest.mark.statistical
@pytest.mark.parametrize(
    "counts",
    [
        AttackCounts(tp=400, fp=0, tn=400, fn=0),
        AttackCounts(tp=300, fp=20, tn=380, fn=100),
        AttackCounts(tp=120, fp=70, tn=130, fn=80),
    ],
)
def test_eps_bayesian_matches_monte_carlo(seed: int, counts: AttackCounts) -> None:
    """The deterministic quantile lies between Monte-Carlo order statistics.

    With N posterior draws, the number of draws below the true alpha-quantile q is
    Binomial(N, alpha); the order statistics at ranks N*alpha -/+ 5 standard
    deviations bracket q except with probability < 1e-6 per case (normal
    approximation of the binomial tail; N*alpha = 10,000 here).
    """
    alpha, n_draws = 0.05, 200_000
    rng = np.random.default_rng(seed)
    fpr = rng.beta(counts.fp + 1.0, counts.tn + 1.0, n_draws)
    fnr = rng.beta(counts.fn + 1.0, counts.tp + 1.0, n_draws)
    samples = np.sort(estimators._eps_from_rates(fpr, fnr, DELTA))
    sd = math.sqrt(n_draws * alpha * (1 - alpha))
    low = samples[math.floor(n_draws * alpha - 5 * sd)]
    high = samples[math.ceil(n_draws * alpha + 5 * sd)]
    value = eps_bayesian(counts, delta=DELTA, alpha=alpha)
    assert low - 1e-9 <= value <= high + 1e-9


def test_eps_bayesian_exact_survival_identity() -> None:
    """At the returned value, P(eps >= value) = 1 - alpha (independent 2-D quadrature)."""
    from scipy import integrate

    counts, alpha = AttackCounts(tp=60, fp=5, tn=55, fn=20), 0.1
    value = eps_bayesian(counts, delta=DELTA, alpha=alpha)
    fpr_post = stats.beta(counts.fp + 1, counts.tn + 1)
    fnr_post = stats.beta(counts.fn + 1, counts.tp + 1)

    def inner(x: float) -> float:
        bound = max((1 - x - DELTA) * math.exp(-value), 1 - DELTA - math.exp(value) * x)
        return float(fpr_post.pdf(x) * fnr_post.cdf(min(max(bound, 0.0), 1.0)))

    prob, _ = integrate.quad(inner, 0.0, 1.0, points=[0.05, 0.1, 0.2], limit=200)
    assert prob == pytest.approx(1 - alpha, abs=1e-6)


def test_eps_bayesian_zero_and_ordering() -> None:
    assert eps_bayesian(AttackCounts(tp=5, fp=5, tn=5, fn=5), delta=DELTA) == 0.0
    strong = AttackCounts(tp=380, fp=5, tn=395, fn=20)
    assert eps_bayesian(strong, delta=DELTA) > eps_lower_bound(strong, delta=DELTA)
    assert eps_bayesian(strong, delta=DELTA, alpha=0.01) < eps_bayesian(
        strong, delta=DELTA, alpha=0.1
    )


# ------------------------------------------------------------------------- ROC


def test_roc_auc_and_curve() -> None:
    scores, labels = [0.1, 0.4, 0.35, 0.8], [0, 0, 1, 1]
    assert roc_auc(scores, labels) == 0.75
    fpr, tpr = roc_curve(scores, labels)
    assert fpr[0] == 0.0
    assert tpr[0] == 0.0
    assert fpr[-1] == 1.0
    assert tpr[-1] == 1.0
    assert all(isinstance(v, float) for v in fpr + tpr)
    assert np.trapezoid(tpr, fpr) == pytest.approx(0.75)


def test_roc_with_one_class_missing() -> None:
    assert roc_auc([0.2, 0.3], [1, 1]) == 0.5
    assert roc_curve([0.2, 0.3], [0, 0]) == ([0.0, 1.0], [0.0, 1.0])


# --------------------------------------------------------------- estimate, misc


def test_estimate_and_json_round_trip() -> None:
    counts = AttackCounts(tp=300, fp=20, tn=380, fn=100)
    est = estimate(counts, delta=DELTA, alpha=0.05, method="jeffreys")
    assert est.eps_lo == eps_lower_bound(counts, delta=DELTA, method="jeffreys")
    assert est.eps_max_attainable == eps_max_attainable(
        400, 400, delta=DELTA, method="jeffreys"
    )
    data = est.to_json()
    assert set(data) == {
        "eps_lo",
        "eps_max_attainable",
        "method",
        "alpha",
        "delta",
        "counts",
    }
    assert data["counts"] == {"tp": 300, "fp": 20, "tn": 380, "fn": 100}
    assert EpsilonEstimate.from_json(data) == est


def test_bonferroni_alpha() -> None:
    assert bonferroni_alpha(0.05, 5) == pytest.approx(0.01)
    assert bonferroni_alpha(0.05, 1) == 0.05


# ---------------------------------------------------------------- invalid inputs

GOOD = AttackCounts(tp=10, fp=1, tn=9, fn=0)


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: AttackCounts(tp=-1, fp=0, tn=0, fn=0), "tp"),
        (lambda: AttackCounts(tp=0, fp=1.5, tn=0, fn=0), "fp"),
        (lambda: AttackCounts(tp=0, fp=0, tn=True, fn=0), "tn"),
        (lambda: rate_upper_bound(5, 3, alpha=0.05), "errors"),
        (lambda: rate_upper_bound(0, 3, alpha=0.0), "alpha"),
        (lambda: rate_upper_bound(0, 3, alpha=0.05, method="wald"), "method"),
        (lambda: eps_lower_bound(GOOD, delta=1.5), "delta"),
        (lambda: eps_lower_bound(GOOD, delta=-1e-5), "delta"),
        (lambda: eps_lower_bound(GOOD, delta=DELTA, alpha=1.0), "alpha"),
        (lambda: eps_lower_bound((10, 1, 9, 0), delta=DELTA), "counts"),
        (lambda: eps_max_attainable(-4, 4, delta=DELTA), "n_non_members"),
        (lambda: eps_bayesian(GOOD, delta=DELTA, prior=(0.0, 1.0)), "prior"),
        (lambda: eps_bayesian(GOOD, delta=DELTA, alpha=2.0), "alpha"),
        (lambda: AttackCounts.from_guesses([0, 1, 2], [0, 1, 1]), "guesses"),
        (lambda: AttackCounts.from_guesses([0, 1], [0, 1, 1]), "guesses"),
        (lambda: AttackCounts.from_scores([0.1], [0.5], threshold=0.0), "labels"),
        (lambda: AttackCounts.from_scores([np.nan], [1], threshold=0.0), "scores"),
        (
            lambda: AttackCounts.from_scores([0.1], [1], threshold=0.0, direction=0),
            "direction",
        ),
        (lambda: AttackCounts.from_scores([0.1], [1], threshold=np.inf), "threshold"),
        (lambda: select_threshold([], [], delta=DELTA), "scores"),
        (lambda: select_threshold([0.1, 0.2], [0], delta=DELTA), "scores"),
        (lambda: roc_auc([[0.1]], [1]), "scores"),
        (lambda: bonferroni_alpha(0.05, 0), "n_tests"),
        (lambda: bonferroni_alpha(1.5, 2), "alpha"),
        (lambda: AttackCounts.from_json({"tp": 1}), "counts"),
        (lambda: EpsilonEstimate.from_json({"eps_lo": 1.0}), "estimate"),
        (
            lambda: EpsilonEstimate(
                eps_lo=-1.0,
                eps_max_attainable=1.0,
                method="clopper_pearson",
                alpha=0.05,
                delta=DELTA,
                counts=GOOD,
            ),
            "eps_lo",
        ),
    ],
)
def test_invalid_inputs_raise_with_template(call: object, name: str) -> None:
    with pytest.raises(InvalidParameterError) as info:
        call()  # type: ignore[operator]
    message = str(info.value)
    assert TEMPLATE.match(message), message
    assert message.startswith(f"`{name}`"), message
