"""Text tables for the renderers: nested result mappings and the utility benchmark.

A :class:`Table` is captioned rows of text cells; HTML and Markdown lay it out.
:func:`tables_of` turns any nested mapping (configuration, a training trace's
details) into tables, and :func:`utility_tables` the utility benchmark's result
(``utility.json``, read with :meth:`~dpaudit.utility.results.UtilityResult.from_json`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dpaudit.audit.result import thaw
from dpaudit.errors import InvalidParameterError
from dpaudit.reports.numbers import fmt_number, fmt_value
from dpaudit.utility.results import UtilityResult

__all__ = [
    "COMPARISON_COLUMNS",
    "Table",
    "flatten",
    "tables_of",
    "utility_tables",
]

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


#: A list longer than this is shown as a summary, not value by value.
LIST_SHOWN = 8


def list_text(value: Any) -> str:
    """A JSON value as a table cell: a list of more than :data:`LIST_SHOWN` values
    summarised (``46 values, 1.03 to 1001; all in result.json``), any other value as
    :func:`fmt_value` writes it.

    >>> list_text([float(x) for x in range(1, 101)])
    '100 values, 1 to 100; all in result.json'
    >>> list_text([1, 2])
    '[1, 2]'
    """
    if isinstance(value, list | tuple) and len(value) > LIST_SHOWN:
        numbers = [
            v for v in value if isinstance(v, int | float) and not isinstance(v, bool)
        ]
        span = (
            f", {fmt_number(min(numbers), 4)} to {fmt_number(max(numbers), 4)}"
            if numbers
            else ""
        )
        return f"{len(value)} values{span}; all in result.json"
    return fmt_value(value)


def flatten(mapping: Mapping[str, Any], prefix: str = "") -> list[tuple[str, str]]:
    """``(dotted.key, text)`` for every leaf of a nested mapping (a long list
    summarised: :func:`list_text`)."""
    out: list[tuple[str, str]] = []
    for key, value in mapping.items():
        name = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(value, Mapping) and value:
            out.extend(flatten(value, name))
        else:
            out.append((name, list_text(value)))
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


def utility_tables(utility: UtilityResult | Mapping[str, Any]) -> list[Table]:
    """Tables of a utility result (``utility.json``, format ``dpaudit.utility/1``).

    Classifier scores become one table (a row per classifier, AUROC and AUPRC per
    setting), the per-setting means another, and the run's facts a third.

    Args:
        utility: The typed result, or ``utility.json`` as parsed; the mapping is read
            with :meth:`~dpaudit.utility.results.UtilityResult.from_json`, and one
            that is not a utility result (another tool's file beside the audit) is
            shown as it is, with :func:`tables_of`.

    Returns:
        The tables, in the order the reports show them.
    """
    if isinstance(utility, UtilityResult):
        result = utility
    else:
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
