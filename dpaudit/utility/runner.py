"""The utility benchmark: how useful is a generator's synthetic data for learning?

This is the evaluation of the PATE-GAN paper (Jordon, Yoon and van der Schaar, ICLR
2019, Section 5) as repeated by the PATE-GAN audit study (Ganev, Annamalai and De
Cristofaro 2024, "The Elusive Pursuit of Replicating PATE-GAN", Section 5). On the
dataset's 80/20 stratified split (``Dataset.train`` / ``Dataset.test``) twelve
classifiers are trained and scored by AUROC and AUPRC (scikit-learn
``roc_auc_score`` and ``average_precision_score``, positive class 1) in three
settings:

- **A**: train on the real training set, test on the real test set (the baseline);
- **B**: train on a synthetic set the size of the real training set, test on the real
  test set (the headline utility figure);
- **C**: train on the same synthetic set, test on a *separate* synthetic sample the
  size of the real test set.

The Synthetic Ranking Agreement (:func:`synthetic_ranking_agreement`) compares the
classifiers' order in Settings A and C.

Protocols (how the ``n_models x n_samples`` synthetic training sets are summarised):

- ``plain`` (default): per classifier, the mean and the sample standard deviation
  (``ddof=1``) over all synthetic sets, each from its own generator seed and sample
  seed. This is the honest figure.
- ``best-of``: per classifier, the *best* score over the ``m x s`` sets (5 x 5 in the
  study). The best AUROC and the best AUPRC are chosen independently, as the study
  reports them. The maximum of 25 noisy scores is biased upwards; use it to compare
  with the study, not as an estimate of utility.

Setting A has no synthetic randomness and is trained once per classifier.

Classifiers and their settings. Every classifier is a scikit-learn pipeline
``MinMaxScaler -> classifier``: the scaler, fitted on the training set, maps each
feature to [0, 1] as the PATE-GAN code normalises its data. The classifiers use
scikit-learn's defaults (as the PATE-GAN evaluation code does) except where noted:

==================  ==================================================================
name                estimator
==================  ==================================================================
LogisticRegression  ``LogisticRegression(max_iter=1000)`` (lbfgs needs more than the
                    default 100 steps on some synthetic sets)
RandomForest        ``RandomForestClassifier()``
GaussianNB          ``GaussianNB()``
BernoulliNB         ``BernoulliNB()`` (binarises at 0 after scaling)
LinearSVC           ``LinearSVC()``; scored by ``decision_function`` (no probabilities)
DecisionTree        ``DecisionTreeClassifier()``
LDA                 ``LinearDiscriminantAnalysis()``
AdaBoost            ``AdaBoostClassifier()``
Bagging             ``BaggingClassifier()``
GradientBoosting    ``GradientBoostingClassifier()``
MLP                 ``MLPClassifier()``
XGBoost             ``xgboost.XGBClassifier(n_jobs=1)``, only with the optional extra
                    ``pip install dpaudit[xgboost]``
==================  ==================================================================

Every randomised classifier gets ``random_state`` from the root seed through
:meth:`Rngs.spawn`, keyed by (setting, synthetic set, classifier's position in
:data:`CLASSIFIERS`), so a subset of classifiers gives the same scores as the full
run and ``n_jobs`` never changes a result. BLAS is limited to one thread inside each
fit; ``n_jobs`` (joblib) is the only parallelism. Nothing is cached between calls.

Undefined scores (decision). AUROC and AUPRC need both classes in the training set
(a classifier that has seen one class cannot rank) and in the test set. When a
synthetic training set (or, in Setting C, a synthetic test set) has one class only,
that run's score is recorded as undefined (``None``) with the reason, never as 0.5
and never as a crash. So is a fit that scikit-learn refuses on degenerate synthetic
data (``ValueError``, ``IndexError`` or ``ArithmeticError``, e.g. LDA on constant
columns), with the error in the reason. A classifier's summary is then taken over its defined runs only
and its status says how many runs were undefined (``partial: ...``); when no run is
defined, the status is ``undefined: <reason>`` and the summary is ``None``. The
per-setting means over classifiers skip undefined classifiers and report how many
were averaged. Read a ``partial`` mean as "utility when the generator produced both
classes", a figure conditional on an event that a weak generator may rarely reach.

A synthetic label released in the [0, 1] model space instead of as 0/1 (the
``output_not_rescaled`` defect) is rounded to 0/1, as the PATE-GAN evaluation code
does, and the result's ``notes`` say so; a synthetic table with NaN or infinite
values is undefined for every classifier. Labels outside [0, 1] are an error.

A missing XGBoost is reported as ``missing: pip install dpaudit[xgboost]`` and left
out of the means; it is never replaced by another classifier.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import combinations
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast, get_args

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from dpaudit.data import Dataset, Domain
from dpaudit.errors import DataError, InvalidParameterError

if TYPE_CHECKING:
    from dpaudit.generators.base import GeneratorFactory
    from dpaudit.rng import Rngs

Setting = Literal["A", "B", "C"]
UtilityProtocol = Literal["plain", "best-of"]
Metric = Literal["auroc", "auprc"]

SETTINGS: tuple[Setting, ...] = ("A", "B", "C")
PROTOCOLS: tuple[UtilityProtocol, ...] = get_args(UtilityProtocol)
CLASSIFIERS: tuple[str, ...] = (
    "LogisticRegression",
    "RandomForest",
    "GaussianNB",
    "BernoulliNB",
    "LinearSVC",
    "DecisionTree",
    "LDA",
    "AdaBoost",
    "Bagging",
    "GradientBoosting",
    "MLP",
    "XGBoost",
)
XGBOOST_MISSING = "missing: pip install dpaudit[xgboost]"
DEFAULT_MODELS = 5
DEFAULT_SAMPLES = 5
FORMAT = "dpaudit.utility/1"
JSON_NAME = "utility.json"
CSV_NAME = "utility.csv"
CSV_FIELDS = (
    "setting",
    "classifier",
    "status",
    "protocol",
    "auroc",
    "auroc_std",
    "auprc",
    "auprc_std",
    "n_runs",
    "n_defined",
    "fit_warnings",
)

ONE_CLASS_TRAIN = "synthetic training set has one class only"
ONE_CLASS_TEST = "test set has one class only"


# --------------------------------------------------------------------- metrics


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


# ------------------------------------------------------------------ classifiers


def xgboost_status() -> str | None:
    """``None`` when ``xgboost`` imports, else :data:`XGBOOST_MISSING`."""
    try:
        import xgboost  # noqa: F401
    except ImportError:
        return XGBOOST_MISSING
    return None


def make_classifier(name: str, *, random_state: int) -> Any:
    """The scikit-learn pipeline ``MinMaxScaler -> classifier`` for ``name``.

    Args:
        name: one of :data:`CLASSIFIERS`.
        random_state: the seed of the classifier's own randomness.

    Raises:
        InvalidParameterError: for an unknown name.
        ImportError: for ``XGBoost`` without the ``xgboost`` package.
    """
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
    from sklearn.ensemble import (
        AdaBoostClassifier,
        BaggingClassifier,
        GradientBoostingClassifier,
        RandomForestClassifier,
    )
    from sklearn.linear_model import LogisticRegression
    from sklearn.naive_bayes import BernoulliNB, GaussianNB
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import MinMaxScaler
    from sklearn.svm import LinearSVC
    from sklearn.tree import DecisionTreeClassifier

    rs = random_state
    builders: dict[str, Callable[[], Any]] = {
        "LogisticRegression": lambda: LogisticRegression(max_iter=1000),
        "RandomForest": lambda: RandomForestClassifier(random_state=rs),
        "GaussianNB": GaussianNB,
        "BernoulliNB": BernoulliNB,
        "LinearSVC": lambda: LinearSVC(random_state=rs),
        "DecisionTree": lambda: DecisionTreeClassifier(random_state=rs),
        "LDA": LinearDiscriminantAnalysis,
        "AdaBoost": lambda: AdaBoostClassifier(random_state=rs),
        "Bagging": lambda: BaggingClassifier(random_state=rs),
        "GradientBoosting": lambda: GradientBoostingClassifier(random_state=rs),
        "MLP": lambda: MLPClassifier(random_state=rs),
        "XGBoost": lambda: _xgboost(rs),
    }
    if name not in builders:
        raise InvalidParameterError(
            f"`classifier` must be one of {', '.join(CLASSIFIERS)}. Got {name!r}."
        )
    return make_pipeline(MinMaxScaler(), builders[name]())


def _xgboost(random_state: int) -> Any:
    import xgboost

    return xgboost.XGBClassifier(random_state=random_state, n_jobs=1)


def _positive_scores(model: Any, x: NDArray[np.float64]) -> NDArray[np.float64]:
    # LinearSVC has no probabilities; its margin ranks the test rows just as well.
    if not hasattr(model, "predict_proba"):
        return np.asarray(model.decision_function(x), dtype=np.float64)
    proba = model.predict_proba(x)
    column = list(model.classes_).index(1)
    return np.asarray(proba[:, column], dtype=np.float64)


@dataclass(frozen=True, slots=True)
class _Task:
    setting: Setting
    run: int
    classifier: str
    random_state: int
    x_train: NDArray[np.float64]
    y_train: NDArray[np.int64]
    x_test: NDArray[np.float64]
    y_test: NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class _Outcome:
    setting: Setting
    run: int
    classifier: str
    auroc: float | None
    auprc: float | None
    reason: str | None
    fit_warnings: int


def _evaluate_task(task: _Task) -> _Outcome:
    from threadpoolctl import threadpool_limits

    def undefined(reason: str) -> _Outcome:
        return _Outcome(task.setting, task.run, task.classifier, None, None, reason, 0)

    classes = np.unique(task.y_train)
    if classes.size < 2:
        which = (
            ONE_CLASS_TRAIN
            if task.setting != "A"
            else "real training set has one class only"
        )
        return undefined(
            f"{which} (every label {int(classes[0])})" if classes.size else which
        )
    if np.unique(task.y_test).size < 2:
        which = "synthetic" if task.setting == "C" else "real"
        return undefined(f"{which} {ONE_CLASS_TEST}")
    model = make_classifier(task.classifier, random_state=task.random_state)
    # Convergence and collinearity warnings are expected on synthetic data; they are
    # counted in the result rather than printed from worker processes.
    with warnings.catch_warnings(record=True) as caught, threadpool_limits(limits=1):
        warnings.simplefilter("always")
        try:
            model.fit(task.x_train, task.y_train)
            scores = _positive_scores(model, task.x_test)
        except (ValueError, IndexError, ArithmeticError) as err:
            # Degenerate synthetic data (e.g. a collapsed generator's constant
            # columns) can break a classifier's fit. That is a property of the data,
            # recorded with its reason, not a reason to lose the other fits.
            return _Outcome(
                task.setting,
                task.run,
                task.classifier,
                None,
                None,
                f"classifier failed on this training set ({type(err).__name__}: {err})",
                len(caught),
            )
    if not np.all(np.isfinite(scores)):
        return _Outcome(
            task.setting,
            task.run,
            task.classifier,
            None,
            None,
            "classifier produced non-finite scores",
            len(caught),
        )
    metrics = score_predictions(task.y_test, scores)
    assert not isinstance(metrics, str)
    return _Outcome(
        task.setting,
        task.run,
        task.classifier,
        metrics[0],
        metrics[1],
        None,
        len(caught),
    )


# ---------------------------------------------------------------------- results


@dataclass(frozen=True, kw_only=True, slots=True)
class ClassifierScore:
    """One classifier's scores in one setting.

    Attributes:
        setting: ``A``, ``B`` or ``C``.
        classifier: the classifier's name (see :data:`CLASSIFIERS`).
        status: ``ok``; ``partial: k of n runs undefined (reason)``;
            ``undefined: reason`` (no run defined); or
            ``missing: pip install dpaudit[xgboost]``.
        auroc: the protocol's summary of the defined runs (mean for ``plain``, best
            for ``best-of``), or None.
        auroc_std: sample standard deviation of the defined runs (None with fewer
            than two).
        auprc: as ``auroc``, for the area under the precision-recall curve.
        auprc_std: as ``auroc_std``.
        auroc_runs: each run's AUROC (None where undefined), in synthetic-set order.
        auprc_runs: each run's AUPRC.
        reasons: each undefined run's reason, in run order.
        fit_warnings: warnings raised while fitting and scoring, over all runs.
    """

    setting: Setting
    classifier: str
    status: str
    auroc: float | None = None
    auroc_std: float | None = None
    auprc: float | None = None
    auprc_std: float | None = None
    auroc_runs: tuple[float | None, ...] = ()
    auprc_runs: tuple[float | None, ...] = ()
    reasons: tuple[str, ...] = ()
    fit_warnings: int = 0

    def __post_init__(self) -> None:
        if self.setting not in SETTINGS:
            raise InvalidParameterError(
                f"`setting` must be one of {', '.join(SETTINGS)}. Got {self.setting!r}."
            )
        if len(self.auroc_runs) != len(self.auprc_runs):
            raise InvalidParameterError(
                "`auroc_runs` and `auprc_runs` must have equal length. "
                f"Got {len(self.auroc_runs)} and {len(self.auprc_runs)}."
            )

    @property
    def defined(self) -> bool:
        """Whether the classifier has a summary score."""
        return self.auroc is not None

    @property
    def n_runs(self) -> int:
        return len(self.auroc_runs)

    @property
    def n_defined(self) -> int:
        return sum(v is not None for v in self.auroc_runs)

    def to_json(self) -> dict[str, Any]:
        return {
            "setting": self.setting,
            "classifier": self.classifier,
            "status": self.status,
            "auroc": self.auroc,
            "auroc_std": self.auroc_std,
            "auprc": self.auprc,
            "auprc_std": self.auprc_std,
            "auroc_runs": list(self.auroc_runs),
            "auprc_runs": list(self.auprc_runs),
            "reasons": list(self.reasons),
            "fit_warnings": self.fit_warnings,
        }

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> ClassifierScore:
        return cls(
            setting=obj["setting"],
            classifier=str(obj["classifier"]),
            status=str(obj["status"]),
            auroc=_opt_float(obj.get("auroc")),
            auroc_std=_opt_float(obj.get("auroc_std")),
            auprc=_opt_float(obj.get("auprc")),
            auprc_std=_opt_float(obj.get("auprc_std")),
            auroc_runs=tuple(_opt_float(v) for v in obj.get("auroc_runs", ())),
            auprc_runs=tuple(_opt_float(v) for v in obj.get("auprc_runs", ())),
            reasons=tuple(str(r) for r in obj.get("reasons", ())),
            fit_warnings=int(obj.get("fit_warnings", 0)),
        )


def _opt_float(value: Any) -> float | None:
    return None if value is None else float(value)


@dataclass(frozen=True, kw_only=True, slots=True)
class UtilityResult:
    """The utility benchmark's result: every setting x classifier, and the SRA.

    Attributes:
        dataset: the dataset's name.
        label: the label column (binary, positive class 1).
        protocol: ``plain`` or ``best-of``.
        settings: the settings evaluated.
        classifiers: the classifiers requested, in :data:`CLASSIFIERS` order.
        scores: one :class:`ClassifierScore` per setting x classifier.
        sra_auroc: Synthetic Ranking Agreement of Settings A and C on AUROC, over the
            classifiers defined in both (None when fewer than two, or A or C not run).
        sra_auprc: the same on AUPRC.
        n_train_rows: rows of the real training set (and of each synthetic training
            set).
        n_test_rows: rows of the real test set (and of each synthetic test set).
        n_train_sets: synthetic training sets evaluated (``n_models x n_samples``).
        generator: the generator's name (None for :func:`evaluate_synthetic` on
            given data).
        generator_options: the options passed to the generator factory.
        epsilon: the target epsilon the generator was built with.
        delta: the target delta.
        seed: the root seed (None when the caller passed its own streams).
        seed_entropy: the root seed sequence's entropy.
        n_models: generator seeds (models trained).
        n_samples: synthetic datasets sampled per model.
        claimed_epsilons: each trained model's ``privacy_claim_.epsilon`` (None where
            the generator has no claim).
        fit_seconds: wall time spent training generators and sampling.
        eval_seconds: wall time spent training and scoring classifiers.
        versions: package versions (dpaudit, scikit-learn, xgboost).
        notes: what was done to the data on the way (e.g. synthetic labels rounded
            to 0/1).
    """

    dataset: str
    label: str
    protocol: UtilityProtocol
    settings: tuple[Setting, ...]
    classifiers: tuple[str, ...]
    scores: tuple[ClassifierScore, ...]
    sra_auroc: float | None = None
    sra_auprc: float | None = None
    n_train_rows: int = 0
    n_test_rows: int = 0
    n_train_sets: int = 0
    generator: str | None = None
    generator_options: Mapping[str, Any] = field(default_factory=dict)
    epsilon: float | None = None
    delta: float | None = None
    seed: int | None = None
    seed_entropy: int | None = None
    n_models: int | None = None
    n_samples: int | None = None
    claimed_epsilons: tuple[float | None, ...] = ()
    fit_seconds: float = 0.0
    eval_seconds: float = 0.0
    versions: Mapping[str, str | None] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.protocol not in PROTOCOLS:
            raise InvalidParameterError(
                f"`protocol` must be one of {', '.join(PROTOCOLS)}. Got {self.protocol!r}."
            )

    # ------------------------------------------------------------------ access
    def score(self, setting: Setting, classifier: str) -> ClassifierScore:
        """The score of ``classifier`` in ``setting``.

        Raises:
            InvalidParameterError: if the pair was not evaluated.
        """
        for item in self.scores:
            if item.setting == setting and item.classifier == classifier:
                return item
        raise InvalidParameterError(
            f"`(setting, classifier)` must be among the evaluated pairs. "
            f"Got {(setting, classifier)!r}."
        )

    def mean(self, setting: Setting, metric: Metric = "auroc") -> float | None:
        """The mean over classifiers of the per-classifier summaries in ``setting``
        (undefined and missing classifiers left out; None when none is defined)."""
        values = self._defined_values(setting, metric)
        return float(np.mean(values)) if values else None

    def n_averaged(self, setting: Setting) -> int:
        """How many classifiers :meth:`mean` averages in ``setting``."""
        return len(self._defined_values(setting, "auroc"))

    def _defined_values(self, setting: Setting, metric: Metric) -> list[float]:
        out = []
        for item in self.scores:
            value = getattr(item, metric)
            if item.setting == setting and value is not None:
                out.append(float(value))
        return out

    # -------------------------------------------------------------------- JSON
    def to_json(self) -> dict[str, Any]:
        """A JSON-serialisable dict (``summary`` is derived and ignored on reading)."""
        return {
            "format": FORMAT,
            "dataset": self.dataset,
            "label": self.label,
            "protocol": self.protocol,
            "settings": list(self.settings),
            "classifiers": list(self.classifiers),
            "generator": self.generator,
            "generator_options": dict(self.generator_options),
            "epsilon": self.epsilon,
            "delta": self.delta,
            "seed": self.seed,
            "seed_entropy": self.seed_entropy,
            "n_models": self.n_models,
            "n_samples": self.n_samples,
            "n_train_sets": self.n_train_sets,
            "n_train_rows": self.n_train_rows,
            "n_test_rows": self.n_test_rows,
            "claimed_epsilons": list(self.claimed_epsilons),
            "fit_seconds": self.fit_seconds,
            "eval_seconds": self.eval_seconds,
            "versions": dict(self.versions),
            "notes": list(self.notes),
            "sra_auroc": self.sra_auroc,
            "sra_auprc": self.sra_auprc,
            "summary": {
                s: {
                    "auroc": self.mean(s, "auroc"),
                    "auprc": self.mean(s, "auprc"),
                    "n_classifiers": self.n_averaged(s),
                }
                for s in self.settings
            },
            "scores": [item.to_json() for item in self.scores],
        }

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> UtilityResult:
        """Reads :meth:`to_json`'s output.

        Raises:
            InvalidParameterError: if ``obj`` is not a utility result.
        """
        if not isinstance(obj, Mapping) or obj.get("format") != FORMAT:
            got = obj.get("format") if isinstance(obj, Mapping) else type(obj).__name__
            raise InvalidParameterError(
                f"a utility result must have `format` {FORMAT!r}. Got {got!r}."
            )
        seed = obj.get("seed")
        entropy = obj.get("seed_entropy")
        return cls(
            dataset=str(obj["dataset"]),
            label=str(obj["label"]),
            protocol=obj["protocol"],
            settings=tuple(obj["settings"]),
            classifiers=tuple(obj["classifiers"]),
            scores=tuple(ClassifierScore.from_json(s) for s in obj["scores"]),
            sra_auroc=_opt_float(obj.get("sra_auroc")),
            sra_auprc=_opt_float(obj.get("sra_auprc")),
            n_train_rows=int(obj.get("n_train_rows", 0)),
            n_test_rows=int(obj.get("n_test_rows", 0)),
            n_train_sets=int(obj.get("n_train_sets", 0)),
            generator=obj.get("generator"),
            generator_options=dict(obj.get("generator_options", {})),
            epsilon=_opt_float(obj.get("epsilon")),
            delta=_opt_float(obj.get("delta")),
            seed=None if seed is None else int(seed),
            seed_entropy=None if entropy is None else int(entropy),
            n_models=obj.get("n_models"),
            n_samples=obj.get("n_samples"),
            claimed_epsilons=tuple(
                _opt_float(v) for v in obj.get("claimed_epsilons", ())
            ),
            fit_seconds=float(obj.get("fit_seconds", 0.0)),
            eval_seconds=float(obj.get("eval_seconds", 0.0)),
            versions=dict(obj.get("versions", {})),
            notes=tuple(str(n) for n in obj.get("notes", ())),
        )

    # --------------------------------------------------------------------- CSV
    def csv_rows(self) -> list[dict[str, Any]]:
        """One row per setting x classifier (the columns of :data:`CSV_FIELDS`)."""
        return [
            {
                "setting": item.setting,
                "classifier": item.classifier,
                "status": item.status,
                "protocol": self.protocol,
                "auroc": item.auroc,
                "auroc_std": item.auroc_std,
                "auprc": item.auprc,
                "auprc_std": item.auprc_std,
                "n_runs": item.n_runs,
                "n_defined": item.n_defined,
                "fit_warnings": item.fit_warnings,
            }
            for item in self.scores
        ]

    def write(self, out_dir: str | os.PathLike[str]) -> tuple[Path, Path]:
        """Writes ``utility.json`` and ``utility.csv`` into ``out_dir`` atomically.

        Both files are rendered in memory, written to temporary files in ``out_dir``
        and renamed over their targets (``os.replace``), so a failure leaves the old
        files (or none) and no half-written one.

        Returns:
            The paths of the JSON and CSV files.
        """
        directory = Path(out_dir)
        directory.mkdir(parents=True, exist_ok=True)
        json_text = json.dumps(self.to_json(), indent=2, allow_nan=False) + "\n"
        buffer = io.StringIO()
        writer = csv.DictWriter(
            buffer, fieldnames=list(CSV_FIELDS), lineterminator="\n"
        )
        writer.writeheader()
        for row in self.csv_rows():
            writer.writerow({k: "" if v is None else v for k, v in row.items()})
        targets = [
            (directory / JSON_NAME, json_text),
            (directory / CSV_NAME, buffer.getvalue()),
        ]
        temps: list[Path] = []
        try:
            for target, text in targets:
                fd, name = tempfile.mkstemp(
                    dir=directory, prefix=f".{target.name}.", suffix=".tmp"
                )
                temps.append(Path(name))
                with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
                    fh.write(text)
                    fh.flush()
                    os.fsync(fh.fileno())
            for (target, _), temp in zip(targets, temps):
                os.replace(temp, target)
        finally:
            for temp in temps:
                temp.unlink(missing_ok=True)
        return directory / JSON_NAME, directory / CSV_NAME


# ------------------------------------------------------------------ evaluation


def _check_subset(name: str, given: Sequence[str], allowed: Sequence[str]) -> tuple[str, ...]:
    """A non-empty subset of ``allowed``, in ``allowed``'s order, duplicates removed."""
    unknown = [v for v in given if v not in allowed]
    if unknown or not given:
        raise InvalidParameterError(
            f"`{name}` must be a non-empty subset of {', '.join(allowed)}. "
            f"Got {list(given)!r}."
        )
    return tuple(v for v in allowed if v in set(given))


def _check_classifiers(classifiers: Sequence[str] | None) -> tuple[str, ...]:
    if classifiers is None:
        return CLASSIFIERS
    if isinstance(classifiers, str):
        classifiers = [classifiers]
    # Canonical order: the order fixes each classifier's seed.
    return _check_subset("classifiers", classifiers, CLASSIFIERS)


def _check_settings(settings: Sequence[str]) -> tuple[Setting, ...]:
    if isinstance(settings, str):
        settings = list(settings)
    return cast(tuple[Setting, ...], _check_subset("settings", settings, SETTINGS))


def _check_positive_int(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
        raise InvalidParameterError(
            f"`{name}` must be a positive integer. Got {value!r}."
        )
    return int(value)


def _random_state(rng: Rngs) -> int:
    # scikit-learn seeds must lie in [0, 2**32).
    return int(rng.seed_sequence.generate_state(1, dtype=np.uint32)[0])


# Features and labels of a table, or the reason a synthetic table cannot be scored.
_Table = tuple[NDArray[np.float64], NDArray[np.int64]] | str


class _Featurizer:
    """Turns tables into (features, labels), column order fixed by the real test set."""

    def __init__(
        self, *, reference: pd.DataFrame, label: str, domain: Domain | None
    ) -> None:
        if not isinstance(reference, pd.DataFrame):
            raise InvalidParameterError(
                f"`test_real` must be a pandas DataFrame. Got {type(reference).__name__}."
            )
        if label not in reference.columns:
            raise InvalidParameterError(
                f"`label` must be a column of `test_real`. Got {label!r}; the columns "
                f"are {list(reference.columns)}."
            )
        self.label = label
        self.features = [c for c in reference.columns if c != label]
        if not self.features:
            raise InvalidParameterError(
                f"`test_real` must have feature columns besides {label!r}. Got none."
            )
        self.rounded: list[str] = []
        self.domain: Domain | None = None
        if domain is not None:
            unknown = [name for name in self.features if name not in domain.names]
            if unknown:
                raise InvalidParameterError(
                    f"`domain` must describe every feature column. Got none for {unknown}."
                )
            self.domain = Domain(tuple(domain[name] for name in self.features))

    def __call__(
        self, table: pd.DataFrame, *, name: str, synthetic: bool = False
    ) -> _Table:
        """Features and labels of ``table``; for a synthetic table, the reason it
        cannot be scored instead (NaN or infinite values)."""
        if not isinstance(table, pd.DataFrame):
            raise InvalidParameterError(
                f"`{name}` must be a pandas DataFrame. Got {type(table).__name__}."
            )
        missing = [c for c in [*self.features, self.label] if c not in table.columns]
        if missing:
            raise DataError(
                f"`{name}` must have the columns of the real test set. Got it without "
                f"{missing}."
            )
        y = pd.to_numeric(table[self.label], errors="coerce").to_numpy(dtype=np.float64)
        x = self._features(table, name=name)
        if synthetic and not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
            # A diverged generator's output: unusable, but only this set.
            return "synthetic set has NaN or infinite values"
        binary = np.isin(y, (0.0, 1.0))
        if synthetic and not np.all(binary) and np.all((y >= 0.0) & (y <= 1.0)):
            # A generator that releases its label in the [0, 1] model space (e.g. the
            # `output_not_rescaled` defect): rounded, as the PATE-GAN evaluation code
            # does (`np.round` of the label column), and noted in the result.
            self.rounded.append(name)
            y = np.round(y)
        elif not np.all(binary):
            bad = _plain_value(table[self.label][~binary].iloc[0])
            raise DataError(
                f"`{name}` label {self.label!r} must hold 0 and 1 only (positive class "
                f"1). Got {bad!r}."
            )
        if not np.all(np.isfinite(x)):
            raise DataError(
                f"`{name}` must have finite feature values. Got NaN or infinity; fill "
                "or drop them."
            )
        return x, y.astype(np.int64)

    def _features(self, table: pd.DataFrame, *, name: str) -> NDArray[np.float64]:
        if self.domain is not None:
            encoded = self.domain.encode(table[self.features])
            return np.asarray(encoded, dtype=np.float64)
        frame = table[self.features]
        non_numeric = [
            c for c in self.features if not pd.api.types.is_numeric_dtype(frame[c])
        ]
        if non_numeric:
            raise DataError(
                f"`{name}` columns {non_numeric} must be numeric. Got non-numeric "
                "values; pass `domain=` to one-hot encode categorical columns."
            )
        return np.asarray(frame.to_numpy(dtype=np.float64), dtype=np.float64)


def _plain_value(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def evaluate_synthetic(
    train_sets: Sequence[pd.DataFrame],
    test_real: pd.DataFrame,
    label: str,
    *,
    rng: Rngs,
    train_real: pd.DataFrame | None = None,
    test_synthetic: Sequence[pd.DataFrame] | None = None,
    domain: Domain | None = None,
    settings: Sequence[Setting] | None = None,
    protocol: UtilityProtocol = "plain",
    classifiers: Sequence[str] | None = None,
    dataset: str = "data",
    n_jobs: int = 1,
    progress: bool = True,
) -> UtilityResult:
    """Scores classifiers trained on given synthetic tables (Settings A, B, C).

    Works with any list of synthetic DataFrames; :func:`run_utility` calls it with a
    generator's samples.

    Args:
        train_sets: synthetic training tables (Settings B and C), each with the real
            test set's columns.
        test_real: the real test table (Settings A and B).
        label: the binary label column (values 0 and 1, positive class 1).
        rng: the streams the classifiers' ``random_state`` values are spawned from.
        train_real: the real training table; needed for Setting A.
        test_synthetic: one synthetic test table per training table (Setting C pairs
            ``train_sets[i]`` with ``test_synthetic[i]``).
        domain: the public domain; when given, features are encoded with it (one-hot
            categorical columns), else the feature columns must be numeric.
        settings: the settings to run; default: every setting whose data is given.
        protocol: ``plain`` (mean and std over the sets) or ``best-of`` (best score).
        classifiers: a subset of :data:`CLASSIFIERS`; default all twelve.
        dataset: a name recorded in the result.
        n_jobs: joblib workers for the classifier fits (-1: all cores).
        progress: show a tqdm progress bar on stderr.

    Returns:
        A :class:`UtilityResult` without generator metadata.

    Raises:
        InvalidParameterError: for bad arguments or a setting without its data.
        DataError: for tables that do not match the real test set.
    """
    from joblib import Parallel, delayed
    from tqdm.auto import tqdm

    if protocol not in PROTOCOLS:
        raise InvalidParameterError(
            f"`protocol` must be one of {', '.join(PROTOCOLS)}. Got {protocol!r}."
        )
    from dpaudit.rng import Rngs

    if not isinstance(rng, Rngs):
        raise InvalidParameterError(f"`rng` must be an Rngs. Got {type(rng).__name__}.")
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, int) or n_jobs == 0:
        raise InvalidParameterError(
            f"`n_jobs` must be a non-zero integer (-1: all cores). Got {n_jobs!r}."
        )
    names = _check_classifiers(classifiers)
    train_sets = list(train_sets)
    if settings is None:
        available: dict[Setting, bool] = {
            "A": train_real is not None,
            "B": bool(train_sets),
            "C": bool(train_sets) and test_synthetic is not None,
        }
        settings = [s for s, ok in available.items() if ok]
    chosen = _check_settings(settings)
    if "A" in chosen and train_real is None:
        raise InvalidParameterError(
            "`train_real` must be given for Setting A. Got None."
        )
    if ("B" in chosen or "C" in chosen) and not train_sets:
        raise InvalidParameterError(
            "`train_sets` must hold at least one synthetic table for Settings B and C. "
            "Got none."
        )
    if "C" in chosen and (
        test_synthetic is None or len(test_synthetic) != len(train_sets)
    ):
        got = None if test_synthetic is None else f"{len(test_synthetic)} tables"
        raise InvalidParameterError(
            f"`test_synthetic` must hold one table per training set ({len(train_sets)}) "
            f"for Setting C. Got {got}."
        )

    featurize = _Featurizer(reference=test_real, label=label, domain=domain)
    real_test = featurize(test_real, name="test_real")
    real_train = (
        None if train_real is None else featurize(train_real, name="train_real")
    )
    synthetic_train = [
        featurize(t, name=f"train_sets[{i}]", synthetic=True)
        for i, t in enumerate(train_sets)
    ]
    synthetic_test = []
    if "C" in chosen:
        assert test_synthetic is not None
        synthetic_test = [
            featurize(t, name=f"test_synthetic[{i}]", synthetic=True)
            for i, t in enumerate(test_synthetic)
        ]

    xgb_missing = xgboost_status() if "XGBoost" in names else None
    runnable = [c for c in names if not (c == "XGBoost" and xgb_missing)]
    setting_rngs = dict(zip(SETTINGS, rng.spawn(len(SETTINGS))))

    def seeds(setting: Setting, n_runs: int) -> list[list[int]]:
        runs = setting_rngs[setting].spawn(n_runs)
        return [[_random_state(r) for r in run.spawn(len(CLASSIFIERS))] for run in runs]

    tasks: list[_Task] = []
    outcomes: list[_Outcome] = []  # runs that need no fit (unusable synthetic sets)
    for setting in chosen:
        pairs: list[tuple[_Table | None, _Table]]
        if setting == "A":
            pairs = [(real_train, real_test)]
        elif setting == "B":
            pairs = [(t, real_test) for t in synthetic_train]
        else:
            pairs = list(zip(synthetic_train, synthetic_test))
        run_seeds = seeds(setting, len(pairs))
        for run, (train_xy, test_xy) in enumerate(pairs):
            assert train_xy is not None and not isinstance(real_test, str)
            for name in runnable:
                unusable = next(
                    (r for r in (train_xy, test_xy) if isinstance(r, str)), None
                )
                if unusable is not None:
                    outcomes.append(
                        _Outcome(setting, run, name, None, None, unusable, 0)
                    )
                    continue
                assert not isinstance(train_xy, str) and not isinstance(test_xy, str)
                tasks.append(
                    _Task(
                        setting,
                        run,
                        name,
                        run_seeds[run][CLASSIFIERS.index(name)],
                        *train_xy,
                        *test_xy,
                    )
                )

    start = time.perf_counter()
    with tqdm(
        total=len(tasks),
        desc="utility: classifiers",
        unit="fit",
        disable=not progress,
        file=sys.stderr,
    ) as bar:
        parallel = Parallel(n_jobs=n_jobs, return_as="generator")
        for outcome in parallel(delayed(_evaluate_task)(t) for t in tasks):
            outcomes.append(outcome)
            bar.update(1)
    eval_seconds = time.perf_counter() - start

    scores = []
    for setting in chosen:
        for name in names:
            if name == "XGBoost" and xgb_missing:
                scores.append(
                    ClassifierScore(
                        setting=setting, classifier=name, status=xgb_missing
                    )
                )
                continue
            mine = sorted(
                (o for o in outcomes if o.setting == setting and o.classifier == name),
                key=lambda o: o.run,
            )
            scores.append(_summarise(setting, name, mine, protocol))

    sra: dict[str, float | None] = {"auroc": None, "auprc": None}
    if "A" in chosen and "C" in chosen:
        for metric in ("auroc", "auprc"):
            agree = [
                (getattr(a, metric), getattr(c, metric))
                for a, c in zip(
                    (s for s in scores if s.setting == "A"),
                    (s for s in scores if s.setting == "C"),
                )
                if getattr(a, metric) is not None and getattr(c, metric) is not None
            ]
            if len(agree) >= 2:
                sra[metric] = synthetic_ranking_agreement(
                    [p[0] for p in agree], [p[1] for p in agree]
                )

    return UtilityResult(
        dataset=dataset,
        label=label,
        protocol=protocol,
        settings=chosen,
        classifiers=names,
        scores=tuple(scores),
        sra_auroc=sra["auroc"],
        sra_auprc=sra["auprc"],
        n_train_rows=len(train_real)
        if train_real is not None
        else (len(train_sets[0]) if train_sets else 0),
        n_test_rows=len(test_real),
        n_train_sets=len(train_sets),
        seed_entropy=rng.entropy,
        eval_seconds=eval_seconds,
        versions=_versions(),
        notes=_rounding_notes(featurize.rounded, label=label),
    )


def _rounding_notes(names: Sequence[str], *, label: str) -> tuple[str, ...]:
    if not names:
        return ()
    n_train = sum(n.startswith("train_sets") for n in names)
    n_test = len(names) - n_train
    tables = f"{n_train} synthetic training"
    if n_test:
        tables += f" and {n_test} synthetic test"
    return (
        f"label {label!r} of {tables} tables held values in [0, 1] other than 0 and "
        "1; rounded to 0/1 as the PATE-GAN evaluation code does (np.round)",
    )


def _summarise(
    setting: Setting, name: str, outcomes: Sequence[_Outcome], protocol: UtilityProtocol
) -> ClassifierScore:
    auroc_runs = tuple(o.auroc for o in outcomes)
    auprc_runs = tuple(o.auprc for o in outcomes)
    reasons = tuple(o.reason for o in outcomes if o.reason is not None)
    warned = sum(o.fit_warnings for o in outcomes)
    defined_roc = [v for v in auroc_runs if v is not None]
    defined_prc = [v for v in auprc_runs if v is not None]
    if not defined_roc:
        return ClassifierScore(
            setting=setting,
            classifier=name,
            status=f"undefined: {_describe(reasons)}",
            auroc_runs=auroc_runs,
            auprc_runs=auprc_runs,
            reasons=reasons,
            fit_warnings=warned,
        )
    if reasons:
        status = f"partial: {len(reasons)} of {len(outcomes)} runs undefined ({_describe(reasons)})"
    else:
        status = "ok"
    pick = max if protocol == "best-of" else _mean
    return ClassifierScore(
        setting=setting,
        classifier=name,
        status=status,
        auroc=float(pick(defined_roc)),
        auroc_std=_std(defined_roc),
        auprc=float(pick(defined_prc)),
        auprc_std=_std(defined_prc),
        auroc_runs=auroc_runs,
        auprc_runs=auprc_runs,
        reasons=reasons,
        fit_warnings=warned,
    )


def _describe(reasons: Sequence[str]) -> str:
    return "; ".join(dict.fromkeys(reasons))


def _mean(values: Sequence[float]) -> float:
    return float(np.mean(values))


def _std(values: Sequence[float]) -> float | None:
    return float(np.std(values, ddof=1)) if len(values) >= 2 else None


def _versions() -> dict[str, str | None]:
    import sklearn

    import dpaudit

    try:
        import xgboost

        xgb: str | None = str(xgboost.__version__)
    except ImportError:
        xgb = None
    return {
        "dpaudit": dpaudit.__version__,
        "scikit-learn": sklearn.__version__,
        "xgboost": xgb,
    }


# -------------------------------------------------------------------- generator


def generator_factory(name: str) -> GeneratorFactory:
    """:func:`dpaudit.generators.base.generator_factory`, imported on first use.

    The import is deferred so that joblib workers, which import this module to run
    the classifier fits, do not import torch.
    """
    from dpaudit.generators.registry import generator_factory as factory

    return factory(name)


def _model_streams(
    root: Rngs, *, n_models: int, n_samples: int
) -> Iterator[tuple[Rngs, list[Rngs], list[Rngs]]]:
    """Per model: the fit stream, the training-sample streams, the test-sample streams."""
    for model_rng in root.spawn(n_models):
        fit_rng, train_root, test_root = model_rng.spawn(3)
        yield fit_rng, train_root.spawn(n_samples), test_root.spawn(n_samples)


def run_utility(
    *,
    generator_name: str,
    dataset: Dataset,
    epsilon: float,
    delta: float,
    seed: int,
    generator_options: Mapping[str, Any] | None = None,
    protocol: UtilityProtocol = "plain",
    n_models: int = DEFAULT_MODELS,
    n_samples: int = DEFAULT_SAMPLES,
    classifiers: Sequence[str] | None = None,
    settings: Sequence[Setting] = SETTINGS,
    n_jobs: int = 1,
    progress: bool = True,
) -> UtilityResult:
    """Trains a generator ``n_models`` times, samples, and runs Settings A, B, C.

    Each model ``i`` is a fresh generator from
    ``generator_factory(generator_name)(epsilon=, delta=, **generator_options)``
    fitted on ``dataset.train`` with its public domain; a generator with
    ``fit_many`` (:class:`~dpaudit.generators.base.BatchedGenerator`) trains the
    ``n_models`` models as one tensor program instead. Each model releases
    ``n_samples`` training tables of ``len(dataset.train)`` rows and, for Setting C,
    as many separate test tables of ``len(dataset.test)`` rows. All streams are
    spawned from ``Rngs.from_seed(seed)``: child 0 for the generators (per model: fit,
    training samples, test samples), child 1 for the classifiers.

    Args:
        generator_name: a registered generator (``pategan``, ``gpate``) or plug-in.
        dataset: a dataset with a held-out ``test`` table and a binary ``label``.
        epsilon: the generator's target epsilon.
        delta: the generator's target delta.
        seed: the root seed (non-negative integer).
        generator_options: extra factory options (``variant``, ``bugs``, ...).
        protocol: ``plain`` (mean and std) or ``best-of`` (the study's best of
            ``n_models x n_samples``).
        n_models: generator seeds.
        n_samples: synthetic datasets per model.
        classifiers: a subset of :data:`CLASSIFIERS`; default all twelve.
        settings: the settings to run (default A, B and C).
        n_jobs: joblib workers for the classifier fits.
        progress: show tqdm progress bars on stderr.

    Returns:
        The :class:`UtilityResult`, with the generator's metadata.

    Raises:
        InvalidParameterError: for bad arguments or a dataset without a test split.
    """

    from dpaudit.rng import Rngs

    if not isinstance(dataset, Dataset):
        raise InvalidParameterError(
            f"`dataset` must be a dpaudit Dataset. Got {type(dataset).__name__}."
        )
    if dataset.test is None or dataset.label is None:
        raise InvalidParameterError(
            f"`dataset` must have a held-out test table and a label. Got {dataset.name!r} "
            "without them; split it with dpaudit.data.stratified_split first."
        )
    for name, value in (("epsilon", epsilon), ("delta", delta)):
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
        ):
            raise InvalidParameterError(
                f"`{name}` must be a finite number. Got {value!r}."
            )
    if epsilon <= 0:
        raise InvalidParameterError(f"`epsilon` must be positive. Got {epsilon!r}.")
    if not 0 <= delta < 1:
        raise InvalidParameterError(f"`delta` must be in [0, 1). Got {delta!r}.")
    if protocol not in PROTOCOLS:
        raise InvalidParameterError(
            f"`protocol` must be one of {', '.join(PROTOCOLS)}. Got {protocol!r}."
        )
    n_models = _check_positive_int("n_models", n_models)
    n_samples = _check_positive_int("n_samples", n_samples)
    chosen = _check_settings(settings)
    _check_classifiers(classifiers)
    options = dict(generator_options or {})
    root = Rngs.from_seed(seed)
    generator_root, classifier_root = root.spawn(2)
    factory = generator_factory(generator_name)

    train_sets: list[pd.DataFrame] = []
    test_sets: list[pd.DataFrame] = []
    claims: list[float | None] = []
    need_synthetic = "B" in chosen or "C" in chosen
    start = time.perf_counter()
    if need_synthetic:
        streams = list(
            _model_streams(generator_root, n_models=n_models, n_samples=n_samples)
        )
        models = _fit_models(
            factory,
            dataset,
            fit_rngs=[fit_rng for fit_rng, _, _ in streams],
            options={"epsilon": epsilon, "delta": delta, **options},
            desc=f"utility: training {generator_name}",
            progress=progress,
        )
        for model, (_, train_rngs, test_rngs) in zip(models, streams):
            claims.append(_claimed_epsilon(model))
            for sample_rng in train_rngs:
                train_sets.append(model.sample(len(dataset.train), rng=sample_rng))
            if "C" in chosen:
                for sample_rng in test_rngs:
                    test_sets.append(model.sample(len(dataset.test), rng=sample_rng))
    fit_seconds = time.perf_counter() - start

    result = evaluate_synthetic(
        train_sets,
        dataset.test,
        dataset.label,
        rng=classifier_root,
        train_real=dataset.train,
        test_synthetic=test_sets if "C" in chosen else None,
        domain=dataset.domain,
        settings=chosen,
        protocol=protocol,
        classifiers=classifiers,
        dataset=dataset.name,
        n_jobs=n_jobs,
        progress=progress,
    )
    return replace(
        result,
        generator=generator_name,
        generator_options=options,
        epsilon=float(epsilon),
        delta=float(delta),
        seed=int(seed),
        seed_entropy=root.entropy,
        n_models=n_models,
        n_samples=n_samples,
        n_train_rows=len(dataset.train),
        claimed_epsilons=tuple(claims),
        fit_seconds=fit_seconds,
    )


def _fit_models(
    factory: GeneratorFactory,
    dataset: Dataset,
    *,
    fit_rngs: Sequence[Rngs],
    options: Mapping[str, Any],
    desc: str,
    progress: bool,
) -> list[Any]:
    """Trains one model per stream; as one tensor program when the generator has
    ``fit_many`` (the same seed and ``n_models`` then give the same models)."""
    from tqdm.auto import tqdm

    first = factory(**options)
    fit_many = getattr(first, "fit_many", None)
    with tqdm(
        total=len(fit_rngs),
        desc=desc,
        unit="model",
        disable=not progress,
        file=sys.stderr,
    ) as bar:
        if callable(fit_many):
            models = list(
                fit_many(
                    [dataset.train] * len(fit_rngs),
                    domain=dataset.domain,
                    rngs=list(fit_rngs),
                )
            )
            bar.update(len(fit_rngs))
            return models
        models = []
        for i, fit_rng in enumerate(fit_rngs):
            # A fresh generator per model: nothing carries over between fits.
            model = first if i == 0 else factory(**options)
            models.append(model.fit(dataset.train, domain=dataset.domain, rng=fit_rng))
            bar.update(1)
        return models


def _claimed_epsilon(model: Any) -> float | None:
    try:
        claim = model.privacy_claim_
    except AttributeError:
        # A plug-in without a claim still has a utility; the claim is just unknown.
        return None
    value = getattr(claim, "epsilon", None)
    return None if value is None else float(value)
