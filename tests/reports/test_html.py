"""The HTML report: content, self-containment, comparison, determinism."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from dpaudit import __version__
from dpaudit.reports import load_result, load_results, render_html
from dpaudit.reports.meaning import DATA_NOTICE
from dpaudit.reports.model import result_from_mapping


def visible_text(html: str) -> str:
    """The page's text, roughly: tags, styles and SVG removed, spaces collapsed."""
    html = re.sub(r"<svg.*?</svg>", " ", html, flags=re.S)
    html = re.sub(r"<style.*?</style>", " ", html, flags=re.S)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_verdict_and_numbers_are_shown(violation_html: str) -> None:
    text = visible_text(violation_html)
    assert '<div class="word">VIOLATION</div>' in violation_html
    assert (
        "VIOLATION: eps_emp 4.68 &gt; claimed 1 (querybased, 95% overall confidence)"
        in (violation_html)
    )
    assert "eps_emp: lower bound on epsilon, 95% overall confidence" in text
    assert "epsilon of a reference accountant" in text
    assert "largest eps_emp this test size can show (400 + 400 test rounds)" in text


def test_what_this_means_for_a_violation(violation_html: str) -> None:
    text = visible_text(violation_html)
    assert (
        "the implementation leaks more than it claims: with 95% overall confidence "
        "epsilon is at least 4.68, above the claimed 1" in text.lower()
    )


def test_sections_and_figures(violation_html: str) -> None:
    text = visible_text(violation_html)
    for heading in (
        "What this means",
        "Empirical versus claimed epsilon",
        "ROC curves (test rounds)",
        "Attack scores in the two worlds (test rounds)",
        "Records seen per teacher",
        "Teacher losses: own partition versus the others",
        "Epsilon over training iterations",
        "Utility",
        "Target record",
        "Configuration",
        "Generator options in effect",
    ):
        assert heading in text, heading
    # epsilon bars, ROC (linear and log-log), one histogram, three traces
    assert violation_html.count("<svg") == 7
    assert "log-log (low FPR)" in text


def test_configuration_seed_dataset_and_version(violation_html: str) -> None:
    text = visible_text(violation_html)
    assert "seed 0" in text
    assert "worst-case" in text
    assert "selection_rounds" in text
    assert "2000 rounds (1000 per world): train 800, validation 400, test 800" in text
    assert f"dpaudit {__version__}" in text
    assert "LogisticRegression" in text and "0.86 ± 0.01" in text


def test_report_is_self_contained(violation_html: str) -> None:
    assert "<script" not in violation_html.lower()
    # Nothing is fetched: every reference is to an element of the page itself.
    assert not re.search(r"\ssrc\s*=", violation_html)
    hrefs = re.findall(r"href=\"([^\"]*)\"", violation_html)
    assert hrefs and all(h.startswith("#") for h in hrefs)
    urls = re.findall(r"url\(([^)]*)\)", violation_html)
    assert all(u.startswith("#") for u in urls)
    assert "@import" not in violation_html
    assert violation_html.startswith("<!DOCTYPE html>")


def test_data_notice(violation_html: str) -> None:
    assert DATA_NOTICE in visible_text(violation_html)
    assert "It is the only record of the data this report shows." in violation_html


def test_consistent_report_says_it_proves_nothing(
    make_audit: Callable[..., Path], consistent_doc: Callable[..., dict]
) -> None:
    html = render_html([load_result(make_audit("ok", consistent_doc()))])
    text = visible_text(html)
    assert '<div class="word">CONSISTENT</div>' in html
    assert "This does NOT prove the generator private" in text
    assert (
        "At this test size (400 + 400 test rounds) the largest epsilon any attack "
        "could show is 4.68, above the claimed 1" in text
    )
    # No trace: the section says why; no utility (not part of an audit): left out.
    assert "No training trace was recorded for this audit" in text
    assert "Utility" not in text


def test_consistent_without_power_says_so(consistent_doc: Callable[..., dict]) -> None:
    doc = consistent_doc(eps_claimed=8.0, eps_max_attainable=3.05)
    html = render_html([result_from_mapping(doc, source="mem")])
    assert "this audit could not have detected a violation at all" in html


def test_inconclusive_report(result_doc: Callable[..., dict]) -> None:
    doc = result_doc(verdict="INCONCLUSIVE", eps_emp=None, auc=None, attacks={})
    html = render_html([result_from_mapping(doc, source="mem")])
    assert '<div class="word">INCONCLUSIVE</div>' in html
    assert "could not produce an estimate" in html


def test_rendering_is_deterministic(full_audit_dir: Path, violation_html: str) -> None:
    assert render_html(load_results(full_audit_dir)) == violation_html


def test_comparison_has_a_row_per_generator_variant_attack(
    make_audit: Callable[..., Path],
    result_doc: Callable[..., dict],
    consistent_doc: Callable[..., dict],
) -> None:
    two_attacks = result_doc(
        variant="updated",
        attack="groundhog",
        estimator={
            "method": "clopper_pearson",
            "alpha": 0.025,
            "confidence": 0.975,
            "correction": "bonferroni",
            "n_attacks": 2,
        },
    )
    two_attacks["attacks"]["groundhog"] = dict(
        two_attacks["attacks"]["querybased"], eps_emp=2.18
    )
    first = make_audit("runs/synthcity", result_doc())
    make_audit("runs/updated", two_attacks)
    make_audit("runs/reference", consistent_doc())
    (first / "report.html").write_text("x", encoding="utf-8")
    parent = first.parent
    html = render_html(load_results(parent), base=parent)
    text = visible_text(html)
    assert "dpaudit comparison report" in text
    assert "2 of 3 audit(s) found a violation" in text
    rows = re.findall(r"<tr>\s*<td>([^<]*)</td>\s*<td><span class=\"tag", html)
    # reference, synthcity, updated x 2 attacks; the first column names the audit
    assert sorted(rows) == ["reference", "synthcity", "updated", "updated"]
    assert "groundhog (headline)" in text and "2.18" in text
    assert 'href="synthcity/report.html"' in html  # only where the report exists
    assert html.count("<svg") == 1
    assert "<script" not in html.lower()
