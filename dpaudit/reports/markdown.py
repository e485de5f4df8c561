"""The Markdown summary, fit for ``$GITHUB_STEP_SUMMARY`` and pull-request comments.

The same content as the HTML report's summary, without figures. Every string from a
result is escaped: Markdown punctuation is backslash-escaped; a ``<`` that could open
an HTML tag or an autolink (before a letter, ``/``, ``!`` or ``?``: GitHub renders
raw HTML inside Markdown) is written ``&lt;`` and an ``&`` that could start an entity
``&amp;``, as the HTML report writes them (a backslash is not enough: renderers that
do not follow CommonMark, Python-Markdown among them, keep the backslash and render
the tag after it); a ``>`` that could start a quote is backslash-escaped. A ``<`` or
``>`` of a comparison (``eps_emp 1.3 > claimed 1``) stays as it is. The reproduction
command is a fenced code block, whose text no Markdown renderer reads as HTML.
Control characters are shown as escapes (:func:`~dpaudit.reports.escape.printable`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from dpaudit import __version__
from dpaudit.audit.result import LOW_FPRS
from dpaudit.reports.claimview import REPRODUCE, reproduce_rows
from dpaudit.reports.escape import printable
from dpaudit.reports.meaning import DATA_NOTICE, explain, headline, power_rows
from dpaudit.reports.model import AuditResult, Unfinished, audit_name
from dpaudit.reports.numbers import (
    fmt_alpha,
    fmt_eps,
    fmt_number,
    fmt_percent,
    fmt_value,
)
from dpaudit.reports.tables import COMPARISON_COLUMNS, utility_tables
from dpaudit.reports.traceview import variant_text
from dpaudit.reports.wording import (
    attack_label,
    attack_set_text,
    attainable,
    claim_extra_rows,
    confidence_text,
    dropped_lines,
    fmt_reference,
    resolution_text,
    rounds_text,
    test_size,
    tpr_cell,
    warning_lines,
)

__all__ = ["md_escape", "md_table", "render_markdown"]

_MD_SPECIAL = re.compile(r"([\\`*_\[\]|~])")
#: A ``<`` that could open a tag or an autolink, an ``&`` that could start an entity.
_MD_MARKUP = re.compile(r"<(?=[A-Za-z/!?])|&(?=#?[A-Za-z0-9]+;)")


def md_escape(text: object) -> str:
    """Escapes ``text`` for Markdown (also inside table cells), on one line: line
    breaks become spaces, other control characters escapes; a ``<`` that could
    open a tag and an ``&`` that could start an entity as HTML entities.

    Example:
        >>> md_escape("<script>|x_y")
        '&lt;script>\\\\|x\\\\_y'
        >>> md_escape("eps_emp 1.3 > claimed 1 & delta < 1e-5; &amp;")
        'eps\\\\_emp 1.3 > claimed 1 & delta < 1e-5; &amp;amp;'
    """
    s = printable(text, keep="\n")
    s = _MD_SPECIAL.sub(r"\\\1", s)
    s = _MD_MARKUP.sub(lambda m: "&lt;" if m.group() == "<" else "&amp;", s)
    s = " ".join(s.split("\n"))
    return "\\" + s if s.startswith(">") else s


def _row(cells: Sequence[object]) -> str:
    return "| " + " | ".join(str(c) for c in cells) + " |"


def md_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> list[str]:
    """A Markdown table's lines (cells must already be escaped)."""
    lines = [_row(headers), _row(["---"] * len(headers))]
    lines += [_row(r) for r in rows]
    return lines


def _target(result: AuditResult) -> str:
    if not result.target:
        return "(not recorded)"
    return ", ".join(
        f"{md_escape(k)} = {md_escape(fmt_value(v))}" for k, v in result.target.items()
    )


def _attack_rows(result: AuditResult) -> list[list[str]]:
    rows = []
    for a in result.attacks.values():
        c = a.counts
        name = md_escape(attack_label(a, result.attack))
        rows.append(
            [
                name,
                fmt_eps(a.eps_emp),
                fmt_eps(a.eps_max_attainable),
                fmt_number(a.auc),
                *(tpr_cell(a, fpr) for fpr in LOW_FPRS),
                f"{c.tp} / {c.fp} / {c.tn} / {c.fn}",
            ]
        )
    return rows


def _result_section(result: AuditResult, *, level: int = 2) -> list[str]:
    h = "#" * level
    conf = confidence_text(result)
    lines = [
        f"{h} dpaudit: {result.verdict}",
        "",
        f"**{md_escape(headline(result))}**",
        "",
        *[f"> **{md_escape(w)}**\n" for w in warning_lines(result)],
        *md_table(
            ["", "epsilon"],
            [
                [f"eps_emp (lower bound, {conf})", fmt_eps(result.eps_emp)],
                [
                    f"claimed (delta {fmt_alpha(result.delta)})",
                    fmt_number(result.eps_claimed),
                ],
                ["reference accountant", fmt_reference(result)],
                [
                    f"max attainable ({test_size(result)})",
                    fmt_eps(attainable(result)),
                ],
            ],
        ),
        "",
        "**Power of this audit.**",
        "",
        *md_table(
            ["", ""],
            [
                [md_escape(k), md_escape(v)]
                for k, v in power_rows(result)
                if k != REPRODUCE
            ],
        ),
        "",
        "**To reproduce** (paste it into a bug report with the versions above):",
        "",
        "```",
        # One line, no backtick: nothing of a result can end the code block.
        *[
            printable(v).replace("`", "'")
            for k, v in reproduce_rows(result)
            if k == REPRODUCE
        ],
        "```",
        "",
        "**What this means.** " + " ".join(md_escape(p) for p in explain(result)),
        "",
        *md_table(
            [
                "attack",
                "eps_emp",
                "max attainable",
                "AUC",
                *(f"TPR at FPR {fmt_percent(fpr)}" for fpr in LOW_FPRS),
                "TP / FP / TN / FN",
            ],
            _attack_rows(result),
        ),
        "",
        *[f"{md_escape(line)}.\n" for line in dropped_lines(result)],
        *([md_escape(resolution_text(result)), ""] if resolution_text(result) else []),
        (
            f"Generator {md_escape(result.label)} · dataset {md_escape(result.dataset)}"
            f" · {md_escape(attack_set_text(result))}"
            f" · seed {result.seed} · {rounds_text(result)}"
            f" · dpaudit {md_escape(result.version)}"
        ),
        "",
        f"Target record: {_target(result)}",
        "",
    ]
    extra = claim_extra_rows(result)
    if extra:
        lines += [
            "**The generator's own claim keys** (over the rounds).",
            "",
            *md_table(
                ["key", "value"], [[md_escape(k), md_escape(v)] for k, v in extra]
            ),
            "",
        ]
    if result.utility:
        tables = utility_tables(result.utility)
        if tables:
            lines += ["**Utility.**", ""]
        for table in tables:
            if table.caption:
                lines += [f"_{md_escape(table.caption)}_", ""]
            lines += md_table(
                [md_escape(h) for h in table.headers],
                [[md_escape(c) for c in row] for row in table.rows],
            )
            lines.append("")
    return lines


def render_markdown(
    results: Sequence[AuditResult],
    *,
    base: Path | None = None,
    compare: bool | None = None,
    unfinished: Sequence[Unfinished] = (),
) -> str:
    """The Markdown summary of one audit, or a comparison table of several.

    Args:
        results: The audits (at least one).
        base: The directory they were loaded from (the audit column names each
            audit by its directory relative to it).
        compare: As in :func:`dpaudit.reports.html.render_html`.
        unfinished: A comparison's audits without a result (failed or
            interrupted): counted and listed, never left out silently.

    Returns:
        Markdown text ending with a newline.
    """
    if compare is None:
        compare = len(results) + len(unfinished) > 1
    if not compare and results:
        lines = _result_section(results[0])
    else:
        violations = sum(r.verdict == "VIOLATION" for r in results)
        total = len(results) + len(unfinished)
        missing = f"; {len(unfinished)} did not finish" if unfinished else ""
        lines = [
            f"## dpaudit comparison: {violations} of {total} audit(s) "
            f"found a violation{missing}",
            "",
            *(_comparison_table(results, base) if results else []),
            "",
        ]
        if unfinished:
            lines += [
                "**Audits without a result** (no verdict; the comparison is "
                "incomplete):",
                "",
                *md_table(
                    ["status", "audit", "what happened"],
                    [
                        [f"**{u.status}**", md_escape(u.path), md_escape(u.reason)]
                        for u in unfinished
                    ],
                ),
                "",
            ]
        for r in results:
            lines += [
                f"**{r.verdict}**, {md_escape(audit_name(r, base))} "
                f"({md_escape(r.label)} on {md_escape(r.dataset)}): "
                + " ".join(md_escape(p) for p in [*warning_lines(r), *explain(r)]),
                "",
            ]
    lines += [f"_{md_escape(DATA_NOTICE)} dpaudit {__version__}._", ""]
    # Some cells are numbers and names this module writes itself; the whole text is
    # checked too, so no control character of a result passes unescaped.
    return printable("\n".join(lines), keep="\n")


def _comparison_table(
    results: Sequence[AuditResult], base: Path | None = None
) -> list[str]:
    rows = []
    for r in results:
        attacks = sorted(r.attacks.values(), key=lambda a: a.name != r.attack)
        for a in attacks:
            rows.append(
                [
                    md_escape(audit_name(r, base)),
                    f"**{r.verdict}**",
                    md_escape(r.generator),
                    md_escape(variant_text(r)),
                    md_escape(", ".join(r.bugs) or "—"),
                    md_escape(r.dataset),
                    md_escape(a.name) + (" (headline)" if a.name == r.attack else ""),
                    fmt_eps(a.eps_emp),
                    fmt_number(r.eps_claimed),
                    fmt_reference(r),
                    fmt_eps(a.eps_max_attainable),
                    fmt_number(a.auc),
                ]
            )
    return md_table(list(COMPARISON_COLUMNS), rows)
