"""dpaudit's figure next to the study's, and the reason for every difference.

The study's harness had three leaks dpaudit removes (docs/bugs.md, "The study's
harness"; docs/soundness.md, "The rules of the game"):

- on the worst case each model released ``|D|`` records (4 without the target, 5
  with it), so the record count alone revealed membership (dpaudit releases a fixed
  number of rows in both worlds: rule 3);
- bounds were read from the private data for every implementation, also those whose
  own code does not (turing, smartnoise; dpaudit gives them the public domain, rule 2,
  and keeps the leak only where the code has it: the flag ``data_bounds``);
- the larger of two test-set bounds (one per score direction) was reported with no
  correction (dpaudit chooses the direction on validation rounds, rule 4).

:func:`compare` says, for one audit, which of these (and of dpaudit's own test size)
explains a lower figure, why a figure can be higher, and what a verdict of an audit
the study did not run means.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from dpaudit.audit import AuditResult
from dpaudit.audit.result import Verdict
from dpaudit.ci.study.plan import STUDY_ROUNDS, StudyAudit
from dpaudit.generators.registry import REAL_DATA_ITERATIONS, WORST_CASE_ITERATIONS
from dpaudit.reports.numbers import fmt_eps, fmt_number
from dpaudit.reports.profile_text import comparison_text
from dpaudit.reports.wording import attainable

__all__ = ["SAME_WITHIN", "STUDY_MAXIMUM", "Comparison", "compare"]

STUDY_MAXIMUM = 4.68
"""The largest eps_emp the study's 400 + 400 test rounds can show at alpha 0.05."""
SAME_WITHIN = 0.05
"""Figures closer than this are called the same (the study printed two decimals)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Comparison:
    """One row of the study's comparison.

    Attributes:
        audit: the audit.
        verdict: dpaudit's verdict (``ERROR`` when it did not run).
        eps_emp: dpaudit's eps_emp (None: no estimate).
        eps_claimed: the claim dpaudit judged.
        eps_max: the largest eps_emp dpaudit's test size can show.
        published: the study's figure (None: not audited by the study).
        study_verdict: ``VIOLATION`` where the study's figure exceeds its claim of 1.
        relation: ``same``, ``lower``, ``higher``, or ``not in the study``.
        reason: why the figures differ (or agree), in sentences.
        caveats: the short names of the caveats that explain a lower figure.
    """

    audit: StudyAudit
    verdict: str
    eps_emp: float | None
    eps_claimed: float | None
    eps_max: float | None
    published: float | None
    study_verdict: str | None
    relation: str
    reason: str
    caveats: tuple[str, ...] = ()


def _value(x: float | None) -> float:
    return 0.0 if x is None or math.isnan(x) else float(x)


def _release_caveat(result: AuditResult) -> str:
    rows = result.synthetic_rows
    fixed = f"a fixed {rows} rows" if rows is not None else "a fixed number of rows"
    return (
        "release size: the study's worst-case models released |D| records (4 "
        "without the target, 5 with it), so the count alone revealed membership "
        f"and any attack reached {STUDY_MAXIMUM}; dpaudit releases {fixed} in both "
        "worlds (docs/soundness.md, rule 3)"
    )


def _bounds_caveat(audit: StudyAudit) -> str:
    return (
        f"bounds: the study's harness read bounds from the private data for "
        f"{audit.subject} too, whose own code does not, and a record that sets a "
        "column's extreme leaks through the released range; dpaudit gives it the "
        "public domain (docs/soundness.md, rule 2)"
    )


DIRECTION_CAVEAT = (
    "score direction: the study reported the larger of two test-set bounds (one per "
    "score direction) with no correction for the choice, an upward bias; dpaudit "
    "chooses the direction on validation rounds (docs/soundness.md, rule 4)"
)


def _power_caveat(
    result: AuditResult, top: float, published: float, *, eps: float
) -> str:
    per_world = result.rounds.per_world
    rounds = f"{per_world} rounds per world" if per_world else "its rounds"
    text = (
        f"test size: with {rounds} (the study: {STUDY_ROUNDS:,}) dpaudit's audit "
        f"can show at most {fmt_eps(top)}, below the study's {published:.2f}"
    )
    if eps < top - SAME_WITHIN:
        text += (
            f" (this explains only the gap above {fmt_eps(top)}; dpaudit's "
            f"{fmt_eps(eps)} is below what its test size allows)"
        )
    return text


def _iterations_caveat(audit: StudyAudit, result: AuditResult) -> str | None:
    """Set when the audit capped training below the study's cap (``--quick``)."""
    study_cap = (
        WORST_CASE_ITERATIONS if audit.setting == "worst-case" else REAL_DATA_ITERATIONS
    )
    cap = (result.generator_options or {}).get("max_iterations")
    if not isinstance(cap, int) or cap >= study_cap:
        return None
    return (
        f"iterations: training was capped at {cap} iterations (the study: at most "
        f"{study_cap:,}), so the models learn, and leak, less"
    )


def _target_caveat(result: AuditResult) -> str:
    return (
        f"target: dpaudit attacked {_target_text(result)}; the study chose its own "
        "target, and a less vulnerable record gives a lower figure"
    )


def _kept_bounds_note(audit: StudyAudit, result: AuditResult) -> str | None:
    if "data_bounds" in result.bugs:
        return (
            f"dpaudit keeps {audit.subject}'s own data-dependent bounds (flag "
            "data_bounds), so that leak is in both figures"
        )
    return None


def _lower(
    audit: StudyAudit, result: AuditResult, *, eps: float, published: float
) -> tuple[str, tuple[str, ...]]:
    """Why dpaudit's figure is lower: the caveats that apply, the strongest first."""
    top = attainable(result)
    caveats: list[tuple[str, str]] = []
    if top is not None and top < published - SAME_WITHIN:
        caveats.append(("test size", _power_caveat(result, top, published, eps=eps)))
    iterations = _iterations_caveat(audit, result)
    if iterations is not None:
        caveats.append(("iterations", iterations))
    if audit.setting == "worst-case":
        caveats.append(("release size", _release_caveat(result)))
    else:
        caveats.append(("target", _target_caveat(result)))
    if "data_bounds" not in result.bugs and audit.subject != "reference":
        caveats.append(("bounds", _bounds_caveat(audit)))
    caveats.append(("score direction", DIRECTION_CAVEAT))
    names = tuple(name for name, _ in caveats)
    head = (
        f"dpaudit's {fmt_eps(eps)} is lower than the study's {published:.2f}. "
        f"Explained by {', '.join(names[:-1]) + ' and ' if len(names) > 1 else ''}"
        f"{names[-1]}: "
    )
    text = head + "; ".join(text for _, text in caveats) + "."
    kept = _kept_bounds_note(audit, result)
    if kept:
        text += " " + kept + "."
    if (
        top is not None
        and top < published - SAME_WITHIN
        and result.power is not None
        and result.power.saturated
    ):
        text += " dpaudit's figure is saturated: more rounds would show more."
    return text, names


def _target_text(result: AuditResult) -> str:
    if result.target_index is None:
        return "the study's target record"
    candidates = len(result.target_selection or ())
    among = f" of {candidates} candidates" if candidates else ""
    return f"row {result.target_index} (the most vulnerable{among} by --target auto)"


def _higher(
    audit: StudyAudit, result: AuditResult, *, eps: float, published: float
) -> str:
    randomness = (
        "fixed public randomness (everything but the privacy noise held "
        "equal across rounds and worlds, which leaves the attack only the "
        "privacy noise to see through)"
        if result.randomness == "fixed_public"
        else "independent randomness"
    )
    text = (
        f"dpaudit's {fmt_eps(eps)} is higher than the study's {published:.2f}. No "
        "caveat of the study's harness lowers a figure, so the difference is in "
        f"the audit itself: dpaudit used {randomness}"
    )
    if audit.setting == "cervical":
        text += f", and attacked {_target_text(result)}"
    text += (
        "; a higher eps_emp is a lower bound that still holds at the audit's "
        "alpha, so the violation is confirmed, not contradicted."
    )
    kept = _kept_bounds_note(audit, result)
    return text + (" " + kept + "." if kept else "")


def _same(
    audit: StudyAudit, result: AuditResult, *, eps: float, published: float
) -> str:
    top = attainable(result)
    text = f"Same figure: dpaudit {fmt_eps(eps)}, the study {published:.2f}."
    if (
        top is not None
        and abs(eps - top) <= SAME_WITHIN
        and abs(published - STUDY_MAXIMUM) <= SAME_WITHIN
    ):
        text += (
            " Both are the largest value their test sizes can show: the attack "
            "separated the worlds on every test round in both audits"
        )
        text += (
            ", although dpaudit removed the study's release-size leak (the "
            "variant leaks membership on its own)."
            if audit.setting == "worst-case"
            else "."
        )
    kept = _kept_bounds_note(audit, result)
    return text + (" " + kept + "." if kept else "")


def _unpublished(audit: StudyAudit, result: AuditResult) -> str:
    what = (
        "dpaudit's correct reference PATE-GAN"
        if audit.subject == "reference"
        else "G-PATE (dpaudit's implementation, no bug flags)"
    )
    head = f"Not in the study: {what}."
    claim = fmt_number(result.eps_claimed)
    if result.verdict == Verdict.CONSISTENT:
        return (
            f"{head} CONSISTENT: {comparison_text(result)}, with an audit that could have shown up to "
            f"{fmt_eps(attainable(result))}. This does not prove it private "
            "(docs/soundness.md, the verdicts)."
        )
    if result.verdict == Verdict.INCONCLUSIVE:
        needed = result.power.rounds_needed if result.power else None
        more = f"; about {needed} rounds per world would be needed" if needed else ""
        return (
            f"{head} INCONCLUSIVE: this audit could show at most "
            f"{fmt_eps(attainable(result))}, not above the claimed {claim}, so it "
            f"could not have refuted the claim{more}."
        )
    return (
        f"{head} VIOLATION: {comparison_text(result)}. "
        "For a correct generator this happens with probability at most the "
        f"audit's alpha ({fmt_number(result.estimator.alpha)}): investigate."
    )


def compare(
    audit: StudyAudit, result: AuditResult | None, *, error: str | None = None
) -> Comparison:
    """dpaudit's verdict for ``audit`` next to the study's figure, with the reason.

    Args:
        audit: The study's audit.
        result: dpaudit's result (None when the audit did not run).
        error: Why it did not run.

    Returns:
        The :class:`Comparison`.
    """
    published = audit.published
    study_verdict = (
        None
        if published is None
        else ("VIOLATION" if published > 1.0 else "CONSISTENT")
    )
    if result is None:
        return Comparison(
            audit=audit,
            verdict="ERROR",
            eps_emp=None,
            eps_claimed=None,
            eps_max=None,
            published=published,
            study_verdict=study_verdict,
            relation="not run",
            reason=f"dpaudit did not run: {error}.",
        )
    eps = _value(result.eps_emp)
    caveats: tuple[str, ...] = ()
    if published is None:
        relation, reason = "not in the study", _unpublished(audit, result)
    elif abs(eps - published) <= SAME_WITHIN:
        relation, reason = "same", _same(audit, result, eps=eps, published=published)
    elif eps < published:
        relation = "lower"
        reason, caveats = _lower(audit, result, eps=eps, published=published)
    else:
        relation, reason = (
            "higher",
            _higher(audit, result, eps=eps, published=published),
        )
    if study_verdict is not None and result.verdict.value != study_verdict:
        reason += (
            f" Verdicts differ: the study's figure exceeds its claim of 1; "
            f"dpaudit's verdict is {result.verdict.value}"
            + (
                " (its test size could not refute the claim)."
                if result.verdict == Verdict.INCONCLUSIVE
                else "."
            )
        )
    return Comparison(
        audit=audit,
        verdict=result.verdict.value,
        eps_emp=result.eps_emp,
        eps_claimed=result.eps_claimed,
        eps_max=attainable(result),
        published=published,
        study_verdict=study_verdict,
        relation=relation,
        reason=reason,
        caveats=caveats,
    )
