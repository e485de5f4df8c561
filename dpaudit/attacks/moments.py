"""Moments: per-column moments and quantiles of the raw release + random forest.

Under fixed public randomness (docs/soundness.md) every round of an audit and both
worlds share initial weights, partitions, batches, latents and the release's sampling;
only the privacy noise is fresh. A mechanism on which the target reaches the release
without privacy noise then shifts the release deterministically, often by far less than
the gap between a binary column's two decoded values. Attacks that count decoded values
(``querybased`` thresholds binary columns at 0.5) lose such shifts; the moments of the
release's raw numbers keep them.

Features, column by column in domain order:

* every column: mean, standard deviation (population, ``ddof=0``) and the
  :data:`QUANTILES` (linear interpolation, NumPy's default);
* a binary column, in addition: the fraction of rows ``>= 0.5`` (the fraction of ones
  a reader decodes; for a release in {0, 1} it equals the mean);
* a categorical column, in addition: the fraction of rows in each category (domain
  order).

The values are the released numbers (:func:`dpaudit.attacks.base.numeric_values`), so a
generator that releases its model space (binary columns in [0, 1]) is read as released.
This extends GroundHog's ``naive`` feature set (Stadler et al., USENIX Security 2022,
Section 5) with quantiles and decoded fractions; the forest (scikit-learn defaults, as
in :class:`dpaudit.attacks.base.ClassifierAttack`) learns which feature moved.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from dpaudit.attacks.base import ClassifierAttack, check_target, featurize_stacked
from dpaudit.attacks.classifiers import Model
from dpaudit.data import Domain
from dpaudit.rng import Rngs

#: Quantile levels of every column.
QUANTILES = (0.1, 0.25, 0.5, 0.75, 0.9)
#: Names of the per-column statistics every column has, in feature order.
COLUMN_STATISTICS = ("mean", "std", *(f"q{int(q * 100):02d}" for q in QUANTILES))


def moment_features(values: NDArray[np.float64]) -> NDArray[np.float64]:
    """Per-column mean, standard deviation and quantiles of each dataset.

    Args:
        values: ``[r, n, d]`` stack of ``r`` datasets of ``n`` rows and ``d`` columns.

    Returns:
        ``[r, 7 d]``, column by column (``c0 mean, c0 std, c0 q10, c0 q25, c0 q50,
        c0 q75, c0 q90, c1 mean, ...``).

    >>> moment_features(np.array([[[0.0], [1.0], [2.0], [3.0], [4.0]]])).round(3).tolist()
    [[2.0, 1.414, 0.4, 1.0, 2.0, 3.0, 3.6]]
    """
    r = len(values)
    quantiles = np.quantile(values, QUANTILES, axis=1)  # [q, r, d]
    stats = np.concatenate(
        [
            values.mean(axis=1)[None],
            values.std(axis=1)[None],
            quantiles,
        ],
        axis=0,
    )  # [s, r, d]
    return np.asarray(stats.transpose(1, 2, 0).reshape(r, -1), dtype=np.float64)


class MomentsAttack(ClassifierAttack):
    """Per-column moments and quantiles of the raw release, with a random forest.

    Args:
        domain: the public domain.
        target: the target record (one row); the features do not depend on it (the
            forest learns the shift), it is validated for a uniform signature.
        rng: source of the forest's seed.
        name: registry name (default ``moments``).
        n_estimators, n_jobs: passed to the random forest.
        model: the classifier trained: "auto" (default), "forest" or "logistic"
            (:class:`dpaudit.attacks.base.ClassifierAttack`).
    """

    def __init__(
        self,
        *,
        domain: Domain,
        target: pd.DataFrame | Mapping[str, Any],
        rng: Rngs,
        name: str = "moments",
        n_estimators: int = 100,
        n_jobs: int | None = None,
        model: Model = "auto",
    ) -> None:
        self.domain = domain
        self.target = check_target(target, domain)
        kinds = [c.kind for c in domain.columns]
        self._binary = np.flatnonzero([k == "binary" for k in kinds])
        categorical: list[tuple[int, int]] = []
        for j, col in enumerate(domain.columns):
            if col.kind == "categorical":
                assert col.categories is not None
                categorical += [(j, code) for code in range(len(col.categories))]
        self._cat_columns = np.asarray([j for j, _ in categorical], dtype=np.intp)
        self._cat_codes = np.asarray([c for _, c in categorical], dtype=np.float64)
        super().__init__(
            name=name, rng=rng, n_estimators=n_estimators, n_jobs=n_jobs, model=model
        )

    @property
    def n_features(self) -> int:
        return (
            len(COLUMN_STATISTICS) * len(self.domain)
            + len(self._binary)
            + len(self._cat_columns)
        )

    @property
    def feature_names(self) -> list[str]:
        """One readable name per feature, in :meth:`featurize`'s order."""
        names = self.domain.names
        out = [f"{c} {s}" for c in names for s in COLUMN_STATISTICS]
        out += [f"{names[j]} fraction>=0.5" for j in self._binary]
        for j, code in zip(self._cat_columns, self._cat_codes):
            categories = self.domain.columns[int(j)].categories
            assert categories is not None
            out.append(f"{names[int(j)]}={categories[int(code)]} fraction")
        return out

    def _features(self, values: NDArray[np.float64]) -> NDArray[np.float64]:
        parts = [moment_features(values)]
        if len(self._binary):
            parts.append((values[:, :, self._binary] >= 0.5).mean(axis=1))
        if len(self._cat_columns):
            parts.append(
                (values[:, :, self._cat_columns] == self._cat_codes).mean(axis=1)
            )
        return np.asarray(np.concatenate(parts, axis=1), dtype=np.float64)

    def featurize(self, synthetic: Sequence[pd.DataFrame]) -> NDArray[np.float64]:
        """``[R, n_features]``: the moments of each released dataset.

        Raises:
            DataError: a dataset is empty, lacks a domain column or holds a category
                outside the domain.
        """
        return featurize_stacked(
            synthetic,
            self.domain,
            n_features=self.n_features,
            width=2 * len(self.domain) + len(self._cat_columns) + 1,
            features=self._features,
        )
