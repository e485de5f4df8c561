"""The JSON report: the validated result, in the documented schema.

For one audit the output is its ``result.json`` as :meth:`AuditResult.to_json` writes
it, power and verdict reason included (validated against
``templates/result.schema.json``, with non-finite numbers written as ``null`` so any
JSON parser reads it). For several, it is ``$defs/comparison`` of the same schema:
``{"schema_version": 2, "kind": "comparison", "audits": [{"path", "result"}]}``.
Text that is not valid Unicode (a lone surrogate) is written as its escape
(``"\\ud800"``, the text every other format shows).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dpaudit import __version__
from dpaudit.audit import SCHEMA_VERSION
from dpaudit.audit.config import nan_to_null
from dpaudit.reports.escape import valid_unicode
from dpaudit.reports.model import AuditResult, Unfinished, path_from
from dpaudit.reports.schema import validate

__all__ = ["finite", "render_json", "result_document"]


#: NaN and infinities as ``None`` (the one helper, :func:`dpaudit.audit.config.serial.nan_to_null`;
#: kept under this name for callers of this module).
finite = nan_to_null


def result_document(result: AuditResult) -> dict[str, Any]:
    """The result as a plain JSON-ready dict (every key of ``result.json`` kept)."""
    return result.to_json()


def render_json(
    results: Sequence[AuditResult],
    *,
    base: Path | None = None,
    compare: bool | None = None,
    unfinished: Sequence[Unfinished] = (),
) -> str:
    """The JSON report of one audit, or the comparison document of several.

    Args:
        results: The audits (at least one).
        base: The directory they were loaded from (comparison paths are relative).
        compare: As in :func:`dpaudit.reports.html.render_html`.
        unfinished: A comparison's audits without a result (its ``unfinished``
            list).

    Returns:
        JSON text (indented, ending with a newline) that conforms to the schema.

    Raises:
        InvalidParameterError: If the document would not conform (a dpaudit bug).
    """
    if compare is None:
        compare = len(results) + len(unfinished) > 1
    if not compare and results:
        doc = result_document(results[0])
        validate(doc, source="the JSON report")
    else:
        doc = {
            "schema_version": SCHEMA_VERSION,
            "kind": "comparison",
            "version": __version__,
            "audits": [
                {"path": path_from(r, base), "result": result_document(r)}
                for r in results
            ],
        }
        if unfinished:
            doc["unfinished"] = [
                {"path": u.path, "status": u.status, "reason": u.reason}
                for u in unfinished
            ]
        validate(doc, source="the JSON comparison report", definition="comparison")
    # A lone surrogate (a result.json edited by hand, or by an older dpaudit) is
    # shown as its escape, as every other format shows it.
    return json.dumps(valid_unicode(doc), indent=2, allow_nan=False) + "\n"
