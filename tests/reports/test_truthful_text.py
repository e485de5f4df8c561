"""Every comparison a report states between two numbers is true of the numbers it
prints: no "X, above the claimed Y" unless X > Y, no "X <= claimed Y" unless X <= Y.

The results are generated: the verdict, its reason and every figure of each come from
the verdict rule (:func:`dpaudit.audit.games.verdict.decide`) over a grid of eps_emp
against the claim (values on both sides of it and within rounding of it), with and
without a stated profile; and one real audit (the issue's ExactGaussian overclaim,
whose profile is refuted while its (epsilon, delta) pair is not). Each is rendered in
every format and on the terminal, and every comparison sentence in the text is
parsed and checked on the numbers printed on both of its sides.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dpaudit.audit.games.verdict import decide, verdict_reason
from dpaudit.audit.result.model import AttackResult, AuditResult, Claim, Verdict
from dpaudit.audit.stats.estimators import AttackCounts
from dpaudit.reports import render
from dpaudit.reports.formats import FORMATS
from dpaudit.reports.terminal import render_terminal
from tests.reports.conftest import make_result

NUMBER = r"(-?\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?)"
#: (pattern, relation): group 1 and group 2 are the two numbers, ``gt``: 1 > 2.
COMPARISONS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(p, re.IGNORECASE), rel)
    for p, rel in (
        (NUMBER + r"\)?,? above the claimed (?:epsilon )?" + NUMBER, "gt"),
        (NUMBER + r",? not above the claimed (?:epsilon )?" + NUMBER, "le"),
        (
            r"eps_emp (?:= )?"
            + NUMBER
            + r" > (?:the )?(?:claimed )?(?:epsilon )?"
            + NUMBER,
            "gt",
        ),
        (r"mu_emp " + NUMBER + r" > mu " + NUMBER, "gt"),
        (NUMBER + r" <= (?:the )?(?:claimed )?(?:epsilon )?" + NUMBER, "le"),
        (
            NUMBER
            + r"\)?,? (?:which )?does not exceed the claimed (?:epsilon )?"
            + NUMBER,
            "le",
        ),
        (r"eps_emp " + NUMBER + r" exceeds the claimed epsilon " + NUMBER, "gt"),
    )
)


def _num(text: str) -> float:
    return float(text.replace(",", ""))


def comparisons(text: str) -> Iterator[tuple[str, float, float, str]]:
    """Every ``(sentence fragment, left, right, relation)`` the text states."""
    flat = " ".join(text.split())
    for pattern, relation in COMPARISONS:
        for m in pattern.finditer(flat):
            yield m.group(0), _num(m.group(1)), _num(m.group(2)), relation


def untrue(text: str) -> list[str]:
    """The comparisons of ``text`` that its own numbers contradict."""
    bad = []
    for fragment, left, right, relation in comparisons(text):
        ok = left > right if relation == "gt" else left <= right
        if not ok:
            bad.append(fragment)
    return bad


def test_the_checker_catches_the_issue_sentence() -> None:
    said = "epsilon is at least 0.96, above the claimed 1. eps_emp 0.96 > claimed 1"
    assert len(untrue(said)) == 2
    assert untrue("epsilon is at least 1.20, above the claimed 1") == []
    assert untrue("(eps_emp 1.003 <= 1)") == ["1.003 <= 1"]


def _texts(result: AuditResult, *, html_too: bool = True) -> dict[str, str]:
    """The terminal text and every report format (HTML, which draws its figures,
    only where ``html_too``: its sentences are the Markdown's, from one module)."""
    out = {"terminal": render_terminal(result)}
    for fmt in FORMATS:
        if fmt == "html" and not html_too:
            continue
        text = render([result], fmt)
        if fmt in ("html", "junit"):
            text = html.unescape(re.sub(r"<[^>]+>", " ", text))
        out[fmt] = text
    return out


PROFILE_CLAIM = {
    "gdp_mu": 0.268,
    "zcdp_rho": None,
    "rdp": {
        "orders": [1.03162, 2.0, 8.0, 32.6228, 1001.0],
        "epsilons": [0.002, 0.07, 0.29, 1.2, 36.0],
    },
    "reference_rdp": None,
}


def _generated(eps_emp: float, claim: float, *, profile: str) -> AuditResult:
    """A result whose verdict and reason the audit's own rules give for these
    numbers; ``profile``: ``none``, ``refuted`` (the claim's test refutes the
    profile; the pair only if eps_emp > claim), ``kept``, or ``lines`` (a claim of
    the lines alone refuted by its own calibrated test, whatever eps_emp)."""
    top = 4.68
    ratio = {"none": None, "refuted": 3.1, "kept": 0.7, "lines": 1.8}[profile]
    regions: tuple[str, ...] = ()
    if profile == "refuted":
        regions = ("gdp", "rdp@2", "rdp@8") + (("lines",) if eps_emp > claim else ())
    elif profile == "lines" or (profile == "none" and eps_emp > claim):
        regions = ("lines",)
    verdict = decide(
        eps_emp=eps_emp,
        eps_claimed=claim,
        eps_max_attainable=top,
        refutation_ratio=ratio,
        profile_refutable=True if ratio is not None else None,
    )
    profiled = ratio is not None and profile != "lines"
    stated = Claim(epsilon=claim, delta=1e-5, **(PROFILE_CLAIM if profiled else {}))
    head = AttackResult(
        name="querybased",
        eps_emp=eps_emp,
        mu_emp=1.3 if profile == "refuted" else 0.1,
        fpr_upper=0.05,
        fnr_upper=0.2,
        refutation_ratio=ratio,
        regions_violated=regions,
        counts=AttackCounts(tp=400, fp=0, tn=400, fn=0),
    )
    reason = verdict_reason(
        verdict,
        eps_emp=eps_emp,
        eps_claimed=claim,
        eps_max_attainable=top,
        rounds_needed=None,
        point=head,
        claim=stated if profiled else None,
    )
    doc: dict[str, Any] = make_result(
        verdict=verdict.value,
        verdict_reason=reason,
        eps_emp=eps_emp,
        eps_claimed=claim,
        eps_reference=None,
        eps_max_attainable=top,
        refutation_ratio=ratio,
        regions_violated=list(regions) if ratio is not None else None,
        mu_emp=head.mu_emp,
        fpr_upper=0.05,
        fnr_upper=0.2,
    )
    doc["claim"].update(epsilon=claim, reference_epsilon=None)
    if profiled:
        doc["claim"].update(PROFILE_CLAIM)
    if ratio is not None:
        doc["power"]["ratio_max_attainable"] = 40.0
    doc["power"].update(saturated=math.isclose(eps_emp, top), tightness=eps_emp / claim)
    doc["attacks"]["querybased"]["eps_emp"] = eps_emp
    return AuditResult.from_json(doc)


GRID = [0.0, 0.957, 0.999, 1.0, 1.001, 1.004, 4.68]


@pytest.mark.parametrize("profile", ["none", "refuted", "kept", "lines"])
def test_generated_results_say_only_true_comparisons(profile: str) -> None:
    checked = 0
    for eps_emp in GRID:
        if profile == "kept" and eps_emp > 1.0:
            continue  # the claim's test keeps the claim: eps_emp is capped at it
        result = _generated(eps_emp, 1.0, profile=profile)
        for fmt, text in _texts(result, html_too=eps_emp in (0.999, 1.001)).items():
            found = list(comparisons(text))
            checked += len(found)
            assert untrue(text) == [], (eps_emp, profile, fmt)
    assert checked > 20  # the checker found the sentences it is meant to check


@pytest.mark.slow
def test_the_refuted_profile_audit_says_only_true_things(tmp_path: Path) -> None:
    """The issue's command: the profile (GDP mu 0.268) refuted by the claim's test,
    the (1, 1e-5) pair not (eps_emp 0.96): the lines are not listed as violated, the
    text says which test refuted what, and every comparison holds."""
    from dpaudit.cli import main

    out = tmp_path / "eg"
    code = main(
        [
            "audit",
            "--generator",
            "dpaudit.generators.zoo:ExactGaussian",
            "--option",
            "true_epsilon=40",
            "--dataset",
            "worst-case",
            "--rounds",
            "20",
            "--out",
            str(out),
        ]
    )
    assert code == 0
    result = AuditResult.from_json(
        __import__("json").loads((out / "result.json").read_text())
    )
    assert result.verdict == Verdict.VIOLATION
    assert result.eps_emp is not None and result.eps_emp <= result.eps_claimed
    assert "lines" not in (result.regions_violated or ())
    assert "gdp" in (result.regions_violated or ())
    assert result.power is not None and (result.power.ratio_max_attainable or 0) > 1
    reason = result.verdict_reason or ""
    assert "the stated profile is refuted" in reason
    assert "The (epsilon, delta) pair alone is not" in reason
    assert len(reason) < 700  # the RDP orders as one span, not one by one
    for fmt, text in _texts(result).items():
        assert untrue(text) == [], fmt
        if fmt != "json":  # the data keeps one name per region
            assert "rdp@1.0" not in text and "order 1.03162" not in text, fmt
        assert "no claim at or above it can be refuted" not in text, fmt
