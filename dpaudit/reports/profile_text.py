"""What every report says about the claim's privacy profile: mu_emp, the test point,
the regions the verdict tested and which it found violated, and the profile test's
power (docs/soundness.md, "Testing the claim's profile").

Shared by the terminal, Markdown, HTML and JUnit reports through
:func:`dpaudit.reports.meaning.power_rows`, :func:`~dpaudit.reports.meaning.headline`
and :func:`~dpaudit.reports.meaning.explain`; the JSON report is ``result.json``
itself.
"""

from __future__ import annotations

from dpaudit.audit import AuditResult
from dpaudit.audit.result import Verdict, orders_span, regions_summary
from dpaudit.reports.numbers import fmt_alpha, fmt_number, fmt_versus

__all__ = [
    "claimed_profile_text",
    "comparison_text",
    "profile_headline",
    "profile_paragraph",
    "profile_rows",
    "regions_text",
]


def _has_profile(result: AuditResult) -> bool:
    claim = result.claim
    return claim.gdp_mu is not None or claim.zcdp_rho is not None or bool(claim.rdp)


def regions_text(result: AuditResult) -> str:
    """The violated regions, ``none`` when there are none."""
    return regions_summary(result.regions_violated or ())


def claimed_profile_text(result: AuditResult) -> str | None:
    """What the claim states beyond (epsilon, delta); ``None`` when nothing."""
    claim = result.claim
    parts = []
    if claim.gdp_mu is not None:
        parts.append(f"mu-GDP with mu {fmt_number(claim.gdp_mu)}")
    if claim.zcdp_rho is not None:
        parts.append(f"rho-zCDP with rho {fmt_number(claim.zcdp_rho)}")
    if claim.rdp:
        parts.append(f"an RDP curve at {orders_span(claim.rdp.get('orders') or ())}")
    return "; ".join(parts) if parts else None


def profile_rows(result: AuditResult) -> list[tuple[str, str]]:
    """``(name, text)`` rows: mu_emp and what it corresponds to, the test point, the
    claimed profile, the regions violated and the profile test's power. Empty for a
    result that records none of them (an older result)."""
    rows: list[tuple[str, str]] = []
    if result.mu_emp is not None:
        text = (
            f"{fmt_number(result.mu_emp)} (the largest mu whose mu-GDP this test "
            "refutes"
        )
        if result.mu_max_attainable is not None:
            text += f"; at most {fmt_number(result.mu_max_attainable)} at this size"
        text += ")"
        rows.append(("mu_emp", text))
        if result.eps_of_mu_emp is not None and result.mu_emp > 0:
            rows.append(
                (
                    "eps_of_mu_emp",
                    f"{fmt_number(result.eps_of_mu_emp)} (descriptive: the epsilon at "
                    f"delta {fmt_alpha(result.delta)} of a mu_emp-GDP mechanism, what "
                    "the refuted Gaussian profile corresponds to; not a bound on this "
                    "mechanism's epsilon, and not compared with the claim: the "
                    "verdict's eps_emp is)",
                )
            )
    if result.fpr_upper is not None and result.fnr_upper is not None:
        rows.append(
            (
                "test point",
                f"FPR <= {result.fpr_upper:.4f}, FNR <= {result.fnr_upper:.4f} "
                "(upper confidence bounds at the chosen threshold)",
            )
        )
    stated = claimed_profile_text(result)
    if stated is not None:
        rows.append(("claimed profile", stated))
    if result.regions_violated is not None:
        text = regions_text(result)
        if result.refutation_ratio is not None and _has_profile(result):
            text += f" (refutation ratio {fmt_number(result.refutation_ratio)})"
        rows.append(("regions violated", text))
    power = result.power
    if power is not None and power.profile_rounds_needed is not None:
        rows.append(
            (
                "profile rounds needed",
                f"{power.profile_rounds_needed} per world for a perfect attack to "
                "refute the claimed profile",
            )
        )
    if power is not None and power.mu_ceiling is not None:
        text = (
            f"{fmt_number(power.mu_ceiling)} (expected mu_emp of the best possible "
            f"test of an exactly mu {fmt_number(power.mu_reference)}-GDP mechanism "
            "at this size"
        )
        if power.mu_to_ceiling is not None:
            text += f"; mu_emp / ceiling {fmt_number(power.mu_to_ceiling)}"
        if power.eps_ceiling is not None:
            text += f"; its expected eps_emp {fmt_number(power.eps_ceiling)}"
        rows.append(("mu ceiling", text + ")"))
    return rows


def _profile_only(result: AuditResult) -> bool:
    """A VIOLATION whose (epsilon, delta) pair was not refuted by its own test
    (eps_emp at most the claim): the claim's test refuted the stated profile."""
    return (
        result.verdict == Verdict.VIOLATION
        and result.eps_emp is not None
        and result.eps_emp <= result.eps_claimed
    )


def _violated_words(result: AuditResult) -> str:
    regions = result.regions_violated or ()
    return regions_summary(regions, words=True) if regions else "the claimed region"


def comparison_text(
    result: AuditResult, *, equals: str = "", claimed: str = "claimed"
) -> str:
    """The verdict's comparison in one phrase, true of the numbers it prints:
    ``eps_emp 4.68 > claimed 1``; for a profile refuted while the pair is not,
    ``outside the GDP curve (refutation ratio 17.6); eps_emp 0.96 <= claimed 1``.
    ``equals``: ``"= "`` to write ``eps_emp = 4.68``; ``claimed``: the word(s)
    before the claim (``claimed epsilon``)."""
    eps, claim = fmt_versus(result.eps_emp, result.eps_claimed)
    if _profile_only(result):
        ratio = result.refutation_ratio
        return (
            f"the claim's test puts the test point outside {_violated_words(result)}"
            + (f" (refutation ratio {fmt_number(ratio)})" if ratio is not None else "")
            + f"; the (epsilon, delta) pair alone not refuted: eps_emp {equals}{eps} "
            f"<= {claimed} {claim}"
        )
    above = result.eps_emp is not None and result.eps_emp > result.eps_claimed
    return f"eps_emp {equals}{eps} {'>' if above else '<='} {claimed} {claim}"


def profile_headline(result: AuditResult, *, tail: str) -> str | None:
    """The headline of a VIOLATION of the profile alone (the lines not refuted);
    ``None`` otherwise (the usual headline says it)."""
    if not _profile_only(result):
        return None
    eps, claim = fmt_versus(result.eps_emp, result.eps_claimed)
    return (
        f"VIOLATION: the test point lies outside {_violated_words(result)}"
        f" (mu_emp {fmt_number(result.mu_emp)}, eps_emp {eps} <= claimed {claim}) "
        f"({tail})"
    )


def profile_paragraph(result: AuditResult, *, conf: str) -> str | None:
    """The "what this means" paragraph of a VIOLATION of the profile alone."""
    if not _profile_only(result):
        return None
    eps, claim = fmt_versus(result.eps_emp, result.eps_claimed)
    return (
        "The implementation leaks more than its claimed privacy profile allows: with "
        f"{conf} the {result.attack} attack's error rates lie outside the region the "
        f"claim states ({_violated_words(result)}; "
        f"{claimed_profile_text(result) or 'its (epsilon, delta) lines'}), by the "
        "claim's own test of its whole region. The (epsilon, delta) pair alone was "
        f"not refuted by its own test (eps_emp {eps} <= claimed {claim}), but the "
        "mechanism is not what its accountant says it is: this is a proven violation "
        "of the stated profile, on test rounds the attack never trained on."
    )
