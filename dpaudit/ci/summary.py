"""What ``dpaudit check`` writes besides the audit directories: JUnit XML and the
Markdown step summary (``$GITHUB_STEP_SUMMARY``).

Both restate the outcomes of :func:`dpaudit.ci.run.run_check`, the audits' power
included (attainable maximum, rounds needed when INCONCLUSIVE, saturation, a
constant release, approximate violations, randomness); nothing is estimated here.
The summary's heading is :func:`dpaudit.ci.run.headline`: VIOLATIONs first.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from dpaudit import __version__
from dpaudit.audit.result import Verdict
from dpaudit.ci.policy import PRESETS
from dpaudit.ci.run import PRECEDENCE, CheckOutcome, CheckReport, power_text
from dpaudit.errors import EXIT_BAD_INPUT
from dpaudit.reports.junit import JunitCase, case_from_result, render_junit
from dpaudit.reports.markdown import md_escape, md_table
from dpaudit.reports.meaning import DATA_NOTICE, explain
from dpaudit.reports.numbers import fmt_alpha, fmt_eps, fmt_number, fmt_percent
from dpaudit.reports.wording import attainable, randomness_text

__all__ = [
    "junit_text",
    "render_check_markdown",
    "summary_path",
    "write_junit",
    "write_summary",
]


def junit_text(report: CheckReport) -> str:
    """The check's JUnit XML: one test case per audit."""
    cases = []
    for o in report.outcomes:
        if o.result is not None:
            case = case_from_result(o.result, name=o.name, report_path=o.report_path)
            cases.append(case)
        else:
            cases.append(
                JunitCase(
                    name=o.name,
                    classname=f"dpaudit.{o.settings.get('generator', 'audit')}",
                    status="error",
                    message=f"the audit did not run: {o.error}",
                    details=f"the audit did not run: {o.error}\n\nsettings: "
                    + json.dumps(dict(o.settings), default=str, sort_keys=True),
                    seconds=o.seconds,
                )
            )
    policy = report.policy
    properties = [
        ("policy", policy.source),
        ("alpha", f"{policy.alpha:g}"),
        ("alpha_per_audit", f"{policy.audit_alpha:g}"),
        ("correction", "bonferroni"),
        ("preset", policy.preset or ""),
        ("exit_code", str(report.exit_code)),
    ]
    return render_junit(cases, suite="dpaudit check", properties=properties)


def write_junit(report: CheckReport, path: Path | str) -> Path:
    """Writes the check's JUnit XML atomically to ``path``."""
    from dpaudit.io import write_atomic

    return write_atomic(path, junit_text(report))


def _bad_input(outcome: CheckOutcome) -> bool:
    return outcome.status == "ERROR" and outcome.exit_code == EXIT_BAD_INPUT


def render_check_markdown(report: CheckReport) -> str:
    """The step summary of ``dpaudit check``.

    Args:
        report: The check's outcome.

    Returns:
        Markdown text ending with a newline.
    """
    outcomes = report.outcomes
    counts = {
        s: sum(o.status == s for o in outcomes)
        for s in ("CONSISTENT", "VIOLATION", "INCONCLUSIVE", "ERROR")
    }
    lines = [
        f"## dpaudit check {report.headline} (exit {report.exit_code})",
        "",
        (
            f"{len(outcomes)} audit(s): {counts['CONSISTENT']} consistent, "
            f"{counts['VIOLATION']} violation(s), {counts['INCONCLUSIVE']} "
            f"inconclusive, {counts['ERROR']} failed to run. Policy "
            f"`{md_escape(report.policy.source)}`."
        ),
        "",
    ]
    rows = []
    for o in outcomes:
        r = o.result
        needed = r.power.rounds_needed if r is not None and r.power else None
        status = f"**{o.status}**" + (" (bad input)" if _bad_input(o) else "")
        if r is not None and r.verdict == Verdict.VIOLATION and r.approximate:
            status += " (approximate)"
        if r is not None and r.power is not None and r.power.constant_release:
            status += " (constant release)"
        rows.append(
            [
                status,
                md_escape(o.name),
                md_escape(r.label) if r else md_escape(o.settings.get("generator", "")),
                md_escape(r.attack) if r else "—",
                fmt_eps(r.eps_emp) if r else "—",
                fmt_number(r.eps_claimed) if r else "—",
                fmt_eps(attainable(r)) if r else "—",
                str(needed)
                if needed is not None and o.status == "INCONCLUSIVE"
                else "—",
                md_escape(r.randomness or "—") if r else "—",
                md_escape(o.report_path or o.out_dir),
            ]
        )
    lines += md_table(
        [
            "status",
            "audit",
            "generator",
            "attack",
            "eps_emp",
            "claimed",
            "max attainable",
            "rounds/world needed",
            "randomness",
            "report",
        ],
        rows,
    )
    lines.append("")
    policy = report.policy
    lines.append(
        f"**Statistics.** The policy's false-alarm level alpha = "
        f"{fmt_alpha(policy.alpha)} is split over its {len(outcomes)} audit(s) "
        f"(Bonferroni): each audit's eps_emp is a lower bound at level "
        f"{fmt_alpha(policy.audit_alpha)} ({fmt_percent(1 - policy.audit_alpha)} "
        f"confidence), so the chance that any VIOLATION here is a false alarm is at "
        f"most {fmt_alpha(policy.alpha)}."
    )
    lines.append("")
    lines += _power_lines(report)
    # The most severe first (a VIOLATION before anything else), then policy order.
    for o in sorted(outcomes, key=lambda o: PRECEDENCE.index(o.exit_code)):
        r = o.result
        constant = r is not None and r.power is not None and r.power.constant_release
        warned = r is not None and bool(r.warnings)
        if r is not None and (
            o.status in ("VIOLATION", "INCONCLUSIVE") or constant or warned
        ):
            reason = f" {md_escape(r.verdict_reason)}" if r.verdict_reason else ""
            lines.append(
                f"**{md_escape(o.name)}** ({o.status}, "
                f"{md_escape(power_text(r).strip('()'))}):{reason} "
                + " ".join(md_escape(p) for p in explain(r))
                + f" Randomness: {md_escape(randomness_text(r))}."
            )
            lines.append("")
        elif o.error:
            kind = ", bad input" if _bad_input(o) else ""
            lines.append(
                f"**{md_escape(o.name)}** ({o.status}{kind}): {md_escape(o.error)}"
            )
            lines.append("")
    lines += [f"_{md_escape(DATA_NOTICE)} dpaudit {__version__}._", ""]
    return "\n".join(lines)


def _power_lines(report: CheckReport) -> list[str]:
    policy = report.policy
    planned = [
        (o, o.eps_max_planned) for o in report.outcomes if o.eps_max_planned is not None
    ]
    lines: list[str] = []
    if policy.preset:
        preset = PRESETS.get(policy.preset)
        text = preset.description if preset else ""
        lines += [f"**Preset `{md_escape(policy.preset)}`.** {md_escape(text)}", ""]
    if planned:
        parts = []
        weak = []
        for o, eps in planned:
            parts.append(f"{md_escape(o.name)} {fmt_eps(eps)}")
            claimed = (
                o.result.eps_claimed
                if o.result is not None
                else o.settings.get("epsilon", 1.0)
            )
            if eps is not None and isinstance(claimed, int | float) and eps <= claimed:
                weak.append(md_escape(o.name))
        lines.append(
            "**Power.** The largest eps_emp each audit could show at its test size "
            "and per-attack level (an attack with no errors): " + "; ".join(parts) + "."
        )
        if weak:
            lines.append(
                " These audits cannot refute their claim whatever the generator does "
                "(the attainable maximum is not above the claimed epsilon), so they "
                "are INCONCLUSIVE (the check exits 4 unless another audit fails "
                "it harder); give them more rounds: " + ", ".join(weak) + "."
            )
        lines.append("")
    return lines


def write_summary(report: CheckReport, path: Path | str) -> Path:
    """Appends the check's Markdown summary to ``path``.

    Appending (not replacing) is what ``$GITHUB_STEP_SUMMARY`` expects: other steps'
    output in the same file is kept.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as handle:
        handle.write(render_check_markdown(report))
    return path


def summary_path(explicit: Path | str | None) -> Path | None:
    """``--summary`` if given, else ``$GITHUB_STEP_SUMMARY`` if set, else ``None``."""
    if explicit:
        return Path(explicit)
    env = os.environ.get("GITHUB_STEP_SUMMARY")
    return Path(env) if env else None
