"""Calibration of the profile test on mechanisms whose profile is known exactly:
false alarms on true claims at most alpha, and the power the issue asks for.

The simulator (benchmarks/profile_calibration.py) runs the audit's own analysis
(:func:`dpaudit.audit.games.scores.judge_scores`) from validation and test scores on; the
attack's score is the release itself (the likelihood ratio is monotone in it).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from scipy import stats

from dpaudit.audit.stats.ceiling import mu_ceiling
from dpaudit.audit.stats.profile import ClaimedProfile
from dpaudit.audit.stats.tradeoff import gdp_mu_of_eps


def _load() -> ModuleType:
    path = Path(__file__).parents[2] / "benchmarks" / "profile_calibration.py"
    spec = importlib.util.spec_from_file_location("_dpaudit_profile_calibration", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


sim = _load()
MU4 = gdp_mu_of_eps(4.0, 1e-5)


def _gaussian_audits(claim: ClaimedProfile, *, seed: int) -> Any:
    """60 simulated audits of the (4, 1e-5) Gaussian at 400 + 200 + 400 rounds per
    world, alpha 0.05 / 3 (the three default attacks)."""
    return sim.simulate(
        sim.gaussian(MU4),
        claim,
        audits=60,
        validation=200,
        test=400,
        alpha=0.05 / 3,
        seed=seed,
    )


@pytest.mark.statistical
@pytest.mark.slow
def test_true_profiles_raise_at_most_alpha_false_alarms(seed: int) -> None:
    """200 audits of true claims stating their exact profile (70 Gaussian with GDP,
    RDP and zCDP; 65 Laplace and 65 randomized response with their lines and RDP
    curves), 100 + 200 rounds per world, alpha 0.05 each. If each audit's false-alarm
    probability is at most 0.05 (the soundness argument), the number of VIOLATIONs
    exceeds 20 with probability at most 0.0012 (one-sided binomial test): the failure
    probability of this test."""
    runs = [
        (sim.gaussian(MU4), sim.gaussian_claim(4.0, zcdp=True), 70),
        (sim.laplace(1.0), sim.laplace_claim(1.0), 65),
        (sim.randomized_response(1.0), sim.randomized_response_claim(1.0), 65),
    ]
    alarms = 0
    for i, (sample, claim, n) in enumerate(runs):
        out = sim.simulate(
            sample,
            claim,
            audits=n,
            validation=100,
            test=200,
            alpha=0.05,
            seed=1000 * seed + i,
        )
        alarms += out.violations
    assert stats.binom.sf(20, 200, 0.05) < 0.0012
    assert alarms <= 20


@pytest.mark.statistical
@pytest.mark.slow
def test_a_fourfold_gaussian_overclaim_is_found(seed: int) -> None:
    """The exactly (4, 1e-5)-DP Gaussian (mu 0.925) claiming (1, 1e-5) with the
    Gaussian's profile at that epsilon, 400 + 200 + 400 rounds per world, alpha
    0.05 / 3 (the audit's three default attacks): VIOLATION in at least 95% of 60
    audits with GDP and RDP stated, and in at least 70% of 40 with only the RDP curve.
    Measured detection rates (benchmarks/profile_calibration.py, 300 audits each):
    300 of 300 for both with the exact test (0.990 and 0.977 with the per-rate box
    before it); at 0.99, fewer than 57 of 60 has probability 0.003, and at 0.977,
    fewer than 28 of 40 has probability below 1e-11: the failure probability of
    this test is at most 0.004. The mean mu_emp is also at least 0.55 mu (the exact
    test's ceiling is 0.757 mu, measured mean 0.757 mu), checked with 60 audits whose
    mu_emp has a standard deviation of about 0.05, so the mean's margin (0.75 - 0.55)
    is over 20 standard errors."""
    full = _gaussian_audits(sim.gaussian_claim(1.0), seed=2000 + seed)
    assert full.violations >= 57
    assert full.mean_mu_emp / MU4 >= 0.55
    assert full.mean_mu_emp <= mu_ceiling(MU4, 400, 400, alpha=0.05 / 3) * 1.1
    rdp_only = sim.simulate(
        sim.gaussian(MU4),
        sim.gaussian_claim(1.0, gdp=False),
        audits=40,
        validation=200,
        test=400,
        alpha=0.05 / 3,
        seed=3000 + seed,
    )
    assert rdp_only.violations >= 28


def test_a_lines_only_claim_selects_exactly_as_before() -> None:
    """With the per-rate box (``box=True``, the test before the exact one) and a
    lines-only claim the threshold is the eps_lo one: judge_scores and
    select_threshold without a profile agree."""
    import numpy as np

    from dpaudit.audit.stats.thresholds import select_threshold

    gen = np.random.default_rng(5)
    y = np.repeat([0, 1], 200)
    s_val, s_test = gen.normal(y * 0.9, 1.0), gen.normal(y * 0.9, 1.0)
    judged = sim.judge_scores(
        s_val,
        y,
        s_test,
        y,
        delta=1e-5,
        alpha=0.05,
        method="clopper_pearson",
        profile=ClaimedProfile(epsilon=1.0, delta=1e-5),
        box=True,
    )
    assert (judged.threshold, judged.direction) == select_threshold(
        s_val, y, delta=1e-5, alpha=0.05
    )


@pytest.mark.statistical
@pytest.mark.slow
def test_the_exact_test_finds_a_gaussian_claiming_two_and_a_half(seed: int) -> None:
    """The exactly (4, 1e-5)-DP Gaussian claiming (2.5, 1e-5) with the Gaussian's
    profile at that epsilon, 1,000 rounds per world (200 + 400 validation and test
    rounds), alpha 0.05 / 3: measured 854 VIOLATIONs of 1,000 audits with the exact
    test, 371 with the per-rate box (``python benchmarks/profile_calibration.py
    --table power --mechanisms gaussian --rounds 1000 --epsilons 2.5 --audits 1000``).
    At least 40 of 60 here: if the detection rate is at least 0.80, fewer has
    probability 0.0048, the failure probability of this test."""
    out = _gaussian_audits(sim.gaussian_claim(2.5), seed=4000 + seed)
    assert stats.binom.cdf(39, 60, 0.80) < 0.005
    assert out.violations >= 40
