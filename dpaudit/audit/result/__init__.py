"""The typed result of an audit (what ``result.json`` holds) and every record type
it holds; it imports no game.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dpaudit.lazy import lazy_exports

if TYPE_CHECKING:
    from dpaudit.audit.result.measurements import (
        MeasurementSummary,
    )
    from dpaudit.audit.result.model import (
        LOW_FPRS,
        READABLE_SCHEMA_VERSIONS,
        SCHEMA_VERSION,
        AttackResult,
        AuditResult,
        Claim,
        Counts,
        Estimator,
        LowFprRate,
        Power,
        Rounds,
        Timing,
        Trace,
        TrainingFacts,
        Verdict,
        freeze,
        thaw,
    )
    from dpaudit.audit.result.onerun import (
        OneRunSummary,
    )
    from dpaudit.audit.result.regions import (
        WHOLE_CLAIM,
        order_text,
        orders_span,
        regions_summary,
    )

_EXPORTS: dict[str, tuple[str, ...]] = {
    "dpaudit.audit.result.model": (
        "AttackResult",
        "AuditResult",
        "Claim",
        "Counts",
        "Estimator",
        "LOW_FPRS",
        "LowFprRate",
        "Power",
        "READABLE_SCHEMA_VERSIONS",
        "Rounds",
        "SCHEMA_VERSION",
        "Timing",
        "Trace",
        "TrainingFacts",
        "Verdict",
        "freeze",
        "thaw",
    ),
    "dpaudit.audit.result.onerun": ("OneRunSummary",),
    "dpaudit.audit.result.regions": (
        "WHOLE_CLAIM",
        "order_text",
        "orders_span",
        "regions_summary",
    ),
    "dpaudit.audit.result.measurements": ("MeasurementSummary",),
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = [
    "LOW_FPRS",
    "READABLE_SCHEMA_VERSIONS",
    "SCHEMA_VERSION",
    "WHOLE_CLAIM",
    "AttackResult",
    "AuditResult",
    "Claim",
    "Counts",
    "Estimator",
    "LowFprRate",
    "MeasurementSummary",
    "OneRunSummary",
    "Power",
    "Rounds",
    "Timing",
    "Trace",
    "TrainingFacts",
    "Verdict",
    "freeze",
    "order_text",
    "orders_span",
    "regions_summary",
    "thaw",
]
