"""The best detection rate at a given size: the probability that the test deciding
an audit returns VIOLATION for an attack whose true error rates are known, maximised
over its thresholds (:func:`violation_ceiling`). Pure."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy import stats

from dpaudit.audit.stats.calibrated import deciding_counts
from dpaudit.audit.stats.profile import ClaimedProfile

__all__ = ["violation_ceiling"]


def violation_ceiling(
    claim: ClaimedProfile,
    fpr: Sequence[float],
    fnr: Sequence[float],
    n0: int,
    n1: int,
    *,
    alpha: float,
) -> float:
    """The largest probability, over thresholds with the given true error rates
    (``fpr[i]``, ``fnr[i]``), that the test deciding the audit (the exact test of
    ``claim``'s region at per-attack level ``alpha`` on ``n0`` + ``n1`` test rounds,
    :func:`~dpaudit.audit.stats.calibrated.deciding_counts`) returns VIOLATION: the
    detection rate of the best attack with its threshold known in advance, exact
    over the two binomial laws of the test errors. Pass the Neyman-Pearson tests of
    the mechanism's own output and this is what no attack on it can exceed at this
    size and level (an audit's attacks also spend rounds choosing a threshold).

    A perfect attack (no error) refutes ``(1, 1e-5)`` on 400 + 400 test rounds; one
    that errs half the time refutes nothing:

    >>> claim = ClaimedProfile(epsilon=1.0, delta=1e-5, gdp_mu=0.27)
    >>> violation_ceiling(claim, [0.0, 0.5], [0.0, 0.5], 400, 400, alpha=0.05)
    1.0
    >>> violation_ceiling(claim, [0.5], [0.5], 400, 400, alpha=0.05) < 0.05
    True
    """
    rejection = deciding_counts(claim, n0, n1, alpha=alpha, delta=claim.delta)
    p0 = np.clip(np.asarray(fpr, dtype=np.float64), 0.0, 1.0)[:, None]
    p1 = np.clip(np.asarray(fnr, dtype=np.float64), 0.0, 1.0)[:, None]
    k0 = np.arange(n0 + 1)[None, :]
    # P(FP = k0) P(FN <= g[k0]); g = -1 (nothing rejected) gives 0.
    inside = stats.binom.pmf(k0, n0, p0) * stats.binom.cdf(rejection[None, :], n1, p1)
    return float(np.max(inside.sum(axis=1), initial=0.0))
