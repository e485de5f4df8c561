"""``dpaudit check --policy privacy.toml``: privacy regression tests for CI.

Runs every audit of the policy (see :mod:`dpaudit.ci.policy` for the format), writes
each audit directory and HTML report under ``--out``, a JUnit file (``--junit``) and a
Markdown summary (``--summary``, else ``$GITHUB_STEP_SUMMARY`` when set; appended).

Every audit is validated (generator, plug-in, dataset, domain, target, attacks) and
every output checked for writing before the first one trains. ``--force`` starts
afresh the audits an earlier check left in ``--out``; ``--resume`` continues them.

Exit codes: 0 every audit CONSISTENT; 1 a VIOLATION; 2 a bad policy, a failed run or an
INCONCLUSIVE audit.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from dpaudit.errors import InvalidParameterError

__all__ = ["add_parser", "run"]


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
            "Run every [[audit]] of a policy file. Exit 0 when all are CONSISTENT, 1 "
            "when any is a VIOLATION, 2 on a bad policy, a failed run or an "
            "INCONCLUSIVE audit (one whose attainable maximum does not exceed the "
            "claim: it could not have refuted it; give it more rounds). The policy's "
            "alpha (default 0.05) is the chance of any false alarm; it is split over "
            "the audits (Bonferroni)."
        ),
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
        type=Path,
        metavar="PATH",
        default=None,
        help="append a Markdown summary here (default: $GITHUB_STEP_SUMMARY when set)",
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
        "--quiet", "--no-progress", dest="quiet", action="store_true",
        help="no progress on stderr (shown only when stderr is a terminal)",
    )
    parser.add_argument(
        "--progress", action="store_true",
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
        0 (all CONSISTENT), 1 (a VIOLATION) or 2 (a failed or INCONCLUSIVE audit).

    Raises:
        InvalidParameterError: On a bad policy or audit (generator, dataset, target,
            attack), an output that cannot be written, or audits already in
            ``--out`` without ``--force`` or ``--resume``: all before any audit runs.
    """
    # Imported here, not at the top: `dpaudit --help` builds this parser, and the
    # audit machinery (torch, pandas, scipy) is needed only to run a check.
    from dpaudit.ci import (
        load_policy,
        run_check,
        summary_path,
        write_junit,
        write_summary,
    )

    policy = load_policy(args.policy)
    junit = getattr(args, "junit", None)
    summary = summary_path(getattr(args, "summary", None))
    files: list[tuple[str, Path, bool]] = []
    if junit:
        files.append(("--junit", Path(junit), False))
    if summary is not None:
        files.append(("--summary", Path(summary), True))
    print(
        f"dpaudit check: {len(policy.audits)} audit(s) from {policy.source}; "
        f"alpha {policy.alpha:g} overall, {policy.audit_alpha:g} per audit "
        f"(Bonferroni){'; preset ' + policy.preset if policy.preset else ''}",
        flush=True,
    )
    report = run_check(
        policy,
        out_dir=args.out,
        progress=not getattr(args, "quiet", False)
        and (bool(getattr(args, "progress", False)) or sys.stderr.isatty()),
        log=lambda line: print(line, flush=True),
        force=bool(getattr(args, "force", False)),
        resume=bool(getattr(args, "resume", False)),
        files=files,
    )
    try:
        if junit:
            write_junit(report, junit)
            print(f"dpaudit check: JUnit XML written to {junit}")
        if summary is not None:
            write_summary(report, summary)
            print(f"dpaudit check: summary appended to {summary}")
    except OSError as err:  # checked before the run; the disk may still fail
        raise InvalidParameterError(
            f"cannot write {err.filename or 'an output'}: {err.strerror or err}. The "
            f"audits ran (exit code {report.exit_code}); their directories are in "
            f"{report.out_dir}."
        ) from err
    words = {
        0: "passed: no violation found",
        1: "FAILED: privacy violation found",
        2: "FAILED: an audit could not run or was INCONCLUSIVE (too weak to refute "
        "its claim: give it more rounds)",
    }
    print(
        f"dpaudit check {words[report.exit_code]} (exit {report.exit_code})",
        file=sys.stderr if report.exit_code else sys.stdout,
    )
    return report.exit_code
