"""Running a policy's audits and deciding ``dpaudit check``'s exit code.

:func:`run_check` runs each audit of a :class:`~dpaudit.ci.policy.Policy`, writes its
audit directory and HTML report, and decides the exit code (:func:`exit_code_of`):
1 when any audit is a VIOLATION, whatever the others did (a proven leak is never
hidden behind an incomplete check); else 2 when an audit stopped on bad input (a
plug-in that breaks its contract, say), 3 when one failed for another reason (out of
memory, a bug), 4 when one is INCONCLUSIVE (it could not have refuted its claim, or
produced no estimate); 0 when every audit is CONSISTENT. A bad policy raises before
anything runs (the command exits 2). :func:`headline` says the same in words,
the VIOLATIONs first.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from dpaudit.audit import RESULT_FILE, AuditResult
from dpaudit.audit.result import Verdict
from dpaudit.ci.policy import Policy
from dpaudit.ci.preflight import check_outputs, preflight_audit
from dpaudit.errors import (
    EXIT_BAD_INPUT,
    EXIT_FAILED,
    EXIT_INCONCLUSIVE,
    EXIT_OK,
    EXIT_VIOLATION,
    InvalidParameterError,
    exit_code_for,
)
from dpaudit.reports.numbers import fmt_eps, fmt_number, fmt_versus
from dpaudit.reports.profile_text import comparison_text
from dpaudit.reports.wording import approximate_note, attainable

__all__ = [
    "CheckOutcome",
    "CheckReport",
    "as_result",
    "exit_code_of",
    "headline",
    "planned_power",
    "run_check",
]

Status = Literal["CONSISTENT", "VIOLATION", "INCONCLUSIVE", "ERROR"]
#: ``run_audit(config, *, out_dir, progress)``: returns an :class:`AuditResult` (or,
#: from an older runner, the ``result.json`` dict).
Runner = Callable[..., "AuditResult | Mapping[str, Any]"]
ConfigFactory = Callable[[Mapping[str, Any]], Any]


@dataclass(frozen=True, kw_only=True, slots=True)
class CheckOutcome:
    """What happened to one audit of the policy.

    Attributes:
        name: the audit's name.
        status: its verdict, or ``ERROR`` when it could not run.
        settings: the settings it ran with.
        out_dir: its audit directory.
        result: the audit's result (``None`` after an error).
        report_path: its HTML report, when written.
        error: what went wrong (an error, or a report that could not be rendered).
        seconds: wall-clock time of the run.
        eps_max_planned: the largest eps_emp its test size can show at its alpha,
            known before the run (``None`` when it could not be computed).
        error_exit: for ``ERROR``, the exit code of the error that stopped it
            (:func:`dpaudit.errors.exit_code_for`: 2 bad input, such as a plug-in
            that breaks its contract; 3 a failure, such as out of memory or a bug).
    """

    name: str
    status: Status
    settings: Mapping[str, Any]
    out_dir: Path
    result: AuditResult | None = None
    report_path: Path | None = None
    error: str | None = None
    seconds: float = 0.0
    eps_max_planned: float | None = None
    error_exit: int = EXIT_FAILED

    @property
    def exit_code(self) -> int:
        """This audit's own exit code (:func:`exit_code_of` combines them)."""
        if self.status == "ERROR":
            return self.error_exit
        return _STATUS_CODES[self.status]


_STATUS_CODES = {
    "CONSISTENT": EXIT_OK,
    "VIOLATION": EXIT_VIOLATION,
    "INCONCLUSIVE": EXIT_INCONCLUSIVE,
    "ERROR": EXIT_FAILED,
}
#: Which code wins when audits end differently: a VIOLATION over everything, then
#: what the user must fix (bad input), a failed run, a weak audit; 0 only if all pass.
PRECEDENCE = (EXIT_VIOLATION, EXIT_BAD_INPUT, EXIT_FAILED, EXIT_INCONCLUSIVE, EXIT_OK)


def exit_code_of(outcomes: Sequence[str | int]) -> int:
    """The exit code of a check from its audits' statuses (or their own exit codes).

    A status is ``CONSISTENT`` (0), ``VIOLATION`` (1), ``INCONCLUSIVE`` (4) or
    ``ERROR`` (3, a failed run; pass :attr:`CheckOutcome.exit_code`, 2, for one that
    stopped on bad input). The check's code is the first of :data:`PRECEDENCE` that
    any audit has: 1 when any audit is a VIOLATION, whatever the others did; then
    2, 3, 4; 0 only when every audit is CONSISTENT. No audit at all is bad input (2).

    Example:
        >>> exit_code_of(["CONSISTENT", "VIOLATION"]), exit_code_of(["CONSISTENT"])
        (1, 0)
        >>> exit_code_of(["INCONCLUSIVE", "VIOLATION", "ERROR"])
        1
        >>> exit_code_of(["INCONCLUSIVE", "ERROR"]), exit_code_of(["INCONCLUSIVE", 2])
        (3, 2)
        >>> exit_code_of(["CONSISTENT", "INCONCLUSIVE"])
        4
    """
    if not outcomes:
        return EXIT_BAD_INPUT
    codes = {o if isinstance(o, int) else _STATUS_CODES[o] for o in outcomes}
    return next(code for code in PRECEDENCE if code in codes)


def headline(outcomes: Sequence[CheckOutcome]) -> str:
    """The check's outcome in words, the most severe first: ``passed: ...`` or
    ``FAILED: 1 VIOLATION (leak); 1 INCONCLUSIVE (weak): ...``.

    Every kind of outcome present is named with its audits, in :data:`PRECEDENCE`
    order, so a VIOLATION is never hidden behind an incomplete check; audits whose
    release was constant (``power.constant_release``) are named last.
    """
    constant = [
        o.name for o in outcomes if o.result is not None and _constant_release(o.result)
    ]
    note = (
        (
            f"; {len(constant)} with a constant release ({', '.join(constant)}: the "
            "target changed nothing released)"
        )
        if constant
        else ""
    )
    if outcomes and all(o.status == "CONSISTENT" for o in outcomes):
        return f"passed: {len(outcomes)} audit(s) CONSISTENT, no violation found{note}"
    groups = [
        (EXIT_VIOLATION, "VIOLATION", "privacy violation found"),
        (EXIT_BAD_INPUT, "could not run (bad input)", "fix the input named"),
        (EXIT_FAILED, "failed to run", "see the error"),
        (
            EXIT_INCONCLUSIVE,
            "INCONCLUSIVE",
            "too weak to refute the claim: give it more rounds",
        ),
    ]
    parts = []
    for code, label, hint in groups:
        names = [o.name for o in outcomes if o.exit_code == code]
        if names:
            parts.append(f"{len(names)} {label} ({', '.join(names)}: {hint})")
    consistent = sum(o.status == "CONSISTENT" for o in outcomes)
    if consistent:
        parts.append(f"{consistent} CONSISTENT")
    return "FAILED: " + "; ".join(parts or ["no audit ran"]) + note


@dataclass(frozen=True, kw_only=True, slots=True)
class CheckReport:
    """The outcome of a whole check.

    Attributes:
        policy: the policy that ran.
        outcomes: one per audit, in policy order.
        out_dir: the directory holding every audit directory.
    """

    policy: Policy
    outcomes: tuple[CheckOutcome, ...]
    out_dir: Path

    @property
    def exit_code(self) -> int:
        """1 a VIOLATION (whatever else), 2 bad input, 3 a failed run, 4 an
        INCONCLUSIVE audit, 0 all CONSISTENT (:func:`exit_code_of`)."""
        return exit_code_of([o.exit_code for o in self.outcomes])

    @property
    def headline(self) -> str:
        """:func:`headline` of the outcomes."""
        return headline(self.outcomes)


def planned_power(settings: Mapping[str, Any]) -> float | None:
    """The largest eps_emp an audit with these settings can show, before running it:
    :func:`dpaudit.audit.games.estimate.planned_attainable_maximum` of the audit they
    configure (its test split, ``delta``, and ``alpha`` split over its attacks as the
    analysis splits it), so it is the attainable maximum the audit's result will
    report. ``None`` when the settings are invalid (the run reports why).
    """
    try:
        from dpaudit.audit import AuditConfig
        from dpaudit.audit.games import planned_attainable_maximum

        return float(planned_attainable_maximum(AuditConfig.from_mapping(settings)))
    except Exception:  # reported by the run
        return None


def _json_default(value: Any) -> Any:
    item = getattr(value, "item", None)
    return item() if callable(item) else str(value)


def as_result(
    returned: AuditResult | Mapping[str, Any], *, source: Path | str | None = None
) -> AuditResult:
    """The :class:`AuditResult` of what a runner returned: already one (``run_audit``)
    or a ``result.json`` mapping (a custom runner), validated against the schema.

    Args:
        returned: ``run_audit``'s return value.
        source: The ``result.json`` it came from (kept when the result has none).

    Returns:
        The :class:`AuditResult`.

    Raises:
        InvalidParameterError: If a dict does not conform to the result schema.
    """
    if isinstance(returned, AuditResult):
        if returned.source is None and source is not None:
            return dataclasses.replace(returned, source=Path(source))
        return returned
    from dpaudit.reports.schema import validate

    # JSON round trip: the returned dict may hold NumPy scalars.
    doc = json.loads(json.dumps(returned, default=_json_default))
    validate(doc, source=str(source or "the audit's result"))
    return AuditResult.from_json(doc, source=source)


def _write_report(out_dir: Path, result: AuditResult) -> Path:
    from dpaudit.reports import render_html, write_atomic

    return write_atomic(out_dir / "report.html", render_html([result]))


def _configs(
    policy: Policy, make_config: ConfigFactory, validate: Callable[[Any], None]
) -> list[Any]:
    """Every audit's config, each validated as far as it can be without training."""
    configs = []
    for audit in policy.audits:
        try:
            config = make_config(dict(audit.settings))
            validate(config)
        except InvalidParameterError as err:
            raise InvalidParameterError(
                f"{policy.source}, audit {audit.name!r}: {err}"
            ) from err
        configs.append(config)
    return configs


def run_check(
    policy: Policy,
    *,
    out_dir: Path | str,
    runner: Runner | None = None,
    make_config: ConfigFactory | None = None,
    progress: bool = False,
    reports: bool = True,
    log: Callable[[str], None] | None = None,
    force: bool = False,
    resume: bool = False,
    files: Sequence[tuple[str, Path, bool]] = (),
    validate: Callable[[Any], None] = preflight_audit,
) -> CheckReport:
    """Runs every audit of ``policy`` and collects the outcomes.

    Before anything trains, every audit's configuration is built and validated
    (``validate``, by default :func:`~dpaudit.ci.preflight.preflight_audit`: the
    generator, plug-in, dataset, domain, target and attacks) and every output is
    checked (:func:`~dpaudit.ci.preflight.check_outputs`), so a typo or an
    unwritable path stops the check at once. A run that raises is recorded as
    ``ERROR`` and the check goes on.

    Args:
        policy: The policy.
        out_dir: Where audit directories go (``out_dir/<audit name>/``); a
            comparison report of all audits is written to ``out_dir/report.html``.
        runner: ``run_audit(config, *, out_dir, progress)``; default
            :func:`dpaudit.audit.run_audit`.
        make_config: Builds the runner's config from settings; default
            ``AuditConfig.from_mapping``.
        progress: Show each run's progress bar.
        reports: Write HTML reports.
        log: Called with one line per finished audit.
        force: Replace audit directories an earlier check left in ``out_dir``.
        resume: Continue the unfinished audits (same configuration) an earlier
            check left in ``out_dir``.
        files: ``(option, path, append)`` of the other files the caller will write
            (``--junit``, ``--summary``), checked before any run.
        validate: Called with each config before any run; raises
            :class:`InvalidParameterError` on a bad one.

    Returns:
        The :class:`CheckReport` (its ``exit_code`` is the command's).

    Raises:
        InvalidParameterError: If an audit's settings are invalid, an output cannot
            be written, or ``out_dir`` holds audits and neither ``force`` nor
            ``resume`` is set (all before any run).
    """
    from dpaudit.reports.model import attach_directory

    if runner is None or make_config is None:
        from dpaudit.audit import AuditConfig, run_audit

        runner = runner or run_audit
        make_config = make_config or AuditConfig.from_mapping
    # Absolute now: a generator changing the working directory during a run must
    # not move the audit directories, their reports or the comparison report.
    root = Path(os.path.abspath(out_dir))
    configs = _configs(policy, make_config, validate)
    resumes = check_outputs(
        root,
        [(a.name, c) for a, c in zip(policy.audits, configs)],
        force=force,
        resume=resume,
        files=files,
    )
    outcomes: list[CheckOutcome] = []
    for i, (audit, config) in enumerate(zip(policy.audits, configs), start=1):
        directory = root / audit.name
        planned = planned_power(audit.settings)
        started = time.perf_counter()
        status: Status
        result = None
        report_path = None
        error = None
        error_exit = EXIT_FAILED
        try:
            flags = {"force": True} if force else {}
            if resumes.get(audit.name):
                flags = {"resume": True}
            returned = runner(config, out_dir=directory, progress=progress, **flags)
            # run_audit returns an AuditResult; a custom runner (tests, scripts) may
            # return the result.json mapping, which as_result validates.
            result = as_result(returned, source=directory / RESULT_FILE)
            result = attach_directory(result, directory)
            status = result.verdict.value
        except Exception as err:  # recorded; the other audits still run
            status = "ERROR"
            error = f"{type(err).__name__}: {err}"
            error_exit = exit_code_for(err)
        seconds = time.perf_counter() - started
        # Paths are shown as the user gave them (the work uses the absolute ones).
        shown = Path(out_dir) / audit.name
        if result is not None and reports:
            try:
                written = _write_report(directory, result)
                report_path = shown / written.relative_to(directory)
            except Exception as err:  # a report problem does not change the verdict
                error = f"report not written: {type(err).__name__}: {err}"
        outcome = CheckOutcome(
            name=audit.name,
            status=status,
            settings=audit.settings,
            out_dir=shown,
            result=result,
            report_path=report_path,
            error=error,
            seconds=seconds,
            eps_max_planned=planned,
            error_exit=error_exit,
        )
        outcomes.append(outcome)
        if log is not None:
            log(log_line(i, len(policy.audits), outcome))
    report = CheckReport(policy=policy, outcomes=tuple(outcomes), out_dir=root)
    if reports and len(outcomes) > 1:
        results = [o.result for o in outcomes if o.result is not None]
        from dpaudit.reports import render_html, write_atomic
        from dpaudit.reports.model import Unfinished

        # Audits that did not finish are listed as such, never silently left out.
        unfinished = [
            Unfinished(path=o.name, status="ERROR", reason=o.error or "did not run")
            for o in outcomes
            if o.result is None
        ]
        # A failed comparison leaves the per-audit reports and the summary.
        with contextlib.suppress(Exception):
            write_atomic(
                root / "report.html",
                render_html(results, base=root, compare=True, unfinished=unfinished),
            )
    return report


CONSTANT_RELEASE_TEXT = (
    "constant release: every round of both worlds released the same features, the "
    "target changed nothing released"
)
"""How the log line and the step summary state ``power.constant_release``."""


def _constant_release(result: AuditResult) -> bool:
    return result.power is not None and result.power.constant_release


def power_text(result: AuditResult) -> str:
    """The numbers behind a verdict, with the audit's power, in one parenthesis
    (the constant-release flag and the result's warnings too, when set)."""
    top = fmt_eps(attainable(result))
    claim = fmt_number(result.eps_claimed)
    if result.eps_emp is None:
        return f"(no estimate; claimed {claim})"
    eps = fmt_eps(result.eps_emp)
    if result.verdict == Verdict.INCONCLUSIVE:
        needed = result.power.rounds_needed if result.power else None
        more = f"; needs {needed} rounds per world" if needed is not None else ""
        if _constant_release(result):
            # No number of rounds helps a release that never changes.
            more = f"; {CONSTANT_RELEASE_TEXT}"
        more += "".join(f"; warning: {w.message}" for w in result.warnings)
        return (
            f"(max attainable {' <= claimed '.join(fmt_versus(attainable(result), result.eps_claimed))}"
            ": could not refute the claim; "
            f"eps_emp {eps}{more})"
        )
    parts = [comparison_text(result), f"max attainable {top}"]
    note = approximate_note(result)
    if note:
        parts.append(note)
    if result.power is not None and result.power.saturated:
        parts.append("saturated: more rounds would show more")
    if _constant_release(result):
        parts.append(CONSTANT_RELEASE_TEXT)
    parts += [f"warning: {w.message}" for w in result.warnings]
    return "(" + "; ".join(parts) + ")"


def log_line(i: int, n: int, outcome: CheckOutcome) -> str:
    """The line logged when audit ``i`` of ``n`` has finished."""
    head = f"[{i}/{n}] {outcome.name}: {outcome.status}"
    if outcome.result is not None:
        head += " " + power_text(outcome.result)
    if outcome.error:
        head += f" — {outcome.error}"
    if outcome.report_path is not None:
        head += f" — report: {outcome.report_path}"
    return head
