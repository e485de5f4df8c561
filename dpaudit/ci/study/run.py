"""Running the study's audits, each in its own folder, resumably.

``OUT/study.json`` records the study's options; ``OUT/<audit name>/`` is an ordinary
audit directory (``audit.sqlite``, ``result.json``, ``report.html``). With ``resume``
a finished audit is read back, a started one continues where it stopped
(:func:`dpaudit.audit.run_audit` with ``resume=True``), and the others run. An
audit that raises is recorded as ``ERROR`` and the study goes on.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import dpaudit
from dpaudit.audit import RESULT_FILE, AuditResult
from dpaudit.ci.run import power_text
from dpaudit.ci.study.plan import StudyAudit
from dpaudit.errors import InvalidParameterError
from dpaudit.io import write_atomic

__all__ = [
    "MANIFEST",
    "StudyOutcome",
    "StudyRun",
    "check_manifest",
    "read_finished",
    "run_study",
]

MANIFEST = "study.json"
"""The file in the study's folder recording its options."""
STORE_FILE = "audit.sqlite"
#: ``run_audit(config, *, out_dir, resume, force, progress) -> AuditResult``.
Runner = Callable[..., AuditResult]


@dataclass(frozen=True, kw_only=True, slots=True)
class StudyOutcome:
    """What happened to one audit of the study.

    Attributes:
        audit: the audit.
        directory: its folder.
        result: its result (None after an error).
        error: what went wrong.
        seconds: wall time spent on it in this run (0 when read back).
        state: ``ran``, ``resumed``, ``done`` (read back) or ``error``.
    """

    audit: StudyAudit
    directory: Path
    result: AuditResult | None
    error: str | None = None
    seconds: float = 0.0
    state: str = "ran"


@dataclass(frozen=True, kw_only=True, slots=True)
class StudyRun:
    """The whole run: its outcomes, in plan order, and its wall time."""

    outcomes: tuple[StudyOutcome, ...]
    out_dir: Path
    wall_seconds: float
    options: Mapping[str, Any]


def check_manifest(
    out_dir: Path, options: Mapping[str, Any], *, resume: bool, force: bool
) -> None:
    """Checks ``out_dir`` against the study's ``options`` and writes the manifest.

    A new study needs an empty (or absent) folder, unless ``force``; a resumed one the
    same options (rounds, quick, seed, randomness: those that change a result).

    Raises:
        InvalidParameterError: the folder holds another study, or nothing to resume.
    """
    manifest = out_dir / MANIFEST
    if resume:
        if not manifest.is_file():
            raise InvalidParameterError(
                f"--resume: {str(out_dir)!r} holds no study to resume (no {MANIFEST})."
            )
        stored = json.loads(manifest.read_text(encoding="utf-8")).get("options", {})
        changed = sorted(k for k in options if stored.get(k) != options[k])
        if changed:
            was = ", ".join(f"{k}={stored.get(k)!r}" for k in changed)
            raise InvalidParameterError(
                f"--resume: the study in {str(out_dir)!r} ran with {was}; pass the same "
                "options, or start a new study in another --out."
            )
    elif out_dir.exists() and any(out_dir.iterdir()) and not force:
        raise InvalidParameterError(
            f"output directory {str(out_dir)!r} is not empty: pass --resume to continue "
            "the study in it, --force to start over, or choose another --out."
        )
    out_dir.mkdir(parents=True, exist_ok=True)
    write_atomic(
        manifest,
        json.dumps(
            {"kind": "study", "version": dpaudit.__version__, "options": dict(options)},
            indent=2,
            sort_keys=True,
        )
        + "\n",
    )


def _default_runner() -> tuple[Runner, Callable[[Mapping[str, Any]], Any]]:
    from dpaudit.audit import AuditConfig, run_audit

    return run_audit, AuditConfig.from_mapping


def _read_back(directory: Path) -> AuditResult:
    from dpaudit.reports.model import load_result

    return load_result(directory)


def read_finished(
    plan: Sequence[StudyAudit], out_dir: Path | str
) -> tuple[StudyOutcome, ...]:
    """The audits of ``plan`` already finished under ``out_dir`` (read back), for a
    report that covers the whole study after runs of parts of it (``--only``)."""
    root = Path(out_dir)
    out = []
    for audit in plan:
        directory = root / audit.name
        if (directory / RESULT_FILE).is_file():
            try:
                result = _read_back(directory)
            except InvalidParameterError:
                continue  # a broken folder: the next run of that audit replaces it
            out.append(
                StudyOutcome(
                    audit=audit, directory=directory, result=result, state="done"
                )
            )
    return tuple(out)


def _write_report(directory: Path, result: AuditResult) -> None:
    from dpaudit.reports import render_html

    write_atomic(directory / "report.html", render_html([result]))


def _run_one(
    audit: StudyAudit,
    directory: Path,
    *,
    resume: bool,
    force: bool,
    progress: bool,
    runner: Runner,
    make_config: Callable[[Mapping[str, Any]], Any],
) -> StudyOutcome:
    started = time.perf_counter()
    state = "ran"
    try:
        if resume and (directory / RESULT_FILE).is_file():
            return StudyOutcome(
                audit=audit,
                directory=directory,
                result=_read_back(directory),
                state="done",
            )
        config = make_config(dict(audit.settings))
        if resume and (directory / STORE_FILE).is_file():
            state = "resumed"
            result = runner(config, out_dir=directory, resume=True, progress=progress)
        else:
            result = runner(
                config, out_dir=directory, force=force or resume, progress=progress
            )
        from dpaudit.reports.model import attach_directory

        result = attach_directory(result, directory)
        _write_report(directory, result)
    except Exception as err:  # recorded; the other audits still run
        return StudyOutcome(
            audit=audit,
            directory=directory,
            result=None,
            error=f"{type(err).__name__}: {err}",
            seconds=time.perf_counter() - started,
            state="error",
        )
    return StudyOutcome(
        audit=audit,
        directory=directory,
        result=result,
        seconds=time.perf_counter() - started,
        state=state,
    )


def _log_line(i: int, n: int, outcome: StudyOutcome) -> str:
    head = f"[{i}/{n}] {outcome.audit.name}: "
    if outcome.result is None:
        return head + f"ERROR — {outcome.error}"
    text = head + f"{outcome.result.verdict.value} {power_text(outcome.result)}"
    if outcome.state == "done":
        return text + " (finished earlier; read back)"
    return (
        text
        + f" in {outcome.seconds:.1f} s"
        + (" (resumed)" if outcome.state == "resumed" else "")
    )


def run_study(
    plan: Sequence[StudyAudit],
    *,
    out_dir: Path | str,
    options: Mapping[str, Any],
    resume: bool = False,
    force: bool = False,
    progress: bool = False,
    log: Callable[[str], None] | None = None,
    runner: Runner | None = None,
    make_config: Callable[[Mapping[str, Any]], Any] | None = None,
) -> StudyRun:
    """Runs (or resumes) the audits of ``plan`` under ``out_dir``.

    Every audit's configuration is built first, so a bad setting stops the study
    before anything runs.

    Args:
        plan: The audits (:func:`~dpaudit.ci.study.plan.study_plan`).
        out_dir: The study's folder (one sub-folder per audit).
        options: The study's options, recorded in ``study.json`` and checked on resume.
        resume: Continue the study in ``out_dir``.
        force: Overwrite what ``out_dir`` holds.
        progress: Show each audit's progress bar.
        log: Called with a line as each audit starts and ends.
        runner, make_config: ``run_audit`` and ``AuditConfig.from_mapping`` (tests
            substitute their own).

    Returns:
        The :class:`StudyRun`.

    Raises:
        InvalidParameterError: a bad setting or output folder (before any audit).
    """
    started = time.perf_counter()
    if runner is None or make_config is None:
        default_runner, default_config = _default_runner()
        runner = runner or default_runner
        make_config = make_config or default_config
    for audit in plan:
        try:
            make_config(dict(audit.settings))
        except InvalidParameterError as err:
            raise InvalidParameterError(f"study audit {audit.name!r}: {err}") from err
    root = Path(out_dir)
    check_manifest(root, options, resume=resume, force=force)
    outcomes = []
    for i, audit in enumerate(plan, start=1):
        if log is not None:
            log(
                f"[{i}/{len(plan)}] {audit.name}: {audit.experiment}, "
                f"{audit.settings.get('rounds')} rounds per world ..."
            )
        outcome = _run_one(
            audit,
            root / audit.name,
            resume=resume,
            force=force,
            progress=progress,
            runner=runner,
            make_config=make_config,
        )
        outcomes.append(outcome)
        if log is not None:
            log(_log_line(i, len(plan), outcome))
    return StudyRun(
        outcomes=tuple(outcomes),
        out_dir=root,
        options=dict(options),
        wall_seconds=time.perf_counter() - started,
    )
