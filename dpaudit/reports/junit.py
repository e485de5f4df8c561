"""JUnit XML: one test case per audit, for CI dashboards.

A CONSISTENT audit passes; a VIOLATION is a ``<failure>`` whose message gives
eps_emp, the claim (marked approximate when found with the Jeffreys interval) and the
report's path; an INCONCLUSIVE audit (one that could not have refuted its claim, or
produced no estimate), or one that failed to run, is an ``<error>``. Every case
records the audit's power (attainable maximum, rounds needed, saturation, tightness,
randomness) as ``name: value`` lines of its ``<system-out>`` (the Jenkins xunit
schema, like most JUnit consumers, allows ``<properties>`` only on a
``<testsuite>``, never inside a ``<testcase>``). Test-case names are unique within
a suite (:func:`unique_names`). Built with :mod:`xml.etree.ElementTree`, which
escapes markup; control characters (which XML 1.0 mostly cannot hold at all), bidi
overrides and lone surrogates are shown as escapes
(:func:`~dpaudit.reports.escape.printable`).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from dpaudit.audit.result import Verdict, regions_summary
from dpaudit.reports.escape import printable
from dpaudit.reports.formats import DEFAULT_FILENAMES
from dpaudit.reports.meaning import explain, power_rows
from dpaudit.reports.model import AuditResult, Unfinished, path_from
from dpaudit.reports.numbers import fmt_alpha, fmt_eps, fmt_number, fmt_percent
from dpaudit.reports.profile_text import comparison_text
from dpaudit.reports.wording import (
    approximate_note,
    attainable,
    confidence_text,
    overall_confidence,
    per_attack_confidence,
    warning_lines,
)

__all__ = ["JunitCase", "case_from_result", "render_junit", "unique_names"]

CaseStatus = Literal["passed", "failure", "error"]


def _clean(text: object) -> str:
    # Line breaks and tabs are the only controls kept: XML holds them, and the
    # details and system-out are multi-line text.
    return printable(text, keep="\n\t")


@dataclass(frozen=True, kw_only=True, slots=True)
class JunitCase:
    """One test case.

    Attributes:
        name: the audit's name.
        classname: a dotted group name (``dpaudit.<generator>``).
        status: ``passed``, ``failure`` (a violation) or ``error`` (no verdict).
        message: one line for the failure or error.
        details: longer text (the failure body, or the case's output).
        seconds: run time.
        properties: ``(name, value)`` pairs recorded on the case (written as
            lines of its ``<system-out>``).
    """

    name: str
    classname: str
    status: CaseStatus
    message: str = ""
    details: str = ""
    seconds: float = 0.0
    properties: tuple[tuple[str, str], ...] = ()


def case_from_result(
    result: AuditResult,
    *,
    name: str | None = None,
    report_path: Path | str | None = None,
) -> JunitCase:
    """The test case of one audit result.

    Args:
        result: The audit.
        name: The case name (default: the result's label and attack).
        report_path: The HTML report to point to in a failure.

    Returns:
        The :class:`JunitCase`.
    """
    conf = confidence_text(result)
    where = f"; report: {report_path}" if report_path is not None else ""
    top = fmt_eps(attainable(result))
    if result.verdict == Verdict.VIOLATION:
        status: CaseStatus = "failure"
        note = approximate_note(result)
        message = (
            f"VIOLATION: {comparison_text(result, equals='= ', claimed='claimed epsilon')} "
            f"(delta {fmt_alpha(result.delta)}, "
            f"{conf}, attack {result.attack}"
            f"{', ' + note if note else ''}){where}"
        )
    elif result.verdict == Verdict.INCONCLUSIVE:
        status = "error"
        if result.eps_emp is None:
            message = f"INCONCLUSIVE: the audit produced no estimate of epsilon{where}"
        else:
            needed = result.power.rounds_needed if result.power else None
            more = f"; {needed} rounds per world needed" if needed is not None else ""
            message = (
                f"INCONCLUSIVE: the attainable maximum {top} does not exceed the "
                f"claimed epsilon {fmt_number(result.eps_claimed)}: this audit could "
                f"not have refuted the claim{more}{where}"
            )
    else:
        status = "passed"
        message = (
            f"CONSISTENT: {comparison_text(result, equals='= ', claimed='claimed epsilon')} "
            f"(attainable maximum {top})"
        )

    if result.warnings:
        codes = ", ".join(w.code for w in result.warnings)
        message += f" [warning: {codes}; see the details]"

    def number(value: float | None) -> str:
        return "" if value is None else fmt_number(value, 6)

    def flag(value: bool | None) -> str:
        return "" if value is None else str(value).lower()

    power = result.power
    properties = (
        ("verdict", str(result.verdict)),
        ("verdict_reason", result.verdict_reason or ""),
        ("eps_emp", number(result.eps_emp)),
        ("eps_claimed", number(result.eps_claimed)),
        ("eps_reference", number(result.eps_reference)),
        ("eps_max_attainable", number(attainable(result))),
        ("rounds_needed", "" if power is None else number(power.rounds_needed)),
        ("saturated", "" if power is None else flag(power.saturated)),
        ("tightness", "" if power is None else number(power.tightness)),
        ("constant_release", "" if power is None else flag(power.constant_release)),
        ("approximate", flag(result.approximate)),
        ("randomness", result.randomness or ""),
        ("delta", fmt_alpha(result.delta)),
        ("alpha", fmt_alpha(result.estimator.overall_alpha)),
        ("confidence", fmt_percent(overall_confidence(result))),
        ("alpha_per_attack", fmt_alpha(result.estimator.alpha)),
        ("confidence_per_attack", fmt_percent(per_attack_confidence(result))),
        ("attack", result.attack),
        ("dataset", result.dataset),
        ("seed", str(result.seed)),
        ("report", "" if report_path is None else str(report_path)),
        ("warnings", ", ".join(w.code for w in result.warnings)),
        ("mu_emp", number(result.mu_emp)),
        ("regions_violated", regions_summary(result.regions_violated or ())),
    )
    power_text = "\n".join(f"{k}: {v}" for k, v in power_rows(result))
    seconds = result.timing.total_seconds or 0.0
    return JunitCase(
        name=name or f"{result.label} [{result.attack}]",
        classname=f"dpaudit.{result.generator}",
        status=status,
        message=message,
        details="\n\n".join(
            [message, *warning_lines(result), power_text, *explain(result)]
        ),
        seconds=float(seconds) if isinstance(seconds, int | float) else 0.0,
        properties=properties,
    )


def unique_names(names: Sequence[str]) -> list[str]:
    """``names`` with repeats made unique by a ``#2``, ``#3``... suffix (dashboards
    merge test cases of the same name).

    Example:
        >>> unique_names(["a", "b", "a", "a"])
        ['a', 'b', 'a #2', 'a #3']
    """
    seen: dict[str, int] = {}
    taken = set(names)
    out = []
    for name in names:
        count = seen.get(name, 0) + 1
        seen[name] = count
        candidate = name if count == 1 else f"{name} #{count}"
        while count > 1 and candidate in taken:
            count += 1
            seen[name] = count
            candidate = f"{name} #{count}"
        taken.add(candidate)
        out.append(candidate)
    return out


def render_junit(
    cases: Sequence[JunitCase],
    *,
    suite: str = "dpaudit",
    properties: Sequence[tuple[str, str]] = (),
) -> str:
    """A JUnit XML document with one ``<testsuite>``.

    Args:
        cases: The test cases.
        suite: The suite's name.
        properties: Suite-level ``(name, value)`` pairs (e.g. the policy's alpha).

    Returns:
        XML text with a declaration, ending with a newline.
    """
    failures = sum(c.status == "failure" for c in cases)
    errors = sum(c.status == "error" for c in cases)
    total = sum(c.seconds for c in cases)
    root = ET.Element(
        "testsuites",
        name=_clean(suite),
        tests=str(len(cases)),
        failures=str(failures),
        errors=str(errors),
        time=f"{total:.3f}",
    )
    node = ET.SubElement(
        root,
        "testsuite",
        name=_clean(suite),
        tests=str(len(cases)),
        failures=str(failures),
        errors=str(errors),
        skipped="0",
        time=f"{total:.3f}",
    )
    if properties:
        props = ET.SubElement(node, "properties")
        for key, value in properties:
            ET.SubElement(props, "property", name=_clean(key), value=_clean(value))

    names = unique_names([c.name for c in cases])
    for case, name in zip(cases, names):
        element = ET.SubElement(
            node,
            "testcase",
            name=_clean(name),
            classname=_clean(case.classname),
            time=f"{case.seconds:.3f}",
        )
        if case.status in ("failure", "error"):
            kind = "privacy-violation" if case.status == "failure" else "audit-error"
            child = ET.SubElement(
                element, case.status, message=_clean(case.message), type=kind
            )
            child.text = _clean(case.details or case.message)
        out = [] if case.status != "passed" else [case.details] if case.details else []
        if case.properties:
            out.append("\n".join(f"{key}: {value}" for key, value in case.properties))
        if out:
            ET.SubElement(element, "system-out").text = _clean("\n\n".join(out))
    ET.indent(root)
    body = ET.tostring(root, encoding="unicode")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + body + "\n"


def render_junit_report(
    results: Sequence[AuditResult],
    *,
    base: Path | None = None,
    compare: bool = False,
    unfinished: Sequence[Unfinished] = (),
) -> str:
    """One audit, or a comparison of several, as JUnit XML: one case per audit (a
    failure for a VIOLATION), and an error case per unfinished audit.

    Each case is named by its audit directory in a comparison (unique), and by label
    and attack for a single audit.
    """
    names = unique_names(
        [
            (path_from(r, base) if compare else "") or f"{r.label} [{r.attack}]"
            for r in results
        ]
    )
    cases = []
    for r, name in zip(results, names):
        report = (
            None if r.directory is None else r.directory / DEFAULT_FILENAMES["html"]
        )
        cases.append(
            case_from_result(
                r,
                name=name,
                report_path=report if report and report.is_file() else None,
            )
        )
    for u in unfinished:
        cases.append(
            JunitCase(
                name=u.path,
                classname="dpaudit.unfinished",
                status="error",
                message=f"{u.status}: {u.reason}",
                details=f"{u.status}: {u.reason}",
            )
        )
    return render_junit(cases)
