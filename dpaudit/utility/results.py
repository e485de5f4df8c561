"""The benchmark's result: per-classifier scores, ``utility.json`` and ``utility.csv``."""

from __future__ import annotations

import csv
import io
import json
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from dpaudit.errors import InvalidParameterError
from dpaudit.utility.settings import (
    CSV_FIELDS,
    CSV_NAME,
    FORMAT,
    JSON_NAME,
    PROTOCOLS,
    SETTINGS,
    Metric,
    Setting,
    UtilityProtocol,
)
from dpaudit.validation import check_choice


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
        check_choice(self.setting, "setting", SETTINGS)
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
        check_choice(self.protocol, "protocol", PROTOCOLS)

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
