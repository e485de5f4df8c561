"""The one-run count rule's guesses planned from the configuration
(dpaudit/audit/games/one_run/counts.py): deterministic, in range, a function of the
configuration alone (never of scores, bits or seed), explicit counts untouched, the
expected correct count exact, and simulated audits with the planned counts on the
claimed boundary raise false alarms at most alpha."""

from __future__ import annotations

import inspect
import math
from typing import Any

import numpy as np
import pytest
from scipy import stats

from dpaudit.audit.config.model import AuditConfig
from dpaudit.audit.games.one_run.counts import (
    CANDIDATES,
    count_alpha,
    expected_correct,
    plan_counts,
)
from dpaudit.audit.games.one_run.game import planned_counts
from dpaudit.audit.games.one_run.plan import OneRunPlan
from dpaudit.audit.stats import onerun_fdp
from dpaudit.audit.stats.tradeoff import eps_of_gdp, gdp_mu_of_eps
from dpaudit.errors import InvalidParameterError
from dpaudit.worst_case.canaries import canary_design


def test_the_same_configuration_plans_the_same_counts() -> None:
    plan_counts.cache_clear()
    first = plan_counts(canaries=1000, epsilon=4.0, delta=1e-5, alpha=0.05, bound="fdp")
    plan_counts.cache_clear()
    again = plan_counts(canaries=1000, epsilon=4.0, delta=1e-5, alpha=0.05, bound="fdp")
    assert first == again and first.planned
    assert first.planning_mu == pytest.approx(gdp_mu_of_eps(4.0, 1e-5))


@pytest.mark.parametrize("canaries", [2, 7, 200, 1000, 10000])
@pytest.mark.parametrize("epsilon", [0.5, 1.0, 4.0, 10.0])
def test_planned_counts_are_candidates_in_range(canaries: int, epsilon: float) -> None:
    counts = plan_counts(
        canaries=canaries, epsilon=epsilon, delta=1e-5, alpha=0.05, bound="fdp"
    )
    k = counts.guesses_in
    assert counts.guesses_out == k and 1 <= k <= canaries // 2
    grid = {min(canaries // 2, max(1, round(canaries * c / 1000))) for c in CANDIDATES}
    assert k in grid


@pytest.mark.parametrize(
    ("canaries", "epsilon"), [(1000, 4.0), (10000, 4.0), (200, 1.0)]
)
def test_the_attainable_maximum_stays_above_the_configured_epsilon(
    canaries: int, epsilon: float
) -> None:
    """Where some candidate count could show more than the configured epsilon with
    every guess right, the planned one can: a gross overclaim stays detectable."""
    k = plan_counts(
        canaries=canaries, epsilon=epsilon, delta=1e-5, alpha=0.05, bound="fdp"
    ).guesses_in
    most = onerun_fdp.eps_lower_bound(
        canaries=canaries, guesses=2 * k, correct=2 * k, delta=1e-5, alpha=0.05
    )
    assert most > epsilon


def test_the_expected_correct_count_is_the_simulated_mean() -> None:
    """The mixture's quantile gives the mean correct count of top-k/bottom-k guesses
    on ideal Gaussian scores: 400 simulated audits agree within 4 standard errors
    (seeded)."""
    gen = np.random.default_rng(17)
    m, k, mu = 2000, 150, 1.0
    bits = gen.integers(0, 2, size=(400, m))
    scores = gen.normal(size=bits.shape) + mu * bits
    order = np.argsort(scores, axis=1)
    top = np.take_along_axis(bits, order[:, -k:], axis=1).sum(axis=1)
    bottom = (1 - np.take_along_axis(bits, order[:, :k], axis=1)).sum(axis=1)
    right = top + bottom
    expected = expected_correct(canaries=m, guesses=k, mu=mu)
    assert abs(right.mean() - expected) < 4 * right.std() / math.sqrt(len(right))
    assert expected_correct(canaries=m, guesses=k, mu=0.0) == pytest.approx(k)


def test_the_planner_reads_the_configuration_only() -> None:
    """Its inputs are the configuration's numbers (no scores, bits, release or
    seed): the same configuration at other seeds plans the same counts, on bits
    that differ."""
    params = set(inspect.signature(plan_counts.__wrapped__).parameters)
    assert params == {"canaries", "epsilon", "delta", "alpha", "bound"}
    design = canary_design("worst-case-continuous", canaries=500)
    plans = []
    for seed in (0, 1, 2):
        config = AuditConfig(game="one-run", canaries=500, seed=seed, epsilon=2.0)
        counts = planned_counts(config, design)
        assert counts is not None and counts.planned
        plans.append(
            OneRunPlan.create(
                fits=1, canaries=500, guesses=None, seed=seed, counts=counts
            )
        )
    assert len({(p.guesses_in, p.guesses_out) for p in plans}) == 1
    assert all(p.planned for p in plans)
    assert not np.array_equal(plans[0].bits, plans[1].bits)
    # The count rule's share: half of alpha beside a threshold rule (rule both).
    share = count_alpha(alpha=0.05, rule="both", threshold=True)
    expected = plan_counts(
        canaries=500, epsilon=2.0, delta=1e-5, alpha=share or 0.0, bound="fdp"
    )
    assert (plans[0].guesses_in, plans[0].planning_mu) == (
        expected.guesses_in,
        expected.planning_mu,
    )


def test_explicit_guesses_are_used_as_given() -> None:
    design = canary_design("worst-case-continuous", canaries=500)
    config = AuditConfig(game="one-run", canaries=500, guesses=37, guesses_out=5)
    assert planned_counts(config, design) is None
    plan = OneRunPlan.create(
        fits=1, canaries=500, guesses=37, guesses_out=5, seed=0, counts=None
    )
    assert (plan.guesses_in, plan.guesses_out, plan.planned) == (37, 5, False)
    assert plan.planning_mu is None
    # Threshold rule only: the count rule does not run, so nothing is planned.
    alone = AuditConfig(game="one-run", canaries=500, guess_rule="threshold")
    assert planned_counts(alone, design) is None


def test_bad_planner_input_is_refused() -> None:
    with pytest.raises(InvalidParameterError, match="bound"):
        plan_counts(canaries=100, epsilon=1.0, delta=1e-5, alpha=0.05, bound="auto")
    with pytest.raises(InvalidParameterError, match="canaries"):
        plan_counts(canaries=1, epsilon=1.0, delta=1e-5, alpha=0.05, bound="fdp")
    with pytest.raises(InvalidParameterError, match="epsilon"):
        plan_counts(canaries=100, epsilon=0.0, delta=1e-5, alpha=0.05, bound="fdp")


# ------------------------------------------------------------------ calibration

CANARIES = 200
AUDITS = 2000
ALPHA = 0.05


@pytest.mark.statistical
@pytest.mark.parametrize("mechanism", ["gaussian", "rr"])
@pytest.mark.parametrize("bound", ["fdp", "order"])
def test_planned_counts_keep_false_alarms_below_alpha(
    mechanism: str, bound: str, onerun_releases: Any, onerun_false_alarms: Any
) -> None:
    """2,000 simulated one-run audits (200 canaries, the game's rules with the
    counts planned from the configuration, alpha 0.05) of a mechanism whose claim is
    exactly true: the 1-GDP Gaussian claiming mu 1 and its epsilon at delta 1e-5
    (the whole curve is tested), and 1-DP randomized response claiming (1, 0). The
    one-sided 95% Clopper-Pearson upper bound of the false-alarm rate must be at most
    alpha.

    Failure probability: the planned counts are fixed before the scores, so each
    audit is a level-alpha test. Measured alarms of 2,000 (planned 35, 50, 35, 35
    per side): Gaussian fdp 1, order 0; randomized response fdp 76 (3.8%: the
    (epsilon, delta) lines are tight for randomized response, so its rate may
    approach alpha), order 21. The criterion fails at 84 alarms or more: with
    probability below 1e-5 at a true rate of 2.5%, about 0.19 at 3.8% (so another
    seed could fail the randomized-response fdp case about one time in five
    without any fault). The seed is fixed: the outcome is fixed."""
    gen = np.random.default_rng([17, len(mechanism), len(bound)])
    bits, scores = onerun_releases(mechanism, gen, audits=AUDITS, canaries=CANARIES)
    if mechanism == "gaussian":
        eps_claimed, delta, mu = eps_of_gdp(1.0, 1e-5), 1e-5, 1.0
    else:
        eps_claimed, delta, mu = 1.0, 0.0, None
    ties = gen.random(bits.shape)
    share = count_alpha(alpha=ALPHA, rule="both", threshold=False)
    assert share == ALPHA
    k = plan_counts(
        canaries=CANARIES, epsilon=eps_claimed, delta=delta, alpha=share, bound=bound
    ).guesses_in
    alarms = onerun_false_alarms(
        bits,
        scores,
        ties,
        guesses=k,
        delta=delta,
        alpha=ALPHA,
        bound=bound,
        claim_epsilon=eps_claimed,
        claim_mu=mu,
    )
    upper = float(stats.beta.ppf(0.95, alarms + 1, AUDITS - alarms))
    assert upper <= ALPHA, (k, alarms, upper)


def test_docs_state_the_planned_counts() -> None:
    """docs/onerun.md's table of planned counts is what the planner plans."""
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "onerun.md").read_text()
    part = text.split("<!-- planned counts -->", 1)[1].splitlines()
    rows = []
    for line in part[3:]:  # the rows after the header and its rule, up to the end
        if not line.startswith("| "):
            break
        rows.append(line)
    assert len(rows) == 4
    for line in rows:
        cells = [c.strip().replace(",", "") for c in line.strip("|").split("|")]
        canaries = int(cells[0])
        want = [
            plan_counts(
                canaries=canaries, epsilon=eps, delta=1e-5, alpha=alpha, bound="fdp"
            ).guesses_in
            for eps in (1.0, 4.0)
            for alpha in (0.05, 0.025)
        ]
        assert [int(c) for c in cells[1:]] == want, line
