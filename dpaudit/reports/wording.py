"""The statements every report shares: levels, test sizes, rounds, randomness.

One place says how the audit's two confidence levels are named
(:func:`confidence_text`): the **overall** level holds for the reported (largest)
bound, the **per-attack** level for each attack's own bound (``overall alpha /
number of attacks``, Bonferroni). HTML, Markdown, terminal text, JUnit and the
figures all state levels, sizes and the game's settings through this module (and
numbers through :mod:`dpaudit.reports.numbers`), so no two renderings of one result
can give different confidences. Everything here
restates the result; nothing is estimated.
"""

from __future__ import annotations

import math
from typing import Any

from dpaudit.audit.result import Verdict
from dpaudit.reports.games import own_text
from dpaudit.reports.model import AttackResult, AuditResult
from dpaudit.reports.numbers import fmt_alpha, fmt_number, fmt_percent, fmt_value

__all__ = [
    "approximate_note",
    "attack_set_text",
    "attainable",
    "claim_extra_rows",
    "confidence_text",
    "fmt_reference",
    "level_text",
    "overall_confidence",
    "per_attack_confidence",
    "randomness_text",
    "resolution_text",
    "rounds_text",
    "sequential_text",
    "test_size",
    "tpr_cell",
    "warning_lines",
]


def fmt_reference(result: Any) -> str:
    """The reference epsilon, or ``unbounded`` when a correct accountant finds no
    finite bound (the claim's ``reference_note`` says why), else ``—``."""
    if result.eps_reference is not None:
        return fmt_number(result.eps_reference)
    note = result.claim.reference_note or ""
    return "unbounded" if note.startswith("unbounded") else "—"


def overall_confidence(result: AuditResult) -> float:
    """The confidence of the reported (largest) bound: ``1 - `` the audit's alpha."""
    value = result.estimator.overall_confidence
    return per_attack_confidence(result) if value is None else value


def per_attack_confidence(result: AuditResult) -> float:
    """The confidence of each attack's own bound (after the Bonferroni split)."""
    value = result.estimator.confidence
    return 1.0 - result.estimator.alpha if value is None else value


def confidence_text(result: AuditResult) -> str:
    """The confidence statement of every rendering.

    ``95% overall confidence`` for one attack; with several,
    ``95% overall confidence (98.3% per attack, Bonferroni over 3 attacks)``.
    """
    text = f"{fmt_percent(overall_confidence(result))} overall confidence"
    e = result.estimator
    if e.several:
        text += (
            f" ({fmt_percent(per_attack_confidence(result))} per attack, "
            f"Bonferroni over {e.n_attacks} attacks)"
        )
    return text


def level_text(result: AuditResult) -> str:
    """The levels as alphas: ``overall alpha 0.05 (95% overall confidence); per-attack
    alpha 0.0167 (98.3% per-attack confidence, Bonferroni over 3 attacks)``."""
    e = result.estimator
    text = (
        f"overall alpha {fmt_alpha(e.overall_alpha)} "
        f"({fmt_percent(overall_confidence(result))} overall confidence)"
    )
    if e.several:
        text += (
            f"; per-attack alpha {fmt_number(e.alpha)} "
            f"({fmt_percent(per_attack_confidence(result))} per-attack "
            f"confidence, Bonferroni over {e.n_attacks} attacks)"
        )
    return text


def test_size(result: AuditResult) -> str:
    """The test split in words: ``400 + 400 test rounds`` (without + with the target)."""
    own = own_text(result)
    if own is not None:
        return own.test_size(result)
    n0, n1 = result.estimator.test_non_members, result.estimator.test_members
    if n0 is not None and n1 is not None:
        return f"{n0} + {n1} test rounds"
    return f"{result.rounds.test} test rounds"


def attainable(result: AuditResult) -> float | None:
    """The attainable maximum: ``power.eps_max_attainable``, else the top-level key.

    Computed by the analysis at the per-attack level (the level the reported bound
    was taken at), so every rendering states this one number.
    """
    if result.power is not None and result.power.eps_max_attainable is not None:
        return result.power.eps_max_attainable
    return result.eps_max_attainable


def attack_set_text(result: AuditResult) -> str:
    """The attacks that ran, and which one the verdict reports:
    ``attacks querybased, moments, fingerprint (the default set; headline
    querybased)``, or ``attack querybased`` for one."""
    names = list(result.attacks) or [result.attack]
    if len(names) == 1:
        return f"attack {names[0]}"
    chosen = result.attack_option or ""
    which = {"default": "the default set; ", "all": "every attack; "}.get(chosen, "")
    return f"attacks {', '.join(names)} ({which}headline {result.attack})"


def tpr_cell(attack: AttackResult, fpr: float) -> str:
    """The TPR of ``attack`` at FPR ``fpr`` for a table cell: ``0.12``, ``not
    resolvable`` (fewer non-member test rounds than ``1 / fpr``) or ``—`` (not
    recorded)."""
    for rate in attack.tpr_at_low_fpr:
        if math.isclose(rate.fpr, fpr):
            if not rate.resolvable or rate.tpr is None:
                return "not resolvable"
            return fmt_number(rate.tpr)
    return "—"


def resolution_text(result: AuditResult) -> str:
    """The FPR resolution of the test rounds in words: ``FPR resolution 1/400 =
    0.25%: TPR at FPR 0.1% is not resolvable`` (empty when not recorded)."""
    n0 = result.estimator.test_non_members
    rates = [r for a in result.attacks.values() for r in a.tpr_at_low_fpr]
    if not n0 or not rates:
        return ""
    text = (
        f"TPR at low FPR on the test rounds (the ROC's largest TPR at an FPR no "
        f"larger than the target; descriptive, like the AUC). FPR resolution "
        f"1/{n0} = {fmt_percent(1.0 / n0)}"
    )
    blind = sorted({r.fpr for r in rates if not r.resolvable})
    if blind:
        need = ", ".join(
            f"{fmt_percent(f)} needs at least {math.ceil(1.0 / f - 1e-9)}"
            for f in blind
        )
        text += (
            ": TPR at FPR "
            + " and ".join(fmt_percent(f) for f in blind)
            + f" is not resolvable with {n0} non-member test rounds ({need})"
        )
    return text + "."


def dropped_lines(result: AuditResult) -> list[str]:
    """One line per attack dropped before the test (its validation scores could not
    separate the worlds), saying that its share of alpha went to the others."""
    dropped = result.dropped_attacks or {}
    kept = len(result.attacks)
    return [
        f"{name} dropped before the test: {why}; alpha is split over the {kept} "
        f"attack(s) kept"
        for name, why in dropped.items()
    ]


def classifier_text(attack: AttackResult) -> str:
    """The model a classifier attack trained and what chose it (empty for an
    attack that trains none): ``logistic regression (training AUC 0.76; forest
    0.74)``."""
    choice = attack.classifier
    if choice is None:
        return ""
    kept, other = (
        ("logistic regression", "forest")
        if choice.model == "logistic"
        else ("random forest", "logistic")
    )
    mine = choice.logistic_auc if choice.model == "logistic" else choice.forest_auc
    theirs = choice.forest_auc if choice.model == "logistic" else choice.logistic_auc
    if mine is None:
        return kept
    rest = "" if theirs is None else f"; {other} {fmt_number(theirs)}"
    return f"{kept} (training AUC {fmt_number(mine)}{rest})"


def attack_label(attack: AttackResult, headline: str | None) -> str:
    """An attack's name for a report's table: ``(headline)`` for the headline, and
    the model a classifier attack trained (``moments (headline), logistic
    regression``)."""
    label = attack.name + (" (headline)" if attack.name == headline else "")
    if attack.classifier is not None:
        model = "logistic regression" if attack.classifier.model == "logistic" else ""
        label += f", {model or 'random forest'}"
    return label


def warning_lines(result: AuditResult) -> list[str]:
    """The result's warnings, one sentence each, ``warning: ...``."""
    return [f"warning: {w.message}" for w in result.warnings]


INJECTED_CLAIM_KEYS = ("worker_python",)
"""Keys of ``claim.extra`` that dpaudit adds (the foreign worker's Python version),
not the generator's own."""


def claim_extra_rows(result: AuditResult) -> list[tuple[str, str]]:
    """The generator's own claim keys (``claim.extra``) as ``(key, text)`` rows:
    ``mean 15 (10 to 20) over 2 rounds`` for numbers, the distinct values for the
    rest."""
    rows: list[tuple[str, str]] = []
    for key, summary in result.claim.extra.items():
        if key in INJECTED_CLAIM_KEYS:
            continue  # dpaudit's, not the generator's: the versions row shows it
        rounds = summary.get("rounds")
        over = f" over {rounds} round(s)" if rounds is not None else ""
        if "mean" in summary:
            low, high = summary.get("min"), summary.get("max")
            span = "" if low == high else f" ({fmt_number(low)} to {fmt_number(high)})"
            rows.append(
                (str(key), f"mean {fmt_number(summary.get('mean'))}{span}{over}")
            )
            continue
        values = [fmt_value(v) for v in summary.get("values") or ()]
        distinct = summary.get("distinct", len(values))
        text = ", ".join(values)
        if isinstance(distinct, int) and distinct > len(values):
            text += f", … ({distinct} distinct, {len(values)} shown)"
        # A value may be a sentence: the rounds go in parentheses, not after its stop.
        where = f" (in {rounds} round(s))" if rounds is not None else ""
        rows.append((str(key), text + where))
    return rows


def rounds_text(result: AuditResult) -> str:
    """``2000 rounds (1000 per world): train 800, validation 400, test 800``."""
    own = own_text(result)
    if own is not None:
        return own.rounds(result)
    r = result.rounds
    per_world = f" ({r.per_world} per world)" if r.per_world is not None else ""
    return (
        f"{r.total} rounds{per_world}: train {r.train}, validation {r.validation}, "
        f"test {r.test}"
    ) + sequential_text(result)


def sequential_text(result: AuditResult) -> str:
    """For a ``--sequential`` audit, how far it ran: ``; stopped after 200 of 1000
    rounds per world (look 2 of 4: a VIOLATION, ...)``; empty otherwise."""
    seq = result.sequential
    if seq is None:
        return ""
    n_looks = len(seq.looks)
    look = seq.looks[seq.decided - 1]
    overall = result.config.alpha
    level = (
        f"this look's bound at level {look.alpha:.4g}, the {n_looks} looks "
        f"together at {overall:g}"
    )
    if seq.stopped_early:
        return (
            f"; stopped after {look.per_world} of {seq.planned_per_world} rounds per "
            f"world (sequential, look {seq.decided} of {n_looks} proved a VIOLATION; "
            f"{level})"
        )
    return (
        f"; sequential: all {seq.planned_per_world} rounds per world ({n_looks} "
        f"looks, none before the last proved a VIOLATION; {level})"
    )


def approximate_note(result: AuditResult) -> str | None:
    """``approximate (Jeffreys)`` for a VIOLATION found with an interval of inexact
    coverage; ``None`` otherwise."""
    if not (result.approximate and result.verdict == Verdict.VIOLATION):
        return None
    method = result.estimator.method
    name = "Jeffreys" if "jeffreys" in method.lower() else method
    return f"approximate ({name})"


def release_text(result: AuditResult) -> str | None:
    """What a round released, in words (the release kind's own wording,
    :mod:`dpaudit.audit.games.releases`); None for the synthetic table (the
    default)."""
    from dpaudit.audit.games import release_for

    return release_for(result.config).describe(result.config)


def randomness_text(result: AuditResult) -> str:
    """The game's randomness mode in words."""
    if result.randomness == "fixed_public":
        text = (
            "fixed public randomness (everything but the privacy noise held equal "
            "in every round and both worlds)"
        )
        chosen = result.public_seed
        if result.public_selection:
            best = result.public_selection[0]
            n = len(result.public_selection)
            if best.exact is not None and best.exact.epsilon is not None:
                text += (
                    f"; public candidate {chosen} of {n}, chosen by the canary "
                    f"transcript's exact privacy (exact epsilon {best.exact.epsilon:.3f}"
                    f" at delta {best.exact.delta:g}, mu {best.exact.mu or 0.0:.3f})"
                )
            else:
                text += (
                    f"; public candidate {chosen} of {n}, chosen on selection rounds "
                    f"(pool AUC {best.auc or 0.0:.3f})"
                )
        elif chosen:
            text += f"; public candidate {chosen}"
        return text
    if result.randomness == "independent":
        return "independent (every round draws all its randomness afresh)"
    return "not recorded"
