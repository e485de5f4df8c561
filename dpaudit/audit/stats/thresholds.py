"""Choosing an attack's threshold on validation rounds, and ROC summaries.

:func:`select_threshold` picks the threshold and direction that maximise the
empirical-epsilon bound on the validation rounds (never the test rounds: rule 4 in
docs/soundness.md), or, for a claim that states a privacy profile, the refutation
ratio the verdict uses (:func:`dpaudit.audit.stats.profile.refutation_ratios`), or,
for the exact test, its plug-in power against the claim or, where the claim is out
of reach, the expected reported bound (:func:`expected_bound`);
:func:`roc_auc` and :func:`roc_curve` describe the test scores.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.metrics import roc_curve as _sklearn_roc_curve

from dpaudit.audit.stats import families
from dpaudit.audit.stats.auc import auc
from dpaudit.audit.stats.estimators import (
    EstimatorMethod,
    _as_labels,
    _as_scores,
    _check_alpha,
    _check_delta,
    _check_method,
    _eps_lower_bounds,
    rate_upper_bounds,
)
from dpaudit.audit.stats.profile import (
    ZCDP_SELECTION_GRID,
    ClaimedProfile,
    refutation_ratios,
)
from dpaudit.errors import InvalidParameterError

__all__ = [
    "POWER_CUT",
    "POWER_TOLERANCE",
    "SELECTION_LEVEL",
    "expected_bound",
    "plug_in_power",
    "roc_auc",
    "roc_curve",
    "select_threshold",
]

#: Thresholds whose plug-in power is within this fraction of the best are near-best;
#: the middle one is chosen (:func:`select_threshold`).
POWER_TOLERANCE = 0.1

#: Below this best plug-in power the claim is out of reach of the validation rates:
#: the threshold maximises the expected reported bound instead (:func:`select_threshold`).
POWER_CUT = 0.5

#: Out of reach, each validation rate enters the expected bound at its one-sided
#: upper bound at this level (Jeffreys), not at its point estimate.
SELECTION_LEVEL = 0.05

# ---------------------------------------------------------------- threshold choice


def select_threshold(
    scores: ArrayLike,
    labels: ArrayLike,
    *,
    delta: float,
    alpha: float = 0.05,
    method: EstimatorMethod = "clopper_pearson",
    profile: ClaimedProfile | None = None,
    rejection: NDArray[np.int64] | None = None,
    n_members_test: int | None = None,
    test_alpha: float | None = None,
    power_cut: float = POWER_CUT,
) -> tuple[float, int]:
    """Chooses the decision threshold and score direction that maximise eps_lo.

    With ``rejection`` (the deciding test's rejection set on the test rounds:
    ``rejection[k0]`` the largest FN count rejected with ``k0`` FPs, out of
    ``len(rejection) - 1`` non-member and ``n_members_test`` member test rounds) the
    threshold maximises instead the test's *plug-in power*: the probability that the
    test rejects if the true error rates were the validation rates (smoothed as
    ``(k + 1/2) / (n + 1)``), exactly over the two binomials: among the thresholds
    within :data:`POWER_TOLERANCE` of the best power (it is flat near its best and
    noisy), the best validation Youden J, then the middle one. Where the best
    plug-in power is below ``power_cut`` (:data:`POWER_CUT`; the claim out of reach: the test would
    more likely miss than reject even at the validation rates) the same tie rule
    picks by the *expected reported bound* instead (:func:`expected_bound`: mu_emp
    for a claim that states a profile, eps_emp for the lines alone, as the exact
    test's family at size ``test_alpha`` would report them on the test rounds), with
    each validation rate at its one-sided Jeffreys upper bound at
    :data:`SELECTION_LEVEL`. ``rejection`` needs ``n_members_test`` and
    ``test_alpha``.

    With a ``profile`` that states more than the (epsilon, delta) lines
    (:attr:`ClaimedProfile.has_profile`) the statistic maximised is instead the
    refutation ratio of the bounded corner against that claim (the statistic the
    verdict uses); without one the choice is exactly the eps_lo one.

    Every unique score value is a candidate threshold, in both directions (+1:
    ``score >= threshold`` means member; -1: ``score <= threshold`` means member,
    as in :meth:`AttackCounts.from_scores`); the pair with the largest
    :func:`eps_lower_bound` wins. Ties go, in order, to the larger eps_lo, to the
    larger validation Youden J (TPR - FPR), to direction +1, then to the middle one
    of the tied thresholds (sorted ascending,
    the lower middle when their number is even). The scores are sorted once and all
    candidates are scored with cumulative counts.

    Soundness: this choice is a search over many tests, so the maximised eps_lo is
    optimistic on the rounds it was chosen on. Call this on *validation* rounds only,
    and compute the reported bound on test rounds that are disjoint from them
    (docs/soundness.md, rule 4); only then does the coverage of :func:`eps_lower_bound`
    hold.

    Args:
        scores: 1-D array of finite attack scores on validation rounds.
        labels: 1-D array of 0/1, same length; 1 means member (b = 1).
        delta: The delta of the claim, in [0, 1).
        alpha: As in :func:`eps_lower_bound`.
        method: As in :func:`eps_lower_bound`.
        profile: The claim whose refutation ratio is maximised (its ``delta`` is
            ignored: ``delta`` is used).
        rejection: The deciding test's rejection set on the test rounds (above).
        n_members_test: The member test rounds.
        test_alpha: The deciding test's size (the alpha its families are
            calibrated at), for the expected reported bound.
        power_cut: The cut (:data:`POWER_CUT`).

    Returns:
        ``(threshold, direction)`` with direction +1 or -1.

    Raises:
        InvalidParameterError: On empty or malformed arrays, invalid delta,
            alpha or method, or ``rejection`` without ``n_members_test`` and
            ``test_alpha``.

    Example:
        >>> scores = [0.1] * 30 + [0.2] * 30 + [0.8] * 30 + [0.9] * 30
        >>> labels = [0] * 60 + [1] * 60
        >>> select_threshold(scores, labels, delta=1e-5)
        (0.8, 1)
    """
    y = _as_labels(labels)
    s = _as_scores(scores, y.shape[0])
    if s.size == 0:
        raise InvalidParameterError("`scores` must be non-empty. Got 0 rounds.")
    d = _check_delta(delta)
    level = _check_alpha(alpha)
    name = _check_method(method)

    order = np.argsort(s, kind="stable")
    s_sorted, y_sorted = s[order], y[order]
    values, first = np.unique(s_sorted, return_index=True)
    last = np.append(first[1:], s_sorted.size)  # one past each group's end
    # cum_m[i] = number of members among the i lowest scores; likewise cum_n.
    cum_m = np.concatenate(([0], np.cumsum(y_sorted)))
    cum_n = np.concatenate(([0], np.cumsum(1 - y_sorted)))
    n1, n0 = int(cum_m[-1]), int(cum_n[-1])
    n1_arr, n0_arr = np.full(values.size, n1), np.full(values.size, n0)
    statistic: Callable[..., NDArray[np.float64]] = _eps_lower_bounds
    if profile is not None and profile.has_profile:
        claim = replace(profile, delta=d)

        def ratios(
            fp: NDArray[np.int64],
            n_0: NDArray[np.int64],
            fn: NDArray[np.int64],
            n_1: NDArray[np.int64],
            _delta: float,
            alpha: float,
            method: str,
        ) -> NDArray[np.float64]:
            # The same joint event as eps_lo: each rate at alpha / 2.
            a = rate_upper_bounds(fp, n_0, alpha / 2.0, method)
            b = rate_upper_bounds(fn, n_1, alpha / 2.0, method)
            return refutation_ratios(a, b, claim, zcdp_orders=ZCDP_SELECTION_GRID)

        statistic = ratios

    # Direction +1, threshold v: rounds with score < v are guessed non-member.
    fn_up, tn_up = cum_m[first], cum_n[first]
    eps_up = statistic(n0 - tn_up, n0_arr, fn_up, n1_arr, d, level, name)
    # Direction -1, threshold v: rounds with score <= v are guessed member.
    tp_dn, fp_dn = cum_m[last], cum_n[last]
    eps_dn = statistic(fp_dn, n0_arr, n1 - tp_dn, n1_arr, d, level, name)
    # Validation Youden J (TPR - FPR) of every candidate, for the ties.
    j_up = (n1 - fn_up) / max(n1, 1) - (n0 - tn_up) / max(n0, 1)
    j_dn = tp_dn / max(n1, 1) - fp_dn / max(n0, 1)
    if rejection is not None:
        if n_members_test is None or test_alpha is None:
            raise InvalidParameterError(
                "`rejection` needs `n_members_test` and `test_alpha` (the test "
                "rounds' members and the deciding test's size)."
            )
        fp_both = np.concatenate((n0 - tn_up, fp_dn))
        fn_both = np.concatenate((fn_up, n1 - tp_dn))
        j_both = np.concatenate((j_up, j_dn))
        power = plug_in_power(fp_both, n0, fn_both, n1, rejection, n_members_test)
        if float(power.max()) >= power_cut:
            # The plug-in power is flat near its best and noisy: the middle of the
            # thresholds within POWER_TOLERANCE of the best is a steadier choice
            # than the noisy maximum (in the direction that reaches the best).
            pick = _near_best(power, j_both, values.size)
        else:
            # The claim is out of reach of the validation rates: the threshold whose
            # reported bound on the test rounds is expected to be largest.
            # A claim that states a profile: mu_emp (reported at most a claimed mu
            # unless refuted); the lines alone: eps_emp, the ratio's numerator.
            stated = profile is not None and profile.has_profile
            cap = None if profile is None else profile.gdp_mu
            # Each validation rate at its one-sided upper bound at SELECTION_LEVEL
            # (Jeffreys): a threshold whose rates rest on few errors (a tail, where
            # the plug-in is noisiest) is not chosen for its luck.
            n0_all, n1_all = np.full(fp_both.size, n0), np.full(fn_both.size, n1)
            bound = expected_bound(
                rate_upper_bounds(fp_both, n0_all, SELECTION_LEVEL, "jeffreys"),
                rate_upper_bounds(fn_both, n1_all, SELECTION_LEVEL, "jeffreys"),
                kind="mu" if stated else "eps",
                n0_test=rejection.size - 1,
                n1_test=n_members_test,
                alpha=test_alpha,
                delta=d,
                cap=math.inf if cap is None or not stated else cap,
                rejection=rejection,
            )
            pick = _near_best(bound, j_both, values.size)
        return float(values[pick % values.size]), 1 if pick < values.size else -1

    best = max(float(eps_up.max()), float(eps_dn.max()))
    # Among thresholds tied at the best eps_lo (all tie at 0 when the validation set
    # is too small to show any bound), keep those with the best validation Youden J
    # (TPR - FPR), so a perfect attack keeps its perfect threshold.
    best_j = max(
        float(j_up[eps_up == best].max(initial=-np.inf)),
        float(j_dn[eps_dn == best].max(initial=-np.inf)),
    )
    for eps, j, direction in ((eps_up, j_up, 1), (eps_dn, j_dn, -1)):
        tied = np.flatnonzero((eps == best) & (j == best_j))
        if tied.size:
            return float(values[tied[(tied.size - 1) // 2]]), direction
    raise AssertionError("unreachable: the maximum is attained")  # pragma: no cover


def _near_best(
    value: NDArray[np.float64],
    j: NDArray[np.float64],
    size: int,
    *,
    tolerance: float = POWER_TOLERANCE,
) -> int:
    """The candidate chosen by ``value`` (both directions' candidates, +1's ``size``
    first): in the direction that reaches the best, among those within
    ``tolerance`` of the best the best validation Youden J ``j`` (a perfect attack
    keeps a perfect threshold), then the middle one."""
    top = float(value.max())
    start = 0 if float(value[:size].max()) >= top else size
    part, j_part = value[start : start + size], j[start : start + size]
    near = np.flatnonzero(part >= top - tolerance * abs(top))
    pick = near[j_part[near] >= j_part[near].max() - 1e-12]
    return start + int(pick[(pick.size - 1) // 2])


def expected_bound(
    fpr: NDArray[np.float64],
    fnr: NDArray[np.float64],
    *,
    kind: str,
    n0_test: int,
    n1_test: int,
    alpha: float,
    delta: float,
    cap: float = math.inf,
    rejection: NDArray[np.int64] | None = None,
) -> NDArray[np.float64]:
    """The expected figure (``kind``: ``"eps"`` for eps_emp, ``"mu"`` for mu_emp)
    that the exact test's family at size ``alpha`` reports on ``n0_test`` +
    ``n1_test`` test rounds if the true error rates were ``fpr`` and ``fnr`` (one
    value per pair; exactly over the two binomials, as
    :func:`dpaudit.audit.stats.ceiling.mu_ceiling` sums the oracle's). Outside
    ``rejection`` (the claim's test: ``rejection[k0]`` the largest FN count it
    rejects with ``k0`` FPs) the figure is reported at most ``cap`` (a claimed mu,
    as :func:`calibrated.judge` reports it). A selection heuristic: no bound rests
    on it.

    >>> [round(float(v), 3) for v in expected_bound(
    ...     np.array([0.0025, 0.25]), np.array([0.0025, 0.25]), kind="mu",
    ...     n0_test=400, n1_test=400, alpha=0.05, delta=0.0)]
    [4.708, 1.161]
    """
    table = families.family_table(
        kind, n0_test, n1_test, alpha=float(alpha), delta=float(delta)
    )
    if math.isfinite(cap):
        outside = np.ones(table.shape, dtype=bool)
        if rejection is not None:
            # In the rejection set: FN count at most rejection[k0] (-1: none).
            fns = np.arange(n1_test + 1)
            outside = fns[None, :] > np.asarray(rejection)[:, None]
        table = np.where(outside, np.minimum(table, cap), table)
    # Rates of 0 or 1 (a bound of a rate with no error left) as nearly so.
    x = np.clip(np.asarray(fpr, np.float64), 1e-12, 1.0 - 1e-12)
    y = np.clip(np.asarray(fnr, np.float64), 1e-12, 1.0 - 1e-12)
    k0 = np.arange(n0_test + 1, dtype=np.float64)
    k1 = np.arange(n1_test + 1, dtype=np.float64)
    out = np.empty(x.size)
    for start in range(0, x.size, 256):  # blocks of candidates bound the memory
        block = slice(start, start + 256)
        w0, w1 = _binom_pmf(n0_test, k0, x[block]), _binom_pmf(n1_test, k1, y[block])
        out[block] = np.einsum("cj,cj->c", w0 @ table, w1)
    return out


def _binom_pmf(n: int, k: NDArray[np.float64], p: NDArray[np.float64]) -> Any:
    """``P(Bin(n, p) = k)``, one row per ``p`` in (0, 1), one column per ``k``."""
    from scipy import special

    log_choose = (
        special.gammaln(n + 1.0)
        - special.gammaln(k + 1.0)
        - special.gammaln(n - k + 1.0)
    )
    return np.exp(
        log_choose[None, :]
        + k[None, :] * np.log(p)[:, None]
        + (n - k)[None, :] * np.log1p(-p)[:, None]
    )


def plug_in_power(
    fp: NDArray[np.int64],
    n0: int,
    fn: NDArray[np.int64],
    n1: int,
    rejection: NDArray[np.int64],
    n1_test: int,
) -> NDArray[np.float64]:
    """The probability that the test with rejection set ``rejection`` rejects on
    ``len(rejection) - 1`` + ``n1_test`` test rounds when the error rates are the
    validation rates ``fp / n0`` and ``fn / n1``, smoothed as ``(k + 1/2) / (n + 1)``
    (one value per candidate; exact over the two binomials).

    >>> g = np.array([3, 1, -1, -1, -1])  # reject (0, <=3) and (1, <=1) of 4 + 4
    >>> [round(float(p), 3) for p in plug_in_power(np.array([0, 20]), 40,
    ...                                            np.array([0, 20]), 40, g, 4)]
    [0.999, 0.137]
    """
    n0_test = rejection.size - 1
    x = (np.asarray(fp, np.float64) + 0.5) / (n0 + 1.0)  # in (0, 1)
    y = (np.asarray(fn, np.float64) + 0.5) / (n1 + 1.0)
    rejected_any = np.flatnonzero(rejection >= 0)
    if rejected_any.size == 0:
        return np.zeros(x.size)
    # A down-set: no FP count above the last rejected one contributes.
    rejection = rejection[: int(rejected_any[-1]) + 1]

    pmf0 = _binom_pmf(n0_test, np.arange(rejection.size, dtype=np.float64), x)
    # P(Bin(n1, y) <= m) by cumulative sums (a selection heuristic: no bound rests
    # on it), with a 0 in front for the counts that reject nothing (-1).
    cdf1 = np.cumsum(
        _binom_pmf(n1_test, np.arange(n1_test + 1, dtype=np.float64), y), axis=1
    )
    cdf1 = np.concatenate((np.zeros((y.size, 1)), np.minimum(cdf1, 1.0)), axis=1)
    cdf = cdf1[:, rejection + 1]
    return np.asarray(np.sum(pmf0 * cdf, axis=1), np.float64)


# --------------------------------------------------------------------------- ROC


def roc_auc(scores: ArrayLike, labels: ArrayLike) -> float:
    """Area under the ROC curve of scores for membership (higher = member).

    Args:
        scores: 1-D array of finite attack scores.
        labels: 1-D array of 0/1, same length; 1 means member.

    Returns:
        The AUC (:func:`dpaudit.audit.stats.auc.auc`, the one AUC); 0.5 (chance)
        when one class is absent.

    Raises:
        InvalidParameterError: On malformed arrays.

    Example:
        >>> roc_auc([0.1, 0.4, 0.35, 0.8], [0, 0, 1, 1])
        0.75
    """
    y = _as_labels(labels)
    s = _as_scores(scores, y.shape[0])
    value = auc(s, y)
    return 0.5 if value is None else value


def roc_curve(scores: ArrayLike, labels: ArrayLike) -> tuple[list[float], list[float]]:
    """The ROC curve of scores for membership (higher = member).

    Args:
        scores: 1-D array of finite attack scores.
        labels: 1-D array of 0/1, same length; 1 means member.

    Returns:
        ``(fpr, tpr)`` as lists of floats from ``sklearn.metrics.roc_curve``
        (all thresholds kept); the diagonal ``([0, 1], [0, 1])`` when one class is
        absent.

    Raises:
        InvalidParameterError: On malformed arrays.

    Example:
        >>> roc_curve([0.1, 0.9], [0, 1])
        ([0.0, 0.0, 1.0], [0.0, 1.0, 1.0])
    """
    y = _as_labels(labels)
    s = _as_scores(scores, y.shape[0])
    if np.unique(y).size < 2:
        return [0.0, 1.0], [0.0, 1.0]
    fpr, tpr, _ = _sklearn_roc_curve(y, s, drop_intermediate=False)
    return [float(v) for v in fpr], [float(v) for v in tpr]
