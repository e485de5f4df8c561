"""The result as the terminal shows it after ``dpaudit audit``.

One fact a line, the verdict coloured when the output is a terminal, then the
plain-language reading of :mod:`dpaudit.reports.meaning`. Every line passes through
:func:`~dpaudit.reports.escape.printable`, so no control character from a result
(an ESC in a column name, a bidi override in a generator's name) reaches the
terminal.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping

from dpaudit.audit.result import LOW_FPRS
from dpaudit.reports.escape import printable
from dpaudit.reports.meaning import explain, power_rows
from dpaudit.reports.model import AuditResult
from dpaudit.reports.numbers import fmt_alpha, fmt_eps, fmt_number, fmt_percent
from dpaudit.reports.wording import (
    attack_set_text,
    claim_extra_rows,
    classifier_text,
    confidence_text,
    dropped_lines,
    fmt_reference,
    resolution_text,
    rounds_text,
    tpr_cell,
    warning_lines,
)

__all__ = ["VERDICT_ANSI", "render_terminal"]


#: ANSI colours of the verdicts in a terminal (INCONCLUSIVE amber, not green).
VERDICT_ANSI: Mapping[str, str] = {
    "VIOLATION": "\033[1;31m",
    "CONSISTENT": "\033[1;32m",
    "INCONCLUSIVE": "\033[1;33m",
}


def render_terminal(result: AuditResult, *, color: bool = False) -> str:
    """The result as the terminal shows it after ``dpaudit audit``.

    Args:
        result: The audit result.
        color: Colour the verdict with ANSI codes (red, green, amber).

    Returns:
        Plain text, one fact a line, ending with a newline. Control characters from
        the result are shown as escapes (:func:`~dpaudit.reports.escape.printable`),
        a newline in a name included: the only raw controls are the line breaks
        and, with ``color``, the verdict's colour.
    """
    conf = confidence_text(result)
    lines = [
        f"audit of {result.label} on {result.dataset}, {attack_set_text(result)}, "
        f"{rounds_text(result)}",
        "",  # the verdict: added below, after the escaping, in colour if asked
        *(f"  {w}" for w in warning_lines(result)),
        f"  eps_emp                {fmt_eps(result.eps_emp)} (lower bound, {conf})",
        f"  claimed epsilon        {fmt_number(result.eps_claimed)} "
        f"(delta {fmt_alpha(result.delta)})",
        f"  reference epsilon      {fmt_reference(result)}",
        f"  AUC                    {fmt_number(result.auc)}",
    ]
    lines += [f"  {name:<22} {text}" for name, text in power_rows(result)]
    c = result.counts
    lines.append(f"  TP / FP / TN / FN      {c.tp} / {c.fp} / {c.tn} / {c.fn}")
    for attack in result.attacks.values():
        low = ", ".join(
            f"TPR@{fmt_percent(fpr)} {tpr_cell(attack, fpr)}" for fpr in LOW_FPRS
        )
        mu = "" if attack.mu_emp is None else f", mu_emp {fmt_number(attack.mu_emp)}"
        model = classifier_text(attack)
        lines.append(
            f"    {attack.name:<20} eps_emp {fmt_eps(attack.eps_emp)}{mu}, "
            f"AUC {fmt_number(attack.auc)}, {low}" + (f", {model}" if model else "")
        )
    lines += [f"    {line}" for line in dropped_lines(result)]
    resolution = resolution_text(result)
    lines += [f"  claim.extra.{k:<10} {v}" for k, v in claim_extra_rows(result)]
    seconds = result.timing.total_seconds
    if seconds is not None:
        lines.append(f"  wall time              {seconds:.1f} s")
    lines = [printable(line) for line in lines]
    word = str(result.verdict)
    if color:
        word = f"{VERDICT_ANSI.get(word, '')}{word}\033[0m"
    lines[1] = f"  verdict                {word}"
    for paragraph in [*explain(result), *([resolution] if resolution else [])]:
        lines += ["", *textwrap.wrap(printable(paragraph), width=88)]
    return "\n".join(lines) + "\n"
