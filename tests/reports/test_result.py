"""The typed result (dpaudit.audit.result.model): one definition of result.json, checked
against the shipped schema, and how every renderer shows the audit's power."""

from __future__ import annotations

import dataclasses
import json
import typing
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dpaudit.audit.config.serial import json_fields
from dpaudit.audit.result import model as result_module
from dpaudit.audit.result.model import (
    SCHEMA_VERSION,
    AuditResult,
    Power,
    Verdict,
    json_keys,
)
from dpaudit.errors import InvalidParameterError
from dpaudit.reports import load_result, render, render_html
from dpaudit.reports.schema import load_schema, schema_errors
from dpaudit.reports.terminal import render_terminal

from .conftest import v1_result  # noqa: TID252 (this folder's fixtures)

# ------------------------------------------------------- schema vs dataclasses


def _resolve(node: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """The object schema a property describes ($ref, anyOf, items, map values)."""
    if "$ref" in node:
        ref = node["$ref"]
        return (
            schema
            if ref == "#"
            else _resolve(schema["$defs"][ref.split("/")[-1]], schema)
        )
    for option in node.get("anyOf", ()):
        if option.get("type") != "null":
            return _resolve(option, schema)
    if "properties" not in node:
        for key in ("items", "additionalProperties"):
            if isinstance(node.get(key), dict):
                return _resolve(node[key], schema)
    return node


def _records(hint: Any) -> list[type]:
    """The dataclasses inside a type hint (optional, tuple items, mapping values)."""
    if dataclasses.is_dataclass(hint):
        return [hint]  # type: ignore[list-item]
    return [r for arg in typing.get_args(hint) for r in _records(arg)]


def _literal_choices(hint: Any) -> list[Any] | None:
    """The values a ``Literal`` (optionally ``| None``) allows, ``None`` last."""
    if typing.get_origin(hint) is typing.Literal:
        return list(typing.get_args(hint))
    args = typing.get_args(hint)
    if type(None) in args and len(args) == 2:
        inner = _literal_choices(next(a for a in args if a is not type(None)))
        return None if inner is None else [*inner, None]
    return None


def _check_record(
    cls: type, node: dict[str, Any], schema: dict[str, Any], where: str
) -> int:
    written = set(json_keys(cls)) | (
        {"schema_version"} if cls is AuditResult else set()
    )
    assert written == set(node["properties"]), where
    hints = typing.get_type_hints(cls)
    checked = 1
    for f, path in json_fields(cls):
        choices = _literal_choices(hints[f.name])
        if choices is not None and len(path) == 1:
            # An enumeration is declared once (a Literal); the schema restates it.
            assert node["properties"][path[0]].get("enum") == choices, (
                f"{where}.{path[0]}"
            )
        for record in _records(hints[f.name]):
            sub = _resolve(node["properties"][path[0]], schema)
            checked += _check_record(record, sub, schema, f"{where}.{path[0]}")
    return checked


def test_schema_declares_exactly_the_dataclass_fields() -> None:
    """One schema source: every record of the result (walked from AuditResult
    through its fields' types) declares in the schema exactly the keys its
    dataclass writes. Fails when a field is added to one and not the other."""
    schema = load_schema()
    checked = _check_record(AuditResult, schema, schema, "result")
    # result, power, counts (x2), estimator, attacks, low-FPR rates, warnings,
    # claim, rounds, timing
    assert checked >= 11


def test_schema_version_is_the_one_of_the_result_module() -> None:
    schema = load_schema()
    assert SCHEMA_VERSION in schema["properties"]["schema_version"]["enum"]
    comparison = schema["$defs"]["comparison"]["properties"]["schema_version"]
    assert comparison == {"const": SCHEMA_VERSION}
    assert f"schema_version {SCHEMA_VERSION}" in schema["title"]


def test_to_json_writes_every_declared_key_and_conforms(
    result_doc: Callable[..., dict],
) -> None:
    result = AuditResult.from_json(result_doc())
    doc = result.to_json()
    # ``sequential`` is written only for a --sequential audit (serial's omit_if).
    # ``measurements`` only for a measurement-transcript audit.
    omitted = {"sequential", "measurements"}
    assert set(doc) == json_keys(AuditResult) - omitted | {"schema_version"}
    assert set(doc["power"]) == json_keys(Power)
    assert schema_errors(doc) == []
    json.dumps(doc, allow_nan=False)
    assert AuditResult.from_json(doc) == result  # a round trip changes nothing


def test_sequential_section_round_trips_and_conforms(
    result_doc: Callable[..., dict],
) -> None:
    from dataclasses import replace

    from dpaudit.audit.result.model import SequentialLook, SequentialLooks

    looks = SequentialLooks(
        planned_per_world=1000,
        looks=(
            SequentialLook(
                per_world=100,
                alpha=0.0025,
                eps_max_attainable=1.54,
                eps_emp=1.54,
                verdict=Verdict.VIOLATION,
            ),
            SequentialLook(per_world=1000, alpha=0.0475, eps_max_attainable=4.4),
        ),
        decided=1,
        stopped_early=True,
    )
    result = replace(
        AuditResult.from_json(result_doc()),
        sequential=looks,
        config=replace(AuditResult.from_json(result_doc()).config, sequential=True),
    )
    doc = json.loads(json.dumps(result.to_json(), allow_nan=False))
    assert doc["sequential"]["looks"][1]["verdict"] is None
    assert doc["config"]["sequential"] is True
    assert schema_errors(doc) == []
    assert AuditResult.from_json(doc) == result


def test_result_is_typed_and_frozen(result_doc: Callable[..., dict]) -> None:
    result = AuditResult.from_json(result_doc(), source="x/result.json")
    assert result.verdict is Verdict.VIOLATION and result.verdict == "VIOLATION"
    assert result.power == Power(
        eps_max_attainable=4.68, rounds_needed=None, saturated=True, tightness=1.4625
    )
    assert result.randomness == "fixed_public" and result.approximate is False
    assert result.directory == Path("x")
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.verdict = Verdict.CONSISTENT  # type: ignore[misc]


def test_unknown_keys_are_kept(result_doc: Callable[..., dict]) -> None:
    doc = result_doc(future_key={"a": 1})
    assert AuditResult.from_json(doc).to_json()["future_key"] == {"a": 1}


def test_version_1_documents_are_migrated() -> None:
    old = AuditResult.from_json(v1_result())
    assert old.schema_version == 1
    assert (old.power, old.randomness, old.approximate, old.verdict_reason) == (
        None,
        None,
        None,
        None,
    )
    doc = old.to_json()
    assert doc["schema_version"] == SCHEMA_VERSION and doc["power"] is None
    assert doc["verdict"] == "VIOLATION"  # kept as written
    assert schema_errors(doc) == []


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        ({"schema_version": 3}, "`schema_version` must be one of 1, 2"),
        ({"verdict": "MAYBE"}, "`verdict` must be one of"),
        ({"randomness": "sometimes"}, "`randomness` must be one of"),
        ({"power": {"eps_max_attainable": 1, "saturated": "yes"}}, "power.saturated"),
        ({"seed": 1.5}, "`seed` must be an integer"),
    ],
)
def test_from_json_refuses_bad_documents(
    result_doc: Callable[..., dict], change: dict[str, Any], fragment: str
) -> None:
    with pytest.raises(InvalidParameterError, match=r"^somewhere: ") as info:
        AuditResult.from_json({**result_doc(), **change}, source="somewhere")
    assert fragment in str(info.value)


def test_missing_keys_are_named(result_doc: Callable[..., dict]) -> None:
    doc = result_doc()
    del doc["counts"], doc["seed"]
    with pytest.raises(InvalidParameterError, match="missing: counts, seed"):
        AuditResult.from_json(doc)


def test_result_module_imports_no_upper_layer() -> None:
    source = Path(result_module.__file__).read_text(encoding="utf-8")
    for layer in ("dpaudit.reports", "dpaudit.ci", "dpaudit.cli", "dpaudit.commands"):
        assert layer not in source


# ------------------------------------------------------------ power, rendered


@pytest.fixture
def inconclusive_dir(
    make_audit: Callable[..., Path], inconclusive_doc: Callable[..., dict]
) -> Path:
    return make_audit("short", inconclusive_doc())


def test_inconclusive_html_is_amber_with_its_power(inconclusive_dir: Path) -> None:
    html = render_html([load_result(inconclusive_dir)])
    assert '<section class="verdict verdict-INCONCLUSIVE"' in html
    assert "--inconclusive: #b45f06" in html  # amber, not the green of CONSISTENT
    assert "--consistent: #2e7d32" in html
    assert "Power of this audit" in html
    assert "45 per world for the attainable maximum to exceed the claimed 0.998" in html
    assert "saturated: more rounds would show more" in html
    assert "could not have refuted the claim" in html
    assert "fixed public randomness" in html


def test_inconclusive_markdown_junit_json(inconclusive_dir: Path) -> None:
    results = [load_result(inconclusive_dir)]
    md = render(results, "md")
    assert md.startswith("## dpaudit: INCONCLUSIVE")
    assert "| rounds needed | 45 per world" in md
    assert "Run at least 45 rounds per world." in md
    assert "It is NOT evidence of privacy." in md
    case = ET.fromstring(render(results, "junit")).find(".//testcase")
    assert case is not None and case.find("error") is not None
    assert case.find("failure") is None
    doc = json.loads(render(results, "json"))
    assert doc["power"]["rounds_needed"] == 45 and doc["verdict"] == "INCONCLUSIVE"


def test_terminal_states_the_power(inconclusive_dir: Path) -> None:
    text = render_terminal(load_result(inconclusive_dir))
    assert "  verdict                INCONCLUSIVE\n" in text
    assert (
        "  eps_emp                0.54 (lower bound, 95% overall confidence)\n" in text
    )
    assert "  verdict reason         the attainable maximum 0.535" in text
    assert (
        "  attainable maximum     0.54 (the largest eps_emp 8 + 8 test rounds" in text
    )
    assert "  rounds needed          45 per world" in text
    assert "  saturated              saturated: more rounds would show more" in text
    assert "  tightness              0.54 (eps_emp / claimed epsilon 0.998)" in text
    assert "  randomness             fixed public randomness" in text
    coloured = render_terminal(load_result(inconclusive_dir), color=True)
    assert "\033[1;33mINCONCLUSIVE\033[0m" in coloured  # amber


def test_terminal_of_consistent_and_violation(
    result_doc: Callable[..., dict], consistent_doc: Callable[..., dict]
) -> None:
    ok = render_terminal(AuditResult.from_json(consistent_doc()), color=True)
    assert "\033[1;32mCONSISTENT\033[0m" in ok
    assert "rounds needed" not in ok and "saturated" not in ok
    assert "a perfect attack could have refuted the claim at this size" in ok
    bad = render_terminal(AuditResult.from_json(result_doc()))
    assert "tightness              1.46 (eps_emp / reference epsilon 3.2)" in bad
    assert "approximate" not in bad


def test_approximate_violation_is_marked_everywhere(
    make_audit: Callable[..., Path], result_doc: Callable[..., dict]
) -> None:
    estimator = {**result_doc()["estimator"], "method": "jeffreys"}
    directory = make_audit(
        "jeffreys", result_doc(approximate=True, estimator=estimator)
    )
    results = [load_result(directory)]
    assert "approximate (Jeffreys)" in render_terminal(results[0])
    assert "approximate (Jeffreys)" in render(results, "md")
    assert "approximate (Jeffreys)" in render_html(results)
    junit = ET.fromstring(render(results, "junit"))
    failure = junit.find(".//failure")
    assert failure is not None and "approximate (Jeffreys)" in (
        failure.get("message") or ""
    )


def test_version_1_result_renders_without_power(
    make_audit: Callable[..., Path],
) -> None:
    results = [load_result(make_audit("old", v1_result()))]
    text = render_terminal(results[0])
    assert "randomness             not recorded" in text
    assert "rounds needed" not in text and "tightness" not in text
    for fmt in ("html", "md", "json", "junit"):
        assert render(results, fmt)
