"""The one AUC of dpaudit: the area under the ROC curve of membership scores.

Mann-Whitney's statistic (ties count one half; a NaN score ranks lowest), equal to
:func:`sklearn.metrics.roc_auc_score` on finite scores. Without both classes there is
no curve: :func:`auc` returns ``None`` and each caller says what it reports then
(:func:`~dpaudit.audit.stats.thresholds.roc_auc` 0.5, chance; the one-run result
no AUC; target selection chance).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy.stats import rankdata

__all__ = ["auc"]


def auc(scores: ArrayLike, labels: ArrayLike) -> float | None:
    """The AUC of ``scores`` for membership (``labels`` true or 1: a member;
    higher scores: more likely a member), ``None`` without both classes.

    >>> auc([0.1, 0.4, 0.35, 0.8], [0, 0, 1, 1])
    0.75
    >>> auc([0.5, 0.5], [0, 1]), auc([0.1, float("nan")], [1, 0]), auc([1.0], [1])
    (0.5, 1.0, None)
    """
    s = np.asarray(scores, dtype=np.float64).reshape(-1)
    members = np.asarray(labels).reshape(-1).astype(bool)
    n1 = int(members.sum())
    n0 = members.size - n1
    if n1 == 0 or n0 == 0:
        return None
    ranks = rankdata(np.where(np.isnan(s), -np.inf, s))
    return float((ranks[members].sum() - n1 * (n1 + 1) / 2) / (n0 * n1))
