"""The attack protocol, the shared random-forest logic, and array helpers.

A black-box membership-inference attack on synthetic data sees only released synthetic
datasets. The audit trains a generator many times with (label 1) and without (label 0)
the target record, releases one synthetic dataset per round, and asks the attack to tell
the two worlds apart:

1. :meth:`Attack.featurize` maps each released dataset to one feature vector;
2. :meth:`Attack.fit` learns from labelled feature vectors of shadow rounds;
3. :meth:`Attack.score` scores held-out rounds (higher = more likely a member).

Classifier attacks (GroundHog, Stadler, Stoyanov and Troncoso, "Synthetic Data --
Anonymisation Groundhog Day", USENIX Security 2022; query-based, Houssiau et al.,
"TAPAS: a Toolbox for Adversarial Privacy Auditing of Synthetic Data", NeurIPS 2022
workshop) share :class:`ClassifierAttack`: a scikit-learn random forest with its
defaults, as in the audit study (Ganev, Annamalai and De Cristofaro 2024), or a
logistic regression where it ranks the training rounds better
(:mod:`dpaudit.attacks.classifiers`). Threshold
attacks (distance to closest record) score directly and do not train.
"""

from __future__ import annotations

import warnings
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Protocol, Self, runtime_checkable

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from dpaudit.attacks.classifiers import Choice, Model, check_model, fit_model
from dpaudit.data import Domain
from dpaudit.errors import (
    DataError,
    DpauditWarning,
    InvalidParameterError,
    NotFittedError,
)
from dpaudit.rng import Rngs
from dpaudit.validation import check_positive_int

#: Upper bound on the number of array elements one vectorised batch materialises
#: (about 128 MiB of float64), so featurising thousands of datasets keeps memory flat.
MAX_BATCH_ELEMENTS = 1 << 24


@runtime_checkable
class Attack(Protocol):
    """A black-box membership-inference attack on released synthetic datasets.

    Attributes:
        name: the attack's registry name (``querybased``, ``groundhog-naive``, ...).
        trains_classifier: ``False`` for threshold attacks, whose :meth:`fit` is a
            no-op and whose score is the single feature.
    """

    name: str
    trains_classifier: bool

    def featurize(self, synthetic: Sequence[pd.DataFrame]) -> NDArray[np.float64]:
        """Feature matrix ``[R, F]``: one row per released synthetic dataset."""
        ...

    def fit(self, features: NDArray[Any], labels: NDArray[Any]) -> Self:
        """Learns from labelled rounds (label 1 = the target was a member)."""
        ...

    def score(self, features: NDArray[Any]) -> NDArray[np.float64]:
        """Membership scores ``[R]``; higher means more likely a member."""
        ...


def draw_random_state(rng: Rngs) -> int:
    """An integer seed for scikit-learn's ``random_state``, drawn from ``rng.numpy``."""
    return int(rng.numpy.integers(0, 2**31 - 1))


class ClassifierAttack(ABC):
    """Base class of attacks that train a classifier on their features.

    Subclasses implement :meth:`featurize` and call ``super().__init__``. The forest
    is scikit-learn's ``RandomForestClassifier`` with its defaults (100 trees, as in
    Stadler et al. 2022 and the audit study); its ``random_state`` is drawn from
    ``rng`` at construction, so the same seed gives the same attack. By default the
    attack also fits a logistic regression and keeps whichever ranks the training
    rounds better out of sample (:mod:`dpaudit.attacks.classifiers`: a forest ranks
    the tail of a linear shift coarsely).

    Args:
        name: the registry name of the attack.
        rng: the stream the forest's ``random_state`` is drawn from.
        n_estimators: number of trees (scikit-learn default 100).
        n_jobs: parallel jobs of the forest (scikit-learn default ``None`` = 1).
        model: ``"auto"`` (default): the forest or a logistic regression, whichever
            ranks the training rounds better out of sample; ``"forest"``,
            ``"logistic"``: that one (:mod:`dpaudit.attacks.classifiers`).
    """

    trains_classifier: bool = True

    def __init__(
        self,
        *,
        name: str,
        rng: Rngs,
        n_estimators: int = 100,
        n_jobs: int | None = None,
        model: Model = "auto",
    ) -> None:
        self.name = name
        self.n_estimators = check_positive_int(n_estimators, name="n_estimators")
        self.n_jobs = n_jobs
        self.model = check_model(model)
        #: Which model :meth:`fit` trained, and why (``None`` before a fit or on one
        #: class).
        self.choice_: Choice | None = None
        self.random_state = draw_random_state(rng)
        self.n_features_: int | None = None
        self.classifier_: Any = None
        self.constant_score_: float | None = None

    # ------------------------------------------------------------- features
    @property
    @abstractmethod
    def n_features(self) -> int:
        """Width ``F`` of :meth:`featurize`'s output."""

    @abstractmethod
    def featurize(self, synthetic: Sequence[pd.DataFrame]) -> NDArray[np.float64]:
        """Feature matrix ``[R, F]``: one row per released synthetic dataset."""

    # ------------------------------------------------------------ classifier
    def fit(self, features: NDArray[Any], labels: NDArray[Any]) -> Self:
        """Trains the classifier (``model``: the forest, a logistic regression, or
        with ``"auto"`` the better of the two on the training rounds,
        :mod:`dpaudit.attacks.classifiers`) on labelled feature vectors.

        A training set with one class only cannot teach anything: the attack then
        warns (:class:`dpaudit.errors.DpauditWarning`) and scores every round with that
        class's label (a constant score, so AUC 0.5).

        Args:
            features: ``[R, F]`` feature matrix from :meth:`featurize`.
            labels: ``[R]`` membership bits, 1 = the target was in the training data.

        Returns:
            ``self``, fitted.

        Raises:
            InvalidParameterError: shapes disagree, labels are not 0/1 or R is 0.
        """
        x = check_features(features, n_features=None)
        y = np.asarray(labels)
        if y.ndim != 1 or len(y) != len(x):
            raise InvalidParameterError(
                f"`labels` must be a vector with one bit per feature row ({len(x)}). "
                f"Got shape {y.shape}."
            )
        if len(y) == 0:
            raise InvalidParameterError("`features` must have at least one row. Got 0.")
        if not np.all(np.isin(y, (0, 1))):
            raise InvalidParameterError(
                f"`labels` must be membership bits (0 or 1). Got {np.unique(y)[:5]!r}."
            )
        y = y.astype(np.int64)
        self.n_features_ = x.shape[1]
        classes = np.unique(y)
        if len(classes) == 1:
            warnings.warn(
                f"attack {self.name!r}: the training rounds hold one class only "
                f"(label {int(classes[0])}); every round gets the constant score "
                f"{float(classes[0])}.",
                DpauditWarning,
                stacklevel=2,
            )
            self.classifier_ = None
            self.choice_ = None
            self.constant_score_ = float(classes[0])
            return self
        self.classifier_, self.choice_ = fit_model(
            x,
            y,
            model=self.model,
            n_estimators=self.n_estimators,
            n_jobs=self.n_jobs,
            random_state=self.random_state,
        )
        self.constant_score_ = None
        return self

    def score(self, features: NDArray[Any]) -> NDArray[np.float64]:
        """The classifier's probability that each round's target was a member.

        Args:
            features: ``[R, F]`` feature matrix from :meth:`featurize`.

        Returns:
            ``[R]`` float64 scores in ``[0, 1]``.

        Raises:
            NotFittedError: before :meth:`fit`.
            InvalidParameterError: ``features`` has the wrong width.
        """
        if self.n_features_ is None:
            raise NotFittedError(
                f"attack {self.name!r} must be fitted before `score`; call `fit` first."
            )
        x = check_features(features, n_features=self.n_features_)
        if self.constant_score_ is not None:
            return np.full(len(x), self.constant_score_, dtype=np.float64)
        if len(x) == 0:
            return np.zeros(0, dtype=np.float64)
        proba = self.classifier_.predict_proba(x)
        column = int(np.flatnonzero(self.classifier_.classes_ == 1)[0])
        return np.asarray(proba[:, column], dtype=np.float64)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


# --------------------------------------------------------------------- helpers
def check_features(
    features: NDArray[Any], *, n_features: int | None
) -> NDArray[np.float64]:
    """``features`` as a float64 ``[R, F]`` array, checked against ``n_features``."""
    x = np.asarray(features, dtype=np.float64)
    if x.ndim != 2:
        raise InvalidParameterError(
            f"`features` must be a 2-D array [rounds, features]. Got shape {x.shape}."
        )
    if n_features is not None and x.shape[1] != n_features:
        raise InvalidParameterError(
            f"`features` must have {n_features} columns (as in `fit`). Got {x.shape[1]}."
        )
    return x


def check_target(
    target: pd.DataFrame | Mapping[str, Any], domain: Domain
) -> pd.DataFrame:
    """The target record validated against and cast to ``domain`` (one row)."""
    row = target if isinstance(target, pd.DataFrame) else pd.DataFrame([dict(target)])
    if len(row) != 1:
        raise InvalidParameterError(
            f"`target` must be one record. Got {len(row)} rows."
        )
    domain.validate(row, name="target")
    return domain.cast(row).reset_index(drop=True)


def check_synthetic(
    synthetic: Sequence[pd.DataFrame], domain: Domain
) -> list[pd.DataFrame]:
    """The released datasets as a list, each non-empty with the domain's columns."""
    if isinstance(synthetic, pd.DataFrame):
        raise InvalidParameterError(
            "`synthetic` must be a sequence of DataFrames (one per round). Got one "
            "DataFrame; wrap it in a list."
        )
    frames = list(synthetic)
    names = domain.names
    for i, frame in enumerate(frames):
        if not isinstance(frame, pd.DataFrame):
            raise InvalidParameterError(
                f"`synthetic[{i}]` must be a pandas DataFrame. Got {type(frame).__name__}."
            )
        missing = [c for c in names if c not in frame.columns]
        if missing:
            raise DataError(
                f"`synthetic[{i}]` lacks the domain columns {missing}; a generator must "
                "release every column of the domain."
            )
        if len(frame) == 0:
            raise DataError(
                f"`synthetic[{i}]` has no rows; each round must release at least one record."
            )
    return frames


def numeric_values(frame: pd.DataFrame, domain: Domain) -> NDArray[np.float64]:
    """The ``[n, d]`` numeric values of a released dataset, in domain column order.

    Continuous, integer and binary columns keep their values; categorical columns
    become category codes in the domain's order (0, 1, ...).

    Raises:
        DataError: a categorical value is not among the domain's categories.
    """
    names = domain.names
    if not any(c.kind == "categorical" for c in domain.columns):
        # Selecting columns costs more than the conversion; skip it when not needed.
        table = frame if list(frame.columns) == names else frame[names]
        values: NDArray[np.float64] = table.to_numpy(dtype=np.float64)
        return values
    out = np.empty((len(frame), len(domain)), dtype=np.float64)
    for j, col in enumerate(domain.columns):
        series = frame[col.name]
        if col.kind == "categorical":
            assert col.categories is not None
            codes = pd.Index(list(col.categories)).get_indexer(series)
            if (codes < 0).any():
                raise DataError(
                    f"column {col.name!r} has a value outside the domain's categories "
                    f"{list(col.categories)}."
                )
            out[:, j] = codes
        else:
            out[:, j] = pd.to_numeric(series).to_numpy(dtype=np.float64)
    return out


def stacked_batches(
    frames: Sequence[pd.DataFrame], domain: Domain, *, width: int
) -> Iterator[tuple[NDArray[np.intp], NDArray[np.float64]]]:
    """Groups datasets of equal size and yields them stacked as ``[r, n, d]`` arrays.

    Datasets of one size are stacked in chunks so that ``r * n * width`` stays below
    :data:`MAX_BATCH_ELEMENTS` (``width`` is the widest per-row array the caller
    builds).

    Yields:
        ``(indices, values)``: positions of the chunk's datasets in ``frames`` and
        their stacked :func:`numeric_values`.
    """
    sizes = np.fromiter((len(f) for f in frames), dtype=np.intp, count=len(frames))
    for n in np.unique(sizes):
        members = np.flatnonzero(sizes == n)
        chunk = max(1, MAX_BATCH_ELEMENTS // max(1, int(n) * max(1, width)))
        for start in range(0, len(members), chunk):
            idx = members[start : start + chunk]
            yield idx, np.stack([numeric_values(frames[i], domain) for i in idx])


def featurize_stacked(
    synthetic: Sequence[pd.DataFrame],
    domain: Domain,
    *,
    n_features: int,
    width: int,
    features: Callable[[NDArray[np.float64]], NDArray[np.float64]],
) -> NDArray[np.float64]:
    """Applies a vectorised ``[r, n, d] -> [r, F]`` map to every released dataset."""
    frames = check_synthetic(synthetic, domain)
    out = np.empty((len(frames), n_features), dtype=np.float64)
    for idx, values in stacked_batches(frames, domain, width=width):
        out[idx] = features(values)
    return out


def bin_index(
    values: NDArray[np.float64],
    lower: NDArray[np.float64],
    upper: NDArray[np.float64],
    bins: int,
) -> NDArray[np.intp]:
    """Index of the equal-width bin of ``[lower, upper]`` holding each value.

    ``bins`` equal-width bins of the PUBLIC bounds; the upper bound falls in the last
    bin, values outside the bounds in the nearest end bin, and a column with
    ``lower == upper`` in bin 0. ``lower`` and ``upper`` broadcast against ``values``
    (one entry per column).

    >>> bin_index(np.array([0.0, 0.2, 0.99, 1.0]), np.array(0.0), np.array(1.0), 5)
    array([0, 1, 4, 4])
    """
    span = upper - lower
    safe = np.where(span > 0, span, 1.0)
    raw = np.floor((values - lower) / safe * bins)
    raw = np.where(span > 0, raw, 0.0)
    return np.clip(raw, 0, bins - 1).astype(np.intp)
