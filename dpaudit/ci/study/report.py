"""The study's comparison report: HTML, Markdown and JSON.

Each format has two parts: the study table (dpaudit's verdict and eps_emp next to the
study's published figure, with the reason for every difference:
:mod:`dpaudit.ci.study.comparison`) and dpaudit's comparison of the audits as
``dpaudit report OUT`` renders it (:func:`dpaudit.reports.render`). The files are
``OUT/study.html``, ``OUT/study.md`` and ``OUT/study.json``.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from dpaudit import __version__
from dpaudit.ci.study.comparison import STUDY_MAXIMUM, Comparison, compare
from dpaudit.ci.study.run import StudyOutcome, StudyRun
from dpaudit.reports import render, write_atomic
from dpaudit.reports.jsonreport import finite
from dpaudit.reports.markdown import md_escape, md_table
from dpaudit.reports.numbers import fmt_eps, fmt_number

__all__ = [
    "FILES",
    "comparisons",
    "fmt_wall",
    "render_study_html",
    "render_study_json",
    "render_study_markdown",
    "study_table",
    "terminal_table",
    "write_study_report",
]

FILES: Mapping[str, str] = {
    "html": "study.html",
    "md": "study.md",
    "json": "study.json",
}
HEADERS = (
    "audit",
    "experiment",
    "the study",
    "dpaudit eps_emp",
    "claimed",
    "max attainable",
    "dpaudit verdict",
    "difference",
    "reason",
)
TITLE = (
    "PATE-GAN audit study (Ganev, Annamalai and De Cristofaro 2024) rerun with dpaudit"
)
INTRO = (
    "The study's figures come from its own harness, which released |D| records on the "
    f"worst case, read bounds from the data and took the better of two score "
    f"directions without correction; dpaudit removes those leaks, so its figures are "
    f"not expected to equal the study's (docs/bugs.md, the study's harness). "
    f"{STUDY_MAXIMUM} is the largest value the study's 400 + 400 test rounds can show "
    "at alpha 0.05."
)


def fmt_wall(seconds: float) -> str:
    """``1 h 02 min 03 s``-style wall time.

    >>> fmt_wall(3723.4), fmt_wall(42.0)
    ('1 h 02 min 03 s', '42.0 s')
    """
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, secs = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    if hours:
        return f"{hours} h {minutes:02d} min {secs:02d} s"
    return f"{minutes} min {secs:02d} s"


def comparisons(outcomes: Sequence[StudyOutcome]) -> list[Comparison]:
    """One :class:`Comparison` per outcome, in order."""
    return [compare(o.audit, o.result, error=o.error) for o in outcomes]


def study_table(rows: Sequence[Comparison]) -> list[tuple[str, ...]]:
    """The study table's rows (plain text, one tuple of :data:`HEADERS` per audit)."""
    return [
        (
            c.audit.name,
            c.audit.experiment,
            "—" if c.published is None else f"{c.published:.2f}",
            fmt_eps(c.eps_emp),
            fmt_number(c.eps_claimed),
            fmt_eps(c.eps_max),
            c.verdict,
            c.relation,
            c.reason,
        )
        for c in rows
    ]


def _summary(run: StudyRun, rows: Sequence[Comparison]) -> str:
    counts = {
        v: sum(c.verdict == v for c in rows)
        for v in ("VIOLATION", "CONSISTENT", "INCONCLUSIVE", "ERROR")
    }
    parts = [f"{n} {v}" for v, n in counts.items() if n]
    rounds = run.options.get("rounds")
    quick = (
        " (--quick: a smoke run, not a measurement)" if run.options.get("quick") else ""
    )
    return (
        f"{len(rows)} audit(s): {', '.join(parts) or 'none'}; {rounds} rounds per "
        f"world{quick}; wall time {fmt_wall(run.wall_seconds)}."
    )


def _results(run: StudyRun) -> list[Any]:
    return [o.result for o in run.outcomes if o.result is not None]


def render_study_markdown(run: StudyRun) -> str:
    """The study report in Markdown: the study table, then dpaudit's comparison."""
    rows = comparisons(run.outcomes)
    lines = [
        f"# {md_escape(TITLE)}",
        "",
        md_escape(_summary(run, rows)),
        "",
        md_escape(INTRO),
        "",
        *md_table(
            HEADERS, [[md_escape(cell) for cell in row] for row in study_table(rows)]
        ),
        "",
    ]
    results = _results(run)
    if results:
        lines += [render(results, "md", base=run.out_dir, compare=True)]
    return "\n".join(lines).rstrip("\n") + "\n"


def _html_section(run: StudyRun, rows: Sequence[Comparison]) -> str:
    esc = html.escape
    head = "".join(f"<th>{esc(h)}</th>" for h in HEADERS)
    body = []
    for comparison, row in zip(rows, study_table(rows)):
        cells = []
        for i, cell in enumerate(row):
            if i == 6:
                cells.append(
                    f'<td><span class="tag tag-{esc(comparison.verdict)}">'
                    f"{esc(cell)}</span></td>"
                )
            else:
                cls = ' class="num"' if i in (2, 3, 4, 5) else ""
                cells.append(f"<td{cls}>{esc(cell)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return (
        f'<section aria-label="study">\n<h1>{esc(TITLE)}</h1>\n'
        f'<p class="sub">{esc(_summary(run, rows))}</p>\n'
        f'<p class="notice">{esc(INTRO)}</p>\n'
        '<h2>dpaudit next to the study\'s figures</h2>\n<div class="scroll">\n'
        f'<table class="compact">\n<thead><tr>{head}</tr></thead>\n<tbody>\n'
        + "\n".join(body)
        + "\n</tbody>\n</table>\n</div>\n</section>\n"
    )


def render_study_html(run: StudyRun) -> str:
    """The study report in HTML: the study table above dpaudit's comparison report
    (one self-contained page; every string escaped)."""
    rows = comparisons(run.outcomes)
    section = _html_section(run, rows)
    results = _results(run)
    if not results:
        return (
            '<!DOCTYPE html>\n<html lang="en">\n<head><meta charset="utf-8">'
            f"<title>{html.escape(TITLE)}</title></head>\n<body><main>\n"
            f"{section}</main></body></html>\n"
        )
    page = render(results, "html", base=run.out_dir, compare=True)
    marker = "<main>\n"
    at = page.find(marker)
    if at < 0:
        marker, at = "<body>", page.find("<body>")
    if at < 0:
        return section + page
    at += len(marker)
    return page[:at] + section + page[at:]


def render_study_json(run: StudyRun) -> str:
    """The study report in JSON: the options, the wall time, one entry per audit
    (published figure, dpaudit's figures, difference and reason) and dpaudit's
    comparison document (``$defs/comparison`` of the result schema)."""
    rows = comparisons(run.outcomes)
    audits = []
    for outcome, c in zip(run.outcomes, rows):
        audits.append(
            {
                "name": c.audit.name,
                "subject": c.audit.subject,
                "setting": c.audit.setting,
                "experiment": c.audit.experiment,
                "published": c.published,
                "study_verdict": c.study_verdict,
                "verdict": c.verdict,
                "eps_emp": c.eps_emp,
                "eps_claimed": c.eps_claimed,
                "eps_max_attainable": c.eps_max,
                "difference": c.relation,
                "caveats": list(c.caveats),
                "reason": c.reason,
                "path": outcome.directory.name,
                "state": outcome.state,
                "seconds": outcome.seconds,
                "error": outcome.error,
            }
        )
    results = _results(run)
    doc = {
        "kind": "study",
        "version": __version__,
        "title": TITLE,
        "options": dict(run.options),
        "wall_seconds": run.wall_seconds,
        "audits": audits,
        "comparison": (
            json.loads(render(results, "json", base=run.out_dir, compare=True))
            if results
            else None
        ),
    }
    return json.dumps(finite(doc), indent=2, allow_nan=False) + "\n"


def write_study_report(run: StudyRun) -> dict[str, Path]:
    """Writes ``study.html``, ``study.md`` and ``study.json`` into the study's folder.

    Returns:
        Format -> the file written.
    """
    renderers = {
        "html": render_study_html,
        "md": render_study_markdown,
        "json": render_study_json,
    }
    return {
        fmt: write_atomic(run.out_dir / FILES[fmt], renderers[fmt](run))
        for fmt in FILES
    }


def terminal_table(run: StudyRun) -> str:
    """The study table for the terminal: one line per audit, then each reason."""
    rows = comparisons(run.outcomes)
    table = [row[:8] for row in study_table(rows)]
    head = HEADERS[:8]
    widths = [max(len(str(x)) for x in col) for col in zip(head, *table)]
    lines = [
        "  ".join(str(x).ljust(w) for x, w in zip(line, widths)).rstrip()
        for line in (head, *table)
    ]
    lines.append("")
    lines += [f"{c.audit.name}: {c.reason}" for c in rows]
    return "\n".join(lines)
