"""``dpaudit trace``: record a generator's training trace (records seen per teacher,
teacher losses, epsilon per iteration) into a folder of CSV and JSON files."""

from __future__ import annotations

import argparse
from pathlib import Path

from dpaudit.audit.storage import only_trace_files, write_trace
from dpaudit.commands import EXIT_OK, budget
from dpaudit.commands.fit import fit_one
from dpaudit.generators.registry import trace_options
from dpaudit.validation import check_scalar, require


def run(args: argparse.Namespace) -> int:
    """Fits ``--generator`` once with tracing on, for at most ``--iterations``
    iterations within the budget ``--epsilon`` (default
    :data:`~dpaudit.commands.DEFAULT_EPSILON`): the accountant of a variant that has
    one stops training when the budget is spent, as in an audit.

    Raises:
        InvalidParameterError: the generator records no trace, or any bad input
            (``--iterations``, ``--out`` checked before training).
    """
    check_scalar(args.iterations, "--iterations", kind=int, min_val=1)
    out = Path(args.out)
    require(
        not out.exists() or out.is_dir(), "--out", "a folder (not a file)", str(out)
    )
    require(
        not out.exists() or not any(out.iterdir()) or only_trace_files(out),
        "--out",
        "a new or empty folder, or a trace folder (dpaudit replaces only a trace)",
        str(out),
    )
    extra = trace_options(args.generator, iterations=args.iterations)
    dataset, generator, seconds = fit_one(args, extra=extra)
    claim = generator.privacy_claim_
    teachers = getattr(generator, "num_teachers_", None)
    require(
        isinstance(teachers, int),
        "--generator",
        "one whose fitted model has teachers (`num_teachers_`)",
        args.generator,
    )
    write_trace(out, claim.to_json(), num_teachers=int(teachers))  # type: ignore[arg-type]
    print(
        f"{claim.trace.get('records_seen')} records seen per teacher "
        f"({len(dataset.train)} rows); {claim.iterations} iterations in {seconds:.1f} s"
    )
    if claim.iterations is not None and claim.iterations < args.iterations:
        epsilon, _ = budget(args)
        print(
            f"NOTE: the budget epsilon {epsilon:g} stopped training after "
            f"{claim.iterations} of {args.iterations} iterations; pass a larger "
            "--epsilon to trace more."
        )
    print(f"wrote the trace to {out}/")
    return EXIT_OK
