"""How every report says a one-run audit (``game = "one-run"``).

The shared vocabulary (:func:`dpaudit.reports.wording.rounds_text`,
:func:`dpaudit.reports.meaning.power_rows` and :func:`~dpaudit.reports.meaning.explain`)
hands a one-run result to these functions, so the terminal, Markdown and HTML reports
all state the game, the canaries, the guesses and the correct guesses. Nothing here
computes a new number.
"""

from __future__ import annotations

from dpaudit.audit.result import OneRunSummary, Verdict
from dpaudit.reports.measurements_text import measurement_rows
from dpaudit.reports.model import AuditResult
from dpaudit.reports.numbers import fmt_eps, fmt_number, fmt_versus

__all__ = [
    "one_run_explain",
    "one_run_rounds",
    "one_run_rows",
    "one_run_test_size",
]


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def one_run_rounds(result: AuditResult) -> str:
    """``one-run game: 1 fit, 1000 canaries`` (what the two-world game calls its
    rounds)."""
    s = result.one_run
    assert s is not None
    return (
        f"one-run game: {_plural(s.fits, 'fit')}, {_plural(s.canaries, 'canary')}"
    ).replace("canarys", "canaries")


def one_run_rows(result: AuditResult) -> list[tuple[str, str]]:
    """The ``(name, text)`` rows of a one-run audit's power table."""
    s = result.one_run
    assert s is not None
    rows: list[tuple[str, str]] = []
    if result.verdict_reason:
        rows.append(("verdict reason", result.verdict_reason))
    per_fit = f"{s.canaries_per_fit} per fit" if s.fits > 1 else "one fit"
    rows += [
        ("game", "one-run (the game of Steinke, Nasr and Jagielski, NeurIPS 2023)"),
        ("bound", _bound_text(s)),
        *([("every bound", _every_bound_text(s))] if s.bounds else []),
        (
            "canaries",
            f"{s.canaries} ({per_fit}; {s.included} included, each with probability "
            f"1/2; {s.canary_kind} canaries scored by {s.score})",
        ),
        ("guesses", _guesses_text(s)),
        (
            "correct",
            f"{s.correct} of {s.guesses} ({s.correct_in} 'in', {s.correct_out} 'out')",
        ),
        (
            "attainable maximum",
            f"{fmt_eps(s.eps_max_attainable)} (every guess correct: no claim at or "
            "above it can be refuted with these guesses)",
        ),
    ]
    # A white-box audit (--release transcript): the stated measurements' privacy.
    return rows + measurement_rows(result)


def _bound_text(s: OneRunSummary) -> str:
    """The bound that turned the correct guesses into eps_emp (and mu_emp)."""
    if s.bound == "steinke":
        return "steinke: Steinke, Nasr and Jagielski's (epsilon, delta) bound"
    what = {
        "fdp": "fdp: trade-off curves tested against the guess count",
        "order": "order: trade-off curves tested at nested guess counts, a union "
        "bound over them",
    }.get(s.bound, s.bound)
    mu = "" if s.mu_emp is None else f"; mu_emp {fmt_number(s.mu_emp)}"
    curve = f"its lines and {s.claim_curve or 'mu-GDP'}"
    refuted = {
        True: f"; the claim's curve ({curve}) is rejected",
        False: f"; the claim's curve ({curve}) is not rejected",
        None: "",
    }[s.claim_refuted]
    return f"{what} (docs/onerun.md){mu}{refuted}"


def _every_bound_text(s: OneRunSummary) -> str:
    """Each sound bound's eps_emp (and attainable maximum) from the same guesses:
    the configured one decides, the others are descriptive."""
    figures = "; ".join(
        f"{b.bound} {fmt_eps(b.eps_emp)} of at most {fmt_eps(b.eps_max_attainable)}"
        + (" (decides)" if b.decides else "")
        for b in s.bounds
    )
    return (
        f"eps_emp from the same guesses: {figures}. Only the configured bound, fixed "
        "before any fit, decides the verdict; the others are descriptive "
        "(docs/soundness.md)"
    )


def _guesses_text(s: OneRunSummary) -> str:
    """How many guesses the rule that gave eps_emp made, and why that many."""
    made = f"{s.guesses} ({s.guesses_in} 'in', {s.guesses_out} 'out'"
    if s.rule == "threshold":
        passed = next((r.passed for r in s.rules if r.rule == "threshold"), None)
        made += (
            f"; threshold rule: {passed} canaries reached the score's threshold, "
            "fixed before any fit, rounded down to a guess count of a grid fixed "
            "in advance"
        )
    elif s.guesses_planned:
        made += (
            "; count rule: the numbers planned from the configuration before any "
            f"fit, on the Gaussian at the configured epsilon (mu {s.planning_mu or 0.0:.3f})"
        )
    else:
        made += "; count rule: the numbers fixed before any release"
    others = [r for r in s.rules if r.rule != s.rule]
    for r in others:
        made += (
            f"; the {r.rule} rule, at its own share of alpha, had {r.correct} of "
            f"{r.guesses_in + r.guesses_out} right: eps_emp {fmt_eps(r.eps_emp)}"
        )
    return made + "; the other canaries abstained)"


def one_run_explain(result: AuditResult) -> list[str]:
    """The "what this means" paragraphs of a one-run audit."""
    s = result.one_run
    assert s is not None
    claim = fmt_number(result.eps_claimed)
    eps_vs, claim_vs = fmt_versus(result.eps_emp, result.eps_claimed)
    confidence = fmt_number(100 * (1 - result.estimator.alpha))
    game = (
        f"The audit trained {_plural(s.fits, 'model')} on the base table plus "
        f"canaries, each included with probability 1/2, and guessed from the release "
        f"which canaries were in: {s.correct} of {s.guesses} guesses were right."
    )
    if result.verdict == Verdict.VIOLATION and s.claim_refuted:
        return [
            "The implementation leaks more than it claims: the claimed trade-off "
            f"curve (epsilon {claim} and its {s.claim_curve or 'mu-GDP'}) is "
            f"rejected with {confidence}% "
            "confidence. "
            + game
            + " No generator that meets the claimed curve lets that many guesses be "
            "right except with the stated small probability (docs/soundness.md, The "
            "one-run f-DP bound)."
        ]
    if result.verdict == Verdict.VIOLATION:
        return [
            f"The implementation leaks more than it claims: with {confidence}% "
            f"confidence epsilon is at least {eps_vs}, above the claimed {claim_vs}. "
            + game
            + " No (epsilon, delta)-DP generator with epsilon at the claim lets that "
            "many guesses be right except with the stated small probability "
            "(docs/soundness.md, The one-run game)."
        ]
    if result.verdict == Verdict.INCONCLUSIVE:
        return [
            game + f" Even all of them right would show at most "
            f"{fmt_eps(s.eps_max_attainable)}, not above the claimed {claim}: this "
            "audit could not have refuted the claim. Use more canaries, fits or "
            "guesses."
        ]
    sees = (
        "The scores see a canary only through its own released row or value: a "
        "generator that releases aggregates many canaries share (marginals, "
        "histograms) is not seen by this game (docs/onerun.md)."
        if result.measurements is None
        else "The scores see a canary only through the stated answers of its own "
        "cells (answers many canaries share are left out), and the measurements "
        "only: other private steps are not tested (docs/onerun.md)."
    )
    return [
        game + f" That bounds epsilon below only by {eps_vs}, not above the claimed "
        f"{claim_vs}. "
        "This is no proof of privacy: other canaries, scores or the two-world game "
        "may show more. " + sees
    ]


def one_run_test_size(result: AuditResult) -> str:
    """``100 guesses about 1000 canaries`` (what the two-world game calls its test
    rounds)."""
    s = result.one_run
    assert s is not None
    if len(s.rules) > 1:
        rules = " and ".join(r.rule for r in s.rules)
        return f"the {rules} rules' guesses about {s.canaries} canaries"
    return f"{s.guesses} guesses about {s.canaries} canaries"
