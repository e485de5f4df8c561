"""GroundHog: summary-statistic features of a whole synthetic dataset + random forest.

Stadler, Oprisanu and Troncoso, "Synthetic Data -- Anonymisation Groundhog Day",
USENIX Security 2022, Section 5 (the attack's feature sets). Each released synthetic
dataset is summarised by one feature vector; a random forest trained on shadow rounds
learns how the target's presence shifts those summaries. The feature sets:

* ``naive``: per column, the min, max, mean, median and (population, ``ddof=0``)
  variance; features ordered column by column: ``[c0 min, c0 max, c0 mean,
  c0 median, c0 variance, c1 min, ...]``.
* ``histogram``: per column, the fraction of rows in each of ``bins`` (default 5)
  equal-width bins of the column's PUBLIC domain bounds for continuous and integer
  columns (never the data's range, which would itself leak; the upper bound falls in
  the last bin), and the fraction of rows in each value (0, 1) of a binary column or
  each category (domain order) of a categorical column; column by column.
* ``correlation``: the upper triangle (above the diagonal, row by row, as
  ``numpy.triu_indices(d, k=1)``) of the Pearson correlation matrix of the columns;
  a constant column's correlations (undefined, NaN) are 0.
* ``all``: the concatenation ``naive + histogram + correlation``.

Values are the released columns' numbers; categorical columns are category codes in
domain order. Everything is computed with NumPy along the axes of a ``[R, n, d]``
stack of equal-size datasets (:func:`dpaudit.attacks.base.stacked_batches`), never
with a Python loop over datasets or rows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal, get_args

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from dpaudit.attacks.base import (
    ClassifierAttack,
    bin_index,
    check_target,
    featurize_stacked,
)
from dpaudit.attacks.classifiers import Model
from dpaudit.data import Domain
from dpaudit.errors import InvalidParameterError
from dpaudit.rng import Rngs
from dpaudit.validation import check_positive_int

FeatureSet = Literal["naive", "histogram", "correlation", "all"]
FEATURE_SETS: tuple[FeatureSet, ...] = get_args(FeatureSet)
NAIVE_STATISTICS = ("min", "max", "mean", "median", "variance")


# ------------------------------------------------------------ pure feature maps
def naive_features(values: NDArray[np.float64]) -> NDArray[np.float64]:
    """Per-column min, max, mean, median and variance of each dataset.

    Args:
        values: ``[r, n, d]`` stack of ``r`` datasets of ``n`` rows and ``d`` columns.

    Returns:
        ``[r, 5 d]``, column by column (``c0 min, c0 max, c0 mean, c0 median,
        c0 variance, c1 min, ...``); the variance is the population one (``ddof=0``).

    >>> naive_features(np.array([[[1.0], [2.0], [6.0]]])).tolist()
    [[1.0, 6.0, 3.0, 2.0, 4.666666666666667]]
    """
    stats = np.stack(
        [
            values.min(axis=1),
            values.max(axis=1),
            values.mean(axis=1),
            np.median(values, axis=1),
            values.var(axis=1),
        ],
        axis=2,
    )  # [r, d, 5]
    return stats.reshape(len(values), -1)


def histogram_layout(domain: Domain, *, bins: int) -> NDArray[np.intp]:
    """Number of histogram cells of each column: ``bins`` for continuous and integer
    columns, 2 for binary ones, the number of categories for categorical ones."""
    widths = []
    for col in domain.columns:
        if col.kind == "binary":
            widths.append(2)
        elif col.kind == "categorical":
            assert col.categories is not None
            widths.append(len(col.categories))
        else:
            widths.append(bins)
    return np.asarray(widths, dtype=np.intp)


def histogram_features(
    values: NDArray[np.float64], *, domain: Domain, bins: int = 5
) -> NDArray[np.float64]:
    """Per-column cell frequencies over the public domain.

    Args:
        values: ``[r, n, d]`` stack (categorical columns as codes).
        domain: the public domain; its bounds (not the data's) define the bins.
        bins: equal-width bins per continuous or integer column.

    Returns:
        ``[r, H]`` frequencies (each column's cells sum to 1), ``H`` the sum of
        :func:`histogram_layout`.
    """
    r, n = values.shape[:2]
    kinds = [c.kind for c in domain.columns]
    numeric = np.array([k in ("continuous", "integer") for k in kinds])
    binary = np.array([k == "binary" for k in kinds])
    lower = np.array(
        [c.lower if numeric[j] else 0.0 for j, c in enumerate(domain.columns)]
    )
    upper = np.array(
        [c.upper if numeric[j] else 1.0 for j, c in enumerate(domain.columns)]
    )
    widths = histogram_layout(domain, bins=bins)
    cell = np.where(
        numeric,
        bin_index(values, lower, upper, bins),
        np.where(binary, np.clip(np.rint(values), 0, 1), values).astype(np.intp),
    )
    offsets = np.concatenate([[0], np.cumsum(widths)[:-1]])
    total = int(widths.sum())
    flat = (cell + offsets) + (np.arange(r, dtype=np.intp) * total)[:, None, None]
    counts = np.bincount(flat.ravel(), minlength=r * total).reshape(r, total)
    return np.asarray(counts / n, dtype=np.float64)


def correlation_features(values: NDArray[np.float64]) -> NDArray[np.float64]:
    """Upper triangle (``k=1``) of each dataset's Pearson correlation matrix.

    A constant column has no correlation (0/0); its entries are 0. Constancy is
    tested exactly (min == max), not through a rounded standard deviation.

    Args:
        values: ``[r, n, d]`` stack.

    Returns:
        ``[r, d (d - 1) / 2]`` correlations, row by row of the upper triangle.

    >>> x = np.array([[[1.0, 2.0, 5.0], [2.0, 4.0, 5.0], [3.0, 0.0, 5.0]]])
    >>> correlation_features(x).round(4).tolist()
    [[-0.5, 0.0, 0.0]]
    """
    d = values.shape[2]
    centred = values - values.mean(axis=1, keepdims=True)
    # einsum's own loop, not a batched BLAS call: r tiny threaded GEMMs thrash on a
    # busy machine (measured 10x slower), the single-threaded loop does not.
    cov = np.einsum("rni,rnj->rij", centred, centred)  # [r, d, d], times n
    std = np.sqrt(np.maximum(np.diagonal(cov, axis1=1, axis2=2), 0.0))  # [r, d]
    varies = values.max(axis=1) > values.min(axis=1)  # [r, d]
    valid = varies[:, :, None] & varies[:, None, :]
    denom = std[:, :, None] * std[:, None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        corr = np.where(valid & (denom > 0), cov / np.where(denom > 0, denom, 1.0), 0.0)
    rows, cols = np.triu_indices(d, k=1)
    return np.clip(corr[:, rows, cols], -1.0, 1.0)


# ---------------------------------------------------------------------- attack
class GroundHogAttack(ClassifierAttack):
    """GroundHog (Stadler et al. 2022): dataset summaries + random forest.

    Args:
        domain: the public domain (its bounds define the histogram bins).
        target: the target record (one row). GroundHog's features do not depend on
            it; it is validated so that every attack takes the same arguments.
        rng: the forest's ``random_state`` is drawn from it at construction.
        feature_set: ``naive``, ``histogram``, ``correlation`` or ``all``.
        bins: equal-width bins of the public bounds per numeric column (5 as in the
            study).
        name: registry name; default ``groundhog`` for ``all``, else
            ``groundhog-<feature_set>``.
        n_estimators, n_jobs: passed to the random forest.
        model: the classifier trained: "auto" (default), "forest" or "logistic"
            (:class:`dpaudit.attacks.base.ClassifierAttack`).

    Raises:
        InvalidParameterError: unknown feature set, bad ``bins`` or target.
    """

    def __init__(
        self,
        *,
        domain: Domain,
        target: pd.DataFrame | Mapping[str, Any],
        rng: Rngs,
        feature_set: FeatureSet = "all",
        bins: int = 5,
        name: str | None = None,
        n_estimators: int = 100,
        n_jobs: int | None = None,
        model: Model = "auto",
    ) -> None:
        if feature_set not in FEATURE_SETS:
            raise InvalidParameterError(
                f"`feature_set` must be one of {', '.join(FEATURE_SETS)}. "
                f"Got {feature_set!r}."
            )
        if name is None:
            name = "groundhog" if feature_set == "all" else f"groundhog-{feature_set}"
        super().__init__(
            name=name, rng=rng, n_estimators=n_estimators, n_jobs=n_jobs, model=model
        )
        self.domain = domain
        self.target = check_target(target, domain)
        self.feature_set: FeatureSet = feature_set
        self.bins = check_positive_int(bins, name="bins")

    @property
    def _parts(self) -> tuple[str, ...]:
        if self.feature_set == "all":
            return ("naive", "histogram", "correlation")
        return (self.feature_set,)

    @property
    def feature_names(self) -> list[str]:
        """One readable name per feature, in :meth:`featurize`'s order."""
        names: list[str] = []
        cols = self.domain.columns
        for part in self._parts:
            if part == "naive":
                names += [f"{c.name}:{s}" for c in cols for s in NAIVE_STATISTICS]
            elif part == "histogram":
                for col in cols:
                    if col.kind == "binary":
                        names += [f"{col.name}=0", f"{col.name}=1"]
                    elif col.kind == "categorical":
                        assert col.categories is not None
                        names += [f"{col.name}={c}" for c in col.categories]
                    else:
                        names += [f"{col.name}:bin{k}" for k in range(self.bins)]
            else:
                rows, others = np.triu_indices(len(cols), k=1)
                names += [
                    f"corr({cols[i].name},{cols[j].name})" for i, j in zip(rows, others)
                ]
        return names

    @property
    def n_features(self) -> int:
        d = len(self.domain)
        sizes = {
            "naive": len(NAIVE_STATISTICS) * d,
            "histogram": int(histogram_layout(self.domain, bins=self.bins).sum()),
            "correlation": d * (d - 1) // 2,
        }
        return sum(sizes[p] for p in self._parts)

    def _features(self, values: NDArray[np.float64]) -> NDArray[np.float64]:
        blocks = []
        for part in self._parts:
            if part == "naive":
                blocks.append(naive_features(values))
            elif part == "histogram":
                blocks.append(
                    histogram_features(values, domain=self.domain, bins=self.bins)
                )
            else:
                blocks.append(correlation_features(values))
        return np.concatenate(blocks, axis=1)

    def featurize(self, synthetic: Sequence[pd.DataFrame]) -> NDArray[np.float64]:
        """GroundHog features of each released dataset.

        Args:
            synthetic: ``R`` released datasets (any sizes; equal sizes are stacked).

        Returns:
            ``[R, n_features]`` float64.

        Raises:
            DataError: a dataset is empty, lacks a domain column or holds a category
                outside the domain.
        """
        return featurize_stacked(
            synthetic,
            self.domain,
            n_features=self.n_features,
            width=4 * len(self.domain),
            features=self._features,
        )
