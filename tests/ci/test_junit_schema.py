"""JUnit XML validates against the Jenkins xunit schema subset
(tests/ci/data/junit-xunit.xsd): no ``<properties>`` inside a ``<testcase>``, and
unique test-case names, for ``dpaudit check`` and for ``dpaudit report --format
junit`` of a comparison."""

from __future__ import annotations

import importlib.util
import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from types import ModuleType

from dpaudit.ci import junit_text, parse_policy, run_check
from dpaudit.reports import render
from dpaudit.reports.junit import JunitCase, render_junit, unique_names
from dpaudit.reports.model import Unfinished, load_results

HERE = Path(__file__).parent


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        f"_dpaudit_tests_{name}", HERE / f"{name}.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


xsd = _load("junit_xsd")
check_tests = _load("test_check")


def test_the_validator_rejects_properties_inside_a_testcase() -> None:
    bad = (
        '<testsuites><testsuite name="s" tests="1"><testcase name="a">'
        '<properties><property name="k" value="v"/></properties>'
        "</testcase></testsuite></testsuites>"
    )
    problems = xsd.validate(bad)
    assert any("<properties> not allowed here" in p for p in problems)
    assert xsd.validate('<testsuites><testsuite tests="0"/></testsuites>') == []
    assert xsd.validate("<testsuites><testsuite/></testsuites>") == [
        "/testsuites/testsuite: required attribute 'tests' missing"
    ]


def test_check_junit_validates_against_the_schema(tmp_path: Path) -> None:
    policy = parse_policy(
        {
            "audit": [
                {"generator": "pategan", "name": "ref"},
                {"generator": "pategan", "variant": "synthcity", "name": "bad"},
                {"generator": "pategan", "variant": "weak", "name": "weak"},
                {"generator": "boom", "name": "broken"},
            ]
        }
    )
    runner = check_tests.FakeRunner(
        {"synthcity": "VIOLATION", "weak": "INCONCLUSIVE"}, fail={"boom"}
    )
    report = run_check(
        policy, out_dir=tmp_path / "out", runner=runner, make_config=dict, reports=False
    )
    text = junit_text(report)
    assert xsd.validate(text) == []
    root = ET.fromstring(text)
    names = [c.get("name") for c in root.iter("testcase")]
    assert names == ["ref", "bad", "weak", "broken"]
    # Every case still records its power, as lines of its output.
    for case in root.iter("testcase"):
        if case.get("name") != "broken":
            assert "eps_max_attainable: " in (case.findtext("system-out") or "")


def test_comparison_junit_names_each_audit_by_its_directory(tmp_path: Path) -> None:
    # Three audits of the same generator, variant and attack: one label.
    doc = check_tests.fake_result({"generator": "pategan", "alpha": 0.05}, "CONSISTENT")
    for name in ("seed-0", "seed-1", "nested/seed-2"):
        directory = tmp_path / name
        directory.mkdir(parents=True)
        (directory / "result.json").write_text(json.dumps(doc), encoding="utf-8")
    results = load_results(tmp_path)
    assert len({r.label for r in results}) == 1
    unfinished = [Unfinished(path="stopped", status="INTERRUPTED", reason="killed")]
    text = render(results, "junit", base=tmp_path, compare=True, unfinished=unfinished)
    assert xsd.validate(text) == []
    names = [c.get("name") for c in ET.fromstring(text).iter("testcase")]
    assert names == ["nested/seed-2", "seed-0", "seed-1", "stopped"]
    stopped = ET.fromstring(text).find(".//testcase[@name='stopped']/error")
    assert stopped is not None and "INTERRUPTED: killed" in (
        stopped.get("message") or ""
    )


def test_render_junit_makes_repeated_names_unique() -> None:
    cases = [JunitCase(name="x", classname="c", status="passed")] * 3
    names = [c.get("name") for c in ET.fromstring(render_junit(cases)).iter("testcase")]
    assert names == ["x", "x #2", "x #3"]
    assert unique_names(["a", "a #2", "a"]) == ["a", "a #2", "a #3"]
