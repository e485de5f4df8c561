"""The HTML report: one self-contained file, viewable offline.

Templates are package files (``dpaudit/reports/templates/*.html.j2``) rendered by a
Jinja2 environment with autoescaping on, so every string from a result (column names,
target values, generator names, configuration) is escaped, and with every value
passed through :func:`~dpaudit.reports.escape.printable`, so control characters
and lone surrogates in them are shown as escapes. Figures are inline SVG made
by :mod:`dpaudit.reports.plots`; the page has no scripts and loads nothing from the
network.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup

import dpaudit.reports.plots as plots
from dpaudit import __version__
from dpaudit.audit.config import to_json
from dpaudit.audit.result import LOW_FPRS
from dpaudit.reports.escape import printable
from dpaudit.reports.meaning import DATA_NOTICE, explain, headline, power_rows
from dpaudit.reports.model import (
    AttackResult,
    AuditResult,
    Unfinished,
    audit_name,
    path_from,
    relative_path,
)
from dpaudit.reports.numbers import (
    fmt_alpha,
    fmt_eps,
    fmt_number,
    fmt_percent,
    fmt_value,
)
from dpaudit.reports.tables import (
    COMPARISON_COLUMNS,
    Table,
    flatten,
    utility_tables,
)
from dpaudit.reports.traceview import NO_TRACE, TRACE_SOURCE, trace_view, variant_text
from dpaudit.reports.tradeoff_plot import tradeoff_chart
from dpaudit.reports.wording import (
    attack_label,
    attack_set_text,
    attainable,
    claim_extra_rows,
    confidence_text,
    fmt_reference,
    level_text,
    resolution_text,
    rounds_text,
    test_size,
    tpr_cell,
    warning_lines,
)

__all__ = ["render_comparison_html", "render_html", "render_result_html"]

REPORT_FILE = "report.html"


def _finalize(value: Any) -> Any:
    # Every {{ value }} before autoescaping: autoescaping handles < > & but passes
    # control characters and lone surrogates, which printable() shows as escapes.
    if isinstance(value, Markup):
        return Markup(printable(value, keep="\n\t"))
    return printable(value)


@cache
def _environment() -> Environment:
    return Environment(
        loader=PackageLoader("dpaudit.reports", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        finalize=_finalize,
    )


def _page(template: str, context: dict[str, Any]) -> str:
    # The whole page, the figures' SVG included, holds no control character but
    # the line breaks and tabs of its own layout.
    page = _environment().get_template(template).render(**context)
    return printable(page, keep="\n\t")


def _svg(text: str | None) -> Markup | None:
    # matplotlib writes the SVG; user strings inside it are drawn as glyph paths and
    # comments are escaped by matplotlib's XML writer, so it is safe to inline.
    return None if text is None else Markup(text)


def _attack_table(result: AuditResult) -> Table:
    rows = []
    for attack in result.attacks.values():
        c = attack.counts
        direction = {1: "high = member", -1: "low = member"}.get(
            attack.direction if attack.direction is not None else 0, "—"
        )
        rows.append(
            (
                attack_label(attack, result.attack),
                fmt_eps(attack.eps_emp),
                fmt_eps(attack.eps_max_attainable),
                fmt_number(attack.auc),
                *(tpr_cell(attack, fpr) for fpr in LOW_FPRS),
                f"{c.tp} / {c.fp} / {c.tn} / {c.fn}",
                fmt_number(attack.threshold, 4),
                direction,
                fmt_alpha(attack.alpha),
            )
        )
    return Table(
        caption="",
        headers=(
            "attack",
            "eps_emp",
            "max attainable",
            "AUC",
            *(f"TPR at FPR {fmt_percent(fpr)}" for fpr in LOW_FPRS),
            "TP / FP / TN / FN",
            "threshold",
            "direction",
            "alpha per attack",
        ),
        rows=tuple(rows),
    )


def _estimator_text(result: AuditResult) -> str:
    e = result.estimator
    return (
        f"{e.method.replace('_', '-')}, {level_text(result)}, "
        f"delta {fmt_alpha(result.delta)}"
    )


def _target_table(result: AuditResult) -> Table:
    names = tuple(str(k) for k in result.target)
    if not names:
        return Table(caption="", headers=("target",), rows=(("(not recorded)",),))
    return Table(
        caption="",
        headers=names,
        rows=(tuple(fmt_value(v) for v in result.target.values()),),
    )


def _trace_context(
    result: AuditResult,
) -> tuple[list[tuple[str, Markup]], list[Any], tuple[str, ...]]:
    """The trace figures that apply to the generator, trace.json's excerpt, and one
    note per figure left out (:func:`~dpaudit.reports.traceview.trace_view`)."""
    trace = result.trace
    if trace is None:
        return [], [], (NO_TRACE,)
    view = trace_view(result)
    figures = []
    if view.teachers:
        figures += [
            ("Records seen per teacher", plots.records_seen_chart(trace)),
            (
                "Teacher losses: own partition versus the others",
                plots.losses_chart(trace),
            ),
        ]
    if view.accountant:
        figures.append(
            (
                "Epsilon over training iterations",
                plots.epsilon_trace_chart(trace, claimed=result.eps_claimed),
            )
        )
    shown = [(title, svg) for title, svg in figures if svg is not None]
    # trace.json can hold a long ledger; the page shows a bounded excerpt of it.
    details = [
        (key, value if len(value) <= 300 else value[:299] + "…")
        for key, value in (flatten(trace.details) if trace.details else [])
    ]
    return [(t, Markup(s)) for t, s in shown], details[:200], view.notes


def render_result_html(result: AuditResult) -> str:
    """The HTML report of one audit.

    Args:
        result: The audit result.

    Returns:
        A complete HTML document (UTF-8 text), with figures inline.
    """
    traces, trace_details, trace_notes = _trace_context(result)
    histograms = []
    for attack in result.attacks.values():
        svg = plots.score_histogram(attack)
        if svg is not None:
            histograms.append((attack.name, _svg(svg)))
    audit_rows = [
        ("verdict", result.verdict),
        ("generator", result.generator),
        ("variant", variant_text(result)),
        ("bug flags", ", ".join(result.bugs) or "none"),
        ("dataset", result.dataset),
        ("headline attack", result.attack),
        ("estimator", _estimator_text(result)),
        ("rounds", rounds_text(result)),
        (
            "synthetic rows released per round",
            fmt_value(result.synthetic_rows),
        ),
        ("seed", str(result.seed)),
        ("dpaudit version of the audit", result.version),
        ("result file", str(result.source or "—")),
    ]
    audit_rows += [
        (f"timing.{k}", fmt_value(v))
        for k, v in to_json(result.timing).items()
        if v is not None
    ]
    context = {
        "dpaudit_version": __version__,
        "data_notice": DATA_NOTICE,
        "r": result,
        "headline": headline(result),
        "attack_set": attack_set_text(result),
        "eps_emp": fmt_eps(result.eps_emp),
        "eps_claimed": fmt_number(result.eps_claimed),
        "eps_reference": fmt_reference(result),
        "eps_max": fmt_eps(attainable(result)),
        "confidence": confidence_text(result),
        "delta": fmt_alpha(result.delta),
        "meaning": explain(result),
        "power_rows": power_rows(result),
        "epsilon_svg": _svg(plots.epsilon_chart(result)),
        "attack_table": _attack_table(result),
        "estimator": _estimator_text(result),
        "roc_svg": _svg(plots.roc_chart(result)),
        "roc_log_svg": _svg(plots.roc_chart(result, log=True)),
        "tradeoff_svg": _svg(tradeoff_chart(result)),
        "resolution": resolution_text(result),
        "warnings": warning_lines(result),
        "histograms": histograms,
        "traces": traces,
        "trace_details": trace_details,
        "trace_notes": trace_notes,
        "trace_source": TRACE_SOURCE,
        "utility_tables": utility_tables(result.utility) if result.utility else [],
        "target_table": _target_table(result),
        "audit_rows": audit_rows,
        "claim_rows": [
            (k, v)
            for k, v in flatten(to_json(result.claim))
            if k != "extra" and not k.startswith("extra.")
        ],
        "extra_rows": claim_extra_rows(result),
        "config_rows": _config_rows(result),
        "option_rows": flatten(result.generator_options or {}),
        "test_size": test_size(result),
    }
    return _page("report.html.j2", context)


def comparison_rows(
    results: Sequence[AuditResult],
) -> list[tuple[str, AttackResult, AuditResult]]:
    """One ``(label, attack, audit)`` per attack of every audit, headline attack first;
    the label names the audit by its folder (two audits of one generator differ
    there, and a folder's name is short), else by its generator."""
    rows = []
    for result in results:
        source = getattr(result, "source", None)
        name = Path(source).parent.name if source is not None else result.label
        attacks = sorted(result.attacks.values(), key=lambda a: a.name != result.attack)
        for attack in attacks:
            rows.append((f"{name or result.label} · {attack.name}", attack, result))
    return rows


def render_comparison_html(
    results: Sequence[AuditResult],
    *,
    base: Path | None,
    unfinished: Sequence[Unfinished] = (),
) -> str:
    """The HTML comparison of several audits: one row per generator/variant/attack.

    Args:
        results: The audits.
        base: Their common parent directory; paths and links are relative to it.
        unfinished: Audits without a result (failed or interrupted): listed with
            their status and counted, never left out silently.

    Returns:
        A complete HTML document.
    """
    rows = []
    for _, attack, result in comparison_rows(results):
        directory = result.directory
        report = None if directory is None else directory / REPORT_FILE
        rows.append(
            {
                "verdict": result.verdict,
                "name": audit_name(result, base),
                "cells": (
                    result.generator,
                    variant_text(result),
                    ", ".join(result.bugs) or "—",
                    result.dataset,
                    attack.name
                    + (" (headline)" if attack.name == result.attack else ""),
                    fmt_eps(attack.eps_emp),
                    fmt_number(result.eps_claimed),
                    fmt_reference(result),
                    fmt_eps(attack.eps_max_attainable),
                    fmt_number(attack.auc),
                ),
                "path": path_from(result, base),
                "link": (
                    relative_path(report, base)
                    if report is not None and report.is_file()
                    else None
                ),
            }
        )
    verdicts = [str(r.verdict) for r in results]
    overall = (
        "VIOLATION"
        if "VIOLATION" in verdicts
        else "INCOMPLETE"
        if unfinished
        else "INCONCLUSIVE"
        if "INCONCLUSIVE" in verdicts
        else "CONSISTENT"
    )
    audits = [
        {
            "verdict": r.verdict,
            "label": r.label,
            "name": audit_name(r, base),
            "warnings": warning_lines(r),
            "dataset": r.dataset,
            "path": path_from(r, base),
            "meaning": explain(r),
            "target": fmt_value(r.target) if r.target else "",
        }
        for r in results
    ]
    context = {
        "dpaudit_version": __version__,
        "data_notice": DATA_NOTICE,
        "parent": str(base) if base is not None else "",
        "overall": overall,
        "violations": verdicts.count("VIOLATION"),
        "inconclusive": verdicts.count("INCONCLUSIVE"),
        "audits": audits,
        "unfinished": list(unfinished),
        "total": len(results) + len(unfinished),
        "chart_svg": (
            _svg(plots.comparison_chart(comparison_rows(results))) if results else None
        ),
        "headers": (*COMPARISON_COLUMNS, "directory"),
        "rows": rows,
    }
    return _page("comparison.html.j2", context)


def _config_rows(result: AuditResult) -> list[tuple[str, str]]:
    """The configuration's settings that the audit's game uses (a two-world report
    lists no one-run key, and the reverse)."""
    from dpaudit.audit.config import key_of

    game = result.config.game
    rows = []
    for name, text in flatten(result.config.to_json()):
        field = name.split(".")[0]
        try:
            games = key_of(field).games
        except KeyError:  # a field without a key of its own: shown
            games = (game,)
        if game in games:
            rows.append((name, text))
    return rows


def render_html(
    results: Sequence[AuditResult],
    *,
    base: Path | None = None,
    compare: bool | None = None,
    unfinished: Sequence[Unfinished] = (),
) -> str:
    """One audit's report, or a comparison when there are several.

    Args:
        results: The audits (at least one, unless ``unfinished`` lists some).
        base: The directory they were loaded from (for relative paths).
        compare: Force a comparison (``True``) or a single report (``False``);
            by default a comparison when there is more than one result.
        unfinished: A comparison's audits that have no result (failed or
            interrupted).

    Returns:
        A complete HTML document.
    """
    if compare is None:
        compare = len(results) + len(unfinished) > 1
    if not compare and results:
        return render_result_html(results[0])
    return render_comparison_html(results, base=base, unfinished=unfinished)
