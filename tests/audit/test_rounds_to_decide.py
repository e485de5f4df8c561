"""The rounds that would decide a one-sided CONSISTENT
(:func:`dpaudit.audit.stats.claimnotes.rounds_to_decide`) come from the test that
decides the audit: at the size it names, counts with the observed error rates are
refuted by the exact test (the verdict's eps_emp exceeds the claim), one test round
fewer they are not; beyond the exact test's sizes, and with Jeffreys, the per-rate
box answers."""

from __future__ import annotations

import math

import pytest

from dpaudit.audit.stats import AttackCounts, calibrated, estimators
from dpaudit.audit.stats.claimnotes import rounds_to_decide

SPLIT = (0.4, 0.2, 0.4)


def _test_rounds(rounds: int) -> int:
    return rounds - round(SPLIT[0] * rounds) - round(SPLIT[1] * rounds)


def _exact_eps(fp_rate: float, fn_rate: float, n: int, alpha: float) -> float:
    fp, fn = math.ceil(fp_rate * n), math.ceil(fn_rate * n)
    return calibrated.judge(fp, n, fn, n, delta=1e-5, alpha=alpha).eps_emp


@pytest.mark.parametrize(
    ("counts", "claim", "alpha"),
    [
        (AttackCounts(tp=10, fp=0, tn=20, fn=10), 1.0, 0.05 / 3),
        (AttackCounts(tp=400, fp=30, tn=370, fn=0), 2.0, 0.05 / 3),
        (AttackCounts(tp=30, fp=0, tn=40, fn=10), 0.5, 0.05),
    ],
)
def test_the_size_named_is_the_exact_tests_first_refuting_size(
    counts: AttackCounts, claim: float, alpha: float
) -> None:
    rounds = rounds_to_decide(counts=counts, eps_claimed=claim, delta=1e-5, alpha=alpha)
    assert rounds is not None
    n = _test_rounds(rounds)
    fp_rate = counts.fp / (counts.fp + counts.tn)
    fn_rate = counts.fn / (counts.fn + counts.tp)
    assert calibrated.applies(n, n)
    assert _exact_eps(fp_rate, fn_rate, n, alpha) > claim
    # The fewest: the test rounds of one round per world less refute nothing.
    fewer = _test_rounds(rounds - 1)
    if fewer < n:
        assert _exact_eps(fp_rate, fn_rate, fewer, alpha) <= claim


def test_the_exact_test_needs_no_more_rounds_than_the_box() -> None:
    """The exact test refutes these counts from fewer rounds than the per-rate box
    (which decided audits before it, and still answers with Jeffreys)."""
    counts = AttackCounts(tp=10, fp=0, tn=20, fn=10)
    kwargs = {"counts": counts, "eps_claimed": 1.0, "delta": 1e-5, "alpha": 0.05 / 3}
    exact = rounds_to_decide(**kwargs)  # type: ignore[arg-type]
    assert exact == 65
    box = math.inf
    for rounds in range(exact, 200):  # the box's own first refuting size
        n = _test_rounds(rounds)
        c = AttackCounts(tp=n - math.ceil(n / 2), fp=0, tn=n, fn=math.ceil(n / 2))
        if estimators.eps_lower_bound(c, delta=1e-5, alpha=0.05 / 3) > 1.0:
            box = rounds
            break
    assert exact < box < 200


def test_beyond_the_exact_tests_sizes_the_box_answers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Where the exact test is not computed (here: nowhere) the size is the
    box's: its bound exceeds the claim there and not one round per world before;
    Jeffreys is always the box's."""
    monkeypatch.setattr(calibrated, "applies", lambda n0, n1: False)
    counts = AttackCounts(tp=10, fp=0, tn=20, fn=10)

    def box(rounds: int, method: str) -> float:
        n = _test_rounds(rounds)
        fn = math.ceil(n / 2)
        c = AttackCounts(tp=n - fn, fp=0, tn=n, fn=fn)
        return estimators.eps_lower_bound(
            c,
            delta=1e-5,
            alpha=0.05 / 3,
            method=method,  # type: ignore[arg-type]
        )

    for method in ("clopper_pearson", "jeffreys"):
        rounds = rounds_to_decide(
            counts=counts,
            eps_claimed=1.0,
            delta=1e-5,
            alpha=0.05 / 3,
            method=method,
        )
        assert rounds is not None
        assert box(rounds, method) > 1.0 >= box(rounds - 1, method)
