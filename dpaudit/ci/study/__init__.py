"""``dpaudit study``: the PATE-GAN audit study end to end (docs/study.md).

- :mod:`dpaudit.ci.study.plan`: the audits (reference PATE-GAN, the six variants,
  G-PATE; the query-based attack on the worst case and GroundHog on Cervical Cancer
  with ``--target auto``) and the study's published figures.
- :mod:`dpaudit.ci.study.run`: running them, one folder each, resumably.
- :mod:`dpaudit.ci.study.compare`: dpaudit's figure next to the study's, and why they
  differ.
- :mod:`dpaudit.ci.study.report`: the comparison report (HTML, Markdown, JSON).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dpaudit.ci.study.compare import Comparison, compare
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

# The package's names are imported on first use (PEP 562): `dpaudit --help` and the
# parsers import this package, and the audit machinery (torch, pandas, scipy) is
# needed only to run.
_WHERE = {
    'Comparison': 'dpaudit.ci.study.compare',
    'compare': 'dpaudit.ci.study.compare',
    'PUBLISHED': 'dpaudit.ci.study.plan',
    'QUICK': 'dpaudit.ci.study.plan',
    'SUBJECTS': 'dpaudit.ci.study.plan',
    'VARIANTS': 'dpaudit.ci.study.plan',
    'StudyAudit': 'dpaudit.ci.study.plan',
    'select_audits': 'dpaudit.ci.study.plan',
    'study_plan': 'dpaudit.ci.study.plan',
    'render_study_html': 'dpaudit.ci.study.report',
    'render_study_json': 'dpaudit.ci.study.report',
    'render_study_markdown': 'dpaudit.ci.study.report',
    'terminal_table': 'dpaudit.ci.study.report',
    'write_study_report': 'dpaudit.ci.study.report',
    'StudyOutcome': 'dpaudit.ci.study.run',
    'StudyRun': 'dpaudit.ci.study.run',
    'run_study': 'dpaudit.ci.study.run',
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


def __getattr__(name: str) -> Any:
    """Imports ``name`` from its module on first use."""
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_WHERE))
