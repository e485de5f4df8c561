"""Number formatting and the plain-language reading of a result.

Shared by the HTML and Markdown renderers so both say the same thing. Everything
here restates numbers already in the result; nothing is estimated.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dpaudit.audit.result import Verdict, thaw
from dpaudit.errors import InvalidParameterError
from dpaudit.reports.model import AuditResult
from dpaudit.reports.wording import (
    LOW_FPRS,
    attack_set_text,
    attainable,
    claim_extra_rows,
    confidence_text,
    fmt_alpha,
    fmt_eps,
    fmt_number,
    fmt_percent,
    fmt_reference,
    fmt_value,
    overall_confidence,
    per_attack_confidence,
    resolution_text,
    test_size,
    tpr_cell,
    warning_lines,
)

__all__ = [
    "DATA_NOTICE",
    "VERDICT_ANSI",
    "Table",
    "approximate_note",
    "attainable",
    "explain",
    "flatten",
    "fmt_alpha",
    "fmt_eps",
    "fmt_number",
    "fmt_percent",
    "fmt_value",
    "headline",
    "power_rows",
    "randomness_text",
    "render_terminal",
    "rounds_text",
    "tables_of",
    "test_size",
    "utility_tables",
]

#: What every report says about the data it contains.
DATA_NOTICE = (
    "This report contains no training data except the one target record shown: the "
    "numbers are attack scores, error counts and settings."
)


#: The columns of a comparison table (one row per audit and attack), shared by the
#: HTML and Markdown renderers.
COMPARISON_COLUMNS = (
    "audit",
    "verdict",
    "generator",
    "variant",
    "bug flags",
    "dataset",
    "attack",
    "eps_emp",
    "claimed",
    "reference",
    "max attainable",
    "AUC",
)


def rounds_text(result: AuditResult) -> str:
    """``2000 rounds (1000 per world): train 800, validation 400, test 800``."""
    r = result.rounds
    per_world = f" ({r.per_world} per world)" if r.per_world is not None else ""
    return (
        f"{r.total} rounds{per_world}: train {r.train}, validation {r.validation}, "
        f"test {r.test}"
    )


def approximate_note(result: AuditResult) -> str | None:
    """``approximate (Jeffreys)`` for a VIOLATION found with an interval of inexact
    coverage; ``None`` otherwise."""
    if not (result.approximate and result.verdict == Verdict.VIOLATION):
        return None
    method = result.estimator.method
    name = "Jeffreys" if "jeffreys" in method.lower() else method
    return f"approximate ({name})"


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
            text += (
                f"; public candidate {chosen} of {len(result.public_selection)}, "
                f"chosen on selection rounds (pool AUC {best.auc:.3f})"
            )
        elif chosen:
            text += f"; public candidate {chosen}"
        return text
    if result.randomness == "independent":
        return "independent (every round draws all its randomness afresh)"
    return "not recorded"


def _rounds_needed(result: AuditResult) -> int | None:
    if result.verdict != Verdict.INCONCLUSIVE or result.power is None:
        return None
    return result.power.rounds_needed


def _tightness(result: AuditResult) -> tuple[float, str] | None:
    if result.power is None or result.power.tightness is None:
        return None
    if result.eps_reference is not None and math.isfinite(result.eps_reference):
        return (
            result.power.tightness,
            f"reference epsilon {fmt_number(result.eps_reference)}",
        )
    return result.power.tightness, f"claimed epsilon {fmt_number(result.eps_claimed)}"


def power_rows(result: AuditResult) -> list[tuple[str, str]]:
    """How strong the audit was, as ``(name, text)`` rows shared by every renderer.

    The verdict's reason, the attainable maximum, the rounds per world needed (when
    INCONCLUSIVE), saturation, tightness (where a reference or claim is finite), an
    approximate VIOLATION's interval and the randomness mode. Only what the result
    records; keys a version-1 result lacks are left out or said "not recorded".
    """
    rows: list[tuple[str, str]] = []
    if result.verdict_reason:
        rows.append(("verdict reason", result.verdict_reason))
    rows.append(
        (
            "attainable maximum",
            f"{fmt_eps(attainable(result))} (the largest eps_emp {test_size(result)} "
            "can show: no claim at or above it can be refuted)",
        )
    )
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
        rows.append(
            (
                "constant release",
                "the same release in every round of both "
                "worlds: no attack or number of rounds can separate them",
            )
        )
    tight = _tightness(result)
    if tight is not None:
        rows.append(("tightness", f"{tight[0]:.2f} (eps_emp / {tight[1]})"))
    note = approximate_note(result)
    if note is not None:
        rows.append(("estimate", note))
    rows.append(("randomness", randomness_text(result)))
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
            f"at most {fmt_eps(attainable(result))} <= claimed {claim}: it could not "
            "have refuted the claim"
        )
    relation = ">" if result.verdict == Verdict.VIOLATION else "<="
    note = approximate_note(result)
    extra = f", {note}" if note else ""
    return (
        f"{result.verdict}: eps_emp {fmt_eps(result.eps_emp)} {relation} claimed "
        f"{claim} ({result.attack}, {conf}{extra})"
    )


def explain(result: AuditResult) -> list[str]:
    """The "what this means" paragraphs, generated from the result's numbers.

    Args:
        result: The audit result.

    Returns:
        Plain-text paragraphs (callers escape them for their format).
    """
    conf = confidence_text(result)
    claim = fmt_number(result.eps_claimed)
    eps = fmt_eps(result.eps_emp)
    top_value = attainable(result)
    top = fmt_eps(top_value)
    size = test_size(result)
    paragraphs: list[str] = []
    if result.verdict == Verdict.VIOLATION:
        paragraphs.append(
            f"The implementation leaks more than it claims: with {conf} "
            f"epsilon is at least {eps}, above the claimed {claim}. This is a proven "
            f"violation, not a suspicion: the {result.attack} attack told apart models "
            "trained with and without the target record more reliably than any "
            f"({claim}, {fmt_alpha(result.delta)})-DP generator allows, on test rounds "
            "it never trained on."
        )
        if approximate_note(result):
            paragraphs.append(
                "This bound used the Jeffreys interval, whose coverage is not exact (it "
                "may overshoot slightly more often than alpha): the violation is "
                "approximate. Rerun with the Clopper-Pearson estimator for a proof."
            )
    elif result.verdict == Verdict.CONSISTENT:
        paragraphs.append(
            f"No violation found: with {conf} epsilon is at least {eps}, "
            f"which does not exceed the claimed {claim}. This does NOT prove the "
            f"generator private; it only says that the {result.attack} attack, on this "
            "target record and this dataset, found no violation. A stronger attack, "
            "another target or more rounds may still find one."
        )
        if top_value is not None and top_value > result.eps_claimed:
            paragraphs.append(
                f"At this test size ({size}) the largest epsilon any attack could show "
                f"is {top}, above the claimed {claim}: a perfect attack could have "
                "refuted the claim at this size; these attacks did not. (The attainable "
                "maximum assumes an attack without errors; real attacks show less.)"
            )
        elif top_value is not None:
            paragraphs.append(
                f"At this test size ({size}) the largest epsilon any attack could show "
                f"is {top}, which is not above the claimed {claim}: this audit could "
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
            f"could show is {top}, which is not above the claimed {claim}, so this "
            "audit could not have detected a violation at all, whatever the "
            f"generator does (eps_emp was {eps}). It is NOT evidence of privacy."
        )
        needed = _rounds_needed(result)
        if needed is not None:
            sentence += f" Run at least {needed} rounds per world."
        else:
            sentence += " Run more rounds."
        paragraphs.append(sentence)
    if result.power is not None and result.power.saturated:
        paragraphs.append(
            f"The estimate is saturated: eps_emp equals the attainable maximum {top}, "
            "so the attack made no errors and more rounds would show more."
        )
    if result.power is not None and result.power.constant_release:
        paragraphs.append(
            "Every round of both worlds released the same features for every attack: "
            "the target record changed nothing in this release (on this dataset, with "
            "this public randomness), so no attack and no number of rounds could "
            "separate the worlds here. Another target, another dataset or another "
            "public seed (--public-seed auto) may still reach the release."
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


@dataclass(frozen=True, kw_only=True, slots=True)
class Table:
    """A table of text cells for the renderers.

    Attributes:
        caption: what the table shows (may be empty).
        headers: column headers.
        rows: rows of cells, as many as headers.
    """

    caption: str
    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


def _is_scalar(value: Any) -> bool:
    return not isinstance(value, Mapping | list | tuple)


def flatten(mapping: Mapping[str, Any], prefix: str = "") -> list[tuple[str, str]]:
    """``(dotted.key, text)`` for every leaf of a nested mapping (lists kept whole)."""
    out: list[tuple[str, str]] = []
    for key, value in mapping.items():
        name = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(value, Mapping) and value:
            out.extend(flatten(value, name))
        else:
            out.append((name, fmt_value(value)))
    return out


def tables_of(
    value: Mapping[str, Any], caption: str = "", depth: int = 0
) -> list[Table]:
    """Tables of a nested mapping of results (e.g. the utility benchmark).

    A mapping of flat mappings (``{classifier: {metric: value}}``) becomes one matrix;
    scalars at one level become a two-column table; deeper levels get their own
    tables, captioned with their key path.
    """
    inner = list(value.values())
    if inner and all(
        isinstance(v, Mapping) and all(map(_is_scalar, v.values())) for v in inner
    ):
        columns: list[str] = []
        for v in inner:
            columns.extend(str(k) for k in v if str(k) not in columns)
        rows = tuple(
            (str(key), *(fmt_value(v.get(c)) for c in columns))
            for key, v in value.items()
        )
        return [Table(caption=caption, headers=("", *columns), rows=rows)]
    if depth >= 3:
        rows = tuple(flatten(value))
        return [Table(caption=caption, headers=("key", "value"), rows=rows)]
    tables: list[Table] = []
    flat = tuple(
        (str(k), fmt_value(v)) for k, v in value.items() if not isinstance(v, Mapping)
    )
    if flat:
        tables.append(Table(caption=caption, headers=("key", "value"), rows=flat))
    for key, v in value.items():
        if isinstance(v, Mapping) and v:
            sub = f"{caption} / {key}" if caption else str(key)
            tables.extend(tables_of(v, sub, depth + 1))
    return tables


_SETTING_NAMES: Mapping[str, str] = {
    "A": "A (real → real)",
    "B": "B (synthetic → real)",
    "C": "C (synthetic → synthetic)",
}
_UTILITY_FACTS = (
    "dataset",
    "label",
    "protocol",
    "generator",
    "epsilon",
    "delta",
    "n_models",
    "n_samples",
    "n_train_rows",
    "n_test_rows",
    "sra_auroc",
    "sra_auprc",
)


def _with_std(mean: float | None, std: float | None) -> str:
    if mean is None:
        return "—"
    text = fmt_number(mean)
    return text if std is None else f"{text} ± {fmt_number(std, 2)}"


def utility_tables(utility: Mapping[str, Any]) -> list[Table]:
    """Tables of a utility result (``utility.json``, format ``dpaudit.utility/1``,
    read with :meth:`dpaudit.utility.results.UtilityResult.from_json`).

    Classifier scores become one table (a row per classifier, AUROC and AUPRC per
    setting), the per-setting means another, and the run's facts a third. A mapping
    that is not a utility result is shown with :func:`tables_of`.
    """
    from dpaudit.utility.results import UtilityResult

    try:
        result = UtilityResult.from_json(thaw(utility))
    except (InvalidParameterError, KeyError, TypeError, ValueError):
        return tables_of(utility)
    if not result.scores:
        return tables_of(utility)
    settings = list(dict.fromkeys(s.setting for s in result.scores))
    classifiers = list(dict.fromkeys(s.classifier for s in result.scores))
    cells = {(s.classifier, s.setting): s for s in result.scores}
    headers = ["classifier"]
    for setting in settings:
        name = _SETTING_NAMES.get(setting, str(setting))
        headers += [f"{name} AUROC", f"{name} AUPRC"]
    rows = []
    for classifier in classifiers:
        row = [classifier]
        for setting in settings:
            cell = cells.get((classifier, setting))
            if cell is None:
                row += ["—", "—"]
            elif cell.auroc is None and cell.status:
                row += [cell.status, ""]
            else:
                row += [
                    _with_std(cell.auroc, cell.auroc_std),
                    _with_std(cell.auprc, cell.auprc_std),
                ]
        rows.append(tuple(row))
    tables = [
        Table(
            caption="Classifiers trained on each setting's data, tested on "
            "held-out data (mean ± std over runs)",
            headers=tuple(headers),
            rows=tuple(rows),
        ),
        Table(
            caption="Mean over classifiers, per setting",
            headers=("", "auroc", "auprc", "n_classifiers"),
            rows=tuple(
                (
                    _SETTING_NAMES.get(s, str(s)),
                    fmt_value(result.mean(s, "auroc")),
                    fmt_value(result.mean(s, "auprc")),
                    str(result.n_averaged(s)),
                )
                for s in settings
            ),
        ),
    ]
    facts = tuple(
        (k, fmt_value(getattr(result, k)))
        for k in _UTILITY_FACTS
        if getattr(result, k) is not None
    )
    tables.append(Table(caption="Utility run", headers=("key", "value"), rows=facts))
    return tables


#: ANSI colours of the verdicts in a terminal (INCONCLUSIVE amber, not green).
VERDICT_ANSI: Mapping[str, str] = {
    "VIOLATION": "\033[1;31m",
    "CONSISTENT": "\033[1;32m",
    "INCONCLUSIVE": "\033[1;33m",
}


def render_terminal(result: AuditResult, *, color: bool = False) -> str:
    """The result as the terminal shows it after ``dpaudit audit``.

    Args:
        result: The audit result.
        color: Colour the verdict with ANSI codes (red, green, amber).

    Returns:
        Plain text, one fact a line, ending with a newline.
    """
    word = str(result.verdict)
    if color:
        word = f"{VERDICT_ANSI.get(word, '')}{word}\033[0m"
    conf = confidence_text(result)
    lines = [
        f"audit of {result.label} on {result.dataset}, {attack_set_text(result)}, "
        f"{rounds_text(result)}",
        f"  verdict                {word}",
        *(f"  {w}" for w in warning_lines(result)),
        f"  eps_emp                {fmt_eps(result.eps_emp)} (lower bound, {conf})",
        f"  claimed epsilon        {fmt_number(result.eps_claimed)} "
        f"(delta {fmt_alpha(result.delta)})",
        f"  reference epsilon      {fmt_reference(result)}",
        f"  AUC                    {fmt_number(result.auc)}",
    ]
    lines += [f"  {name:<22} {text}" for name, text in power_rows(result)]
    c = result.counts
    lines.append(f"  TP / FP / TN / FN      {c.tp} / {c.fp} / {c.tn} / {c.fn}")
    for attack in result.attacks.values():
        low = ", ".join(
            f"TPR@{fmt_percent(fpr)} {tpr_cell(attack, fpr)}" for fpr in LOW_FPRS
        )
        lines.append(
            f"    {attack.name:<20} eps_emp {fmt_eps(attack.eps_emp)}, "
            f"AUC {fmt_number(attack.auc)}, {low}"
        )
    resolution = resolution_text(result)
    lines += [f"  claim.extra.{k:<10} {v}" for k, v in claim_extra_rows(result)]
    seconds = result.timing.total_seconds
    if seconds is not None:
        lines.append(f"  wall time              {seconds:.1f} s")
    for paragraph in [*explain(result), *([resolution] if resolution else [])]:
        lines += ["", *textwrap.wrap(paragraph, width=88)]
    return "\n".join(lines) + "\n"
