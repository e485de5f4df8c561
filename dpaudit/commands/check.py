"""``dpaudit check --policy privacy.toml``: privacy regression tests for CI.

Runs every audit of the policy (see :mod:`dpaudit.ci.policy` for the format), writes
each audit directory and HTML report under ``--out``, a JUnit file (``--junit``) and a
Markdown summary (``--summary``, else ``$GITHUB_STEP_SUMMARY`` when set; appended).

Every audit is validated (generator, plug-in, dataset, domain, target, attacks) and
every output checked for writing before the first one trains. ``--force`` starts
afresh the audits an earlier check left in ``--out``; ``--resume`` continues them.

Exit codes (the epilog of ``--help``, :data:`dpaudit.commands.EXIT_CODES_HELP`): 1 when
any audit is a VIOLATION, whatever the others did; else 2 bad input (a bad policy
before anything runs, or an audit stopped on bad input such as a plug-in that breaks
its contract), 3 a run that failed otherwise, 4 an INCONCLUSIVE audit; 0 when every
audit is CONSISTENT. The last line says the same, the VIOLATIONs first. Ctrl-C exits
130 and SIGTERM 143, each with one line; the running audit stops as ``dpaudit audit``
does (its store continues with ``--resume``). The JUnit file and the summary are
written only once every audit has run.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from dpaudit.commands import EXIT_CODES_HELP, EXIT_TERMINATED, HelpFormatter
from dpaudit.errors import exit_code_for

__all__ = ["add_parser", "run"]


def _optional_path(text: str) -> Path | None:
    """A path flag's value; empty (``--summary "$GITHUB_STEP_SUMMARY"`` where the
    variable is unset) is no path, not the working directory."""
    return Path(text) if text else None


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Registers the ``check`` command.

    Args:
        subparsers: The object ``ArgumentParser.add_subparsers()`` returned.

    Returns:
        The command's parser (its ``func`` default is :func:`run`).
    """
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "check",
        help="run the audits of a policy file; fail on a privacy violation (for CI)",
        description=(
            "Run every [[audit]] of a policy file and fail on a privacy violation. An "
            "INCONCLUSIVE audit is one whose attainable maximum does not exceed the "
            "claim: it could not have refuted it; give it more rounds. The policy's "
            "alpha (default 0.05) is the chance of any false alarm; it is split over "
            "the audits (Bonferroni). See docs/ci.md."
        ),
        epilog=EXIT_CODES_HELP,
        formatter_class=HelpFormatter,
    )
    parser.add_argument(
        "--policy",
        required=True,
        type=Path,
        metavar="PATH",
        help="policy file (TOML), e.g. privacy.toml",
    )
    parser.add_argument(
        "--junit",
        type=Path,
        metavar="PATH",
        default=None,
        help="write JUnit XML here (one test case per audit)",
    )
    parser.add_argument(
        "--summary",
        type=_optional_path,
        metavar="PATH",
        default=None,
        help="append a Markdown summary here (default: $GITHUB_STEP_SUMMARY when set; "
        'an empty PATH, what --summary "$GITHUB_STEP_SUMMARY" gives outside CI, is '
        "none)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        default=Path("dpaudit-check"),
        help="directory of the audit directories and reports "
        "(default: ./dpaudit-check)",
    )
    reuse = parser.add_mutually_exclusive_group()
    reuse.add_argument(
        "--force",
        action="store_true",
        help="start afresh the audits an earlier check left in --out",
    )
    reuse.add_argument(
        "--resume",
        action="store_true",
        help="continue the unfinished audits an earlier check left in --out (same "
        "policy settings); the others run from the start",
    )
    parser.add_argument(
        "--quiet",
        "--no-progress",
        dest="quiet",
        action="store_true",
        help="no progress on stderr (shown only when stderr is a terminal)",
    )
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="check the policy and every audit as the check does and print each "
        "audit's plan, then exit 0 (2 with the check's refusal); fits nothing and "
        "writes nothing",
    )
    parser.add_argument(
        "--progress",
        action="store_true",
        help="show progress even when stderr is not a terminal (e.g. in a CI log)",
    )
    parser.set_defaults(func=run)
    return parser


def run(args: argparse.Namespace) -> int:
    """Runs ``dpaudit check``.

    Args:
        args: Parsed arguments (``policy``, ``junit``, ``summary``, ``out``,
            ``progress``).

    Returns:
        The exit code: 1 a VIOLATION (whatever else), 2 bad input, 3 a failed run, 4
        an INCONCLUSIVE audit, 0 all CONSISTENT. When the JUnit file or the summary
        cannot be written after the audits ran, that error's code (2 or 3) joins
        them (a VIOLATION still gives 1).

    Raises:
        InvalidParameterError: On a bad policy or audit (generator, dataset, target,
            attack), an output that cannot be written, or audits already in
            ``--out`` without ``--force`` or ``--resume``: all before any audit runs.
    """
    # Imported here, not at the top: `dpaudit --help` builds this parser, and the
    # audit machinery (torch, pandas, scipy) is needed only to run a check.
    from dpaudit.commands.audit import Terminated, terminate_as_exception

    try:
        with terminate_as_exception():
            return _run(args)
    except Terminated:
        from dpaudit.audit import shutdown_workers

        shutdown_workers()
        print(
            f"dpaudit: terminated (SIGTERM); the audits that ran are in {args.out}: "
            "continue the unfinished ones with --resume",
            file=sys.stderr,
        )
        return EXIT_TERMINATED


def _absolute(path: Path | str | None) -> Path | None:
    """``path`` made absolute now: a generator changing the working directory during
    the run must not move the outputs."""
    return None if path is None else Path(os.path.abspath(path))


def _dry_run(args: argparse.Namespace, policy: Any, files: list[Any]) -> int:
    """``--dry-run``: every audit's configuration built and checked as
    :func:`~dpaudit.ci.run.run_check` builds it, the outputs checked (read only),
    and each audit's plan printed (:func:`dpaudit.audit.dryrun.dry_run`)."""
    from dpaudit.audit import AuditConfig, dry_run
    from dpaudit.ci.preflight import check_outputs
    from dpaudit.commands.audit import checked_config
    from dpaudit.errors import InvalidParameterError
    from dpaudit.reports.escape import printable

    root = Path(os.path.abspath(args.out))
    configs: list[AuditConfig] = []
    for audit in policy.audits:
        try:
            configs.append(checked_config(dict(audit.settings)))
        except InvalidParameterError as err:
            raise InvalidParameterError(
                f"{policy.source}, audit {audit.name!r}: {err}"
            ) from err
    force = bool(getattr(args, "force", False))
    resume = bool(getattr(args, "resume", False))
    resumes = check_outputs(
        root,
        [(a.name, c) for a, c in zip(policy.audits, configs)],
        force=force,
        resume=resume,
        files=files,
    )
    print("dry run: nothing fitted, nothing written")
    for audit, config in zip(policy.audits, configs):
        try:
            rows = dry_run(
                config,
                out_dir=root / audit.name,  # as the run names it
                resume=resumes.get(audit.name, False),
                force=force,
            )
        except InvalidParameterError as err:
            raise InvalidParameterError(
                f"{policy.source}, audit {audit.name!r}: {err}"
            ) from err
        print(printable(f"audit {audit.name!r}"))
        for name, text in rows:
            print(printable(f"  {name:<22} {text}"))
    return 0


def _run(args: argparse.Namespace) -> int:
    from dpaudit.ci import (
        exit_code_of,
        load_policy,
        run_check,
        summary_path,
        write_junit,
        write_summary,
    )
    from dpaudit.reports.escape import printable

    policy = load_policy(args.policy)
    junit = getattr(args, "junit", None)
    summary = summary_path(getattr(args, "summary", None))
    junit_at = _absolute(junit) if junit else None
    summary_at = _absolute(summary)
    files: list[tuple[str, Path, bool]] = []
    if junit_at is not None:
        files.append(("--junit", junit_at, False))
    if summary_at is not None:
        files.append(("--summary", summary_at, True))
    print(
        f"dpaudit check: {len(policy.audits)} audit(s) from {policy.source}; "
        f"alpha {policy.alpha:g} overall, {policy.audit_alpha:g} per audit "
        f"(Bonferroni){'; preset ' + policy.preset if policy.preset else ''}",
        flush=True,
    )
    if getattr(args, "dry_run", False):
        return _dry_run(args, policy, files)
    report = run_check(
        policy,
        out_dir=Path(args.out),  # run_check works on the absolute path, shows this
        progress=not getattr(args, "quiet", False)
        and (bool(getattr(args, "progress", False)) or sys.stderr.isatty()),
        log=lambda line: print(printable(line), flush=True),
        force=bool(getattr(args, "force", False)),
        resume=bool(getattr(args, "resume", False)),
        files=files,
    )
    code = report.exit_code
    try:
        if junit_at is not None:
            write_junit(report, junit_at)
            print(f"dpaudit check: JUnit XML written to {junit}")
        if summary_at is not None:
            write_summary(report, summary_at)
            print(f"dpaudit check: summary appended to {summary}")
    except OSError as err:  # checked before the run; the disk may still fail
        print(
            f"dpaudit: error: cannot write {err.filename or 'an output'}: "
            f"{err.strerror or err}. The audits ran; their directories are in "
            f"{report.out_dir}.",
            file=sys.stderr,
        )
        # A VIOLATION found is never hidden behind an output problem.
        code = exit_code_of([code, exit_code_for(err)])
    print(
        f"dpaudit check {report.headline} (exit {code})",
        file=sys.stderr if code else sys.stdout,
    )
    return code
