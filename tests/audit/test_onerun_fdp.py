"""The one-run f-DP and order bounds (dpaudit/audit/stats/onerun_fdp.py, the
``onerun_bound`` setting of dpaudit/audit/games/one_run/rules.py): the greedy is the
optimum of its constraints, the bound never falls below what a real mechanism
attains, and simulated one-run audits on the claimed boundary raise false alarms at
most alpha."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from scipy import stats

from dpaudit.audit.games.one_run.rules import (
    order_counts,
    resolve_bound,
)
from dpaudit.audit.stats import onerun_fdp
from dpaudit.audit.stats.onerun_bound import p_value as steinke_p_value
from dpaudit.audit.stats.tradeoff import eps_of_gdp
from dpaudit.errors import InvalidParameterError


@pytest.mark.parametrize(
    ("m", "r", "v", "eps", "delta"),
    [(40, 12, 10, 0.5, 0.0), (40, 12, 11, 1.0, 1e-3), (60, 20, 17, 0.8, 1e-2)],
)
def test_greedy_is_the_optimum_of_the_constraints(
    m: int, r: int, v: int, eps: float, delta: float, onerun_lp_tail: Any
) -> None:
    greedy = onerun_fdp.tail_bound(
        canaries=m, guesses=r, correct=v, epsilon=eps, delta=delta
    )
    lp = onerun_lp_tail(m, r, v, [(eps, delta)])
    # The greedy returns the first infeasible beta of its scan: at or just above.
    assert lp - 1e-7 <= greedy <= lp + 1e-4


@pytest.mark.parametrize(("r", "eps"), [(20, 0.5), (50, 1.0), (100, 2.0)])
def test_never_below_randomized_response(r: int, eps: float) -> None:
    """Randomized response is eps-DP and gives W ~ Binomial(r, q): every bound must
    allow its tail, and Steinke's (that tail exactly, at delta 0) is no larger."""
    q = 1.0 / (1.0 + math.exp(-eps))
    for v in range(int(q * r), r + 1, max(1, r // 10)):
        tail = float(stats.binom.sf(v - 1, r, q))
        fdp = onerun_fdp.tail_bound(canaries=1000, guesses=r, correct=v, epsilon=eps)
        steinke = steinke_p_value(
            canaries=1000, guesses=r, correct=v, epsilon=eps, delta=0.0
        )
        assert fdp >= tail * (1 - 1e-9)
        assert steinke == pytest.approx(tail, rel=1e-6, abs=1e-300)


def test_bounds_are_monotone_and_cover_their_inputs() -> None:
    lo = onerun_fdp.eps_lower_bound(
        canaries=1000, guesses=200, correct=180, delta=1e-5, alpha=0.05
    )
    hi = onerun_fdp.eps_lower_bound(
        canaries=1000, guesses=200, correct=190, delta=1e-5, alpha=0.05
    )
    assert 0 < lo < hi
    mu = onerun_fdp.mu_lower_bound(canaries=1000, guesses=200, correct=180, alpha=0.05)
    assert not onerun_fdp.rejects(
        canaries=1000, guesses=200, correct=180, alpha=0.05, mu=mu + 0.01
    )[0]
    assert onerun_fdp.rejects(
        canaries=1000, guesses=200, correct=180, alpha=0.05, mu=mu - 0.01
    )[0]
    # A claim of both curves is rejected whenever one of them is.
    both = onerun_fdp.rejects(
        canaries=1000,
        guesses=200,
        correct=180,
        alpha=0.05,
        epsilon=lo,
        delta=1e-5,
        mu=mu - 0.01,
    )[0]
    assert both
    with pytest.raises(InvalidParameterError, match="correct"):
        onerun_fdp.tail_bound(canaries=10, guesses=5, correct=6, mu=1.0)
    with pytest.raises(InvalidParameterError, match="epsilon"):
        onerun_fdp.tail_bound(canaries=10, guesses=5, correct=3, epsilon=-1.0)


def test_bound_setting() -> None:
    assert resolve_bound("auto", 1000) == "fdp"
    assert resolve_bound("auto", 20000) == "fdp"  # planned counts: fdp everywhere
    assert order_counts(10, 0) == ((10, 0), (5, 0), (3, 0), (2, 0))
    with pytest.raises(InvalidParameterError, match="onerun_bound"):
        resolve_bound("best", 10)  # type: ignore[arg-type]


# ------------------------------------------------------------------ calibration

CANARIES = 200
GUESSES = 20
AUDITS = 2000
ALPHA = 0.05


@pytest.mark.statistical
@pytest.mark.parametrize("mechanism", ["gaussian", "rr"])
@pytest.mark.parametrize("bound", ["steinke", "fdp", "order"])
def test_false_alarms_on_the_claimed_boundary(
    mechanism: str, bound: str, onerun_releases: Any, onerun_false_alarms: Any
) -> None:
    """2,000 simulated one-run audits (200 canaries, 20 + 20 guesses, the game's
    rules and bounds, alpha 0.05) of a mechanism whose claim is exactly true: the
    1-GDP Gaussian claiming mu 1 and its epsilon at delta 1e-5 (the f-DP bounds test
    the whole curve), and 1-DP randomized response claiming (1, 0). The one-sided 95%
    Clopper-Pearson upper bound of the false-alarm rate must be at most alpha.

    Failure probability: measured 0 to 49 alarms of 2,000 (Gaussian: steinke 0,
    fdp 5, order 0; randomized response: 47, 49, 21); at a true rate of 2.5% the
    upper bound exceeds alpha (84 alarms or more) with probability below 1e-6, and
    only a rate near alpha itself would fail it often. Seeded: the outcome is
    fixed."""
    gen = np.random.default_rng([48, len(mechanism), len(bound)])
    bits, scores = onerun_releases(mechanism, gen, audits=AUDITS, canaries=CANARIES)
    ties = gen.random(bits.shape)
    if mechanism == "gaussian":
        eps_claimed, delta, mu = eps_of_gdp(1.0, 1e-5), 1e-5, 1.0
    else:
        eps_claimed, delta, mu = 1.0, 0.0, None
    alarms = onerun_false_alarms(
        bits,
        scores,
        ties,
        guesses=GUESSES,
        delta=delta,
        alpha=ALPHA,
        bound=bound,
        claim_epsilon=eps_claimed,
        claim_mu=mu,
    )
    upper = float(stats.beta.ppf(0.95, alarms + 1, AUDITS - alarms))
    assert upper <= ALPHA, (alarms, upper)


def test_a_claimed_mu_is_refuted_as_a_curve() -> None:
    """The game's verdict with the f-DP bound: a claim of epsilon 4 that also states
    0.5-GDP, audited on scores of a 3-GDP canary, is refuted as a curve (its lines
    alone are not: eps_emp stays below 4, and Steinke's bound finds no VIOLATION);
    a claim of 5-GDP is not."""
    from dpaudit.audit.config.model import AuditConfig
    from dpaudit.audit.games.one_run.game import analyse_one_run
    from dpaudit.audit.games.one_run.plan import OneRunPlan
    from dpaudit.worst_case.canaries import canary_design

    design = canary_design("worst-case-continuous", canaries=200)
    plan = OneRunPlan.create(fits=1, canaries=200, guesses=20, seed=0)
    scores = plan.bits.ravel() * 3.0 + np.random.default_rng(0).normal(size=200)
    seen = {}
    for bound, mu in (("auto", 0.5), ("steinke", 0.5), ("fdp", 5.0)):
        config = AuditConfig(
            game="one-run",
            canaries=200,
            guesses=20,
            guess_rule="count",
            onerun_bound=bound,  # type: ignore[arg-type]
            dataset="worst-case-continuous",
        )
        claim = {"epsilon": 4.0, "delta": 1e-5, "gdp_mu": mu}
        result = analyse_one_run(
            config,
            design=design,
            plan=plan,
            claims=[claim],
            scores=scores.astype(np.float64),
            rows=204,
            options={},
        )
        assert result.one_run is not None
        seen[(bound, mu)] = result
    refuted = seen[("auto", 0.5)]
    assert refuted.verdict == "VIOLATION" and refuted.one_run is not None
    assert refuted.one_run.bound == "fdp" and refuted.one_run.claim_refuted
    assert refuted.one_run.mu_emp is not None and refuted.one_run.mu_emp > 0.5
    assert refuted.eps_emp is not None and refuted.eps_emp < 4.0
    assert "rejected by the fdp bound" in (refuted.verdict_reason or "")
    plain = seen[("steinke", 0.5)]
    assert plain.verdict != "VIOLATION" and plain.one_run is not None
    assert plain.one_run.bound == "steinke" and plain.one_run.mu_emp is None
    kept = seen[("fdp", 5.0)]
    assert kept.verdict != "VIOLATION" and kept.one_run is not None
    assert kept.one_run.claim_refuted is False
    assert kept.one_run.mu_emp is not None and kept.one_run.mu_emp <= 5.0
