"""From an attack's scores to its result, and the claim's privacy profile over rounds.

:func:`analyse_scores` is the part of the analysis that starts from an attack's
validation and test scores (the audit calls it after fitting each attack; the
calibration tests call it on simulated scores): the threshold chosen on validation
rounds (rule 4, docs/soundness.md), the bounded test point on test rounds and every
figure derived from it (eps_emp, mu_emp, the refutation ratio against the claimed
profile and the regions it violates). :func:`claimed_profile` is the region the
verdict tests, summarised over the rounds' claims by :func:`profile_of_claims`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from dpaudit.audit.result.model import LOW_FPRS, AttackResult, Claim, LowFprRate, freeze
from dpaudit.audit.result.regions import WHOLE_CLAIM
from dpaudit.audit.stats import calibrated
from dpaudit.audit.stats import estimators as est
from dpaudit.audit.stats.ceiling import eps_ceiling, mu_ceiling, mu_max_attainable
from dpaudit.audit.stats.profile import ClaimedProfile, PointTest, judge_point
from dpaudit.audit.stats.thresholds import (
    POWER_CUT,
    roc_auc,
    roc_curve,
    select_threshold,
)
from dpaudit.audit.stats.tradeoff import eps_of_gdp

__all__ = [
    "JudgedScores",
    "analyse_scores",
    "ceiling_of",
    "claimed_profile",
    "judge_scores",
    "pair_regions",
    "profile_of_claims",
    "profile_point",
    "ratio_attainable",
    "refutable",
    "region_decides",
    "tpr_at_low_fpr",
]


def analyse_scores(
    name: str,
    s_val: np.ndarray,
    y_val: np.ndarray,
    s_test: np.ndarray,
    y_test: np.ndarray,
    *,
    delta: float,
    alpha: float,
    method: est.EstimatorMethod,
    profile: ClaimedProfile | None = None,
) -> AttackResult:
    """One attack's result from its validation and test scores: :func:`judge_scores`
    (the verdict's numbers) and the descriptions of the test scores (ROC, AUC)."""
    judged = judge_scores(
        s_val,
        y_val,
        s_test,
        y_test,
        delta=delta,
        alpha=alpha,
        method=method,
        profile=profile,
    )
    threshold, direction, counts = judged.threshold, judged.direction, judged.counts
    point = pair_regions(judged.point, judged.eps_emp, profile)
    n0 = counts.n_non_members
    oriented = direction * s_test
    fpr, tpr = roc_curve(oriented, y_test)
    return AttackResult(
        name=name,
        eps_emp=judged.eps_emp,
        eps_max_attainable=judged.eps_max_attainable,
        auc=float(roc_auc(oriented, y_test)),
        validation_auc=float(roc_auc(direction * s_val, y_val)),
        constant_scores=bool(np.ptp(s_val) == 0 and np.ptp(s_test) == 0),
        counts=counts,
        threshold=float(threshold),
        direction=1 if direction > 0 else -1,
        alpha=float(alpha),
        roc_fpr=tuple(fpr),
        roc_tpr=tuple(tpr),
        fpr_resolution=1.0 / n0 if n0 > 0 else None,
        tpr_at_low_fpr=tpr_at_low_fpr(fpr, tpr, n_non_members=n0),
        scores_member=tuple(float(x) for x in s_test[y_test == 1]),
        scores_non_member=tuple(float(x) for x in s_test[y_test == 0]),
        mu_emp=point.mu_emp,
        mu_max_attainable=judged.mu_max_attainable,
        eps_of_mu_emp=eps_of_gdp(point.mu_emp, delta) if point.mu_emp > 0 else 0.0,
        fpr_upper=point.fpr_upper,
        fnr_upper=point.fnr_upper,
        refutation_ratio=None if profile is None else point.ratio,
        regions_violated=point.regions_violated,
    )


def pair_regions(
    point: PointTest, eps_emp: float, profile: ClaimedProfile | None
) -> PointTest:
    """The regions the verdict may name: ``lines`` only where the (epsilon, delta)
    pair's own test refutes it (``eps_emp > epsilon``), never because the corner of
    the claim's test (calibrated on the whole stated region, not on the lines) lies
    outside them; the profile's regions as the claim's test found them. Where that
    test refutes the claim (ratio > 1) and nothing is left to name, the claimed
    region as a whole: :data:`WHOLE_CLAIM`.

    >>> p = PointTest(fpr_upper=0.2, fnr_upper=0.2, eps_lo=0.9, mu_emp=1.3,
    ...               ratio=4.0, regions_violated=("lines", "gdp"))
    >>> claim = ClaimedProfile(epsilon=1.0, delta=1e-5, gdp_mu=0.3)
    >>> pair_regions(p, 0.9, claim).regions_violated, pair_regions(
    ...     p, 1.2, claim).regions_violated
    (('gdp',), ('lines', 'gdp'))
    """
    if profile is None or not profile.has_profile:
        return point
    keep = tuple(
        r for r in point.regions_violated if r != "lines" or eps_emp > profile.epsilon
    )
    if point.ratio > 1.0 and not keep:
        keep = (WHOLE_CLAIM,)
    return replace(point, regions_violated=keep)


@dataclass(frozen=True, kw_only=True, slots=True)
class JudgedScores:
    """What the verdict uses of one attack's scores.

    Attributes:
        threshold: The threshold chosen on validation rounds.
        direction: +1 or -1 (as :meth:`AttackCounts.from_scores`).
        counts: The test-round confusion matrix at that threshold.
        eps_emp: The (epsilon, delta)-line bound on test rounds.
        point: The bounded test point judged against the claim.
        eps_max_attainable: ``eps_emp`` of a perfect attack on these test rounds.
        mu_max_attainable: ``mu_emp`` of a perfect attack on these test rounds.
    """

    threshold: float
    direction: int
    counts: est.AttackCounts
    eps_emp: float
    point: PointTest
    eps_max_attainable: float
    mu_max_attainable: float


def judge_scores(
    s_val: np.ndarray,
    y_val: np.ndarray,
    s_test: np.ndarray,
    y_test: np.ndarray,
    *,
    delta: float,
    alpha: float,
    method: est.EstimatorMethod,
    profile: ClaimedProfile | None = None,
    box: bool = False,
    power_cut: float = POWER_CUT,
) -> JudgedScores:
    """The statistical core of the analysis, from an attack's scores on: the
    threshold chosen on validation rounds (by eps_lo, or by the refutation ratio when
    ``profile`` states more than the lines), the bounds on test rounds (disjoint:
    rule 4). The audit (through :func:`analyse_scores`) and the calibration tests call
    this same function.

    With Clopper-Pearson the test on the test rounds is the exact one
    (:mod:`dpaudit.audit.stats.calibrated`: its size computed on the claimed
    boundary), and the threshold is chosen with that test's per-rate level; with
    Jeffreys (approximate) each rate is bounded at ``alpha / 2`` as before, and so
    with ``box`` (the test before the exact one, kept for the calibration benchmark's
    comparison).
    ``power_cut`` is the threshold rule's cut (:data:`POWER_CUT`; kept settable for
    benchmarks/threshold_choice.py's comparison with the rule before it).

    >>> y = np.array([0] * 50 + [1] * 50)
    >>> s = y * 10.0
    >>> judge_scores(s, y, s, y, delta=1e-5, alpha=0.05,
    ...              method="clopper_pearson").counts.to_json()
    {'tp': 50, 'fp': 0, 'tn': 50, 'fn': 0}
    """
    y_t = np.asarray(y_test)
    n1 = int(np.count_nonzero(y_t == 1))
    n0 = int(y_t.size - n1)
    exact = method == "clopper_pearson" and not box and calibrated.applies(n0, n1)
    # Thresholds are chosen with the per-rate level of the test that will decide.
    level = (
        calibrated.deciding_level(profile, n0, n1, alpha=alpha, delta=delta)
        if exact
        else alpha / 2.0
    )
    threshold, direction = select_threshold(
        s_val,
        y_val,
        delta=delta,
        alpha=min(2.0 * level, 0.999),
        method=method,
        profile=profile,
        # The exact test: the threshold most likely to land in its rejection set.
        rejection=calibrated.deciding_counts(profile, n0, n1, alpha=alpha, delta=delta)
        if exact and profile is not None
        else None,
        n_members_test=n1,
        test_alpha=alpha,
        power_cut=power_cut,
    )
    counts = est.AttackCounts.from_scores(
        s_test, y_test, threshold=threshold, direction=direction
    )
    if exact:
        judged = calibrated.judge(
            counts.fp, n0, counts.fn, n1, delta=delta, alpha=alpha, profile=profile
        )
        return JudgedScores(
            threshold=float(threshold),
            direction=int(direction),
            counts=counts,
            eps_emp=judged.eps_emp,
            point=judged.point,
            eps_max_attainable=judged.eps_max_attainable,
            mu_max_attainable=judged.mu_max_attainable,
        )
    return JudgedScores(
        threshold=float(threshold),
        direction=int(direction),
        counts=counts,
        eps_emp=float(
            est.eps_lower_bound(counts, delta=delta, alpha=alpha, method=method)
        ),
        point=profile_point(
            counts, delta=delta, alpha=alpha, method=method, profile=profile, box=box
        ),
        eps_max_attainable=float(
            est.eps_max_attainable(n0, n1, delta=delta, alpha=alpha, method=method)
        ),
        mu_max_attainable=mu_max_attainable(n0, n1, alpha=alpha, method=method),
    )


def profile_point(
    counts: est.AttackCounts,
    *,
    delta: float,
    alpha: float,
    method: est.EstimatorMethod,
    profile: ClaimedProfile | None = None,
    box: bool = False,
) -> PointTest:
    """The bounded test point of ``counts`` judged against ``profile`` (the lines at
    ``delta``); without a profile, against nothing (for mu_emp and the point alone).
    With Clopper-Pearson: the exact test (:func:`calibrated.judge`); with Jeffreys
    each rate at ``alpha / 2``, the joint event of eps_lo (and so with ``box``)."""
    n0, n1 = counts.n_non_members, counts.n_members
    if method == "clopper_pearson" and not box and calibrated.applies(n0, n1):
        return calibrated.judge(
            counts.fp,
            n0,
            counts.fn,
            n1,
            delta=delta,
            alpha=alpha,
            profile=profile,
        ).point
    a = est.rate_upper_bound(
        counts.fp, counts.n_non_members, alpha=alpha / 2, method=method
    )
    b = est.rate_upper_bound(
        counts.fn, counts.n_members, alpha=alpha / 2, method=method
    )
    claim = (
        ClaimedProfile(epsilon=1e300, delta=delta)
        if profile is None
        else replace(profile, delta=delta)
    )
    return judge_point(a, b, claim)


def tpr_at_low_fpr(
    fpr: list[float],
    tpr: list[float],
    *,
    n_non_members: int,
    targets: tuple[float, ...] = LOW_FPRS,
) -> tuple[LowFprRate, ...]:
    """The largest TPR of the test-round ROC at an FPR no larger than each target.

    With ``n_non_members`` test rounds without the target the FPR moves in steps of
    ``1 / n_non_members`` (the resolution): a target below one step is "not
    resolvable" (``tpr`` ``None``): the only FPR at or below it is 0, which says
    nothing about the rate at that target. Like the AUC this describes the test
    rounds (the ROC sweeps every threshold on them); it is not a bound.

    >>> tpr_at_low_fpr([0.0, 0.0, 0.005, 1.0], [0.0, 0.3, 0.5, 1.0], n_non_members=200)
    ... # doctest: +NORMALIZE_WHITESPACE
    (LowFprRate(fpr=0.001, tpr=None, resolvable=False),
     LowFprRate(fpr=0.01, tpr=0.5, resolvable=True))
    """
    resolution = 1.0 / n_non_members if n_non_members > 0 else float("inf")
    out: list[LowFprRate] = []
    for target in targets:
        ok = resolution <= target
        value = max((t for f, t in zip(fpr, tpr) if f <= target + 1e-12), default=0.0)
        out.append(
            LowFprRate(fpr=target, tpr=float(value) if ok else None, resolvable=ok)
        )
    return tuple(out)


def _largest(claims: list[Mapping[str, Any]], key: str) -> float | None:
    """The largest ``key`` over the rounds' claims, ``None`` unless every round
    states one (a profile only some rounds claim is not the mechanism's)."""
    values = [c.get(key) for c in claims]
    if not values or any(v is None for v in values):
        return None
    return max(float(v) for v in values if v is not None)


def _curve(claims: list[Mapping[str, Any]], key: str) -> Mapping[str, Any] | None:
    """An RDP curve over the rounds: the orders every round states, each at the
    largest epsilon any round claims there (``None``, infinite, wins); ``None``
    unless every round states a curve with an order in common.

    >>> dict(_curve([{"rdp": {"orders": [2, 4], "epsilons": [0.1, 0.3]}},
    ...              {"rdp": {"orders": [4, 8], "epsilons": [0.2, None]}}], "rdp"))
    {'orders': (4.0,), 'epsilons': (0.3,)}
    """
    curves = [c.get(key) for c in claims]
    if not curves or any(not isinstance(v, Mapping) for v in curves):
        return None
    # A curve shared by many rounds (ResultStore.claims) is read once: repeating it
    # changes neither the common orders nor any maximum.
    curves = list({id(v): v for v in curves}.values())
    tables = [
        {
            float(o): (math.inf if e is None else float(e))
            for o, e in zip(v.get("orders") or (), v.get("epsilons") or ())
        }
        for v in curves
        if isinstance(v, Mapping)
    ]
    common = sorted(set.intersection(*(set(t) for t in tables)))
    if not common:
        return None
    worst = [max(t[o] for t in tables) for o in common]
    curve: Mapping[str, Any] = freeze(
        {"orders": common, "epsilons": [None if math.isinf(e) else e for e in worst]}
    )
    return curve


def claimed_profile(claim: Claim, *, delta: float) -> ClaimedProfile:
    """The region the verdict tests: the claim's lines at ``delta`` and its profile.

    >>> claimed_profile(Claim(epsilon=1.0, delta=1e-5, gdp_mu=0.3), delta=1e-5).regions
    ('lines', 'gdp')
    """
    rdp = claim.rdp or {}
    return ClaimedProfile(
        epsilon=float(claim.epsilon if claim.epsilon is not None else math.inf),
        delta=delta,
        gdp_mu=claim.gdp_mu,
        zcdp_rho=claim.zcdp_rho,
        rdp_orders=tuple(rdp.get("orders") or ()),
        rdp_epsilons=tuple(
            math.inf if e is None else float(e) for e in (rdp.get("epsilons") or ())
        ),
    )


def ceiling_of(
    head: AttackResult,
    claim: Claim,
    *,
    delta: float,
    alpha: float,
    method: est.EstimatorMethod,
) -> dict[str, float | None]:
    """The oracle's expected mu_emp and eps_emp at the claimed mu (where the claim
    states one) and the headline's mu_emp over it."""
    mu = claim.gdp_mu
    if mu is None or mu <= 0:
        return {}
    n0, n1 = head.counts.n_non_members, head.counts.n_members
    top = mu_ceiling(mu, n0, n1, alpha=alpha, method=method)
    return {
        "mu_reference": mu,
        "mu_ceiling": top,
        "mu_to_ceiling": (head.mu_emp or 0.0) / top if top > 0 else None,
        "eps_ceiling": eps_ceiling(mu, n0, n1, delta=delta, alpha=alpha, method=method),
    }


def ratio_attainable(
    head: AttackResult, profile: ClaimedProfile, method: est.EstimatorMethod
) -> float | None:
    """The refutation ratio a perfect attack (no test error) shows on these test
    rounds against the claim's whole region, by the claim's own test: the attainable
    maximum of the test that decides the claim (``None`` where the claim is decided
    by eps_emp: :func:`region_decides`)."""
    if not region_decides(
        profile, method, head.counts.n_non_members, head.counts.n_members
    ):
        return None
    perfect = est.AttackCounts(
        tp=head.counts.n_members, fp=0, tn=head.counts.n_non_members, fn=0
    )
    alpha = head.alpha if head.alpha is not None else 0.05
    point = profile_point(
        perfect, delta=profile.delta, alpha=alpha, method=method, profile=profile
    )
    return point.ratio


def refutable(
    head: AttackResult, profile: ClaimedProfile, method: est.EstimatorMethod
) -> bool | None:
    """Whether a perfect attack on these test rounds would refute the claim's
    region (``None`` where the claim is decided by eps_emp: :func:`region_decides`)."""
    ratio = ratio_attainable(head, profile, method)
    return None if ratio is None else ratio > 1.0


def region_decides(
    profile: ClaimedProfile | None, method: est.EstimatorMethod, n0: int, n1: int
) -> bool:
    """Whether the verdict is the test of the claim's own region (VIOLATION iff the
    refutation ratio exceeds 1): a claim with a profile always; a claim of the lines
    alone where the exact test decides it (Clopper-Pearson, test sizes the exact test
    is computed for). Otherwise the lines are decided by ``eps_emp > epsilon``.

    >>> lines = ClaimedProfile(epsilon=1.0, delta=1e-5)
    >>> region_decides(lines, "clopper_pearson", 400, 400)
    True
    >>> region_decides(lines, "jeffreys", 400, 400)
    False
    """
    if profile is None:
        return False
    exact = method == "clopper_pearson" and calibrated.applies(n0, n1)
    return profile.has_profile or exact


def profile_of_claims(claims: list[Mapping[str, Any]]) -> dict[str, Any]:
    """The profile keys of :class:`~dpaudit.audit.result.model.Claim` over the rounds'
    claim dicts (``gdp_mu``, ``zcdp_rho``, ``rdp``, ``reference_rdp``).

    >>> profile_of_claims([{"gdp_mu": 0.5}, {"gdp_mu": 0.7}])["gdp_mu"]
    0.7
    """
    return {
        "gdp_mu": _largest(claims, "gdp_mu"),
        "zcdp_rho": _largest(claims, "zcdp_rho"),
        "rdp": _curve(claims, "rdp"),
        "reference_rdp": _curve(claims, "reference_rdp"),
    }
