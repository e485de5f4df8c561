"""The model a classifier attack trains (dpaudit.attacks.classifiers)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.ensemble import RandomForestClassifier

from dpaudit.attacks.classifiers import FOLDS, Choice, check_model, fit_model
from dpaudit.errors import InvalidParameterError


def _linear(seed: int, n: int = 400) -> tuple[np.ndarray, np.ndarray]:
    """A noisy count seen through six affine features (the zoo's release: every
    column mean moves with the noisy answer), ``n`` rounds per world."""
    gen = np.random.default_rng(seed)
    y = np.repeat([0, 1], n)
    answer = y + gen.normal(0.0, 1.0, y.size)
    slopes = np.array([1.0, 0.5, 2.0, -1.0, 0.25, 3.0])
    return answer[:, None] * slopes[None, :] + 0.01 * gen.normal(size=(y.size, 6)), y


def _fit(x: np.ndarray, y: np.ndarray, model: str = "auto") -> tuple[object, Choice]:
    return fit_model(
        x,
        y.astype(np.int64),
        model=model,
        n_estimators=100,
        n_jobs=None,
        random_state=7,
    )  # type: ignore[arg-type]


def test_a_linear_shift_trains_the_logistic_regression() -> None:
    """On every one of five draws the cross-validated logistic regression ranks the
    training rounds better than the forest out of bag (the forest's AUC on this
    signal is 0.05 to 0.07 below on these draws: not a coin flip)."""
    for seed in range(5):
        _, choice = _fit(*_linear(seed))
        assert choice.model == "logistic"
        assert choice.logistic_auc is not None and choice.forest_auc is not None
        assert choice.logistic_auc > choice.forest_auc


def test_a_shift_of_spread_keeps_the_forest() -> None:
    """Members spread wider, same mean: no linear score separates them, the forest
    does (its out-of-bag AUC above the regression's on every draw)."""
    for seed in range(3):
        gen = np.random.default_rng(seed)
        y = np.repeat([0, 1], 300)
        x = gen.normal(0.0, 1.0 + 2.0 * y, size=(3, y.size)).T
        _, choice = _fit(x, y)
        assert choice.model == "forest"


def test_the_forest_is_the_one_forest_alone_fits() -> None:
    """Where the forest is kept its trees are those of ``model="forest"`` (and of a
    plain scikit-learn forest with the same seed): the comparison draws nothing."""
    gen = np.random.default_rng(3)
    y = np.repeat([0, 1], 200)
    x = gen.normal(0.0, 1.0 + 2.0 * y, size=(2, y.size)).T
    auto, choice = _fit(x, y)
    alone, alone_choice = _fit(x, y, model="forest")
    plain = RandomForestClassifier(random_state=7).fit(x, y)
    assert choice.model == "forest" and alone_choice == Choice("forest")
    probe = gen.normal(size=(50, 2)) * 3
    for other in (alone, plain):
        assert np.array_equal(
            auto.predict_proba(probe),  # type: ignore[attr-defined]
            other.predict_proba(probe),  # type: ignore[attr-defined]
        )


def test_a_perfect_forest_is_kept_without_the_comparison() -> None:
    y = np.repeat([0, 1], 50)
    x = np.column_stack([y * 10.0, np.zeros(y.size)])
    _, choice = _fit(x, y)
    assert choice == Choice("forest", forest_auc=1.0)


def test_too_few_rounds_or_non_finite_features_keep_the_forest() -> None:
    y = np.array([0] * 20 + [1] * (FOLDS - 1))
    x = np.arange(y.size, dtype=np.float64)[:, None]
    assert _fit(x, y)[1] == Choice("forest")
    x, y = _linear(0, n=50)
    x[3, 2] = np.nan
    assert _fit(x, y)[1] == Choice("forest")


def test_logistic_alone_and_bad_names() -> None:
    x, y = _linear(1, n=60)
    fitted, choice = _fit(x, y, model="logistic")
    assert choice == Choice("logistic")
    assert fitted.predict_proba(x).shape == (x.shape[0], 2)  # type: ignore[attr-defined]
    with pytest.raises(InvalidParameterError, match="model"):
        check_model("svm")
