"""The ``dpaudit`` command: parse the arguments and dispatch to the command's module.

Parsing only: each command's implementation (and its printing) lives in
:mod:`dpaudit.commands` (``listing``, ``fit``, ``trace``, ``audit``, ``domain``,
``utility``, ``report``, ``check``), imported when the command runs.

Exit codes (:data:`dpaudit.commands.EXIT_CODES_HELP`, shown by ``--help``): 0 success,
1 a VIOLATION (``check``), 2 bad input, 3 a run that failed for another reason, 4 an
INCONCLUSIVE audit (``check``), 130 interrupted (Ctrl-C), 143 terminated (``audit``).
Every error is one line on stderr, the traceback only with the global ``--debug``;
:func:`dpaudit.errors.exit_code_for` decides between 2 and 3.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
import traceback
from collections.abc import Callable, Sequence
from importlib import import_module
from typing import Any, NoReturn

import dpaudit
from dpaudit.allocator import keep_freed_memory
from dpaudit.audit.config import AUDIT_CONSTRAINTS
from dpaudit.commands import (
    DEFAULT_DELTA,
    DEFAULT_EPSILON,
    EXIT_CODES_HELP,
    EXIT_ERROR,
    EXIT_INTERRUPTED,
    EXIT_OK,
    HelpFormatter,
    nonempty_path,
)
from dpaudit.datasets.names import DATASET_NAMES
from dpaudit.errors import (
    AuditError,
    RunFailedError,
    exit_code_for,
    is_out_of_memory,
)
from dpaudit.generators.names import DEVICES
from dpaudit.generators.registry import DEFAULT_GENERATOR
from dpaudit.reports.escape import printable
from dpaudit.validation import is_text

PLUGGED_COMMANDS = ("utility", "report", "check", "study", "env", "check_generator")
"""Commands whose module registers its own parser (``add_parser``)."""


class Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line (exit 2), naming ``--help``."""

    def error(self, message: str) -> NoReturn:
        self.exit(
            EXIT_ERROR, f"{self.prog}: error: {message} (see `{self.prog} --help`)\n"
        )


def _progress_args(p: argparse.ArgumentParser) -> None:
    """The one progress convention of the commands: progress on stderr, only when
    stderr is a terminal; ``--quiet`` (alias ``--no-progress``) hides it."""
    p.add_argument(
        "--quiet",
        "--no-progress",
        dest="quiet",
        action="store_true",
        help="no progress on stderr (progress shows only on a terminal)",
    )


def _generator_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--generator",
        default=DEFAULT_GENERATOR,
        help="a name of `dpaudit list generators` or a plug-in module:Class "
        f"(default {DEFAULT_GENERATOR})",
    )
    p.add_argument("--variant", help="a bug variant (dpaudit list variants)")
    p.add_argument(
        "--bug",
        action="append",
        default=None,
        metavar="FLAG",
        help="switch a bug flag on (repeatable; dpaudit list bugs)",
    )
    p.add_argument(
        "--option",
        action="append",
        default=None,
        metavar="KEY=VALUE",
        help="a generator option, e.g. lam=0.01 (repeatable)",
    )
    p.add_argument(
        "--epsilon",
        type=float,
        default=None,
        help=f"privacy budget, {AUDIT_CONSTRAINTS['epsilon'].describe()} "
        f"(default {DEFAULT_EPSILON:g})",
    )
    p.add_argument(
        "--delta",
        type=float,
        default=None,
        help=f"delta, {AUDIT_CONSTRAINTS['delta'].describe()} as for `dpaudit audit`; "
        "a generator may need "
        f"> 0 (PATE-GAN's accountant does) (default {DEFAULT_DELTA:g})",
    )
    p.add_argument(
        "--device",
        choices=DEVICES,
        default=None,
        help="where to train: auto (a GPU when there is one), cpu or cuda",
    )


def _data_args(p: argparse.ArgumentParser, default: str) -> None:
    p.add_argument(
        "--dataset",
        default=None,
        help=f"{', '.join(DATASET_NAMES)}, or a CSV path (default {default})",
    )
    p.add_argument("--domain", help="public domain JSON of a CSV dataset")
    p.add_argument(
        "--data-dir",
        help="folder of the named datasets "
        "(default $DPAUDIT_DATA_DIR or ../shared/data)",
    )


def _dataset_rows_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--dataset-rows",
        type=int,
        default=None,
        metavar="N",
        help="worst cases only: N rows, N - 1 copies of the base record plus the "
        "target (as for `dpaudit audit`), for libraries with a minimum table size",
    )


def _worker_args(p: argparse.ArgumentParser) -> None:
    """The foreign workers' settings, as ``dpaudit audit`` names them."""
    p.add_argument(
        "--python",
        metavar="PATH",
        help="plug-ins and adapters: the Python interpreter of their worker process "
        "(default: this one); it needs numpy, pandas and the generator's library",
    )
    p.add_argument(
        "--fit-timeout",
        type=float,
        metavar="SECONDS",
        help="plug-ins and adapters: seconds the fit, the sample or the import may "
        "take before the worker is stopped (default 3600)",
    )
    p.add_argument(
        "--max-memory",
        type=int,
        metavar="MIB",
        help="plug-ins and adapters: MiB of resident memory the worker may use "
        "before it is stopped (default: half the machine's memory)",
    )


def _command(p: argparse.ArgumentParser, module: str) -> None:
    p.set_defaults(func=None, module=f"dpaudit.commands.{module}")


def _debug_arg(p: argparse.ArgumentParser, *, default: Any) -> None:
    p.add_argument(
        "--debug",
        action="store_true",
        default=default,
        help="print the traceback of an error (for a bug report)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="dpaudit",
        description="Audit differentially private synthetic-data generators.",
        epilog=EXIT_CODES_HELP,
        formatter_class=HelpFormatter,
    )
    parser.add_argument(
        "--version", action="version", version=f"dpaudit {dpaudit.__version__}"
    )
    _debug_arg(parser, default=False)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser(
        "list", help="list generators, datasets, variants, bugs or attacks"
    )
    p.add_argument(
        "what", choices=("generators", "datasets", "variants", "bugs", "attacks")
    )
    _command(p, "listing")

    p = sub.add_parser("fit", help="train a generator and write synthetic data")
    _generator_args(p)
    _data_args(p, "cervical_cancer")
    p.add_argument(
        "--rows", type=int, help="rows to release, >= 1 (default: the training size)"
    )
    p.add_argument("--seed", type=int, default=0, help="root seed, >= 0 (default 0)")
    p.add_argument(
        "--out",
        default="synthetic.csv",
        type=nonempty_path,
        help="CSV to write; '-' writes the CSV to stdout and the summary to "
        "stderr (default synthetic.csv)",
    )
    p.add_argument(
        "--claim-out", type=nonempty_path, help="write the privacy claim as JSON"
    )
    _dataset_rows_arg(p)
    _worker_args(p)
    _progress_args(p)
    _command(p, "fit")

    p = sub.add_parser(
        "trace", help="write a training trace (records seen, losses, epsilon)"
    )
    _generator_args(p)
    _data_args(p, "cervical_cancer")
    p.add_argument(
        "--iterations",
        type=int,
        default=1000,
        help="iterations to run at most, >= 1; the budget (--epsilon) may stop "
        "training first (default 1000)",
    )
    p.add_argument("--seed", type=int, default=0, help="root seed, >= 0 (default 0)")
    p.add_argument("--out", required=True, type=nonempty_path, help="output folder")
    _dataset_rows_arg(p)
    _progress_args(p)
    _command(p, "trace")

    p = sub.add_parser("audit", help="run the distinguishing game and estimate epsilon")
    import_module("dpaudit.commands.audit").add_arguments(p)  # flags = TOML keys
    _command(p, "audit")

    p = sub.add_parser("domain", help="draft a domain file from a CSV (for review)")
    dsub = p.add_subparsers(dest="domain_command", required=True)
    q = dsub.add_parser(
        "infer", help="print a draft domain JSON (bounds are NOT private)"
    )
    q.add_argument("data", help="the CSV file")
    _command(q, "domain")
    _debug_arg(q, default=argparse.SUPPRESS)

    for module in PLUGGED_COMMANDS:
        import_module(f"dpaudit.commands.{module}").add_parser(sub)
    for command in sub.choices.values():
        # `--debug` after the command too; SUPPRESS keeps the global value otherwise.
        _debug_arg(command, default=argparse.SUPPRESS)
        # Every command's --help ends with the exit codes (the same for all).
        command.epilog = command.epilog or EXIT_CODES_HELP
        command.formatter_class = HelpFormatter
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Runs ``dpaudit`` with ``argv`` (default ``sys.argv[1:]``); returns the exit code.

    Every error is one line on stderr (the traceback too with ``--debug``) and its
    code is :func:`~dpaudit.errors.exit_code_for`'s: 2 for bad input (a usage error,
    an :class:`~dpaudit.errors.AuditError`, a path that cannot be read or written),
    3 for a run that failed otherwise (out of memory, a full disk, standard output
    closed: :class:`~dpaudit.errors.RunFailedError`, one line saying what to do; a
    bug: with a hint to rerun with ``--debug`` and report it). Never 1 or 4, which are ``check``'s
    verdict codes. Ctrl-C exits 130.
    """
    parser = build_parser()
    arguments = list(sys.argv[1:] if argv is None else argv)
    undecodable = next((a for a in arguments if not is_text(a)), None)
    if undecodable is not None:
        # A byte that is not UTF-8 (a file name from another system) arrives as a
        # lone surrogate: it would reach result.json and break every report.
        print(
            f"dpaudit: error: the argument {undecodable!r} is not valid UTF-8 text; "
            "rename the file or folder (or pass the name in UTF-8)",
            file=sys.stderr,
        )
        return EXIT_ERROR
    try:
        args = parser.parse_args(arguments)
    except SystemExit as exit_:  # usage errors (one line, exit 2), --help, --version
        return exit_.code if isinstance(exit_.code, int) else EXIT_ERROR
    debug = bool(getattr(args, "debug", False))
    for stream in (sys.stdout, sys.stderr):
        # A lone surrogate (a JSON "\ud800" in a name, a path that is not UTF-8)
        # is printed as that escape instead of failing the command at its last line.
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")
    if (
        hasattr(args, "quiet")
        and not sys.stderr.isatty()
        and not getattr(args, "progress", False)
    ):
        # Progress only on a terminal, never in a log or a pipe, unless asked for
        # (`check --progress`, for a CI log).
        args.quiet = True
    keep_freed_memory()  # batched training reuses freed tensor memory (allocator.py)
    try:
        func: Callable[[argparse.Namespace], int] | None = getattr(args, "func", None)
        if func is None:
            func = import_module(
                getattr(args, "module", f"dpaudit.commands.{args.command}")
            ).run
        return int(func(args))
    except KeyboardInterrupt:
        print("dpaudit: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # Output piped into `head` and the like: not an error of ours.
        with contextlib.suppress(OSError):
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115
        return EXIT_OK
    except Exception as err:
        if debug:
            traceback.print_exc()
        print(f"dpaudit: error: {printable(_message(err))}", file=sys.stderr)
        return exit_code_for(err)


def _message(err: BaseException) -> str:
    """The one line printed for ``err``: its own message for bad input (it names the
    input and the fix), what happened and what to try for a failed run."""
    if is_out_of_memory(err):
        return (
            f"out of memory ({_one_line(err)}); rerun with a smaller --batch-size "
            "or fewer --jobs (a stopped audit continues with --resume)"
        )
    if isinstance(err, RunFailedError) or (
        isinstance(err, AuditError | OSError) and exit_code_for(err) == EXIT_ERROR
    ):
        return _one_line(err)
    if isinstance(err, OSError):
        return f"the run failed: {_one_line(err)}"
    return (
        f"unexpected {type(err).__name__}: {_one_line(err)} "
        "(rerun with --debug for the traceback and report it)"
    )


def _one_line(err: BaseException) -> str:
    """The error's message on one line."""
    text = " ".join(str(err).split())
    return text or type(err).__name__


if __name__ == "__main__":
    sys.exit(main())
