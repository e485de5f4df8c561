"""``dpaudit study``: the PATE-GAN audit study end to end, in one command.

Runs the audits of :func:`dpaudit.ci.study.study_plan` (dpaudit's reference PATE-GAN,
the six variants and G-PATE; the query-based attack on the worst case and GroundHog on
Cervical Cancer with ``--target auto``; 1,000 rounds per world unless ``--rounds`` or
``--quick``), each in its own folder under ``--out``, and writes ``study.html``,
``study.md`` and ``study.json``: dpaudit's verdicts next to the study's published
figures with the reason for every difference. Prints progress per audit, the table and
the wall time (docs/study.md).

Exit codes: 0 the study ran (whatever the verdicts: a variant's violation is the
study's finding, not a failure); 2 bad input; 3 an audit that failed to run.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dpaudit.audit.config import RANDOMNESS_MODES
from dpaudit.ci.study.plan import QUICK, SETTINGS, STUDY_ROUNDS, SUBJECTS
from dpaudit.commands import EXIT_FAILED, EXIT_OK
from dpaudit.generators.names import DEVICES

if TYPE_CHECKING:
    from dpaudit.ci.study.run import StudyRun

__all__ = ["add_parser", "run"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Registers the ``study`` command.

    Args:
        subparsers: The object ``ArgumentParser.add_subparsers()`` returned.

    Returns:
        The command's parser (its ``func`` default is :func:`run`).
    """
    p: argparse.ArgumentParser = subparsers.add_parser(
        "study",
        help="rerun the PATE-GAN audit study (six variants, reference, G-PATE) and "
        "compare with its published figures",
        description=(
            "Run the PATE-GAN audit study (Ganev, Annamalai and De Cristofaro 2024) end "
            "to end: dpaudit's reference PATE-GAN, the six variants and G-PATE, each "
            "with the query-based attack on the worst-case dataset and GroundHog on "
            "Cervical Cancer (--target auto). Writes OUT/study.html, study.md and "
            "study.json: dpaudit's verdicts next to the study's figures, with the "
            "reason for every difference. The full study (1,000 rounds per world) "
            "takes well over an hour on 2 CPU cores; --quick is a smoke run."
        ),
    )
    p.add_argument(
        "--rounds",
        type=int,
        default=None,
        help=f"rounds per world of every audit (default {STUDY_ROUNDS}, the "
        f"study's; {QUICK.rounds} with --quick)",
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help=f"a smoke run, not a measurement: {QUICK.rounds} rounds per "
        f"world, iteration caps {QUICK.worst_case_iterations} (worst "
        f"case) and {QUICK.real_data_iterations} (Cervical Cancer), "
        f"{QUICK.candidates} candidates of {QUICK.selection_rounds} "
        "rounds per world for --target auto",
    )
    p.add_argument(
        "--only",
        default=None,
        metavar="NAMES",
        help="comma-separated subset: subjects ("
        + ", ".join(SUBJECTS)
        + "), settings ("
        + ", ".join(SETTINGS)
        + ") or audit names "
        "(e.g. original-cervical)",
    )
    p.add_argument(
        "--jobs",
        type=int,
        default=None,
        help="parallel jobs of each audit (default: one per CPU core)",
    )
    p.add_argument(
        "--batch-size",
        type=int,
        default=None,
        help="rounds trained together (default: the audit's)",
    )
    p.add_argument("--device", choices=DEVICES, default=None)
    p.add_argument(
        "--randomness",
        choices=RANDOMNESS_MODES,
        default=None,
        help="fixed_public (default) or independent (docs/soundness.md)",
    )
    p.add_argument("--seed", type=int, default=0, help="root seed of every audit")
    p.add_argument("--data-dir", default=None, help="folder of the named datasets")
    p.add_argument(
        "--out",
        type=Path,
        default=Path("dpaudit-study"),
        help="the study's folder (default ./dpaudit-study)",
    )
    p.add_argument(
        "--resume",
        action="store_true",
        help="continue the study in --out: finished audits are read back, "
        "a started one continues",
    )
    p.add_argument("--force", action="store_true", help="overwrite what --out holds")
    p.add_argument(
        "--quiet",
        "--no-progress",
        dest="quiet",
        action="store_true",
        help="no progress bars",
    )
    p.set_defaults(func=run)
    return p


def _merge(plan: Any, ran: StudyRun, *, resume: bool) -> StudyRun:
    """The outcomes of this run, plus (resuming) the other audits of the study that
    finished earlier in the same folder, in plan order."""
    if not resume:
        return ran
    from dpaudit.ci.study.run import StudyRun, read_finished

    done = {o.audit.name: o for o in ran.outcomes}
    earlier = {
        o.audit.name: o
        for o in read_finished([a for a in plan if a.name not in done], ran.out_dir)
    }
    outcomes = tuple(
        done.get(a.name) or earlier[a.name]
        for a in plan
        if a.name in done or a.name in earlier
    )
    return StudyRun(
        outcomes=outcomes,
        out_dir=ran.out_dir,
        options=ran.options,
        wall_seconds=ran.wall_seconds,
    )


def run(args: argparse.Namespace) -> int:
    """Runs ``dpaudit study``.

    Returns:
        0 once the study ran and its report is written; 2 when an audit failed.

    Raises:
        InvalidParameterError: bad options or output folder (before any audit runs).
    """
    # Imported here, not at the top: `dpaudit --help` builds this parser, and the
    # audit machinery (torch, pandas, scipy) is needed only to run the study.
    from dpaudit.ci.study import (
        StudyRun,
        run_study,
        select_audits,
        study_plan,
        terminal_table,
        write_study_report,
    )
    from dpaudit.ci.study.report import fmt_wall
    from dpaudit.reports.escape import printable

    started = time.perf_counter()
    quick = bool(args.quick)
    rounds = (
        args.rounds
        if args.rounds is not None
        else (QUICK.rounds if quick else STUDY_ROUNDS)
    )
    plan = study_plan(
        rounds=rounds,
        quick=quick,
        seed=args.seed,
        randomness=args.randomness,
        device=args.device,
        jobs=args.jobs,
        data_dir=args.data_dir,
        batch_size=args.batch_size,
    )
    only = args.only.split(",") if args.only else None
    selected = select_audits(plan, only)
    options = {
        "rounds": rounds,
        "quick": quick,
        "seed": args.seed,
        "randomness": args.randomness or "fixed_public",
    }
    print(
        f"dpaudit study: {len(selected)} audit(s), {rounds} rounds per world"
        f"{' (--quick)' if quick else ''}, into {args.out}",
        flush=True,
    )
    ran = run_study(
        selected,
        out_dir=args.out,
        options=options,
        resume=bool(args.resume),
        force=bool(args.force),
        progress=not args.quiet,
        log=lambda line: print(printable(line), flush=True),
    )
    study = _merge(plan, ran, resume=bool(args.resume))
    study = StudyRun(
        outcomes=study.outcomes,
        out_dir=study.out_dir,
        options=study.options,
        wall_seconds=time.perf_counter() - started,
    )
    files = write_study_report(study)
    print()
    print(terminal_table(study))
    print()
    for path in files.values():
        print(f"dpaudit study: wrote {path}")
    failed = [o.audit.name for o in study.outcomes if o.result is None]
    print(
        f"dpaudit study: wall time {fmt_wall(study.wall_seconds)} "
        f"({len(study.outcomes)} audit(s))",
        flush=True,
    )
    if failed:
        print(
            f"dpaudit study: {len(failed)} audit(s) failed: {', '.join(failed)}",
            file=sys.stderr,
        )
        return EXIT_FAILED
    return EXIT_OK
