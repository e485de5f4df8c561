"""The words of a measurement-transcript audit (the result's ``measurements``):
what the transcript covers and leaves out, the exact privacy of the stated
measurements, the best any test could show at this size, and the claim against
what the measurements spend. Rows of ``(name, text)`` that
:func:`dpaudit.reports.meaning.power_rows` appends, so every renderer shows them;
nothing is computed here."""

from __future__ import annotations

import math

from dpaudit.audit.result import AuditResult
from dpaudit.reports.numbers import fmt_number

__all__ = ["measurement_rows"]


def measurement_rows(result: AuditResult) -> list[tuple[str, str]]:
    """``(name, text)`` rows of the ``measurements`` section (none without it)."""
    m = result.measurements
    if m is None:
        return []
    exact = []
    if m.mu_exact is not None:
        exact.append(
            f"mu {fmt_number(m.mu_exact)} (the Gaussian answers: sqrt of the sum of "
            "squared count changes over sigma^2)"
        )
    if m.eps_exact is None or math.isinf(m.eps_exact):
        exact.append(
            "epsilon infinite (answers stated without noise: exact counts a record "
            "changes)"
        )
    else:
        exact.append(
            f"epsilon {fmt_number(m.eps_exact)} at delta {m.eps_delta:g} (every "
            "answer composed, dp-accounting)"
        )
    changed = (
        f"{m.answers_changed} of {m.gaussian_answers + m.laplace_answers} answers "
        "change between the worlds"
    )
    if m.varies:
        changed += "; the measurements differ between rounds: the largest is shown"
    rows = [
        ("transcript covers", m.covers),
        ("transcript leaves out", m.leaves_out),
        ("exact privacy", "; ".join(exact) + f" ({changed})"),
    ]
    if m.mu_ceiling is not None:
        text = (
            f"{fmt_number(m.mu_ceiling)}: the expected mu_emp of the best possible "
            f"test of the exact mechanism (mu {fmt_number(m.mu_exact)}) at this size; "
            f"mu_emp {fmt_number(result.mu_emp)}"
        )
        if m.mu_to_ceiling is not None:
            text += f", {fmt_number(m.mu_to_ceiling)} of it"
        rows.append(("measurement ceiling", text))
    if m.claimed is not None and m.spent is not None:
        text = (
            f"claims {m.term} {fmt_number(m.claimed)}, measurements spend {m.term} "
            f"{fmt_number(m.spent)}"
        )
        if m.spends_more_than_claimed:
            text += (
                ": the stated measurements alone spend more than the claim (the "
                "plug-in's own statement)"
            )
        rows.append(("claim vs measurements", text))
    return rows
