"""A measurement-transcript result's section (``measurements``) in every report:
what the transcript covers and leaves out, the exact privacy, the ceiling and the
claim against the spend; a plug-in's own words (``transcript_omits``) escaped."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dpaudit.audit.result import AuditResult
from dpaudit.reports import render, render_terminal
from dpaudit.reports.measurements_text import measurement_rows

SECTION = {
    "records": 3,
    "gaussian_answers": 6,
    "laplace_answers": 0,
    "answers_changed": 3,
    "varies": False,
    "mu_exact": 0.268,
    "rho_exact": 0.0359,
    "eps_exact": 1.0,
    "eps_delta": 1e-5,
    "mu_ceiling": 0.0438,
    "mu_to_ceiling": 18.4,
    "term": "rho",
    "claimed": 0.0359,
    "spent": 0.0359,
    "spends_more_than_claimed": False,
    "covers": "the stated measurements",
    "leaves_out": "selection; the generator names: tree\x1b[31m",
}


def _result(result_doc: Callable[..., dict[str, Any]], **change: Any) -> AuditResult:
    return AuditResult.from_json(result_doc(measurements={**SECTION, **change}))


def test_the_section_reads_back_and_renders_in_every_format(
    result_doc: Callable[..., dict[str, Any]],
) -> None:
    result = _result(result_doc)
    assert result.measurements is not None and result.measurements.term == "rho"
    assert result.to_json()["measurements"] == SECTION
    rows = dict(measurement_rows(result))
    assert rows["claim vs measurements"] == (
        "claims rho 0.0359, measurements spend rho 0.0359"
    )
    assert "mu 0.268" in rows["exact privacy"]
    assert "3 of 6 answers change" in rows["exact privacy"]
    assert rows["measurement ceiling"].startswith("0.0438: the expected mu_emp")
    for text in [
        render_terminal(result),
        *(render([result], f) for f in ("md", "html")),
    ]:
        assert "claims rho 0.0359" in text and "transcript leaves out" in text
        assert "\x1b" not in text and r"\x1b" in text


def test_a_spend_above_the_claim_is_said(
    result_doc: Callable[..., dict[str, Any]],
) -> None:
    result = _result(result_doc, spent=0.1, spends_more_than_claimed=True)
    assert (
        "spend more than the claim"
        in dict(measurement_rows(result))["claim vs measurements"]
    )


def test_no_section_no_rows(result_doc: Callable[..., dict[str, Any]]) -> None:
    assert measurement_rows(AuditResult.from_json(result_doc())) == []
