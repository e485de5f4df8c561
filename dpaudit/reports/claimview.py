"""What every report says about the claim and how to reproduce the audit: the claim
as a guarantee (its own delta: a pure claim reads ``1-DP``, not ``(1, 1e-05)-DP``)
and its accountant, a claim above the budget asked, the rounds per world that would
decide a CONSISTENT with one-sided errors, the equivalent ``dpaudit audit`` command
and the versions of dpaudit, Python and the audited library.

Rows of ``(name, text)`` that :func:`dpaudit.reports.meaning.power_rows` appends, so
the terminal, Markdown, HTML and JUnit renderings all carry them. Only what the
result records; nothing is estimated but the documented plug-in rounds estimate
(:func:`dpaudit.audit.stats.claimnotes.rounds_to_decide`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dpaudit.audit.config import audit_command, versions_text
from dpaudit.audit.result import Verdict
from dpaudit.audit.stats import (
    AttackCounts,
    claim_dp_text,
    over_budget_note,
    rounds_to_decide,
)
from dpaudit.reports.model import AuditResult

__all__ = [
    "REPRODUCE",
    "VERSIONS",
    "claim_rows",
    "decide_rounds",
    "reproduce_rows",
]

REPRODUCE = "reproduce"
VERSIONS = "versions"


def _first(result: AuditResult, key: str) -> str | None:
    summary = result.claim.extra.get(key)
    if not summary:
        return None
    values = summary.get("values") or ()
    return str(values[0]) if values else None


def decide_rounds(result: AuditResult) -> int | None:
    """For a CONSISTENT whose headline attack erred only one way (no false
    positive, or no false negative), the rounds per world at which the same error
    rates would refute the claim; else None."""
    if result.verdict != Verdict.CONSISTENT or result.power is None:
        return None
    if result.power.constant_release:
        return None
    c = result.counts
    try:
        return rounds_to_decide(
            counts=AttackCounts(tp=c.tp, fp=c.fp, tn=c.tn, fn=c.fn),
            eps_claimed=float(result.eps_claimed),
            delta=float(result.delta),
            alpha=float(result.estimator.alpha),
            split=tuple(result.config.split),  # type: ignore[arg-type]
            method=str(result.estimator.method),
        )
    except (ValueError, TypeError):
        return None


def claim_rows(result: AuditResult) -> list[tuple[str, str]]:
    """The claim (own delta, accountant), a claim above the budget asked, and the
    rounds that would decide a one-sided CONSISTENT."""
    claim = result.claim
    own = claim.delta if claim.delta is not None else result.delta
    text = claim_dp_text(float(result.eps_claimed), own)
    if own is not None and own < result.delta:
        text += (
            f"; tested at delta {result.delta:g} (the budget's), which the claim "
            "implies: a violation there is a violation of the claim"
        )
    if claim.accountant:
        text += f"; accountant: {claim.accountant}"
    rows = [("claim", text)]
    asked = getattr(result.config, "epsilon", None)
    note = over_budget_note(result.eps_claimed, asked)
    if note is not None:
        rows.append(("above the budget", note))
    need = decide_rounds(result)
    if need is not None:
        c = result.counts
        side = "no false positive" if c.fp == 0 else "no false negative"
        rows.append(
            (
                "rounds to decide",
                f"about {need} per world: the errors were one-sided ({side}; TP "
                f"{c.tp} of {c.tp + c.fn}, FP {c.fp} of {c.fp + c.tn}), and an "
                "attack keeping exactly these rates would refute the claim at that "
                "size (an estimate from the observed rates, which carry their own "
                "sampling error: at that size the audit decides with roughly even "
                f"odds); rerun with --rounds {need} or more",
            )
        )
    return rows


def reproduce_rows(result: AuditResult) -> list[tuple[str, str]]:
    """The equivalent ``dpaudit audit`` command line and the versions."""
    # The Python that ran the generator: the worker's where one ran under another
    # interpreter (earlier results kept it in the claim's `worker_python`).
    python: Any = getattr(result, "python", None)
    if isinstance(python, Mapping):
        python = python.get("worker") or python.get("audit")
    python = _first(result, "worker_python") or python
    library = _first(result, "library")
    command = audit_command(result.config) + " --out OUT"
    if ":" in result.config.generator:
        # A plug-in module:Class is imported from the folder that holds its module
        # (docs/plugins.md): pasted elsewhere, the line needs its PYTHONPATH.
        command = (
            f"PYTHONPATH=. {command} (run from the folder that holds the plug-in's "
            "module, or put that folder on PYTHONPATH)"
        )
    rows: list[tuple[str, Any]] = [
        (REPRODUCE, command),
        (
            VERSIONS,
            versions_text(dpaudit=result.version, python=python, library=library),
        ),
    ]
    return rows
