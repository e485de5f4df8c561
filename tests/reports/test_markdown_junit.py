"""The Markdown summary and the JUnit XML of audit results."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

from dpaudit.reports import load_results, render
from dpaudit.reports.junit import JunitCase, render_junit
from dpaudit.reports.markdown import md_escape


def test_markdown_summary_of_a_violation(audit_dir: Path) -> None:
    md = render(load_results(audit_dir), "md")
    assert md.startswith("## dpaudit: VIOLATION\n")
    assert "| eps_emp (lower bound, 95% overall confidence) | 4.68 |" in md
    assert "| max attainable (400 + 400 test rounds) | 4.68 |" in md
    assert (
        "with 95% overall confidence epsilon is at least 4.68, above the claimed 1"
        in md
    )
    assert "Target record: a = 1, b = 1, c = 1" in md
    assert "no training data except the one target record" in md
    assert "| LogisticRegression | 0.86 ± 0.01 | 0.4 ± 0.02 |" in md


def test_markdown_summary_of_a_consistent_audit(
    make_audit: Callable[..., Path], consistent_doc: Callable[..., dict]
) -> None:
    md = render(load_results(make_audit("ok", consistent_doc())), "md")
    assert md.startswith("## dpaudit: CONSISTENT\n")
    assert "This does NOT prove the generator private" in md


def test_markdown_comparison_table(
    make_audit: Callable[..., Path],
    result_doc: Callable[..., dict],
    consistent_doc: Callable[..., dict],
) -> None:
    make_audit("runs/a", result_doc())
    parent = make_audit("runs/b", consistent_doc()).parent
    md = render(load_results(parent), "md", base=parent)
    assert md.startswith("## dpaudit comparison: 1 of 2 audit(s) found a violation")
    table = [line for line in md.splitlines() if "| **" in line]
    assert len(table) == 2
    assert all(line.count("|") == 13 for line in table)
    # The first column names the audit (its directory under the parent).
    assert sorted(line.split("|")[1].strip() for line in table) == ["a", "b"]
    assert md.splitlines()[2].startswith("| audit | verdict |")


def test_md_escape_keeps_table_cells_intact() -> None:
    assert md_escape("a|b") == "a\\|b"
    assert md_escape("line\nbreak") == "line break"
    assert md_escape("<img src=x>") == "&lt;img src=x>"
    assert md_escape("eps 1.3 > 1 & delta < 1e-5") == "eps 1.3 > 1 & delta < 1e-5"
    assert md_escape("> quote &amp;") == "\\> quote &amp;amp;"
    assert md_escape("[link](http://x)") == "\\[link\\](http://x)"


def test_junit_one_case_per_audit_violation_is_a_failure(
    make_audit: Callable[..., Path],
    result_doc: Callable[..., dict],
    consistent_doc: Callable[..., dict],
) -> None:
    bad = make_audit("runs/bad", result_doc())
    (bad / "report.html").write_text("x", encoding="utf-8")
    make_audit("runs/good", consistent_doc())
    make_audit("runs/none", result_doc(verdict="INCONCLUSIVE", eps_emp=None))
    xml = render(load_results(bad.parent), "junit", base=bad.parent)
    root = ET.fromstring(xml)
    suite = root.find("testsuite")
    assert suite is not None
    assert suite.get("tests") == "3"
    assert suite.get("failures") == "1" and suite.get("errors") == "1"
    cases = suite.findall("testcase")
    assert len(cases) == 3
    failures = [c.find("failure") for c in cases if c.find("failure") is not None]
    assert len(failures) == 1
    message = failures[0].get("message") or ""
    assert "eps_emp = 4.68 > claimed epsilon 1" in message
    assert f"report: {bad / 'report.html'}" in message
    assert failures[0].get("type") == "privacy-violation"
    errors = [c.find("error") for c in cases if c.find("error") is not None]
    assert len(errors) == 1 and "INCONCLUSIVE" in (errors[0].get("message") or "")


def test_render_junit_suite_properties() -> None:
    xml = render_junit(
        [JunitCase(name="a", classname="dpaudit.x", status="passed", seconds=1.5)],
        suite="s",
        properties=[("alpha", "0.05")],
    )
    root = ET.fromstring(xml)
    assert root.find("./testsuite/properties/property").get("value") == "0.05"
    assert root.find("./testsuite/testcase").get("time") == "1.500"
    assert xml.startswith('<?xml version="1.0" encoding="UTF-8"?>')
