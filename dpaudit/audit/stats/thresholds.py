"""Choosing an attack's threshold on validation rounds, and ROC summaries.

:func:`select_threshold` picks the threshold and direction that maximise the
empirical-epsilon bound on the validation rounds (never the test rounds: rule 4 in
docs/soundness.md), or, for a claim that states a privacy profile, the refutation
ratio the verdict uses (:func:`dpaudit.audit.stats.profile.refutation_ratios`);
:func:`roc_auc` and :func:`roc_curve` describe the test scores.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.metrics import roc_curve as _sklearn_roc_curve

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
    "POWER_TOLERANCE",
    "plug_in_power",
    "roc_auc",
    "roc_curve",
    "select_threshold",
]

#: Thresholds whose plug-in power is within this fraction of the best are near-best;
#: the middle one is chosen (:func:`select_threshold`).
POWER_TOLERANCE = 0.1

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
) -> tuple[float, int]:
    """Chooses the decision threshold and score direction that maximise eps_lo.

    With ``rejection`` (the deciding test's rejection set on the test rounds:
    ``rejection[k0]`` the largest FN count rejected with ``k0`` FPs, out of
    ``len(rejection) - 1`` non-member and ``n_members_test`` member test rounds) the
    threshold maximises instead the test's *plug-in power*: the probability that the
    test rejects if the true error rates were the validation rates (smoothed as
    ``(k + 1/2) / (n + 1)``), exactly over the two binomials: among the thresholds
    within :data:`POWER_TOLERANCE` of the best power (it is flat near its best and
    noisy), the best validation Youden J, then the middle one; where no threshold has
    any power (all below 1e-9) the choice falls back to the statistic below.

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

    Returns:
        ``(threshold, direction)`` with direction +1 or -1.

    Raises:
        InvalidParameterError: On empty or malformed arrays, or invalid delta,
            alpha or method.

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
    if rejection is not None and n_members_test is not None:
        power_up = plug_in_power(n0 - tn_up, n0, fn_up, n1, rejection, n_members_test)
        power_dn = plug_in_power(fp_dn, n0, n1 - tp_dn, n1, rejection, n_members_test)
        top = max(float(power_up.max()), float(power_dn.max()))
        if top > 1e-9:
            # The plug-in power is flat near its best and noisy: the middle of the
            # thresholds within POWER_TOLERANCE of the best is a steadier choice
            # than the noisy maximum (in the direction that reaches the best).
            power, direction = (
                (power_up, 1) if float(power_up.max()) >= top else (power_dn, -1)
            )
            near = np.flatnonzero(power >= (1.0 - POWER_TOLERANCE) * top)
            # Among them the best validation Youden J (a perfect attack keeps a
            # perfect threshold), then the middle one.
            j_near = (
                (n1 - fn_up[near]) / max(n1, 1) - (n0 - tn_up[near]) / max(n0, 1)
                if direction == 1
                else tp_dn[near] / max(n1, 1) - fp_dn[near] / max(n0, 1)
            )
            pick = near[j_near >= j_near.max() - 1e-12]
            return float(values[pick[(pick.size - 1) // 2]]), direction

    best = max(float(eps_up.max()), float(eps_dn.max()))
    # Among thresholds tied at the best eps_lo (all tie at 0 when the validation set
    # is too small to show any bound), keep those with the best validation Youden J
    # (TPR - FPR), so a perfect attack keeps its perfect threshold.
    j_up = (n1 - fn_up) / max(n1, 1) - (n0 - tn_up) / max(n0, 1)
    j_dn = tp_dn / max(n1, 1) - fp_dn / max(n0, 1)
    best_j = max(
        float(j_up[eps_up == best].max(initial=-np.inf)),
        float(j_dn[eps_dn == best].max(initial=-np.inf)),
    )
    for eps, j, direction in ((eps_up, j_up, 1), (eps_dn, j_dn, -1)):
        tied = np.flatnonzero((eps == best) & (j == best_j))
        if tied.size:
            return float(values[tied[(tied.size - 1) // 2]]), direction
    raise AssertionError("unreachable: the maximum is attained")  # pragma: no cover


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
    from scipy import special

    n0_test = rejection.size - 1
    x = (np.asarray(fp, np.float64) + 0.5) / (n0 + 1.0)  # in (0, 1)
    y = (np.asarray(fn, np.float64) + 0.5) / (n1 + 1.0)
    rejected_any = np.flatnonzero(rejection >= 0)
    if rejected_any.size == 0:
        return np.zeros(x.size)
    # A down-set: no FP count above the last rejected one contributes.
    rejection = rejection[: int(rejected_any[-1]) + 1]

    def pmf(n: int, k: NDArray[np.float64], p: NDArray[np.float64]) -> Any:
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

    pmf0 = pmf(n0_test, np.arange(rejection.size, dtype=np.float64), x)
    # P(Bin(n1, y) <= m) by cumulative sums (a selection heuristic: no bound rests
    # on it), with a 0 in front for the counts that reject nothing (-1).
    cdf1 = np.cumsum(pmf(n1_test, np.arange(n1_test + 1, dtype=np.float64), y), axis=1)
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
