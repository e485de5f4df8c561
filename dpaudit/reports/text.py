"""Number formatting and the plain-language reading of a result.

Shared by the HTML and Markdown renderers so both say the same thing. Everything
here restates numbers already in the result; nothing is estimated.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dpaudit.reports.model import AuditResult

__all__ = [
    "DATA_NOTICE",
    "Table",
    "explain",
    "flatten",
    "fmt_alpha",
    "fmt_eps",
    "fmt_number",
    "fmt_percent",
    "fmt_value",
    "headline",
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


def fmt_eps(value: float | None) -> str:
    """An epsilon with two decimals; an em dash when missing."""
    if value is None or math.isnan(value):
        return "—"
    if math.isinf(value):
        return "∞"
    return f"{value:.2f}"


def fmt_number(value: float | None, digits: int = 3) -> str:
    """A number with ``digits`` significant digits; an em dash when missing."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        return str(value)
    return f"{value:.{digits}g}"


def fmt_percent(value: float) -> str:
    """``0.95`` -> ``95%`` (one decimal only when needed: ``97.5%``)."""
    pct = 100.0 * value
    return f"{pct:.0f}%" if abs(pct - round(pct)) < 1e-9 else f"{pct:.3g}%"


def fmt_alpha(value: float | None) -> str:
    """An alpha or delta, as ``%g``."""
    return "—" if value is None else f"{value:g}"


#: The columns of a comparison table (one row per audit and attack), shared by the
#: HTML and Markdown renderers.
COMPARISON_COLUMNS = ("verdict", "generator", "variant", "bug flags", "dataset", "attack",
                      "eps_emp", "claimed", "reference", "max attainable", "AUC")


def fmt_reference(result: Any) -> str:
    """The reference epsilon, or ``unbounded`` when a correct accountant finds no
    finite bound (the claim's ``reference_note`` says why), else ``—``."""
    if result.eps_reference is not None:
        return fmt_number(result.eps_reference)
    note = str(result.claim.get("reference_note") or "")
    return "unbounded" if note.startswith("unbounded") else "—"


def fmt_value(value: Any) -> str:
    """Any JSON value as short text (strings bare, the rest as JSON)."""
    if isinstance(value, str):
        return value
    if value is None:
        return "—"
    if isinstance(value, float):
        return fmt_number(value, 6)
    if isinstance(value, Mapping):
        value = dict(value)
    if isinstance(value, tuple):
        value = list(value)
    return json.dumps(_plain(value), sort_keys=False, default=str)


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def test_size(result: AuditResult) -> str:
    """The test split in words: ``400 + 400 test rounds`` (without + with the target)."""
    n0, n1 = result.estimator.test_non_members, result.estimator.test_members
    if n0 is not None and n1 is not None:
        return f"{n0} + {n1} test rounds"
    return f"{result.rounds.test} test rounds"


def rounds_text(result: AuditResult) -> str:
    """``2000 rounds (1000 per world): train 800, validation 400, test 800``."""
    r = result.rounds
    per_world = f" ({r.per_world} per world)" if r.per_world is not None else ""
    return (
        f"{r.total} rounds{per_world}: train {r.train}, validation {r.validation}, "
        f"test {r.test}"
    )


def headline(result: AuditResult) -> str:
    """One line: ``VIOLATION: eps_emp 4.68 > claimed 1 (querybased, 95% confidence)``."""
    conf = fmt_percent(result.estimator.confidence)
    claim = fmt_number(result.eps_claimed)
    if result.verdict == "INCONCLUSIVE" or result.eps_emp is None:
        return f"INCONCLUSIVE: no estimate of epsilon (claimed {claim})"
    relation = ">" if result.verdict == "VIOLATION" else "<="
    return (
        f"{result.verdict}: eps_emp {fmt_eps(result.eps_emp)} {relation} claimed "
        f"{claim} ({result.attack}, {conf} confidence)"
    )


def explain(result: AuditResult) -> list[str]:
    """The "what this means" paragraphs, generated from the result's numbers.

    Args:
        result: The audit result.

    Returns:
        Plain-text paragraphs (callers escape them for their format).
    """
    conf = fmt_percent(result.estimator.confidence)
    claim = fmt_number(result.eps_claimed)
    eps = fmt_eps(result.eps_emp)
    top = fmt_eps(result.eps_max_attainable)
    size = test_size(result)
    paragraphs: list[str] = []
    if result.verdict == "VIOLATION":
        paragraphs.append(
            f"The implementation leaks more than it claims: with {conf} confidence "
            f"epsilon is at least {eps}, above the claimed {claim}. This is a proven "
            f"violation, not a suspicion: the {result.attack} attack told apart models "
            "trained with and without the target record more reliably than any "
            f"({claim}, {fmt_alpha(result.delta)})-DP generator allows, on test rounds "
            "it never trained on."
        )
    elif result.verdict == "CONSISTENT":
        paragraphs.append(
            f"No violation found: with {conf} confidence epsilon is at least {eps}, "
            f"which does not exceed the claimed {claim}. This does NOT prove the "
            f"generator private; it only says that the {result.attack} attack, on this "
            "target record and this dataset, found no violation. A stronger attack, "
            "another target or more rounds may still find one."
        )
        if result.eps_max_attainable is not None:
            sentence = (
                f"At this test size ({size}) the largest epsilon any "
                f"attack could show is {top}"
            )
            if result.eps_max_attainable <= result.eps_claimed:
                sentence += (
                    f", which is not above the claimed {claim}: this audit could not "
                    "have detected a violation at all. Run more rounds."
                )
            else:
                sentence += "."
            paragraphs.append(sentence)
    else:
        paragraphs.append(
            "The audit could not produce an estimate of epsilon, so it says nothing "
            f"about the claimed {claim}. Check the run's log and rerun it."
        )
    note = str(result.claim.get("reference_note") or "")
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
    if result.estimator.correction == "bonferroni" and result.estimator.n_attacks > 1:
        paragraphs.append(
            f"{result.estimator.n_attacks} attacks ran and the largest bound is "
            "reported; each bound used a Bonferroni-corrected level, so the "
            f"{conf} confidence holds for the maximum."
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


def _with_std(mean: Any, std: Any) -> str:
    if mean is None:
        return "—"
    text = fmt_number(mean)
    return text if std is None else f"{text} ± {fmt_number(std, 2)}"


def utility_tables(utility: Mapping[str, Any]) -> list[Table]:
    """Tables of a utility result (``utility.json``, format ``dpaudit.utility/1``).

    Classifier scores become one table (a row per classifier, AUROC and AUPRC per
    setting), the per-setting means another, and the run's facts a third. Any other
    mapping is shown with :func:`tables_of`.
    """
    scores = utility.get("scores")
    if not (
        isinstance(scores, list | tuple)
        and scores
        and all(
            isinstance(s, Mapping) and "classifier" in s and "setting" in s
            for s in scores
        )
    ):
        return tables_of(utility)
    settings: list[str] = []
    classifiers: list[str] = []
    cells: dict[tuple[str, str], Mapping[str, Any]] = {}
    for s in scores:
        setting, classifier = str(s["setting"]), str(s["classifier"])
        if setting not in settings:
            settings.append(setting)
        if classifier not in classifiers:
            classifiers.append(classifier)
        cells[(classifier, setting)] = s
    headers = ["classifier"]
    for setting in settings:
        name = _SETTING_NAMES.get(setting, setting)
        headers += [f"{name} AUROC", f"{name} AUPRC"]
    rows = []
    for classifier in classifiers:
        row = [classifier]
        for setting in settings:
            s = cells.get((classifier, setting), {})
            if s.get("auroc") is None and s.get("status"):
                row += [str(s.get("status")), ""]
            else:
                row += [
                    _with_std(s.get("auroc"), s.get("auroc_std")),
                    _with_std(s.get("auprc"), s.get("auprc_std")),
                ]
        rows.append(tuple(row))
    tables = [
        Table(
            caption="Classifiers trained on each setting's data, tested on "
            "held-out data (mean ± std over runs)",
            headers=tuple(headers),
            rows=tuple(rows),
        )
    ]
    summary = utility.get("summary")
    if isinstance(summary, Mapping) and summary:
        tables += tables_of(
            {_SETTING_NAMES.get(str(k), str(k)): v for k, v in summary.items()},
            "Mean over classifiers, per setting",
        )
    facts = tuple((k, fmt_value(utility[k])) for k in _UTILITY_FACTS if k in utility)
    if facts:
        tables.append(
            Table(caption="Utility run", headers=("key", "value"), rows=facts)
        )
    return tables
