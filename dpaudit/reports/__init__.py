"""Reports of audit results: HTML, Markdown, JSON, JUnit XML and terminal text.

Load an audit directory (or a parent of several) with :func:`load_results`, then
render it with :func:`render`. Renderers restate what the audit computed; they
estimate nothing. Reports contain no training data except the one target record.

The renderers (and matplotlib) are imported on first use, so importing this package
is cheap for commands that only need its names.

Example:
    >>> from dpaudit.reports import load_results, render  # doctest: +SKIP
    >>> html = render(load_results("runs/pategan"), "html")  # doctest: +SKIP
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from dpaudit.errors import InvalidParameterError
from dpaudit.reports.formats import (
    DEFAULT_FILENAMES,
    FORMATS,
    REPORT_FORMATS,
    ReportFormat,
    ReportFormatSpec,
)

if TYPE_CHECKING:
    from dpaudit.reports.html import render_html
    from dpaudit.reports.io import write_atomic
    from dpaudit.reports.jsonreport import render_json
    from dpaudit.reports.junit import JunitCase, case_from_result, render_junit
    from dpaudit.reports.markdown import render_markdown
    from dpaudit.reports.model import (
        AuditResult,
        Unfinished,
        load_result,
        load_results,
    )
    from dpaudit.reports.terminal import render_terminal

__all__ = [
    "DEFAULT_FILENAMES",
    "FORMATS",
    "REPORT_FORMATS",
    "AuditResult",
    "JunitCase",
    "ReportFormat",
    "ReportFormatSpec",
    "case_from_result",
    "load_result",
    "load_results",
    "render",
    "render_html",
    "render_json",
    "render_junit",
    "render_markdown",
    "render_terminal",
    "write_atomic",
]

_LAZY: Mapping[str, str] = MappingProxyType(
    {
        "AuditResult": "model",
        "load_result": "model",
        "load_results": "model",
        "render_html": "html",
        "render_json": "jsonreport",
        "render_markdown": "markdown",
        "JunitCase": "junit",
        "case_from_result": "junit",
        "render_junit": "junit",
        "render_terminal": "terminal",
        "write_atomic": "io",
    }
)


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def render(
    results: Sequence[AuditResult],
    fmt: str,
    *,
    base: Path | None = None,
    compare: bool | None = None,
    unfinished: Sequence[Unfinished] = (),
) -> str:
    """Renders one audit (or a comparison of several) in format ``fmt``.

    Args:
        results: The audits (at least one, unless ``unfinished`` lists some).
        fmt: ``html``, ``md``, ``json`` or ``junit``.
        base: The directory the results were loaded from (relative paths).
        compare: Force a comparison or a single report; default: a comparison when
            there are several results.
        unfinished: A comparison's audits without a result (failed or
            interrupted): listed as such in HTML, Markdown and the JSON
            comparison's ``unfinished``, and as JUnit errors.

    Returns:
        The report's text.

    Raises:
        InvalidParameterError: On an unknown format or no results.
    """
    if not results and not unfinished:
        raise InvalidParameterError("`results` must hold at least one audit. Got none.")
    if compare is None:
        compare = len(results) + len(unfinished) > 1
    spec = REPORT_FORMATS.get(fmt)
    if spec is None:
        raise InvalidParameterError(
            f"`--format` must be one of {', '.join(FORMATS)}. Got {fmt!r}."
        )
    renderer = getattr(
        importlib.import_module(f"{__name__}.{spec.module}"), spec.renderer
    )
    text: str = renderer(results, base=base, compare=compare, unfinished=unfinished)
    return text
