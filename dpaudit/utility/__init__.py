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

Modules: :mod:`~dpaudit.utility.settings` (settings, protocols, names),
:mod:`~dpaudit.utility.metrics` (AUROC/AUPRC, SRA), :mod:`~dpaudit.utility.classifiers`
(the twelve pipelines, one fit), :mod:`~dpaudit.utility.results` (the result,
``utility.json`` and ``utility.csv``), :mod:`~dpaudit.utility.evaluate` (Settings A, B,
C on given tables) and :mod:`~dpaudit.utility.runner` (train, sample, evaluate).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dpaudit.lazy import lazy_exports

if TYPE_CHECKING:
    from dpaudit.utility.classifiers import make_classifier, xgboost_status
    from dpaudit.utility.evaluate import evaluate_synthetic
    from dpaudit.utility.metrics import score_predictions, synthetic_ranking_agreement
    from dpaudit.utility.results import ClassifierScore, UtilityResult
    from dpaudit.utility.runner import run_utility
    from dpaudit.utility.settings import (
        CLASSIFIERS,
        CSV_FIELDS,
        CSV_NAME,
        DEFAULT_MODELS,
        DEFAULT_SAMPLES,
        FORMAT,
        JSON_NAME,
        ONE_CLASS_TEST,
        ONE_CLASS_TRAIN,
        PROTOCOLS,
        SETTINGS,
        XGBOOST_MISSING,
        Metric,
        Setting,
        UtilityProtocol,
    )

# The package's names are imported on first use (PEP 562, dpaudit.lazy): `dpaudit --help` and the
# parsers import this package, and the heavy libraries (torch, pandas, scipy,
# scikit-learn) are needed only to run.
_EXPORTS = {
    "dpaudit.utility.classifiers": (
        "make_classifier",
        "xgboost_status",
    ),
    "dpaudit.utility.evaluate": ("evaluate_synthetic",),
    "dpaudit.utility.metrics": (
        "score_predictions",
        "synthetic_ranking_agreement",
    ),
    "dpaudit.utility.results": (
        "ClassifierScore",
        "UtilityResult",
    ),
    "dpaudit.utility.runner": ("run_utility",),
    "dpaudit.utility.settings": (
        "CLASSIFIERS",
        "CSV_FIELDS",
        "CSV_NAME",
        "DEFAULT_MODELS",
        "DEFAULT_SAMPLES",
        "FORMAT",
        "JSON_NAME",
        "ONE_CLASS_TEST",
        "ONE_CLASS_TRAIN",
        "PROTOCOLS",
        "SETTINGS",
        "XGBOOST_MISSING",
        "Metric",
        "Setting",
        "UtilityProtocol",
    ),
}

__all__ = [
    "CLASSIFIERS",
    "CSV_FIELDS",
    "CSV_NAME",
    "DEFAULT_MODELS",
    "DEFAULT_SAMPLES",
    "FORMAT",
    "JSON_NAME",
    "ONE_CLASS_TEST",
    "ONE_CLASS_TRAIN",
    "PROTOCOLS",
    "SETTINGS",
    "XGBOOST_MISSING",
    "ClassifierScore",
    "Metric",
    "Setting",
    "UtilityProtocol",
    "UtilityResult",
    "evaluate_synthetic",
    "make_classifier",
    "run_utility",
    "score_predictions",
    "synthetic_ranking_agreement",
    "xgboost_status",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
