"""Distance to closest record: a threshold attack that trains nothing.

A generator that memorises its training data releases records close to the target
when the target was a member. The score of a released dataset is minus the smallest
Euclidean distance from the target to any of its records, measured in the encoded
domain space of :meth:`dpaudit.data.Domain.encode` (numeric columns scaled to [0, 1]
by their public bounds, binary columns 0/1, categorical columns one-hot). Distance to
closest record is the standard synthetic-data privacy metric discussed by Stadler et
al. (USENIX Security 2022, Section 2) and used as a baseline attack in TAPAS (Houssiau
et al. 2022); the audit's threshold selection turns the score into a guess.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Self

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from dpaudit.attacks.base import (
    ClassifierAttack,
    check_features,
    check_target,
    featurize_stacked,
    numeric_values,
)
from dpaudit.attacks.classifiers import Model
from dpaudit.data import Domain
from dpaudit.rng import Rngs
from dpaudit.validation import check_positive_int


class DistanceAttack:
    """Minus the distance from the target to the closest released record.

    Args:
        domain: the public domain (defines the encoding).
        target: the target record (one row).
        rng: accepted for a uniform signature; the attack draws nothing.
        name: registry name (default ``distance``).
    """

    trains_classifier: bool = False

    def __init__(
        self,
        *,
        domain: Domain,
        target: pd.DataFrame | Mapping[str, Any],
        rng: Rngs | None = None,
        name: str = "distance",
    ) -> None:
        self.name = name
        self.domain = domain
        self.target = check_target(target, domain)
        kinds = [c.kind for c in domain.columns]
        self._categorical = np.array([k == "categorical" for k in kinds])
        self._scaled = np.array([k in ("continuous", "integer") for k in kinds])
        self._lower = np.array(
            [c.lower if c.lower is not None else 0.0 for c in domain.columns]
        )
        self._upper = np.array(
            [c.upper if c.upper is not None else 1.0 for c in domain.columns]
        )
        self._target_values = numeric_values(self.target, domain)[0]
        self._encoded_target = self._encode(self._target_values)

    @property
    def n_features(self) -> int:
        return 1

    @property
    def feature_names(self) -> list[str]:
        return ["-distance_to_closest_record"]

    def _encode(self, values: NDArray[np.float64]) -> NDArray[np.float64]:
        """Numeric coordinates of :meth:`Domain.encode` for non-categorical columns
        (scaled by the public bounds and clipped to [0, 1]; binary as 0/1)."""
        span = self._upper - self._lower
        scaled = (values - self._lower) / np.where(span > 0, span, 1.0)
        scaled = np.where(span > 0, np.clip(scaled, 0.0, 1.0), 0.0)
        return np.asarray(np.where(self._scaled, scaled, values), dtype=np.float64)

    def _squared(self, values: NDArray[np.float64]) -> NDArray[np.float64]:
        """``[r, n]`` squared distances from the target to every released row."""
        encoded = self._encode(values)  # categorical columns still hold codes
        squared = np.where(
            self._categorical,
            # Two one-hot vectors differ in 0 or 2 coordinates (squared distance 0 or 2).
            2.0 * (values != self._target_values),
            np.square(encoded - self._encoded_target),
        ).sum(axis=2)
        return np.asarray(squared, dtype=np.float64)

    def _features(self, values: NDArray[np.float64]) -> NDArray[np.float64]:
        squared = self._squared(values)
        return np.asarray(
            -np.sqrt(squared.min(axis=1, keepdims=True)), dtype=np.float64
        )

    def featurize(self, synthetic: Sequence[pd.DataFrame]) -> NDArray[np.float64]:
        """``[R, 1]``: minus the target's distance to each dataset's closest record.

        The squared distance in :meth:`Domain.encode`'s space is a sum over columns:
        ``(enc(x) - enc(t))^2`` for numeric and binary columns, and 0 or 2 for a
        categorical column (same or different one-hot vector). It is computed that
        way on ``[r, n, d]`` stacks of equal-size datasets, which gives the same
        numbers as encoding every table (up to float32 rounding of
        :meth:`Domain.encode`) without building the one-hot tables.

        Raises:
            DataError: a dataset is empty, lacks a domain column or holds a category
                outside the domain.
        """
        return featurize_stacked(
            synthetic,
            self.domain,
            n_features=1,
            width=3 * len(self.domain),
            features=self._features,
        )

    def fit(self, features: NDArray[Any], labels: NDArray[Any]) -> Self:
        """No-op (a threshold attack learns nothing); returns ``self``."""
        return self

    def score(self, features: NDArray[Any]) -> NDArray[np.float64]:
        """The single feature: minus the distance to the closest record."""
        return check_features(features, n_features=1)[:, 0].copy()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


class NearestDistancesAttack(ClassifierAttack):
    """The target's ``k`` smallest distances to the release, with a random forest.

    Distance to closest record keeps one number; a small deterministic shift of the
    release under fixed public randomness (docs/soundness.md) can move the second or
    tenth nearest record instead. The features are the ``k`` smallest distances in
    :meth:`Domain.encode`'s space (as :class:`DistanceAttack`), ascending; a release of
    fewer than ``k`` rows repeats its largest distance. A random forest (scikit-learn
    defaults) learns from training rounds which of them moved.

    Args:
        domain: the public domain (defines the encoding).
        target: the target record (one row).
        rng: source of the forest's seed.
        k: number of nearest distances kept.
        name: registry name (default ``nearest``).
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
        k: int = 10,
        name: str = "nearest",
        n_estimators: int = 100,
        n_jobs: int | None = None,
        model: Model = "auto",
    ) -> None:
        self.k = check_positive_int(k, name="k")
        self._distance = DistanceAttack(domain=domain, target=target)
        self.domain = domain
        self.target = self._distance.target
        super().__init__(
            name=name, rng=rng, n_estimators=n_estimators, n_jobs=n_jobs, model=model
        )

    @property
    def n_features(self) -> int:
        return self.k

    @property
    def feature_names(self) -> list[str]:
        return [f"distance_{i + 1}" for i in range(self.k)]

    def _features(self, values: NDArray[np.float64]) -> NDArray[np.float64]:
        squared = self._distance._squared(values)  # [r, n]
        n = squared.shape[1]
        if n > self.k:
            squared = np.partition(squared, self.k - 1, axis=1)[:, : self.k]
        ordered = np.sort(squared, axis=1)
        if n < self.k:
            ordered = np.concatenate(
                [ordered, np.repeat(ordered[:, -1:], self.k - n, axis=1)], axis=1
            )
        return np.asarray(np.sqrt(ordered), dtype=np.float64)

    def featurize(self, synthetic: Sequence[pd.DataFrame]) -> NDArray[np.float64]:
        """``[R, k]``: the target's ``k`` smallest distances to each release.

        Raises:
            DataError: a dataset is empty, lacks a domain column or holds a category
                outside the domain.
        """
        return featurize_stacked(
            synthetic,
            self.domain,
            n_features=self.k,
            width=3 * len(self.domain),
            features=self._features,
        )
