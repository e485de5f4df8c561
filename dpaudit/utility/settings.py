"""The utility benchmark's settings, protocols, classifier names and file names.

The settings (A: real/real, B: synthetic/real, C: synthetic/synthetic), the protocols
(``plain``, ``best-of``) and the constants every other module of
:mod:`dpaudit.utility` shares, with the argument checks they need (the messages
follow :mod:`dpaudit.validation`'s template).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, cast, get_args

from dpaudit.validation import require

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


# ---------------------------------------------------------------------- checks


def check_subset(
    name: str, given: Sequence[str], allowed: Sequence[str]
) -> tuple[str, ...]:
    """A non-empty subset of ``allowed``, in ``allowed``'s order, duplicates removed.

    Raises:
        InvalidParameterError: ``given`` is empty or holds a value not in ``allowed``.
    """
    unknown = [v for v in given if v not in allowed]
    require(
        not unknown and bool(given),
        name,
        f"a non-empty subset of {', '.join(allowed)}",
        list(given),
    )
    return tuple(v for v in allowed if v in set(given))


def check_classifiers(classifiers: Sequence[str] | None) -> tuple[str, ...]:
    """The classifiers asked for, in :data:`CLASSIFIERS` order (default all)."""
    if classifiers is None:
        return CLASSIFIERS
    if isinstance(classifiers, str):
        classifiers = [classifiers]
    # Canonical order: the order fixes each classifier's seed.
    return check_subset("classifiers", classifiers, CLASSIFIERS)


def check_settings(settings: Sequence[str]) -> tuple[Setting, ...]:
    """The settings asked for, in :data:`SETTINGS` order."""
    if isinstance(settings, str):
        settings = list(settings)
    return cast(tuple[Setting, ...], check_subset("settings", settings, SETTINGS))
