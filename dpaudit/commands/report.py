"""``dpaudit report DIR``: render an audit directory (or several) as a report.

``DIR`` is an audit directory (it holds ``result.json``) or a parent of several, which
gives a comparison report with one row per generator, variant and attack. The report
is written atomically (a temporary file, then :func:`os.replace`) to ``--out``, by
default ``DIR/report.html`` (``report.md``, ``report.json``, ``junit.xml``); ``--out -``
prints it instead.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from dpaudit.audit import RESULT_FILE
from dpaudit.errors import InvalidParameterError
from dpaudit.reports import DEFAULT_FILENAMES, FORMATS, render
from dpaudit.validation import is_text

__all__ = ["add_parser", "run"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Registers the ``report`` command.

    Args:
        subparsers: The object ``ArgumentParser.add_subparsers()`` returned.

    Returns:
        The command's parser (its ``func`` default is :func:`run`).
    """
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "report",
        help="render an audit directory as HTML, Markdown, JSON or JUnit XML",
        description=(
            "Render an audit directory (holding result.json) as a report, or a parent "
            "of several audit directories as a comparison report. Reports compute "
            "nothing new and contain no training data except the target record."
        ),
    )
    parser.add_argument(
        "dir",
        metavar="DIR",
        type=Path,
        help="an audit directory, or a parent of several",
    )
    parser.add_argument(
        "--format",
        choices=FORMATS,
        default="html",
        help="output format (default: html)",
    )
    parser.add_argument(
        "--out",
        metavar="PATH",
        default=None,
        help="output file (default: DIR/report.html, report.md, "
        "report.json or junit.xml; '-' prints to stdout)",
    )
    parser.set_defaults(func=run)
    return parser


def _states_profile(result: Any) -> bool:
    """Whether the result's claim states a privacy profile (its verdict then rests on
    the refutation ratio: docs/soundness.md, "Testing the claim's profile")."""
    claim = result.claim
    return bool(claim.gdp_mu is not None or claim.zcdp_rho is not None or claim.rdp)


def _refuse_contradictions(results: Any) -> None:
    """Refuses a result whose verdict its own numbers contradict (docs/design.md,
    "Exit codes"): a report is evidence handed on, and would show the edited verdict."""
    from dpaudit.audit.games import contradiction

    for result in results:
        problem = contradiction(
            verdict=result.verdict,
            eps_emp=result.eps_emp,
            eps_claimed=result.eps_claimed,
            eps_max_attainable=result.eps_max_attainable,
            schema_version=result.schema_version,
            refutation_ratio=result.refutation_ratio
            if _states_profile(result)
            else None,
            # A claim of the lines alone, its ratio recorded: its own test decided.
            lines_ratio=None if _states_profile(result) else result.refutation_ratio,
        )
        if problem is not None:
            raise InvalidParameterError(
                f"{str(result.source)!r}: {problem}; it was edited or is corrupt, and "
                "no report is written from it: restore it, or analyse the stored "
                "rounds again with `dpaudit audit --resume DIR`."
            )


def run(args: argparse.Namespace) -> int:
    """Runs ``dpaudit report``.

    Args:
        args: Parsed arguments (``dir``, ``format``, ``out``).

    Returns:
        0 once the report is written.

    Raises:
        InvalidParameterError: If ``DIR`` holds no valid audit, or ``--out`` is a
            directory.
    """
    directory = Path(args.dir)
    fmt = getattr(args, "format", "html") or "html"
    if fmt not in FORMATS:
        raise InvalidParameterError(
            f"`--format` must be one of {', '.join(FORMATS)}. Got {fmt!r}."
        )
    if not directory.exists():
        raise InvalidParameterError(f"`DIR` must exist. Got {str(directory)!r}.")
    if getattr(args, "out", None) == "-":
        from dpaudit.commands import standard_output

        standard_output("the report (`--out -`)")
    from dpaudit.reports.io import write_atomic
    from dpaudit.reports.model import find_unfinished, load_results

    base = directory if directory.is_dir() else directory.parent
    compare = directory.is_dir() and not (directory / RESULT_FILE).is_file()
    # Interrupted or failed audits (a store, no result.json) are shown as such.
    unfinished = find_unfinished(directory) if compare else []
    try:
        results = load_results(directory)
    except InvalidParameterError:
        if not unfinished:
            raise
        results = ()
    except (RecursionError, OverflowError) as err:
        # A result.json edited by hand: nested too deeply for the JSON reader, or an
        # integer beyond a float's range where the schema expects a number.
        raise InvalidParameterError(
            f"`DIR` {str(directory)!r} holds a result.json that is not a dpaudit "
            f"result ({'nested too deeply' if isinstance(err, RecursionError) else err}"
            "); restore it, or rerun the audit with `dpaudit audit --resume DIR`."
        ) from err
    _refuse_contradictions(results)
    if unfinished:
        print(
            f"dpaudit report: {len(unfinished)} audit(s) without a result "
            f"(interrupted or failed): {', '.join(u.path for u in unfinished)}",
            file=sys.stderr,
        )
    text = render(results, fmt, base=base, compare=compare, unfinished=unfinished)
    if not is_text(text):
        # JSON may escape a lone surrogate ("\ud800"); no report can write one.
        raise InvalidParameterError(
            f"`DIR` {str(directory)!r} holds a result.json with text that is not "
            "valid Unicode (a lone surrogate escape such as \\ud800); restore it, "
            "or rerun the audit with `dpaudit audit --resume DIR`."
        )
    out = getattr(args, "out", None)
    if out == "-":
        sys.stdout.write(text)
        return 0
    target = Path(out) if out else base / DEFAULT_FILENAMES[fmt]
    if target.is_dir():
        raise InvalidParameterError(
            f"`--out` must be a file path, not a directory. Got {str(target)!r}."
        )
    write_atomic(target, text)
    print(f"dpaudit report: wrote {target}", file=sys.stderr)
    return 0
