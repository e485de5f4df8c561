"""Settings A, B and C on given tables: :func:`evaluate_synthetic`.

Turns the real and synthetic tables into features and labels (one column order,
fixed by the real test set), builds one fit per setting x synthetic set x classifier,
runs them (joblib) and summarises them by the protocol.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from dpaudit.data import Domain
from dpaudit.errors import DataError, InvalidParameterError
from dpaudit.utility.classifiers import (
    FitOutcome,
    FitTask,
    evaluate_task,
    xgboost_status,
)
from dpaudit.utility.metrics import synthetic_ranking_agreement
from dpaudit.utility.results import ClassifierScore, UtilityResult
from dpaudit.utility.settings import (
    CLASSIFIERS,
    PROTOCOLS,
    SETTINGS,
    Setting,
    UtilityProtocol,
    check_classifiers,
    check_settings,
)
from dpaudit.validation import check_choice, require

if TYPE_CHECKING:
    from dpaudit.rng import Rngs


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

    check_choice(protocol, "protocol", PROTOCOLS)
    from dpaudit.rng import Rngs

    if not isinstance(rng, Rngs):
        raise InvalidParameterError(f"`rng` must be an Rngs. Got {type(rng).__name__}.")
    require(
        not isinstance(n_jobs, bool) and isinstance(n_jobs, int) and n_jobs != 0,
        "n_jobs",
        "a non-zero integer (-1: all cores)",
        n_jobs,
    )
    names = check_classifiers(classifiers)
    train_sets = list(train_sets)
    if settings is None:
        available: dict[Setting, bool] = {
            "A": train_real is not None,
            "B": bool(train_sets),
            "C": bool(train_sets) and test_synthetic is not None,
        }
        settings = [s for s, ok in available.items() if ok]
    chosen = check_settings(settings)
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

    tasks: list[FitTask] = []
    outcomes: list[FitOutcome] = []  # runs that need no fit (unusable synthetic sets)
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
                        FitOutcome(setting, run, name, None, None, unusable, 0)
                    )
                    continue
                assert not isinstance(train_xy, str) and not isinstance(test_xy, str)
                tasks.append(
                    FitTask(
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
        for outcome in parallel(delayed(evaluate_task)(t) for t in tasks):
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
    setting: Setting,
    name: str,
    outcomes: Sequence[FitOutcome],
    protocol: UtilityProtocol,
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
