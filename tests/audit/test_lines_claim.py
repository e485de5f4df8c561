"""A claim of the (epsilon, delta) lines alone is tested on its own region, as a claim
with a profile is (dpaudit.audit.stats.calibrated; docs/soundness.md, "A claim of the
lines alone"): its rejection set holds the eps family's rule (eps_emp > epsilon), its
size on the lines is at most alpha, and randomized response at exactly the claimed
epsilon (its one test on the lines) is refuted at most alpha of the time."""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from scipy import stats

from dpaudit.audit.stats import ClaimedProfile, calibrated, exact, violation_ceiling

N, ALPHA = 100, 0.05 / 3


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 2.5])
def test_the_lines_test_holds_the_family_rule_at_its_size(epsilon: float) -> None:
    """Every count with eps_emp > epsilon is rejected by the claim's own test (so no
    VIOLATION of before is lost), which rejects more, at a size still at most
    alpha on the claimed lines (where the family's rule stays well below it)."""
    claim = ClaimedProfile(epsilon=epsilon, delta=1e-5)
    new = calibrated.deciding_counts(claim, N, N, alpha=ALPHA, delta=1e-5)
    old = calibrated.family_counts(epsilon, N, N, alpha=ALPHA, delta=1e-5)
    assert (new >= old).all() and (new > old).any()
    boundary = exact.lines_boundary(epsilon, 1e-5)
    assert exact.size(old, boundary, N) < exact.size(new, boundary, N) <= ALPHA
    # The verdict of every count on either side of the new set's edge is its own.
    for fp in np.flatnonzero(new >= 0)[:: max(1, N // 10)]:
        for fn in (int(new[fp]), int(new[fp]) + 1):
            judged = calibrated.judge(
                int(fp), N, fn, N, delta=1e-5, alpha=ALPHA, profile=claim
            )
            assert (judged.point.ratio > 1.0) == (fn <= new[fp])
            if judged.eps_emp > epsilon:
                assert judged.point.ratio > 1.0


@pytest.mark.parametrize(("epsilon", "n"), [(0.5, 100), (1.0, 200), (2.0, 400)])
def test_randomized_response_at_its_claim_is_refuted_at_most_alpha(
    epsilon: float, n: int
) -> None:
    """Randomized response at exactly the claimed epsilon (delta 0): its one
    non-trivial test has FPR = FNR = 1 / (1 + e^epsilon), on the claimed lines. The
    probability that the test deciding the claim refutes it, exactly over both
    binomials and maximised over its tests, is at most alpha."""
    p = 1.0 / (1.0 + math.exp(epsilon))
    claim = ClaimedProfile(epsilon=epsilon, delta=0.0)
    fpr, fnr = [p, 0.0, 1.0], [p, 1.0, 0.0]
    alarm = violation_ceiling(claim, fpr, fnr, n, n, alpha=ALPHA)
    assert alarm <= ALPHA
    # The test is not idle: randomized response at 1.5 epsilon is refuted more often.
    q = 1.0 / (1.0 + math.exp(1.5 * epsilon))
    assert violation_ceiling(claim, [q], [q], n, n, alpha=ALPHA) > alarm


def _simulator() -> ModuleType:
    path = Path(__file__).parents[2] / "benchmarks" / "profile_calibration.py"
    spec = importlib.util.spec_from_file_location("_dpaudit_lines_calibration", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.statistical
@pytest.mark.slow
def test_randomized_response_audits_raise_at_most_alpha_false_alarms(
    seed: int,
) -> None:
    """200 simulated audits (the audit's own analysis from validation and test
    scores on) of randomized response at epsilon 1 claiming (1, 0) with no profile,
    100 + 200 rounds per world, alpha 0.05. If each audit's false-alarm probability
    is at most 0.05, more than 20 VIOLATIONs has probability at most 0.0012 (one-sided
    binomial): the failure probability of this test."""
    sim = _simulator()
    out = sim.simulate(
        sim.randomized_response(1.0),
        ClaimedProfile(epsilon=1.0, delta=0.0),
        audits=200,
        validation=100,
        test=200,
        alpha=0.05,
        seed=7000 + seed,
    )
    assert stats.binom.sf(20, 200, 0.05) < 0.0012
    assert out.violations <= 20


def test_the_reasons_say_which_test_decided() -> None:
    """A VIOLATION of the lines' own test with eps_emp at most the claim says so, and
    a CONSISTENT where only the claim's own test could have refuted it says that."""
    from dpaudit.audit.games.verdict import Verdict, verdict_reason
    from dpaudit.audit.result.model import AttackResult
    from dpaudit.audit.stats.estimators import AttackCounts

    head = AttackResult(
        name="x",
        eps_emp=0.9,
        fpr_upper=0.1,
        fnr_upper=0.6,
        refutation_ratio=1.2,
        regions_violated=("lines",),
        counts=AttackCounts(tp=1, fp=0, tn=1, fn=0),
    )
    refuted = verdict_reason(
        Verdict.VIOLATION,
        eps_emp=0.9,
        eps_claimed=1.0,
        eps_max_attainable=4.0,
        point=head,
    )
    assert refuted.startswith("VIOLATION: the claim's own test refutes its")
    assert "refutation ratio 1.200" in refuted and "eps_emp 0.900" in refuted
    kept = verdict_reason(
        Verdict.CONSISTENT, eps_emp=0.0, eps_claimed=1.0, eps_max_attainable=0.95
    )
    assert "would have refuted the claim by its own test" in kept
    above = verdict_reason(
        Verdict.VIOLATION, eps_emp=1.5, eps_claimed=1.0, eps_max_attainable=4.0
    )
    assert above.startswith("VIOLATION: eps_emp 1.500 exceeds the claimed epsilon")
