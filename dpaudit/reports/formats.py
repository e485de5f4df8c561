"""The report formats: one table from ``--format`` name to renderer and file name
(docs/design.md, "Extending dpaudit"). No heavy imports: the command line's parser
reads the names."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

__all__ = [
    "DEFAULT_FILENAMES",
    "FORMATS",
    "REPORT_FORMATS",
    "ReportFormat",
    "ReportFormatSpec",
]


@dataclass(frozen=True, kw_only=True, slots=True)
class ReportFormatSpec:
    """One report format: where its renderer lives and the file it is written to.

    Attributes:
        module: the module of :mod:`dpaudit.reports` holding the renderer.
        renderer: ``f(results, *, base, compare, unfinished) -> str``.
        filename: the file the format is written to inside an audit directory.
    """

    module: str
    renderer: str
    filename: str


#: The report formats, by ``--format`` name: the one table a new format is added to
#: (docs/design.md, "Extending dpaudit").
REPORT_FORMATS: Mapping[str, ReportFormatSpec] = MappingProxyType(
    {
        "html": ReportFormatSpec(
            module="html", renderer="render_html", filename="report.html"
        ),
        "md": ReportFormatSpec(
            module="markdown", renderer="render_markdown", filename="report.md"
        ),
        "json": ReportFormatSpec(
            module="jsonreport", renderer="render_json", filename="report.json"
        ),
        "junit": ReportFormatSpec(
            module="junit", renderer="render_junit_report", filename="junit.xml"
        ),
    }
)
ReportFormat = str
FORMATS: tuple[str, ...] = tuple(REPORT_FORMATS)

#: The file a format is written to inside the audit directory by default.
DEFAULT_FILENAMES: Mapping[str, str] = MappingProxyType(
    {name: spec.filename for name, spec in REPORT_FORMATS.items()}
)
