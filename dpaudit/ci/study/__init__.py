"""``dpaudit study``: the PATE-GAN audit study end to end (docs/study.md).

- :mod:`dpaudit.ci.study.plan`: the audits (reference PATE-GAN, the six variants,
  G-PATE; the query-based attack on the worst case and GroundHog on Cervical Cancer
  with ``--target auto``) and the study's published figures.
- :mod:`dpaudit.ci.study.run`: running them, one folder each, resumably.
- :mod:`dpaudit.ci.study.comparison`: dpaudit's figure next to the study's, and why they
  differ.
- :mod:`dpaudit.ci.study.report`: the comparison report (HTML, Markdown, JSON).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dpaudit.lazy import lazy_exports

if TYPE_CHECKING:
    from dpaudit.ci.study.comparison import Comparison, compare
    from dpaudit.ci.study.plan import (
        PUBLISHED,
        QUICK,
        SUBJECTS,
        VARIANTS,
        StudyAudit,
        select_audits,
        study_plan,
    )
    from dpaudit.ci.study.report import (
        render_study_html,
        render_study_json,
        render_study_markdown,
        terminal_table,
        write_study_report,
    )
    from dpaudit.ci.study.run import StudyOutcome, StudyRun, run_study

# The package's names are imported on first use (PEP 562, dpaudit.lazy): `dpaudit --help` and the
# parsers import this package, and the audit machinery (torch, pandas, scipy) is
# needed only to run.
_EXPORTS = {
    "dpaudit.ci.study.comparison": (
        "Comparison",
        "compare",
    ),
    "dpaudit.ci.study.plan": (
        "PUBLISHED",
        "QUICK",
        "SUBJECTS",
        "VARIANTS",
        "StudyAudit",
        "select_audits",
        "study_plan",
    ),
    "dpaudit.ci.study.report": (
        "render_study_html",
        "render_study_json",
        "render_study_markdown",
        "terminal_table",
        "write_study_report",
    ),
    "dpaudit.ci.study.run": (
        "StudyOutcome",
        "StudyRun",
        "run_study",
    ),
}

__all__ = [
    "PUBLISHED",
    "QUICK",
    "SUBJECTS",
    "VARIANTS",
    "Comparison",
    "StudyAudit",
    "StudyOutcome",
    "StudyRun",
    "compare",
    "render_study_html",
    "render_study_json",
    "render_study_markdown",
    "run_study",
    "select_audits",
    "study_plan",
    "terminal_table",
    "write_study_report",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
