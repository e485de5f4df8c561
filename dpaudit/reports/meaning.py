"""The plain-language reading of a result: its headline, its power, what it means.

Shared by every renderer (HTML, Markdown, terminal, JUnit) so all say the same
thing. Everything here restates numbers already in the result; nothing is
estimated. The paragraphs are plain text: each renderer escapes them for its format.
"""

from __future__ import annotations

import math

from dpaudit.audit.result import Verdict
from dpaudit.audit.stats import claim_dp_text, over_budget_note
from dpaudit.reports.claimview import claim_rows, decide_rounds, reproduce_rows
from dpaudit.reports.games import own_text
from dpaudit.reports.measurements_text import measurement_rows
from dpaudit.reports.model import AuditResult
from dpaudit.reports.numbers import fmt_eps, fmt_number, fmt_percent, fmt_versus
from dpaudit.reports.profile_text import (
    comparison_text,
    profile_headline,
    profile_paragraph,
    profile_rows,
)
from dpaudit.reports.wording import (
    approximate_note,
    attainable,
    confidence_text,
    overall_confidence,
    per_attack_confidence,
    randomness_text,
    release_text,
    test_size,
)

__all__ = ["DATA_NOTICE", "explain", "headline", "power_rows"]

#: What every report says about the data it contains.
DATA_NOTICE = (
    "This report contains no training data except the one target record shown: the "
    "numbers are attack scores, error counts and settings."
)


def _rounds_needed(result: AuditResult) -> int | None:
    if result.verdict != Verdict.INCONCLUSIVE or result.power is None:
        return None
    return result.power.rounds_needed


def _dp_text(result: AuditResult) -> str:
    """The claim as a guarantee, with its own delta (``1-DP (pure epsilon-DP)``)."""
    own = result.claim.delta if result.claim.delta is not None else result.delta
    return claim_dp_text(result.eps_claimed, own)


def _tightness(result: AuditResult) -> tuple[float, str] | None:
    if result.power is None or result.power.tightness is None:
        return None
    if result.eps_reference is not None and math.isfinite(result.eps_reference):
        return (
            result.power.tightness,
            f"reference epsilon {fmt_number(result.eps_reference)}",
        )
    return result.power.tightness, f"claimed epsilon {fmt_number(result.eps_claimed)}"


def _transcript(result: AuditResult) -> bool:
    """Whether the audit attacked a white-box release (the mechanism's answers)."""
    from dpaudit.audit.games import release_for

    return bool(release_for(result.config).white_box)


def _attacks_text(result: AuditResult) -> str:
    """``the distance attack`` or ``the 3 attacks (moments, distance, fingerprint)``:
    every attack that ran, not only the headline."""
    names = list(result.attacks) or [result.attack]
    if len(names) == 1:
        return f"the {names[0]} attack"
    return f"the {len(names)} attacks ({', '.join(names)})"


def _constant_text(result: AuditResult) -> str:
    if _transcript(result):
        return (
            "every transcript exactly as likely in both worlds (likelihood ratio 1 "
            "in every round): no test or number of rounds can separate them"
        )
    return (
        "the same release in every round of both "
        "worlds: no attack or number of rounds can separate them"
    )


def _constant_paragraph(result: AuditResult) -> str:
    if _transcript(result):
        return (
            "Every round's transcript was exactly as likely in both worlds (the "
            "likelihood ratio was 1 in every round: no vote, or no measured count, "
            "differed between the worlds): "
        )
    return "Every round of both worlds released the same features for every attack: "


def _attainable_text(result: AuditResult) -> str:
    """The attainable maximum of the test that decides: for a claim with a profile
    the claim's own test (its refutation ratio for a perfect attack), with the
    (epsilon, delta) pair's own maximum beside it; else the pair's."""
    top = fmt_eps(attainable(result))
    size = test_size(result)
    ratio = None if result.power is None else result.power.ratio_max_attainable
    if ratio is None:
        return (
            f"{top} (the largest eps_emp {size} can show: no claim at or above it "
            "can be refuted)"
        )
    return (
        f"refutation ratio {fmt_number(ratio)} against the claimed region (a "
        f"perfect attack on {size}, by the claim's own test, the one that decides: "
        "it refutes the claim iff the ratio exceeds 1); the (epsilon, delta) pair's "
        f"own test can show eps_emp up to {top} (no pair claimed at or above it can "
        "be refuted by that test alone)"
    )


def power_rows(result: AuditResult) -> list[tuple[str, str]]:
    """How strong the audit was, as ``(name, text)`` rows shared by every renderer.

    The verdict's reason, the attainable maximum, the rounds per world needed (when
    INCONCLUSIVE), saturation, tightness (where a reference or claim is finite), an
    approximate VIOLATION's interval and the randomness mode. Only what the result
    records; keys a version-1 result lacks are left out or said "not recorded".
    A game with its own words has its own rows (:mod:`dpaudit.reports.games`).
    """
    own = own_text(result)
    if own is not None:
        return own.rows(result)
    rows: list[tuple[str, str]] = []
    if result.verdict_reason:
        rows.append(("verdict reason", result.verdict_reason))
    rows.append(("attainable maximum", _attainable_text(result)))
    needed = _rounds_needed(result)
    if needed is not None:
        rows.append(
            (
                "rounds needed",
                f"{needed} per world for the attainable maximum to exceed the "
                f"claimed {fmt_number(result.eps_claimed)}",
            )
        )
    if result.power is not None and result.power.saturated:
        rows.append(("saturated", "saturated: more rounds would show more"))
    if result.power is not None and result.power.constant_release:
        rows.append(("constant release", _constant_text(result)))
    elif result.power is not None:
        rows.append(
            (
                "constant release",
                "no: the release differs between rounds (the data and the privacy "
                "noise reach it)",
            )
        )
    tight = _tightness(result)
    if tight is not None:
        rows.append(("tightness", f"{tight[0]:.2f} (eps_emp / {tight[1]})"))
    note = approximate_note(result)
    if note is not None:
        rows.append(("estimate", note))
    rows.append(("randomness", randomness_text(result)))
    release = release_text(result)
    if release is not None:
        rows.append(("release", release))
    rows += profile_rows(result) + measurement_rows(result)
    # The claim's own terms, and how to reproduce the audit (reports/claimview.py).
    rows += claim_rows(result) + reproduce_rows(result)
    return rows


def headline(result: AuditResult) -> str:
    """One line: ``VIOLATION: eps_emp 4.68 > claimed 1 (querybased, 95% overall
    confidence)``."""
    conf = confidence_text(result)
    claim = fmt_number(result.eps_claimed)
    if result.eps_emp is None:
        return f"INCONCLUSIVE: no estimate of epsilon (claimed {claim})"
    if result.verdict == Verdict.INCONCLUSIVE:
        return (
            f"INCONCLUSIVE: eps_emp {fmt_eps(result.eps_emp)}, but this audit can show "
            f"at most {' <= claimed '.join(fmt_versus(attainable(result), result.eps_claimed))}: it could not "
            "have refuted the claim"
        )
    note = approximate_note(result)
    extra = f", {note}" if note else ""
    profile = profile_headline(result, tail=f"{result.attack}, {conf}{extra}")
    if profile is not None:
        return profile
    return (
        f"{result.verdict}: {comparison_text(result)} ({result.attack}, {conf}{extra})"
    )


def explain(result: AuditResult) -> list[str]:
    """The "what this means" paragraphs, generated from the result's numbers.

    Args:
        result: The audit result.

    Returns:
        Plain-text paragraphs (callers escape them for their format).
    """
    own = own_text(result)
    if own is not None:
        return own.explain(result)
    conf = confidence_text(result)
    claim = fmt_number(result.eps_claimed)
    eps = fmt_eps(result.eps_emp)
    top_value = attainable(result)
    top = fmt_eps(top_value)
    size = test_size(result)
    paragraphs: list[str] = []
    eps_vs, claim_vs = fmt_versus(result.eps_emp, result.eps_claimed)
    top_vs, claim_top = fmt_versus(top_value, result.eps_claimed)
    profile = profile_paragraph(result, conf=conf)
    if profile is not None:
        paragraphs.append(profile)
    elif result.verdict == Verdict.VIOLATION:
        paragraphs.append(
            f"The implementation leaks more than it claims: with {conf} "
            f"epsilon is at least {eps_vs}, above the claimed {claim_vs}. This is a "
            "proven "
            f"violation, not a suspicion: the {result.attack} attack told apart models "
            "trained with and without the target record more reliably than any "
            f"{_dp_text(result)} generator allows, on test rounds it never trained on."
        )
        if approximate_note(result):
            paragraphs.append(
                "This bound used the Jeffreys interval, whose coverage is not exact (it "
                "may overshoot slightly more often than alpha): the violation is "
                "approximate. Rerun with the Clopper-Pearson estimator for a proof."
            )
    elif result.verdict == Verdict.CONSISTENT:
        paragraphs.append(
            f"No violation found: with {conf} epsilon is at least {eps_vs}, "
            f"which does not exceed the claimed {claim_vs}. This does NOT prove the "
            f"generator private; it only says that {_attacks_text(result)}, on this "
            "target record and this dataset, found no violation. A stronger attack, "
            "another target or more rounds may still find one."
        )
        if top_value is not None and top_value > result.eps_claimed:
            paragraphs.append(
                f"At this test size ({size}) the largest epsilon any attack could show "
                f"is {top_vs}, above the claimed {claim_top}: a perfect attack could have "
                "refuted the claim at this size; these attacks did not. (The attainable "
                "maximum assumes an attack without errors; real attacks show less.)"
            )
        elif top_value is not None:
            paragraphs.append(
                f"At this test size ({size}) the largest epsilon any attack could show "
                f"is {top_vs}, which is not above the claimed {claim_top}: this audit could "
                "not have detected a violation at all (a result of schema version 1; "
                "this dpaudit calls such an audit INCONCLUSIVE). Run more rounds."
            )
    elif result.eps_emp is None:
        paragraphs.append(
            "The audit could not produce an estimate of epsilon, so it says nothing "
            f"about the claimed {claim}. Check the run's log and rerun it."
        )
    else:
        sentence = (
            f"Inconclusive: at this test size ({size}) the largest epsilon any attack "
            f"could show is {top_vs}, which is not above the claimed {claim_top}, so this "
            "audit could not have detected a violation at all, whatever the "
            f"generator does (eps_emp was {eps}). It is NOT evidence of privacy."
        )
        needed = _rounds_needed(result)
        if needed is not None:
            sentence += f" Run at least {needed} rounds per world."
        else:
            sentence += " Run more rounds."
        paragraphs.append(sentence)
    need = decide_rounds(result)
    if need is not None:
        paragraphs.append(
            "The attack's errors were one-sided (no false positive, or no false "
            f"negative): an attack keeping these error rates would refute the claim at "
            f"about {need} rounds per world. Rerun with --rounds {need} or more before "
            "reading this CONSISTENT as the claim holding."
        )
    budget_note = over_budget_note(result.eps_claimed, result.config.epsilon)
    if budget_note is not None:
        paragraphs.append(budget_note)
    if result.power is not None and result.power.saturated:
        paragraphs.append(
            f"The estimate is saturated: eps_emp equals the attainable maximum {top}, "
            "so the attack made no errors and more rounds would show more."
        )
    if result.power is not None and result.power.constant_release:
        seeds = (
            f"more public candidates (--public-candidates; {len(result.public_selection)}"
            " were compared)"
            if result.public_selection
            else "another public seed (--public-seed auto)"
        )
        paragraphs.append(
            _constant_paragraph(result)
            + "the target record changed nothing in this release (on this dataset, with "
            "this public randomness), so no attack and no number of rounds could "
            "separate the worlds here. Another target, another dataset or "
            f"{seeds} may still reach the release."
        )
    note = result.claim.reference_note or ""
    if result.eps_reference is None and note.startswith("unbounded"):
        paragraphs.append(
            f"The generator claims epsilon {claim}, but a correct accountant finds no "
            f"finite epsilon for this implementation: {note.removeprefix('unbounded: ')}."
        )
    if result.eps_reference is not None and not math.isnan(result.eps_reference):
        ref = fmt_number(result.eps_reference)
        if result.eps_reference > result.eps_claimed:
            paragraphs.append(
                f"The generator's accountant claims epsilon {claim}; a correct "
                f"(reference) accountant computes {ref} for the same training."
            )
        else:
            paragraphs.append(
                f"A correct (reference) accountant computes epsilon {ref} for the same "
                f"training (claimed: {claim})."
            )
    if result.estimator.several:
        paragraphs.append(
            f"{result.estimator.n_attacks} attacks ran and the largest bound is "
            "reported; each attack's bound holds at "
            f"{fmt_percent(per_attack_confidence(result))} per-attack confidence "
            f"(Bonferroni), so the maximum holds at "
            f"{fmt_percent(overall_confidence(result))} overall confidence. The "
            f"attainable maximum {fmt_eps(attainable(result))} is taken at the "
            "per-attack level."
        )
    return paragraphs
