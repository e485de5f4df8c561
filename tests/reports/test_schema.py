"""The JSON Schema of result.json, its validator, and the JSON report."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dpaudit.errors import InvalidParameterError
from dpaudit.reports import load_results, render_json
from dpaudit.reports.model import result_from_mapping
from dpaudit.reports.schema import load_schema, schema_errors, validate


def test_schema_file_is_a_json_schema() -> None:
    schema = load_schema()
    assert schema["$schema"].startswith("https://json-schema.org/")
    assert schema["properties"]["schema_version"]["enum"] == [1, 2]
    for key in ("verdict", "eps_emp", "eps_claimed", "counts", "config", "seed"):
        assert key in schema["required"]
    assert "comparison" in schema["$defs"]


def test_runner_shaped_documents_conform(
    result_doc: Callable[..., dict], consistent_doc: Callable[..., dict]
) -> None:
    assert schema_errors(result_doc()) == []
    assert schema_errors(consistent_doc()) == []


def test_inconclusive_with_null_estimate_conforms(
    result_doc: Callable[..., dict],
) -> None:
    doc = result_doc(verdict="INCONCLUSIVE", eps_emp=None, auc=None, attacks={})
    assert schema_errors(doc) == []


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        ({"schema_version": 1}, "`verdict` is required"),
        ([], "must be of type object"),
    ],
)
def test_validator_reports_paths(value: Any, fragment: str) -> None:
    errors = schema_errors(value)
    assert any(fragment in e for e in errors), errors


def test_validator_distinguishes_bool_from_integer(
    result_doc: Callable[..., dict],
) -> None:
    doc = result_doc(seed=True)
    assert any("`seed` must be of type integer" in e for e in schema_errors(doc))


def test_validator_checks_nested_attack_entries(
    result_doc: Callable[..., dict],
) -> None:
    doc = result_doc()
    doc["attacks"]["querybased"]["direction"] = 0
    doc["attacks"]["querybased"]["roc"]["fpr"] = ["a"]
    errors = schema_errors(doc)
    assert any("attacks.querybased.direction" in e for e in errors)
    assert any("attacks.querybased.roc.fpr[0]" in e for e in errors)


def test_validate_names_the_source(result_doc: Callable[..., dict]) -> None:
    with pytest.raises(InvalidParameterError, match=r"^x\.json is not a valid"):
        validate(result_doc(verdict="?"), source="x.json")


def test_unknown_definition_is_refused() -> None:
    with pytest.raises(InvalidParameterError, match="`definition` must be one of"):
        schema_errors({}, definition="nope")


def _without_new_keys(doc: Any, original: Any) -> Any:
    """``doc`` restricted to the keys of ``original``, at every level."""
    if isinstance(doc, dict) and isinstance(original, dict):
        return {k: _without_new_keys(doc[k], original[k]) for k in original if k in doc}
    return doc


def test_json_report_is_the_validated_result(audit_dir: Path) -> None:
    results = load_results(audit_dir)
    text = render_json(results)
    doc = json.loads(text)
    assert schema_errors(doc) == []
    assert doc["schema_version"] == 2
    original = json.loads((audit_dir / "result.json").read_text(encoding="utf-8"))
    # Every key the audit wrote comes back unchanged; top-level keys it did not
    # write are null, nested ones take their record's default.
    assert _without_new_keys(doc, original) == original
    assert doc["utility"]["dataset"] == "cervical_cancer"
    # ``game`` is the one new key with a value: a result without it is two-world.
    assert doc["game"] == original.get("game", "two-world")
    assert all(doc[k] is None for k in set(doc) - set(original) - {"utility", "game"})
    # Round trip: the report loads back as the same result.
    again = result_from_mapping(doc, source="report.json")
    assert again.eps_emp == results[0].eps_emp and again.target == results[0].target


def test_json_report_writes_no_nan(result_doc: Callable[..., dict]) -> None:
    result = result_from_mapping(result_doc(auc=float("nan")), source="mem")
    doc = json.loads(render_json([result]))
    assert doc["auc"] is None


def test_comparison_json_conforms(
    make_audit: Callable[..., Path],
    result_doc: Callable[..., dict],
    consistent_doc: Callable[..., dict],
) -> None:
    make_audit("runs/synthcity", result_doc())
    make_audit("runs/reference", consistent_doc())
    parent = make_audit("runs/synthcity", result_doc()).parent
    doc = json.loads(render_json(load_results(parent), base=parent))
    assert schema_errors(doc, definition="comparison") == []
    assert doc["kind"] == "comparison"
    assert [a["path"] for a in doc["audits"]] == ["reference", "synthcity"]
