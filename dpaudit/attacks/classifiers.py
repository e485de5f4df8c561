"""The model a classifier attack trains: a random forest or a logistic regression,
chosen on the training rounds alone.

A random forest learns any shape of shift, which is why the attacks of Stadler et al.
(2022) and the audit study use one; but its score is a step function that saturates
where the training rounds thin out. The audit decides on the tails of the score (a
threshold with few false positives), so when the target moves the release along a
line (a noisy count: the column means move with the noise), the forest ranks the
tail rounds coarsely and loses power a linear score keeps. Measured on the exact
Gaussian count of the known-epsilon zoo claiming 2.5 (true 4), real audits at 1,000
rounds per world: VIOLATION in 48 of 62 with the forest alone, in 96 of 107 with
the choice below (docs/zoo.md, ``python benchmarks/zoo_calibration.py``).

``model="auto"`` (the default) therefore fits both and keeps the one that ranks the
training rounds better out of sample: the forest's out-of-bag AUC against the
logistic regression's :data:`FOLDS`-fold cross-validated AUC (stratified folds in
round order; no random numbers), the forest on ties, without the comparison when a
class has fewer than :data:`FOLDS` training rounds or a feature is not finite.
Only training rounds are read, so the choice is part of the attack's fit: the
threshold is still chosen on validation rounds and the bound computed on test
rounds (docs/soundness.md, rule 4). The regression is fitted with one BLAS thread, so
its scores do not depend on the machine's thread count. The forest is the one ``model="forest"`` fits
(same trees: the out-of-bag figures are computed after the fit and draw nothing).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from dpaudit.validation import require

#: The models an attack may train: ``auto`` chooses (module docstring).
MODELS = ("auto", "forest", "logistic")
Model = Literal["auto", "forest", "logistic"]
#: The folds of the logistic regression's cross-validation.
FOLDS = 5


@dataclass(frozen=True, slots=True)
class Choice:
    """Which model an attack trained, and why.

    Attributes:
        model: ``"forest"`` or ``"logistic"``.
        forest_auc: the forest's out-of-bag AUC on the training rounds (``None``:
            not computed).
        logistic_auc: the logistic regression's cross-validated AUC on the training
            rounds (``None``: not computed).
    """

    model: Literal["forest", "logistic"]
    forest_auc: float | None = None
    logistic_auc: float | None = None


def check_model(model: object) -> Model:
    """``model`` if it names one of :data:`MODELS`."""
    require(model in MODELS, "model", f"one of {', '.join(MODELS)}", model)
    return model  # type: ignore[return-value]


def _auc(y: NDArray[np.int64], score: NDArray[np.float64]) -> float | None:
    from sklearn.metrics import roc_auc_score

    ok = np.isfinite(score)
    if np.unique(y[ok]).size < 2:
        return None
    return float(roc_auc_score(y[ok], score[ok]))


def _logistic() -> Any:
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))


def fit_model(
    x: NDArray[np.float64],
    y: NDArray[np.int64],
    *,
    model: Model,
    n_estimators: int,
    n_jobs: int | None,
    random_state: int,
) -> tuple[Any, Choice]:
    """The fitted classifier (``predict_proba``, ``classes_``) and the choice; ``y``
    holds both classes."""
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.exceptions import ConvergenceWarning

    counts = np.bincount(y, minlength=2)
    compare = (
        model == "auto" and int(counts.min()) >= FOLDS and bool(np.isfinite(x).all())
    )
    forest = None
    forest_auc = None
    if model != "logistic":
        forest = RandomForestClassifier(
            n_estimators=n_estimators,
            n_jobs=n_jobs,
            random_state=random_state,
            oob_score=compare,
        )
        with warnings.catch_warnings():
            # Few trees may leave a round in every bootstrap: _oob_auc skips it.
            warnings.filterwarnings("ignore", message="Some inputs do not have OOB")
            forest.fit(x, y)
        if not compare:
            return forest, Choice("forest")
        forest_auc = _oob_auc(forest, y)
        if forest_auc is not None and forest_auc >= 1.0:
            return forest, Choice("forest", forest_auc=forest_auc)
    from threadpoolctl import threadpool_limits

    # One BLAS thread: the regression's sums then do not depend on the machine's
    # thread count. A regression stopped early is still a function of the training
    # rounds; the comparison judges how well it ranks them.
    with warnings.catch_warnings(), threadpool_limits(limits=1):
        warnings.simplefilter("ignore", ConvergenceWarning)
        logistic_auc = None
        if compare:
            from sklearn.model_selection import StratifiedKFold, cross_val_predict

            held_out = cross_val_predict(
                _logistic(),
                x,
                y,
                cv=StratifiedKFold(FOLDS),
                method="decision_function",
            )
            logistic_auc = _auc(y, np.asarray(held_out, np.float64))
            if forest is not None and (
                logistic_auc is None
                or (forest_auc is not None and logistic_auc <= forest_auc)
            ):
                return forest, Choice("forest", forest_auc, logistic_auc)
        fitted = _logistic().fit(x, y)
    return fitted, Choice("logistic", forest_auc, logistic_auc)


def _oob_auc(forest: Any, y: NDArray[np.int64]) -> float | None:
    """The forest's out-of-bag AUC: each training round scored by the trees whose
    bootstrap sample left it out (a round no tree left out has no such score and is
    skipped)."""
    votes = np.asarray(forest.oob_decision_function_, np.float64)
    column = int(np.flatnonzero(forest.classes_ == 1)[0])
    score = np.where(votes.sum(axis=1) > 0, votes[:, column], np.nan)
    return _auc(y, score)
