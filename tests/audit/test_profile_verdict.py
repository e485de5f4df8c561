"""The verdict on a claim's privacy profile: the claim summarised over rounds, the
verdict rule, the headline, the reason, and the default (lines-only) path unchanged."""

from __future__ import annotations

import doctest
import math

import numpy as np

from dpaudit.audit.games import scores
from dpaudit.audit.games.claims import summarise_claims
from dpaudit.audit.games.scores import (
    analyse_scores,
    claimed_profile,
    refutable,
)
from dpaudit.audit.games.two_world.analysis import headline_attack
from dpaudit.audit.games.verdict import decide, verdict_reason
from dpaudit.audit.result.model import AttackResult, Claim, Verdict
from dpaudit.audit.stats.estimators import AttackCounts
from dpaudit.audit.stats.profile import ClaimedProfile


def test_doctests_pass() -> None:
    result = doctest.testmod(scores, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 3 and result.failed == 0


def _claim(epsilon: float, **profile: object) -> dict[str, object]:
    return {"epsilon": epsilon, "delta": 1e-5, "accountant": "test", **profile}


def test_the_profile_is_the_most_generous_over_rounds() -> None:
    claim = summarise_claims(
        {
            0: _claim(
                1.0, gdp_mu=0.2, rdp={"orders": [2, 4, 8], "epsilons": [0.1, 0.2, 0.4]}
            ),
            1: _claim(1.1, gdp_mu=0.3, rdp={"orders": [4, 8], "epsilons": [0.3, None]}),
        }
    )
    assert claim.gdp_mu == 0.3 and claim.zcdp_rho is None
    assert claim.rdp is not None
    assert tuple(claim.rdp["orders"]) == (4.0, 8.0)
    assert tuple(claim.rdp["epsilons"]) == (0.3, None)
    profile = claimed_profile(claim, delta=1e-5)
    assert profile.rdp_epsilons == (0.3, math.inf) and profile.regions == (
        "lines",
        "gdp",
        "rdp",
    )
    # A profile only some rounds state is not the mechanism's.
    partial = summarise_claims({0: _claim(1.0, zcdp_rho=0.1), 1: _claim(1.0)})
    assert partial.zcdp_rho is None
    assert not claimed_profile(partial, delta=1e-5).has_profile


def test_decide_with_a_profile() -> None:
    args = {"eps_emp": 0.5, "eps_claimed": 1.0, "eps_max_attainable": 4.4}
    assert (
        decide(**args, refutation_ratio=1.2, profile_refutable=True)
        is Verdict.VIOLATION
    )
    assert (
        decide(**args, refutation_ratio=0.9, profile_refutable=True)
        is Verdict.CONSISTENT
    )
    assert (
        decide(**args, refutation_ratio=0.9, profile_refutable=False)
        is Verdict.INCONCLUSIVE
    )
    # Without a ratio the rule is today's.
    assert decide(**args) is Verdict.CONSISTENT


def _gaussian_result(profile: ClaimedProfile | None, seed: int = 0) -> AttackResult:
    gen = np.random.default_rng(seed)
    y_val, y_test = np.repeat([0, 1], 200), np.repeat([0, 1], 400)
    mu = 0.925
    return analyse_scores(
        "score",
        gen.normal(mu * y_val, 1.0),
        y_val,
        gen.normal(mu * y_test, 1.0),
        y_test,
        delta=1e-5,
        alpha=0.05 / 3,
        method="clopper_pearson",
        profile=profile,
    )


def test_a_gdp_overclaim_names_its_region_and_reason() -> None:
    claim = Claim(epsilon=1.0, delta=1e-5, gdp_mu=0.2)
    profile = claimed_profile(claim, delta=1e-5)
    head = _gaussian_result(profile)
    assert head.refutation_ratio is not None and head.refutation_ratio > 1
    assert "gdp" in head.regions_violated
    assert head.mu_emp is not None and head.mu_emp > 0.2
    assert head.mu_emp / 0.2 <= head.refutation_ratio * (1 + 1e-12)
    assert head.eps_of_mu_emp is not None and head.eps_of_mu_emp > 0
    assert refutable(head, profile, "clopper_pearson") is True
    reason = verdict_reason(
        Verdict.VIOLATION,
        eps_emp=head.eps_emp,
        eps_claimed=1.0,
        eps_max_attainable=head.eps_max_attainable,
        point=head,
        claim=claim,
    )
    assert reason.startswith("VIOLATION: the stated profile is refuted")
    assert "GDP" in reason and "mu_emp" in reason


def test_without_a_profile_mu_emp_is_reported_and_nothing_else_changes() -> None:
    """Without a claim the figures alone; a claim of the lines alone chooses its
    threshold for its own test (the calibrated test of its lines), its eps_emp is the
    same family's value of its counts, and its ratio is its own test's (over 1
    wherever eps_emp exceeds the claim)."""
    from dpaudit.audit.stats import calibrated

    lines = ClaimedProfile(epsilon=1.0, delta=1e-5)
    plain = _gaussian_result(None)
    judged = _gaussian_result(lines)
    c = judged.counts
    assert (
        judged.eps_emp
        == calibrated.judge(
            c.fp, c.n_non_members, c.fn, c.n_members, delta=1e-5, alpha=0.05 / 3
        ).eps_emp
    )
    assert plain.mu_emp is not None and plain.mu_emp > 0
    assert plain.refutation_ratio is None and plain.regions_violated == ()
    own = calibrated.judge(
        c.fp,
        c.n_non_members,
        c.fn,
        c.n_members,
        delta=1e-5,
        alpha=0.05 / 3,
        profile=lines,
    )
    assert judged.refutation_ratio == own.point.ratio
    assert judged.refutation_ratio is not None
    assert judged.refutation_ratio > 1.0 or (judged.eps_emp or 0.0) <= 1.0


def test_the_headline_follows_the_ratio_only_with_a_profile() -> None:
    none = AttackCounts(tp=1, fp=0, tn=1, fn=0)
    attacks = {
        "eps": AttackResult(name="eps", eps_emp=0.9, refutation_ratio=0.9, counts=none),
        "mu": AttackResult(name="mu", eps_emp=0.5, refutation_ratio=1.4, counts=none),
    }
    assert headline_attack(attacks) == "eps"
    assert headline_attack(attacks, by_ratio=True) == "mu"
