"""A result in a notebook cell: :func:`render_notebook_html`, the HTML of
:meth:`AuditResult._repr_html_ <dpaudit.audit.result.model.AuditResult._repr_html_>`.

A fragment, not a page: the verdict banner with its headline, the key numbers and
the figures of the HTML report (the epsilon chart, the trade-off plot, the ROC
curves), inline SVG, styled inline so that nothing leaks into the notebook's page.
It uses the report's templates, wording and figures (:mod:`dpaudit.reports.html`);
the whole report is :meth:`AuditResult.report`.
"""

from __future__ import annotations

import dpaudit.reports.plots as plots
from dpaudit.reports.html import _page, _svg
from dpaudit.reports.meaning import headline
from dpaudit.reports.model import AuditResult
from dpaudit.reports.numbers import fmt_eps, fmt_number
from dpaudit.reports.tradeoff_plot import tradeoff_chart
from dpaudit.reports.wording import (
    attack_set_text,
    attainable,
    confidence_text,
    fmt_reference,
    warning_lines,
)

__all__ = ["VERDICT_COLOURS", "render_notebook_html"]

#: The banner's colour per verdict (the HTML report's).
VERDICT_COLOURS = {
    "VIOLATION": "#c62828",
    "CONSISTENT": "#2e7d32",
    "INCONCLUSIVE": "#b45f06",
}


def render_notebook_html(result: AuditResult) -> str:
    """The HTML fragment of one result for a notebook cell.

    Args:
        result: The audit result.

    Returns:
        HTML text (a ``div``) with the verdict, the numbers and the figures.
    """
    verdict = result.verdict.value
    numbers = [
        (
            "eps_emp",
            f"{fmt_eps(result.eps_emp)} ({confidence_text(result)} confidence)",
        ),
        (
            "claimed epsilon",
            f"{fmt_number(result.eps_claimed)} (delta {result.delta:g})",
        ),
        ("reference epsilon", fmt_reference(result)),
        ("largest eps_emp this test can show", fmt_eps(attainable(result))),
        ("mu_emp", fmt_number(result.mu_emp)),
        ("AUC (headline attack)", fmt_number(result.auc)),
    ]
    context = {
        "r": result,
        "colour": VERDICT_COLOURS.get(verdict, "#455a64"),
        "headline": headline(result),
        "attack_set": attack_set_text(result),
        "directory": None if result.directory is None else str(result.directory),
        "warnings": warning_lines(result),
        "numbers": numbers,
        "epsilon_svg": _svg(plots.epsilon_chart(result)),
        "tradeoff_svg": _svg(tradeoff_chart(result)),
        "roc_svg": _svg(plots.roc_chart(result)),
    }
    return _page("notebook.html.j2", context)
