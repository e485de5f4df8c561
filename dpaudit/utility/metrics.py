"""The benchmark's metrics: AUROC and AUPRC of one fit, and the Synthetic Ranking
Agreement (SRA) of two settings' classifier rankings."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

import numpy as np
from numpy.typing import ArrayLike

from dpaudit.errors import InvalidParameterError
from dpaudit.utility.settings import ONE_CLASS_TEST


def score_predictions(
    y_true: ArrayLike, scores: ArrayLike
) -> tuple[float, float] | str:
    """AUROC and AUPRC of ``scores`` for the binary labels ``y_true`` (positive 1).

    Args:
        y_true: labels in {0, 1}.
        scores: real-valued scores, larger meaning "more likely 1".

    Returns:
        ``(auroc, auprc)`` from scikit-learn's ``roc_auc_score`` and
        ``average_precision_score``, or the reason (a string) why they are undefined:
        ``y_true`` with one class only.

    >>> score_predictions([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    (0.75, 0.8333333333333333)
    >>> score_predictions([0, 0], [0.1, 0.2])
    'test set has one class only'
    """
    from sklearn.metrics import average_precision_score, roc_auc_score

    y = np.asarray(y_true)
    s = np.asarray(scores, dtype=np.float64)
    if np.unique(y).size < 2:
        return ONE_CLASS_TEST
    return float(roc_auc_score(y, s)), float(average_precision_score(y, s))


def synthetic_ranking_agreement(
    scores_a: Sequence[float], scores_c: Sequence[float]
) -> float:
    """Synthetic Ranking Agreement between two settings' per-classifier scores.

    Jordon, Yoon and van der Schaar (ICLR 2019, Section 5.2):
    ``SRA = 1 / (L (L - 1)) * sum_{i != j} 1[(A_i - A_j) (C_i - C_j) > 0]``,
    the share of classifier pairs that Settings A and C order the same way. A tie in
    either setting counts as a disagreement, as in the formula.

    Args:
        scores_a: one score per classifier in Setting A (train real, test real).
        scores_c: the same classifiers' scores in Setting C, in the same order.

    Returns:
        The agreement in [0, 1].

    Raises:
        InvalidParameterError: if the lengths differ, fewer than two classifiers are
            given, or a score is not finite.

    >>> synthetic_ranking_agreement([0.9, 0.8, 0.7], [0.6, 0.7, 0.5])
    0.6666666666666666
    >>> synthetic_ranking_agreement([0.9, 0.8, 0.7], [0.3, 0.2, 0.1])
    1.0
    """
    a = np.asarray(scores_a, dtype=np.float64)
    c = np.asarray(scores_c, dtype=np.float64)
    if a.ndim != 1 or a.shape != c.shape:
        raise InvalidParameterError(
            "`scores_a` and `scores_c` must be 1-d and of equal length. "
            f"Got shapes {a.shape} and {c.shape}."
        )
    if a.size < 2:
        raise InvalidParameterError(
            f"`scores_a` must hold at least two classifiers. Got {a.size}."
        )
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(c))):
        raise InvalidParameterError(
            f"`scores_a` and `scores_c` must be finite. Got {a.tolist()} and {c.tolist()}."
        )
    pairs = list(combinations(range(a.size), 2))
    # Each unordered pair stands for both ordered pairs (i, j) and (j, i): the
    # product is symmetric, so the share over unordered pairs equals the formula's.
    agree = sum((a[i] - a[j]) * (c[i] - c[j]) > 0 for i, j in pairs)
    return float(agree) / len(pairs)
