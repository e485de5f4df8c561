"""``dpaudit check-generator NAME``: the plug-in contract's checks on one generator.

Runs :data:`dpaudit.generators.conformance.CHECKS` on a built-in generator, an adapter
(in its environment: ``--python``) or a user's ``module:Class`` (or entry point), on a
small table, and prints one line per check: passed, failed with the reason, or
skipped with why; then a summary line. Exit 0 when no check fails, 1 when one does,
2 on bad input (an unknown generator, a plug-in that cannot be imported, a bad
option: one line, nothing checked).

Nothing heavy is imported at parser build (``dpaudit --help`` stays cheap): the
checks are imported when the command runs.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from dpaudit.commands import (
    EXIT_CODES_HELP,
    EXIT_OK,
    EXIT_VIOLATION,
    HelpFormatter,
    budget,
    parse_options,
)

DEFAULT_DATASET = "worst-case"
DEFAULT_FIT_TIMEOUT = 600.0
"""``--fit-timeout`` of the checks: seconds one fit (or sample, or the import) may
take (an audit's default is 3600)."""


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Registers the ``check-generator`` command."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "check-generator",
        help="check that a generator keeps the plug-in contract (run it first)",
        description=(
            "Run the plug-in contract's checks on a generator: a built-in (`dpaudit "
            "list generators`), an adapter (in its environment: --python) or your "
            "module:Class. One line per check: the same seeds give the same release, "
            "other seeds another, fit leaves its input unchanged, sample(n) returns n "
            "rows of the domain's columns and dtypes inside the domain, the claim "
            "and its profile, a stated privacy_transcript, the one-run game's "
            "canary column, a fit within --fit-timeout. Exit 0 when no check fails, "
            "1 when one does. See docs/plugins.md."
        ),
        epilog=EXIT_CODES_HELP,
        formatter_class=HelpFormatter,
    )
    parser.add_argument(
        "name",
        metavar="NAME",
        help="a name of `dpaudit list generators`, an entry point or module:Class",
    )
    parser.add_argument(
        "--option",
        action="append",
        default=None,
        metavar="KEY=VALUE",
        help="a generator option, e.g. epochs=2 (repeatable)",
    )
    parser.add_argument(
        "--epsilon", type=float, default=None, help="the budget (default 1)"
    )
    parser.add_argument(
        "--delta", type=float, default=None, help="delta, in [0, 1) (default 1e-05)"
    )
    parser.add_argument(
        "--dataset",
        default=DEFAULT_DATASET,
        help="the table the checks fit: a dataset name or a CSV with --domain "
        f"(default {DEFAULT_DATASET}: three binary columns)",
    )
    parser.add_argument("--domain", help="public domain JSON of a CSV dataset")
    parser.add_argument(
        "--dataset-rows",
        type=int,
        default=None,
        metavar="N",
        help="worst cases only: N rows (N - 1 base records), for a library with a "
        "minimum table size; the canary table has N - 1 base records too",
    )
    parser.add_argument(
        "--python",
        metavar="PATH",
        help="plug-ins and adapters: the interpreter of their worker process, e.g. "
        "~/.cache/dpaudit/envs/NAME/bin/python (default: this one)",
    )
    parser.add_argument(
        "--fit-timeout",
        type=float,
        default=DEFAULT_FIT_TIMEOUT,
        metavar="SECONDS",
        help="the declared time of one fit (default "
        f"{DEFAULT_FIT_TIMEOUT:g}); a foreign worker is stopped there",
    )
    parser.add_argument(
        "--seed", type=int, default=0, help="root seed of the checks (default 0)"
    )
    parser.set_defaults(func=run)
    return parser


def run(args: argparse.Namespace) -> int:
    """Runs the checks, printing each line as it is known; the exit code."""
    from dpaudit.commands.fit import worker_options
    from dpaudit.data import load_dataset
    from dpaudit.generators.conformance import CheckResult, Subject, run_checks
    from dpaudit.generators.foreign import pool
    from dpaudit.generators.registry import get_spec
    from dpaudit.validation import check_scalar

    epsilon, delta = budget(args)
    check_scalar(args.seed, "--seed", kind=int, min_val=0)
    options = parse_options(args.option)
    from dpaudit.audit.config import check_generator_options

    check_generator_options(args.name, options)
    spec = get_spec(args.name)
    worker = worker_options(args, plugin=spec.plugin)
    if worker.python is not None:
        pool.check_python(worker.python)
    dataset = load_dataset(args.dataset, domain=args.domain, rows=args.dataset_rows)
    subject = Subject(
        name=args.name,
        epsilon=epsilon,
        delta=delta,
        options=options,
        dataset=dataset,
        worker=worker,
        seed=args.seed,
    )

    def report(result: CheckResult) -> None:
        print(result.line(), flush=True)

    started = time.perf_counter()
    try:
        results = run_checks(subject, report=report)
    finally:
        pool.stop_all()  # no worker outlives the command
    counts = {s: sum(r.status == s for r in results) for s in ("passed", "failed")}
    skipped = len(results) - counts["passed"] - counts["failed"]
    failed = [r.check for r in results if r.status == "failed"]
    print(
        f"{args.name}: {counts['passed']} passed, {counts['failed']} failed"
        f"{' (' + ', '.join(failed) + ')' if failed else ''}, {skipped} skipped "
        f"in {time.perf_counter() - started:.1f} s on {dataset.name} "
        f"({len(dataset.train)} rows)",
        file=sys.stdout,
    )
    return EXIT_VIOLATION if failed else EXIT_OK
