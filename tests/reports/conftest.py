"""Fixtures of the report tests: result.json documents and audit directories."""

from __future__ import annotations

import copy
import csv
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest


def make_result(**overrides: Any) -> dict[str, Any]:
    """A result.json document as the audit runner writes it (a VIOLATION by default).

    Scores come from a fixed NumPy generator so the document is the same every time.
    """
    gen = np.random.default_rng(0)
    member = np.round(gen.normal(0.8, 0.1, 400), 4).tolist()
    non_member = np.round(gen.normal(0.2, 0.1, 400), 4).tolist()
    doc: dict[str, Any] = {
        "schema_version": 2,
        "version": "0.1.0",
        "verdict": "VIOLATION",
        "verdict_reason": "eps_emp 4.68 exceeds the claimed epsilon 1.",
        "power": {
            "eps_max_attainable": 4.68,
            "rounds_needed": None,
            "saturated": True,
            "tightness": 1.4625,
            "constant_release": False,
        },
        "approximate": False,
        "randomness": "fixed_public",
        "eps_emp": 4.68,
        "eps_claimed": 1.0,
        "eps_reference": 3.2,
        "eps_max_attainable": 4.68,
        "auc": 1.0,
        "counts": {"tp": 400, "fp": 0, "tn": 400, "fn": 0},
        "attack": "querybased",
        "estimator": {
            "method": "clopper_pearson",
            "alpha": 0.05,
            "confidence": 0.95,
            "correction": "none",
            "n_attacks": 1,
            "test_non_members": 400,
            "test_members": 400,
            "overall_alpha": 0.05,
            "overall_confidence": 0.95,
        },
        "delta": 1e-5,
        "attacks": {
            "querybased": {
                "eps_emp": 4.68,
                "eps_max_attainable": 4.68,
                "auc": 1.0,
                "counts": {"tp": 400, "fp": 0, "tn": 400, "fn": 0},
                "threshold": 0.5,
                "direction": 1,
                "alpha": 0.05,
                "roc": {"fpr": [0.0, 0.0, 1.0], "tpr": [0.0, 1.0, 1.0]},
                # 400 non-member test rounds: FPR moves in steps of 0.25%.
                "fpr_resolution": 0.0025,
                "tpr_at_low_fpr": [
                    {"fpr": 0.001, "tpr": None, "resolvable": False},
                    {"fpr": 0.01, "tpr": 1.0, "resolvable": True},
                ],
                "scores": {"member": member, "non_member": non_member},
            }
        },
        "generator": "pategan",
        "variant": "synthcity",
        "bugs": ["repartition_every_iteration", "accountant_index_bug"],
        "dataset": "worst-case",
        "target": {"a": 1, "b": 1, "c": 1},
        "claim": {
            "epsilon": 1.0,
            "delta": 1e-5,
            "accountant": "pate-moments",
            "epsilon_data_independent": 250.0,
            "reference_epsilon": 3.2,
            "iterations": 100,
        },
        "config": {
            "generator": "pategan",
            "variant": "synthcity",
            "bugs": [],
            "dataset": "worst-case",
            "domain": None,
            "data_dir": None,
            "target": None,
            "target_record": None,
            "attack": "querybased",
            "rounds": 1000,
            "split": [0.4, 0.2, 0.4],
            "epsilon": 1.0,
            "delta": 1e-5,
            "synthetic_rows": None,
            "batch_size": 128,
            "jobs": 1,
            "backend": "loky",
            "scheduler": None,
            "device": "auto",
            "seed": 0,
            "alpha": 0.05,
            "estimator": "clopper_pearson",
            "generator_options": {},
            "attack_options": {},
            "candidates": 64,
            "selection_rounds": 100,
        },
        "seed": 0,
        "generator_options": {"variant": "synthcity", "num_teachers": 2, "lam": 0.001},
        "synthetic_rows": 100,
        "warnings": [],
        "target_index": None,
        "rounds": {
            "total": 2000,
            "per_world": 1000,
            "train": 800,
            "validation": 400,
            "test": 800,
        },
        "timing": {"train_seconds": 812.5, "total_seconds": 840.1},
    }
    for key, value in overrides.items():
        doc[key] = value
    return copy.deepcopy(doc)


def consistent_result(**overrides: Any) -> dict[str, Any]:
    """A CONSISTENT result: a weak attack against a correct reference generator."""
    attack = {
        "eps_emp": 0.12,
        "eps_max_attainable": 4.68,
        "auc": 0.53,
        "counts": {"tp": 210, "fp": 190, "tn": 210, "fn": 190},
        "threshold": 0.41,
        "direction": -1,
        "alpha": 0.05,
        "roc": {"fpr": [0.0, 0.3, 0.6, 1.0], "tpr": [0.0, 0.33, 0.64, 1.0]},
        "fpr_resolution": 0.0025,
        "tpr_at_low_fpr": [
            {"fpr": 0.001, "tpr": None, "resolvable": False},
            {"fpr": 0.01, "tpr": 0.0, "resolvable": True},
        ],
        "scores": {"member": [0.1, 0.4, 0.5, 0.9], "non_member": [0.2, 0.4, 0.6, 0.8]},
    }
    base = {
        "verdict": "CONSISTENT",
        "verdict_reason": (
            "eps_emp 0.12 does not exceed the claimed epsilon 1, and the attainable "
            "maximum 4.68 does."
        ),
        "power": {
            "eps_max_attainable": 4.68,
            "rounds_needed": None,
            "saturated": False,
            "tightness": 0.12,
        },
        "eps_emp": 0.12,
        "eps_reference": None,
        "auc": 0.53,
        "counts": attack["counts"],
        "variant": None,
        "bugs": [],
        "attacks": {"querybased": attack},
    }
    base.update(overrides)
    return make_result(**base)


def inconclusive_result(**overrides: Any) -> dict[str, Any]:
    """An INCONCLUSIVE result: 20 rounds per world cannot refute a claim of 0.998."""
    attack = {
        "eps_emp": 0.3,
        "eps_max_attainable": 0.535,
        "auc": 1.0,
        "counts": {"tp": 8, "fp": 0, "tn": 8, "fn": 0},
        "threshold": 0.5,
        "direction": 1,
        "alpha": 0.05,
        "roc": {"fpr": [0.0, 0.0, 1.0], "tpr": [0.0, 1.0, 1.0]},
        "scores": {"member": [0.9] * 8, "non_member": [0.1] * 8},
    }
    base = {
        "verdict": "INCONCLUSIVE",
        "verdict_reason": (
            "the attainable maximum 0.535 does not exceed the claimed epsilon 0.998: "
            "this audit could not have refuted the claim."
        ),
        "power": {
            "eps_max_attainable": 0.535,
            "rounds_needed": 45,
            "saturated": True,
            "tightness": 0.536,
        },
        "eps_emp": 0.535,
        "eps_claimed": 0.998,
        "eps_reference": None,
        "eps_max_attainable": 0.535,
        "auc": 1.0,
        "counts": attack["counts"],
        "variant": None,
        "bugs": [],
        "attacks": {"querybased": attack},
        "estimator": {
            "method": "clopper_pearson",
            "alpha": 0.05,
            "confidence": 0.95,
            "correction": "none",
            "n_attacks": 1,
            "test_non_members": 8,
            "test_members": 8,
            "overall_alpha": 0.05,
            "overall_confidence": 0.95,
        },
        "rounds": {
            "total": 40,
            "per_world": 20,
            "train": 16,
            "validation": 8,
            "test": 16,
        },
    }
    base.update(overrides)
    return make_result(**base)


def v1_result(**overrides: Any) -> dict[str, Any]:
    """A schema-version-1 document (before power and verdict reasons)."""
    doc = make_result(**overrides)
    doc["schema_version"] = 1
    for key in ("verdict_reason", "power", "approximate", "randomness"):
        doc.pop(key)
    return doc


def write_audit(directory: Path, doc: dict[str, Any], *, trace: bool = False) -> Path:
    """Writes an audit directory holding ``doc`` as result.json (and a trace)."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "result.json").write_text(json.dumps(doc), encoding="utf-8")
    if trace:
        folder = directory / "trace"
        folder.mkdir()
        _csv(
            folder / "records_seen.csv",
            ["model", "teacher", "records_seen"],
            [[m, t, 670 + t + m] for m in range(2) for t in range(5)],
        )
        _csv(
            folder / "losses.csv",
            ["iteration", "teacher", "loss_own", "loss_other"],
            [
                [i, t, 0.7 - 0.004 * i, 0.7 + 0.002 * i]
                for i in range(0, 100, 5)
                for t in range(2)
            ],
        )
        _csv(
            folder / "epsilon.csv",
            ["iteration", "epsilon", "epsilon_data_independent"],
            [[i, 0.01 * i, 2.5 * i] for i in range(1, 101)],
        )
        (folder / "trace.json").write_text(
            json.dumps({"iterations": 100, "stopped_by": "max_iterations"}),
            encoding="utf-8",
        )
    return directory


def _csv(path: Path, header: list[str], rows: list[list[Any]]) -> None:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)


UTILITY = {
    "format": "dpaudit.utility/1",
    "dataset": "cervical_cancer",
    "label": "Biopsy",
    "protocol": "best-of",
    "settings": ["B"],
    "classifiers": ["LogisticRegression", "RandomForest"],
    "n_models": 5,
    "sra_auroc": 0.8,
    "summary": {"B": {"auroc": 0.88, "auprc": 0.45, "n_classifiers": 2}},
    "scores": [
        {
            "setting": "B",
            "classifier": "LogisticRegression",
            "status": "ok",
            "auroc": 0.86,
            "auroc_std": 0.01,
            "auprc": 0.4,
            "auprc_std": 0.02,
        },
        {
            "setting": "B",
            "classifier": "RandomForest",
            "status": "ok",
            "auroc": 0.9,
            "auroc_std": 0.02,
            "auprc": 0.5,
            "auprc_std": 0.03,
        },
    ],
}


def write_full_audit(directory: Path) -> Path:
    """A VIOLATION audit directory with traces and a utility result."""
    write_audit(directory, make_result(), trace=True)
    (directory / "utility.json").write_text(json.dumps(UTILITY), encoding="utf-8")
    return directory


@pytest.fixture
def audit_dir(tmp_path: Path) -> Path:
    """A VIOLATION audit directory with traces and utility."""
    return write_full_audit(tmp_path / "synthcity")


@pytest.fixture(scope="session")
def full_audit_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Like ``audit_dir``, shared by the session (do not modify)."""
    return write_full_audit(tmp_path_factory.mktemp("audit") / "synthcity")


@pytest.fixture(scope="session")
def violation_html(full_audit_dir: Path) -> str:
    """The HTML report of ``full_audit_dir`` (rendered once)."""
    from dpaudit.reports import load_results, render_html

    return render_html(load_results(full_audit_dir))


@pytest.fixture
def make_audit(tmp_path: Path) -> Callable[..., Path]:
    """Writes an audit directory ``tmp_path/name`` from a document."""

    def _make(name: str, doc: dict[str, Any], *, trace: bool = False) -> Path:
        return write_audit(tmp_path / name, doc, trace=trace)

    return _make


@pytest.fixture
def result_doc() -> Callable[..., dict[str, Any]]:
    """Factory of VIOLATION result documents (keyword arguments replace keys)."""
    return make_result


@pytest.fixture
def inconclusive_doc() -> Callable[..., dict[str, Any]]:
    """Factory of INCONCLUSIVE result documents."""
    return inconclusive_result


@pytest.fixture
def consistent_doc() -> Callable[..., dict[str, Any]]:
    """Factory of CONSISTENT result documents."""
    return consistent_result


@pytest.fixture(scope="session")
def documents() -> tuple[Callable[..., dict[str, Any]], Callable[..., Path]]:
    """``(make_result, write_audit)`` for fixtures of any scope."""
    return make_result, write_audit
