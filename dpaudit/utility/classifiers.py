"""The twelve classifiers (``MinMaxScaler -> classifier`` pipelines) and one fit.

See :mod:`dpaudit.utility` for the table of estimators and their settings.
:func:`evaluate_task` is the unit of work that joblib workers run: it imports no
generator (and so no torch).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpaudit.utility.metrics import score_predictions
from dpaudit.utility.settings import (
    CLASSIFIERS,
    ONE_CLASS_TEST,
    ONE_CLASS_TRAIN,
    XGBOOST_MISSING,
    Setting,
)
from dpaudit.validation import check_choice


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
    check_choice(name, "classifier", CLASSIFIERS)
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
class FitTask:
    """One classifier fit: train on ``(x_train, y_train)``, score ``x_test``.

    Attributes:
        setting: ``A``, ``B`` or ``C``.
        run: the synthetic set's index (0 in Setting A).
        classifier: the classifier's name (see :data:`CLASSIFIERS`).
        random_state: the classifier's seed.
        x_train, y_train: training features and 0/1 labels.
        x_test, y_test: test features and 0/1 labels.
    """

    setting: Setting
    run: int
    classifier: str
    random_state: int
    x_train: NDArray[np.float64]
    y_train: NDArray[np.int64]
    x_test: NDArray[np.float64]
    y_test: NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class FitOutcome:
    """The scores of one :class:`FitTask`, or the reason they are undefined.

    Attributes:
        setting, run, classifier: those of the task.
        auroc, auprc: the scores (None where undefined).
        reason: why the scores are undefined (None when defined).
        fit_warnings: warnings raised while fitting and scoring.
    """

    setting: Setting
    run: int
    classifier: str
    auroc: float | None
    auprc: float | None
    reason: str | None
    fit_warnings: int


def evaluate_task(task: FitTask) -> FitOutcome:
    """Fits and scores one task (BLAS limited to one thread; warnings counted).

    A training or test set with one class, a fit that scikit-learn refuses on
    degenerate data, or non-finite scores give an undefined outcome with its reason,
    never an exception.
    """
    from threadpoolctl import threadpool_limits

    def undefined(reason: str) -> FitOutcome:
        return FitOutcome(
            task.setting, task.run, task.classifier, None, None, reason, 0
        )

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
            return FitOutcome(
                task.setting,
                task.run,
                task.classifier,
                None,
                None,
                f"classifier failed on this training set ({type(err).__name__}: {err})",
                len(caught),
            )
    if not np.all(np.isfinite(scores)):
        return FitOutcome(
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
    return FitOutcome(
        task.setting,
        task.run,
        task.classifier,
        metrics[0],
        metrics[1],
        None,
        len(caught),
    )
