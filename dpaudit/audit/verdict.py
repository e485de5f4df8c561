"""The verdict: the empirical lower bound against the claim, and the audit's power.

``VIOLATION`` only when eps_emp > claimed epsilon (docs/soundness.md, rule 6): eps_emp
is a lower bound on the true epsilon that holds with the stated confidence, so a bound
above the claim proves, at that confidence, that the claim is false. ``INCONCLUSIVE``
when the audit could not have refuted the claim (its attainable maximum does not
exceed it) or has no estimate. ``CONSISTENT`` means this attack, with power to refute
the claim, found no violation; it is not a proof of privacy.
"""

from __future__ import annotations

import math

from dpaudit.audit.result import Verdict


def _missing(value: float | None) -> bool:
    return value is None or math.isnan(value)


def decide(
    *,
    eps_emp: float | None,
    eps_claimed: float | None,
    eps_max_attainable: float | None,
) -> Verdict:
    """The verdict rule.

    ``VIOLATION`` iff ``eps_emp > eps_claimed``; else ``INCONCLUSIVE`` when a number
    is missing or ``eps_max_attainable <= eps_claimed`` (no outcome of this audit could
    have refuted the claim); else ``CONSISTENT``.

    >>> decide(eps_emp=4.68, eps_claimed=1.0, eps_max_attainable=4.68).value
    'VIOLATION'
    >>> decide(eps_emp=0.3, eps_claimed=1.0, eps_max_attainable=4.68).value
    'CONSISTENT'
    >>> decide(eps_emp=0.3, eps_claimed=1.0, eps_max_attainable=0.535).value
    'INCONCLUSIVE'
    >>> decide(eps_emp=None, eps_claimed=1.0, eps_max_attainable=4.68).value
    'INCONCLUSIVE'
    """
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
        return "n/a" if x is None else f"{x:.3f}"

    if verdict is Verdict.VIOLATION:
        text = (
            f"VIOLATION: eps_emp {f(eps_emp)} exceeds the claimed epsilon "
            f"{f(eps_claimed)}"
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
    return (
        f"CONSISTENT: eps_emp {f(eps_emp)} does not exceed the claimed epsilon "
        f"{f(eps_claimed)}, although a perfect attack could have shown up to "
        f"{f(eps_max_attainable)} with these test rounds (the attainable maximum); "
        "these attacks did not, and this is no proof of privacy." + constant
    )
