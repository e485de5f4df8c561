"""The verdict: the empirical lower bound against the claim, and the audit's power.

``VIOLATION`` only when eps_emp > claimed epsilon (docs/soundness.md, rule 6): eps_emp
is a lower bound on the true epsilon that holds with the stated confidence, so a bound
above the claim proves, at that confidence, that the claim is false. For a claim that
states a privacy profile (GDP, RDP, zCDP) the rule is the same for its whole region:
VIOLATION when the bounded test point lies outside it, i.e. the refutation ratio
exceeds 1 (:mod:`dpaudit.audit.stats.profile`; docs/soundness.md, "Testing the claim's
profile"). ``INCONCLUSIVE``
when the audit could not have refuted the claim (its attainable maximum does not
exceed it) or has no estimate. ``CONSISTENT`` means this attack, with power to refute
the claim, found no violation; it is not a proof of privacy.
"""

from __future__ import annotations

import math

from dpaudit.audit.result.model import AttackResult, Claim, Verdict
from dpaudit.audit.result.regions import WHOLE_CLAIM, orders_span, regions_summary


def _missing(value: float | None) -> bool:
    return value is None or math.isnan(value)


def decide(
    *,
    eps_emp: float | None,
    eps_claimed: float | None,
    eps_max_attainable: float | None,
    refutation_ratio: float | None = None,
    profile_refutable: bool | None = None,
) -> Verdict:
    """The verdict rule.

    ``VIOLATION`` iff ``eps_emp > eps_claimed``; else ``INCONCLUSIVE`` when a number
    is missing or ``eps_max_attainable <= eps_claimed`` (no outcome of this audit could
    have refuted the claim); else ``CONSISTENT``.

    For a claim with a profile (``refutation_ratio`` given): ``VIOLATION`` iff the
    ratio exceeds 1 (the lines are part of it, so this includes ``eps_emp >
    eps_claimed``); else ``INCONCLUSIVE`` when not even a perfect attack could have
    refuted the region (``profile_refutable`` false); else ``CONSISTENT``.

    >>> decide(eps_emp=0.8, eps_claimed=1.0, eps_max_attainable=4.4,
    ...        refutation_ratio=1.3, profile_refutable=True).value
    'VIOLATION'

    >>> decide(eps_emp=4.68, eps_claimed=1.0, eps_max_attainable=4.68).value
    'VIOLATION'
    >>> decide(eps_emp=0.3, eps_claimed=1.0, eps_max_attainable=4.68).value
    'CONSISTENT'
    >>> decide(eps_emp=0.3, eps_claimed=1.0, eps_max_attainable=0.535).value
    'INCONCLUSIVE'
    >>> decide(eps_emp=None, eps_claimed=1.0, eps_max_attainable=4.68).value
    'INCONCLUSIVE'
    """
    if refutation_ratio is not None and not _missing(eps_claimed):
        if refutation_ratio > 1.0:
            return Verdict.VIOLATION
        return Verdict.CONSISTENT if profile_refutable else Verdict.INCONCLUSIVE
    if _missing(eps_emp) or _missing(eps_claimed):
        return Verdict.INCONCLUSIVE
    assert eps_emp is not None and eps_claimed is not None
    if eps_emp > eps_claimed:
        return Verdict.VIOLATION
    if _missing(eps_max_attainable) or (
        eps_max_attainable is not None and eps_max_attainable <= eps_claimed
    ):
        return Verdict.INCONCLUSIVE
    return Verdict.CONSISTENT


def saturated(*, eps_emp: float, eps_max_attainable: float, rtol: float = 1e-9) -> bool:
    """Whether the estimate sits at the attainable maximum (zero test errors): more
    rounds could show a larger bound.

    >>> saturated(eps_emp=4.68, eps_max_attainable=4.68), saturated(eps_emp=0.0,
    ...     eps_max_attainable=4.68)
    (True, False)
    """
    return eps_max_attainable > 0 and math.isclose(
        eps_emp, eps_max_attainable, rel_tol=rtol, abs_tol=1e-12
    )


def tightness(
    *, eps_emp: float, eps_reference: float | None, eps_claimed: float | None
) -> float | None:
    """``eps_emp`` over the known bound: the reference epsilon where it is finite,
    else the claim; ``None`` when neither is a positive finite number.

    >>> tightness(eps_emp=0.5, eps_reference=2.0, eps_claimed=1.0)
    0.25
    >>> tightness(eps_emp=0.5, eps_reference=None, eps_claimed=1.0)
    0.5
    """
    for bound in (eps_reference, eps_claimed):
        if bound is not None and math.isfinite(bound) and bound > 0:
            return eps_emp / bound
    return None


def verdict_reason(
    verdict: Verdict,
    *,
    eps_emp: float | None,
    eps_claimed: float | None,
    eps_max_attainable: float | None,
    rounds_needed: int | None = None,
    approximate: bool = False,
    is_saturated: bool = False,
    constant_release: bool = False,
    point: AttackResult | None = None,
    claim: Claim | None = None,
    profile_rounds_needed: int | None = None,
) -> str:
    """One sentence saying why the audit reached ``verdict``.

    ``constant_release``: every round of both worlds gave the same features for every
    attack. Then no attack on this release can separate the worlds, whatever the
    number of rounds: the target changed nothing that was released (on this pair, with
    this public randomness), and a CONSISTENT or INCONCLUSIVE verdict says so rather
    than suggest that more rounds or a stronger attack would help.

    >>> verdict_reason(Verdict.INCONCLUSIVE, eps_emp=0.0, eps_claimed=0.998,
    ...                eps_max_attainable=0.535, rounds_needed=30)  # doctest: +ELLIPSIS
    'INCONCLUSIVE: the largest eps_emp this audit could show (0.535) does not exceed...'
    """

    def f(x: float | None) -> str:
        # a claim of 1e308 is shown as 1e+308, not as 309 digits
        return "n/a" if x is None else f"{x:.3f}" if abs(x) < 1e6 else f"{x:.3g}"

    if claim is not None and point is not None and not _missing(eps_claimed):
        return profile_reason(
            verdict,
            point=point,
            claim=claim,
            approximate=approximate,
            rounds_needed=profile_rounds_needed,
        )
    if verdict is Verdict.VIOLATION:
        text = (
            f"VIOLATION: eps_emp {f(eps_emp)} exceeds the claimed epsilon "
            f"{f(eps_claimed)}"
        )
        if point is not None and not (
            eps_emp is not None and eps_claimed is not None and eps_emp > eps_claimed
        ):
            # The lines' own test refuted them; eps_emp bounds every epsilon at once.
            text = (
                "VIOLATION: the claim's own test refutes its (epsilon, delta) lines: "
                f"the bounded test point (FPR <= {point.fpr_upper or 0.0:.4f}, "
                f"FNR <= {point.fnr_upper or 0.0:.4f}) lies outside them (refutation "
                f"ratio {point.refutation_ratio or 0.0:.3f}); eps_emp {f(eps_emp)}, a "
                "lower bound at the same confidence for every epsilon at once, does "
                f"not exceed the claimed {f(eps_claimed)}"
            )
        if approximate:
            text += (
                " (approximate: found with the Jeffreys interval, not exact coverage)"
            )
        if is_saturated:
            text += (
                "; the estimate is at this audit's attainable maximum, more rounds "
                "could show more"
            )
        return text + "."
    if _missing(eps_emp) or _missing(eps_claimed):
        return "INCONCLUSIVE: the audit produced no estimate or no claim to compare."
    constant = (
        (
            " Every round of both worlds released the same features for every "
            "attack: the target changed nothing in this release, so no attack and no "
            "number of rounds could separate the worlds here (docs/soundness.md, "
            '"The verdicts", on a constant release).'
        )
        if constant_release
        else ""
    )
    if verdict is Verdict.INCONCLUSIVE:
        if constant_release:
            return (
                "INCONCLUSIVE: the largest eps_emp this audit could show "
                f"({f(eps_max_attainable)}) does not exceed the claimed epsilon "
                f"({f(eps_claimed)})." + constant
            )
        need = (
            f"about {rounds_needed} rounds per world would be needed"
            if rounds_needed is not None
            else "no feasible number of rounds would do"
        )
        return (
            f"INCONCLUSIVE: the largest eps_emp this audit could show "
            f"({f(eps_max_attainable)}) does not exceed the claimed epsilon "
            f"({f(eps_claimed)}), so it could not have refuted the claim; {need}."
        )
    if (
        eps_max_attainable is not None
        and eps_claimed is not None
        and eps_max_attainable <= eps_claimed
    ):
        # A claim of the lines alone whose own test reaches further than eps_emp.
        return (
            f"CONSISTENT: eps_emp {f(eps_emp)} does not exceed the claimed epsilon "
            f"{f(eps_claimed)}; a perfect attack would have refuted the claim by its "
            "own test with these test rounds (though eps_emp could show at most "
            f"{f(eps_max_attainable)}); these attacks did not, and this is no proof "
            "of privacy." + constant
        )
    return (
        f"CONSISTENT: eps_emp {f(eps_emp)} does not exceed the claimed epsilon "
        f"{f(eps_claimed)}, although a perfect attack could have shown up to "
        f"{f(eps_max_attainable)} with these test rounds (the attainable maximum); "
        "these attacks did not, and this is no proof of privacy." + constant
    )


def _regions_text(claim: Claim) -> str:
    parts = [f"(epsilon {claim.epsilon:.3g}, delta {claim.delta:.3g}) lines"]
    if claim.gdp_mu is not None:
        parts.append(f"mu {claim.gdp_mu:.3g} GDP curve")
    if claim.rdp:
        parts.append(f"RDP curve at {orders_span(claim.rdp.get('orders') or ())}")
    if claim.zcdp_rho is not None:
        parts.append(f"rho {claim.zcdp_rho:.3g} zCDP")
    return ", ".join(parts)


def _profile_detail(point: AttackResult, claim: Claim) -> str:
    """How far outside the profile's regions the corner lies, in the figures the
    report shows: mu_emp against mu where GDP is named, else the ratio alone."""
    regions = point.regions_violated
    if "gdp" in regions and (point.mu_emp or 0.0) > (claim.gdp_mu or 0.0):
        return f"mu_emp {point.mu_emp:.3f} > mu {claim.gdp_mu:.3f}; "
    return ""


def profile_reason(
    verdict: Verdict,
    *,
    point: AttackResult,
    claim: Claim,
    approximate: bool = False,
    rounds_needed: int | None = None,
) -> str:
    """One sentence for a claim that states a privacy profile: where the bounded test
    point of the claim's calibrated test lies against the claimed regions, naming the
    violated ones (the RDP orders as one span), and what the (epsilon, delta) pair's
    own test says (its eps_emp), so that no region is called violated by a test that
    was not calibrated for it.

    >>> from dpaudit.audit.stats.estimators import AttackCounts
    >>> head = AttackResult(name="x", eps_emp=0.8, mu_emp=1.3, fpr_upper=0.02,
    ...     fnr_upper=0.6, refutation_ratio=1.4, regions_violated=("gdp",),
    ...     counts=AttackCounts(tp=1, fp=0, tn=1, fn=0))
    >>> print(profile_reason(Verdict.VIOLATION, point=head,
    ...     claim=Claim(epsilon=1.0, delta=1e-5, gdp_mu=0.925)))  # doctest: +ELLIPSIS
    VIOLATION: the stated profile is refuted: ...outside the GDP curve (mu_emp 1.300 > mu 0.925; refutation ratio 1.400). The (epsilon, delta) pair alone is not: its own test gives eps_emp 0.800, which does not exceed the claimed epsilon 1.000.
    """
    where = (
        f"the bounded test point (FPR <= {point.fpr_upper or 0.0:.4f}, "
        f"FNR <= {point.fnr_upper or 0.0:.4f})"
    )
    ratio = point.refutation_ratio or 0.0
    eps = point.eps_emp or 0.0
    if verdict is Verdict.VIOLATION:
        regions = point.regions_violated
        profile = [r for r in regions if r != "lines"]
        pair_refuted = "lines" in regions
        what = (
            "the stated profile is refuted"
            if profile
            else "the claimed region is refuted"
        )
        text = (
            f"VIOLATION: {what}: the claim's {'' if approximate else 'calibrated '}"
            "test (of its whole region, "
            f"the (epsilon, delta) lines and the stated profile together) puts {where} "
            f"outside {regions_summary(profile or [WHOLE_CLAIM], words=True)} "
            f"({_profile_detail(point, claim)}refutation ratio {ratio:.3f})"
        )
        if approximate:
            text += " (approximate: Jeffreys interval, not exact coverage)"
        if pair_refuted:
            return (
                text + ". The (epsilon, delta) pair's own test refutes it too: "
                f"eps_emp {eps:.3f} > claimed epsilon {claim.epsilon:.3f}."
            )
        return (
            text + ". The (epsilon, delta) pair alone is not: its own test gives "
            f"eps_emp {eps:.3f}, which does not exceed the claimed epsilon "
            f"{claim.epsilon:.3f}."
        )
    if verdict is Verdict.INCONCLUSIVE:
        need = (
            f"about {rounds_needed} rounds per world would be needed"
            if rounds_needed is not None
            else "no feasible number of rounds would do"
        )
        return (
            "INCONCLUSIVE: not even a perfect attack could have refuted the claimed "
            f"region ({_regions_text(claim)}) with these test rounds; {need}."
        )
    return (
        f"CONSISTENT: {where} lies inside every claimed region ({_regions_text(claim)}):"
        f" refutation ratio {ratio:.3f}, eps_emp {eps:.3f}, mu_emp "
        f"{point.mu_emp or 0.0:.3f}; a perfect attack could have refuted the claim "
        "with these test rounds, these attacks did not, and this is no proof of privacy."
    )


def contradiction(
    *,
    verdict: Verdict,
    eps_emp: float | None,
    eps_claimed: float | None,
    eps_max_attainable: float | None,
    schema_version: int = 2,
    refutation_ratio: float | None = None,
    lines_ratio: float | None = None,
) -> str | None:
    """What is wrong when a recorded ``verdict`` is not the one :func:`decide` gives
    for the recorded numbers (a hand-edited or corrupt ``result.json``), else None.

    A version-1 document had no attainable maximum and no INCONCLUSIVE for a weak
    audit: only ``VIOLATION iff eps_emp > eps_claimed`` is checked there. For a claim
    that states a privacy profile (``refutation_ratio`` given) only ``VIOLATION iff
    refutation_ratio > 1`` is checked (whether a perfect attack could have refuted
    the region is not recorded apart from the verdict). For a claim of the lines
    alone decided by its own test (``lines_ratio``, its recorded ratio): VIOLATION
    iff that ratio exceeds 1, every eps_emp above the claim a VIOLATION (its test
    rejects whatever the eps family does) and no INCONCLUSIVE where the attainable
    maximum exceeds the claim; CONSISTENT is allowed below it (the test reaches
    further than the family).

    >>> contradiction(verdict=Verdict.VIOLATION, eps_emp=0.9, eps_claimed=1.0,
    ...               eps_max_attainable=0.95, lines_ratio=1.1) is None
    True

    >>> contradiction(verdict=Verdict.CONSISTENT, eps_emp=99.0, eps_claimed=1.0,
    ...               eps_max_attainable=4.68)  # doctest: +ELLIPSIS
    'its verdict CONSISTENT contradicts its numbers (eps_emp 99, ...gives VIOLATION)'
    >>> contradiction(verdict=Verdict.CONSISTENT, eps_emp=0.5, eps_claimed=1.0,
    ...               eps_max_attainable=4.68) is None
    True
    """
    expected = decide(
        eps_emp=eps_emp,
        eps_claimed=eps_claimed,
        eps_max_attainable=eps_max_attainable,
        refutation_ratio=refutation_ratio,
        profile_refutable=True,
    )
    if lines_ratio is not None and refutation_ratio is None and schema_version >= 2:
        refuted = lines_ratio > 1.0
        if expected is Verdict.VIOLATION or refuted:
            expected = Verdict.VIOLATION
        elif expected is Verdict.INCONCLUSIVE and verdict is Verdict.CONSISTENT:
            expected = (
                Verdict.CONSISTENT
            )  # its own test reached what the family did not
        if expected is verdict and refuted == (verdict is Verdict.VIOLATION):
            return None
        refutation_ratio = lines_ratio  # named in the message
    elif schema_version < 2 or refutation_ratio is not None:
        expected_violation = expected is Verdict.VIOLATION
        if expected_violation == (verdict is Verdict.VIOLATION):
            return None
    elif expected is verdict:
        return None

    def f(x: float | None) -> str:
        return "n/a" if x is None else f"{x:g}"

    ratio = (
        "" if refutation_ratio is None else f", refutation ratio {f(refutation_ratio)}"
    )
    return (
        f"its verdict {verdict.value} contradicts its numbers (eps_emp {f(eps_emp)}, "
        f"claimed epsilon {f(eps_claimed)}, attainable maximum "
        f"{f(eps_max_attainable)}{ratio}: the verdict rule gives {expected.value})"
    )
