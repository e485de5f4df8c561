"""The ``dpaudit`` command: parse the arguments and dispatch to the command's module.

Parsing only: each command's implementation (and its printing) lives in
:mod:`dpaudit.commands` (``listing``, ``fit``, ``trace``, ``audit``, ``domain``,
``utility``, ``report``, ``check``), imported when the command runs.

Exit codes: 0 success (for ``check``: no violation), 1 violation found (``check``),
2 bad input or a failed run.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable, Sequence
from importlib import import_module

import dpaudit
from dpaudit.allocator import keep_freed_memory
from dpaudit.commands import DEFAULT_DELTA, DEFAULT_EPSILON, EXIT_ERROR, EXIT_OK
from dpaudit.data import DATASET_NAMES
from dpaudit.errors import AuditError
from dpaudit.generators.registry import DEFAULT_GENERATOR

DEVICES = ("auto", "cpu", "cuda")
PLUGGED_COMMANDS = ("utility", "report", "check", "study")
"""Commands whose module registers its own parser (``add_parser``)."""


def _generator_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--generator", default=DEFAULT_GENERATOR,
                   help="a name of `dpaudit list generators` or a plug-in module:Class "
                        f"(default {DEFAULT_GENERATOR})")
    p.add_argument("--variant", help="a bug variant (dpaudit list variants)")
    p.add_argument("--bug", action="append", default=None, metavar="FLAG",
                   help="switch a bug flag on (repeatable; dpaudit list bugs)")
    p.add_argument("--option", action="append", default=None, metavar="KEY=VALUE",
                   help="a generator option, e.g. lam=0.01 (repeatable)")
    p.add_argument("--epsilon", type=float, default=None,
                   help=f"privacy budget (default {DEFAULT_EPSILON:g})")
    p.add_argument("--delta", type=float, default=None,
                   help=f"delta (default {DEFAULT_DELTA:g})")
    p.add_argument("--device", choices=DEVICES, default=None)


def _data_args(p: argparse.ArgumentParser, default: str) -> None:
    p.add_argument("--dataset", default=None,
                   help=f"{', '.join(DATASET_NAMES)}, or a CSV path (default {default})")
    p.add_argument("--domain", help="public domain JSON of a CSV dataset")
    p.add_argument("--data-dir", help="folder of the named datasets "
                                      "(default $DPAUDIT_DATA_DIR or ../shared/data)")


def _command(p: argparse.ArgumentParser, module: str) -> None:
    p.set_defaults(func=None, module=f"dpaudit.commands.{module}")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dpaudit", description="Audit differentially private synthetic-data generators.")
    parser.add_argument("--version", action="version", version=f"dpaudit {dpaudit.__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("list", help="list generators, datasets, variants, bugs or attacks")
    p.add_argument("what", choices=("generators", "datasets", "variants", "bugs", "attacks"))
    _command(p, "listing")

    p = sub.add_parser("fit", help="train a generator and write synthetic data")
    _generator_args(p)
    _data_args(p, "cervical_cancer")
    p.add_argument("--rows", type=int, help="rows to release (default: the training size)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="synthetic.csv", help="CSV to write (default synthetic.csv)")
    p.add_argument("--claim-out", help="write the privacy claim as JSON")
    _command(p, "fit")

    p = sub.add_parser("trace", help="write a training trace (records seen, losses, epsilon)")
    _generator_args(p)
    _data_args(p, "cervical_cancer")
    p.add_argument("--iterations", type=int, default=1000,
                   help="iterations to run at most; the budget (--epsilon) may stop "
                        "training first (default 1000)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", required=True, help="output folder")
    _command(p, "trace")

    p = sub.add_parser("audit", help="run the distinguishing game and estimate epsilon")
    import_module("dpaudit.commands.audit").add_arguments(p)  # flags = TOML keys
    _command(p, "audit")

    p = sub.add_parser("domain", help="draft a domain file from a CSV (for review)")
    dsub = p.add_subparsers(dest="domain_command", required=True)
    q = dsub.add_parser("infer", help="print a draft domain JSON (bounds are NOT private)")
    q.add_argument("data")
    _command(q, "domain")

    for module in PLUGGED_COMMANDS:
        import_module(f"dpaudit.commands.{module}").add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Runs ``dpaudit`` with ``argv`` (default ``sys.argv[1:]``); returns the exit code.

    An :class:`~dpaudit.errors.AuditError` is printed as one line on stderr (exit 2).
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    keep_freed_memory()  # batched training reuses freed tensor memory (allocator.py)
    try:
        func: Callable[[argparse.Namespace], int] | None = getattr(args, "func", None)
        if func is None:
            func = import_module(getattr(args, "module", f"dpaudit.commands.{args.command}")).run
        return int(func(args))
    except AuditError as err:
        print(f"dpaudit: error: {err}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("dpaudit: interrupted", file=sys.stderr)
        return EXIT_ERROR
    except BrokenPipeError:
        # Output piped into `head` and the like: not an error of ours.
        with contextlib.suppress(OSError):
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
