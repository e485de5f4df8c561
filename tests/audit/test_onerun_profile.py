"""The one-run f-DP bound against a claim's stated zCDP or RDP profile
(dpaudit/audit/stats/onerun_curves.py, the ``pairs`` of
dpaudit/audit/stats/onerun_fdp.py, the ``claim_curve`` of
dpaudit/audit/games/one_run/rules.py): the pairs' curve lies above the mechanism's
exact curve, the greedy with pairs is the optimum of its constraints, and simulated
one-run audits on the claimed boundary raise false alarms at most alpha."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from scipy import stats

from dpaudit.audit.stats import onerun_fdp
from dpaudit.audit.stats.onerun_curves import (
    PROFILE_DELTAS,
    profile_curve,
    profile_pairs,
)
from dpaudit.audit.stats.tradeoff import eps_of_gdp
from dpaudit.errors import InvalidParameterError
from dpaudit.generators.accountants import epsilon_from_rdp
from dpaudit.generators.zoo import ZOO_ORDERS, rr_rdp

X = np.concatenate([np.geomspace(1e-14, 1e-3, 200), np.linspace(1e-3, 1.0, 2000)])


def _h_pairs(x: np.ndarray, eps: np.ndarray, deltas: np.ndarray) -> np.ndarray:
    """``h(x) = min_j min(1, delta_j + e^eps_j x, 1 - e^-eps_j (1 - delta_j - x))``,
    one pair at a time (the direct computation)."""
    out = np.ones_like(x)
    for e, d in zip(eps, deltas, strict=True):
        line = np.minimum(d + math.exp(e) * x, 1.0 - math.exp(-e) * (1.0 - d - x))
        out = np.minimum(out, line)
    return out


def _rr_curve(epsilon: float) -> dict[str, list[float]]:
    return {
        "orders": list(ZOO_ORDERS),
        "epsilons": [rr_rdp(epsilon, a) for a in ZOO_ORDERS],
    }


@pytest.mark.parametrize("mu", [0.5, 1.0, 2.0])
def test_zcdp_pairs_lie_above_the_gaussian_curve(mu: float) -> None:
    """For the Gaussian (mu-GDP, exactly rho = mu^2 / 2 zCDP) every pair is a valid
    guarantee, so the pairs' h is at least the mu-GDP h everywhere."""
    eps, deltas = profile_pairs(zcdp_rho=mu * mu / 2) or (None, None)
    assert eps is not None and deltas is not None and eps.size == PROFILE_DELTAS.size
    gdp = stats.norm.cdf(stats.norm.ppf(X) + mu)
    h = _h_pairs(X, eps, deltas)
    assert np.all(h >= gdp - 1e-12)
    # The pairs bite: where the game's tests look (x about 0.025: a few of 200
    # canaries guessed wrong), far below the lines at the Gaussian's epsilon at 1e-5.
    at = np.searchsorted(X, 0.025)
    lines = 1.0 - math.exp(-eps_of_gdp(mu, 1e-5)) * (1.0 - 1e-5 - X[at])
    assert h[at] < gdp[at] + 0.3 and h[at] < lines - 0.01


def test_rdp_pairs_lie_above_randomized_response() -> None:
    """Randomized response at epsilon 1, stated by its exact RDP curve: the pairs'
    h is at least its exact curve, the (1, 0) lines."""
    curve = profile_curve(rdp=_rr_curve(1.0))
    assert curve is not None and curve.name == f"RDP at {len(ZOO_ORDERS)} orders"
    eps, deltas = curve.pairs
    exact = np.minimum(math.e * X, 1.0 - math.exp(-1.0) * (1.0 - X))
    assert np.all(_h_pairs(X, eps, deltas) >= exact - 1e-12)


def test_pairs_are_rounded_up_from_the_conversion() -> None:
    orders = np.asarray(ZOO_ORDERS)
    rdp = np.array([rr_rdp(1.0, a) for a in ZOO_ORDERS])
    eps, deltas = profile_pairs(rdp_orders=orders, rdp_epsilons=rdp) or (None, None)
    assert eps is not None and deltas is not None
    exact = np.array(
        [float(epsilon_from_rdp(rdp, delta=float(d), orders=orders)) for d in deltas]
    )
    assert np.all(eps > exact)
    assert np.all(eps <= exact * (1 + 1e-8) + 1e-8)
    # Infinite RDP epsilons are skipped; nothing stated gives no curve.
    with_gap = profile_pairs(rdp_orders=[2.0, 8.0], rdp_epsilons=[0.3, math.inf])
    alone = profile_pairs(rdp_orders=[2.0], rdp_epsilons=[0.3])
    assert with_gap is not None and alone is not None
    assert np.array_equal(with_gap[0], alone[0])
    assert profile_pairs(rdp_orders=[2.0], rdp_epsilons=[math.inf]) is None
    assert profile_curve() is None
    with pytest.raises(InvalidParameterError, match="zcdp_rho"):
        profile_pairs(zcdp_rho=-1.0)
    with pytest.raises(InvalidParameterError, match="pairs"):
        onerun_fdp.rejects(
            canaries=10, guesses=4, correct=3, alpha=0.05, pairs=(eps, deltas[:3])
        )


def test_the_inverse_of_the_pairs_is_the_direct_one() -> None:
    """The greedy's vectorised inverse over the pairs equals the least x with
    ``h(x) >= y`` computed pair by pair (the max of the per-pair inverses)."""
    eps, deltas = profile_pairs(zcdp_rho=0.3) or (None, None)
    assert eps is not None and deltas is not None
    y = np.linspace(0.0, 1.0, 501)
    got = onerun_fdp._inverse(y, None, 0.0, None, (eps, deltas))
    direct = np.zeros_like(y)
    for e, d in zip(eps, deltas, strict=True):
        g = np.maximum((y - d) * math.exp(-e), 1.0 - d - math.exp(e) * (1.0 - y))
        direct = np.maximum(direct, g)
    assert np.allclose(got, np.minimum(direct, 1.0), rtol=0, atol=1e-15)
    assert np.all(_h_pairs(got, eps, deltas) >= y - 1e-9)


@pytest.mark.parametrize(
    ("m", "r", "v", "rho", "claim"),
    [(40, 12, 10, 0.05, None), (40, 12, 11, 0.1, (1.0, 1e-3)), (60, 20, 17, 0.2, None)],
)
def test_greedy_with_pairs_is_the_optimum(
    m: int,
    r: int,
    v: int,
    rho: float,
    claim: tuple[float, float] | None,
    onerun_lp_tail: Any,
) -> None:
    eps, deltas = profile_pairs(zcdp_rho=rho) or (None, None)
    assert eps is not None and deltas is not None
    lines = list(zip(eps.tolist(), deltas.tolist(), strict=True))
    lines += [] if claim is None else [claim]
    greedy = onerun_fdp.tail_bound(
        canaries=m,
        guesses=r,
        correct=v,
        epsilon=None if claim is None else claim[0],
        delta=0.0 if claim is None else claim[1],
        pairs=(eps, deltas),
    )
    lp = onerun_lp_tail(m, r, v, lines)
    assert lp - 1e-7 <= greedy <= lp + 1e-4


def test_one_pair_is_its_lines_and_pairs_only_add() -> None:
    """Pairs of one (eps, delta) reject exactly what those lines reject, and adding
    a profile to the claim's lines never rejects less."""
    counts = {"canaries": 1000, "guesses": 200, "alpha": 0.05}
    eps_grid = np.linspace(0.0, 4.0, 41)
    for correct in (150, 170, 190):
        lines = onerun_fdp.rejects(
            correct=correct, epsilon=eps_grid, delta=1e-5, **counts
        )
        one = [
            bool(
                onerun_fdp.rejects(
                    correct=correct,
                    pairs=(np.array([e]), np.array([1e-5])),
                    **counts,
                )[0]
            )
            for e in eps_grid
        ]
        assert lines.tolist() == one
        curve = profile_curve(zcdp_rho=0.5)
        assert curve is not None
        both = onerun_fdp.rejects(
            correct=correct, epsilon=eps_grid, delta=1e-5, pairs=curve.pairs, **counts
        )
        assert np.all(both >= lines)


# ------------------------------------------------------------------ calibration

CANARIES = 200
GUESSES = 20
AUDITS = 2000
ALPHA = 0.05


@pytest.mark.statistical
@pytest.mark.parametrize("mechanism", ["gaussian", "rr"])
@pytest.mark.parametrize("bound", ["fdp", "order"])
def test_false_alarms_on_the_claimed_profile(
    mechanism: str, bound: str, onerun_releases: Any, onerun_false_alarms: Any
) -> None:
    """2,000 simulated one-run audits (200 canaries, 20 + 20 guesses, the game's
    rules, alpha 0.05) of mechanisms whose stated profile is exactly true: the 1-GDP
    Gaussian score claiming ONLY its zCDP rho 0.5 (no mu) and its epsilon at delta
    1e-5, and randomized response at epsilon 1 claiming its exact RDP curve (the
    zoo's orders) and (1, 0). The claim's curve (its lines and the profile's pairs)
    is the test; the one-sided 95% Clopper-Pearson upper bound of the false-alarm
    rate must be at most alpha.

    Failure probability: measured 0 to 45 alarms of 2,000 (Gaussian: fdp 0, order
    0; randomized response: fdp 45, order 23, the same as its lines alone: the
    lines at (1, 0) are its exact curve); at a true rate of 2.25% the upper bound
    exceeds alpha (84 alarms or more) with probability below 1e-7, and only a rate
    near alpha itself would fail it often. Seeded: the outcome is fixed."""
    gen = np.random.default_rng([4817, len(mechanism), len(bound)])
    bits, scores = onerun_releases(mechanism, gen, audits=AUDITS, canaries=CANARIES)
    ties = gen.random(bits.shape)
    if mechanism == "gaussian":
        eps_claimed, delta = eps_of_gdp(1.0, 1e-5), 1e-5
        curve = profile_curve(zcdp_rho=0.5)
    else:
        eps_claimed, delta = 1.0, 0.0
        curve = profile_curve(rdp=_rr_curve(1.0))
    assert curve is not None

    def check(decided: Any) -> None:
        assert decided.refuted is not None and decided.curve == curve.name
        assert decided.refuted or decided.eps_emp <= eps_claimed

    alarms = onerun_false_alarms(
        bits,
        scores,
        ties,
        guesses=GUESSES,
        delta=delta,
        alpha=ALPHA,
        bound=bound,
        claim_epsilon=eps_claimed,
        claim_curve=curve,
        check=check,
    )
    upper = float(stats.beta.ppf(0.95, alarms + 1, AUDITS - alarms))
    assert upper <= ALPHA, (alarms, upper)


def test_a_stated_rho_is_refuted_as_a_curve() -> None:
    """The game's verdict: a claim of epsilon 4 that states zCDP rho 0.125 (the
    0.5-GDP Gaussian's), audited on scores of a 3-GDP canary, is refuted as a curve
    and the reason names it; a claim of rho 12.5 is not; a claim without a profile
    records no curve."""
    from dpaudit.audit.config.model import AuditConfig
    from dpaudit.audit.games.one_run.game import analyse_one_run
    from dpaudit.audit.games.one_run.plan import OneRunPlan
    from dpaudit.worst_case.canaries import canary_design

    design = canary_design("worst-case-continuous", canaries=200)
    plan = OneRunPlan.create(fits=1, canaries=200, guesses=20, seed=0)
    scores = plan.bits.ravel() * 3.0 + np.random.default_rng(0).normal(size=200)
    config = AuditConfig(
        game="one-run",
        canaries=200,
        guesses=20,
        guess_rule="count",
        dataset="worst-case-continuous",
    )
    seen = {}
    for rho in (0.125, 12.5, None):
        claim = {"epsilon": 4.0, "delta": 1e-5, "zcdp_rho": rho}
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
        seen[rho] = result
    refuted = seen[0.125]
    assert refuted.verdict == "VIOLATION" and refuted.one_run is not None
    assert refuted.one_run.claim_refuted and refuted.one_run.bound == "fdp"
    assert refuted.one_run.claim_curve == "zCDP rho 0.125"
    assert refuted.eps_emp is not None and refuted.eps_emp < 4.0
    assert "its zCDP rho 0.125) is rejected by the fdp bound" in (
        refuted.verdict_reason or ""
    )
    kept = seen[12.5]
    assert kept.verdict != "VIOLATION" and kept.one_run is not None
    assert kept.one_run.claim_refuted is False
    plain = seen[None]
    assert plain.one_run is not None and plain.verdict != "VIOLATION"
    assert plain.one_run.claim_refuted is None and plain.one_run.claim_curve is None
