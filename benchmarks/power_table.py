"""The audit's power, side by side: independent versus fixed public randomness.

For each dataset (the worst case and the continuous worst case, each with its default
attack set; Cervical Cancer with GroundHog and ``--target auto``) and each generator (the reference PATE-GAN, its six variants,
G-PATE, a plug-in that copies its data and a plug-in that is exactly epsilon-DP for any
public seed), runs the audit with ``--randomness independent`` and with
``--randomness fixed_public`` (``--modes auto`` adds fixed public randomness chosen
adversarially, ``--public-seed auto``) and prints one row per audit: verdict, eps_emp, AUC,
claim, reference epsilon, attack, wall time. Rows are appended as JSON lines to
``--work-dir``/rows.jsonl as audits finish (a killed run keeps them; ``--skip-done``
continues it), and the table is printed (and written to ``--out FILE``) at the end.
``--smoke``: the reference and the copy plug-in on the worst case, independent
randomness, 10 rounds per world.

The tables below were measured before issue 22's fidelity changes (original's and
turing's thresholded label noise, updated's critic student and refitted teachers,
synthcity's skip rule, smartnoise's teacher rule and row-order partition, the re-derived
reference epsilons) and before the reference's ``min_width`` audit default: the rows of
those variants and the reference's worst-case rows are to be measured again; the
reference epsilons now read 0.818 (smartnoise, 2,000 rows) and 2.235 (smartnoise,
Cervical Cancer) where a row says 1.745 or 4.893.

    python benchmarks/power_table.py                              # everything (hours on 2 cores)
    python benchmarks/power_table.py --datasets worst-case --rounds 1000
    python benchmarks/power_table.py --datasets worst-case-continuous --rounds 1000
    python benchmarks/power_table.py --only reference,original --rounds 200

Measured on 2 shared CPU cores (verdict eps_emp / AUC; independent | fixed public):

Worst case, 1,000 rounds per world, default attacks (``--datasets worst-case --jobs 1``;
synthcity: ``--only synthcity --rounds 1000 --jobs 1``, the two modes in two processes,
6,887 s independent and 6,583 s fixed public on one core each):

    reference   CONSISTENT 0.000/0.486 | CONSISTENT 0.000/0.500   claim 0.998, ref 0.998
    original    VIOLATION  4.419/1.000 | VIOLATION  4.419/1.000   claim 1.000, unbounded
    updated     CONSISTENT 0.000/0.491 | VIOLATION  4.419/1.000   claim 1.006, unbounded
    synthcity   VIOLATION  3.923/0.890 | VIOLATION  4.284/1.000   claim 1.023 | 1.021, unbounded
    turing      CONSISTENT 0.000/0.467 | CONSISTENT 0.000/0.500   claim 1.000, unbounded
    borealis    CONSISTENT 0.000/0.520 | CONSISTENT 0.000/0.491   claim 1.007, unbounded
    smartnoise  CONSISTENT 0.000/0.500 | CONSISTENT 0.000/0.500   claim 1.007, ref 1.745
    gpate       CONSISTENT 0.000/0.482 | CONSISTENT 0.000/0.495   claim 0.724, ref 0.724
    copy        VIOLATION  4.419/1.000 | VIOLATION  4.419/1.000
    exact RR    CONSISTENT 0.000/0.457 | CONSISTENT 0.704/0.724   exactly 1-DP

Continuous worst case, 1,000 rounds per world, default attacks
(``--datasets worst-case-continuous --jobs 1``; synthcity ``--cap-iterations 20``):

    reference   CONSISTENT 0.000/0.473 | CONSISTENT 0.000/0.500
    original    VIOLATION  4.419/1.000 | VIOLATION  4.419/1.000
    updated     CONSISTENT 0.000/0.490 | VIOLATION  4.419/1.000
    synthcity   VIOLATION  4.284/1.000 | VIOLATION  3.062/1.000   claim 0.764 | 1.021
                (fixed public: 300 rounds per world, the registry cap of 100
                iterations, not 20: ``--rounds 300``, 949 s)
    turing      CONSISTENT 0.000/0.475 | VIOLATION  4.419/1.000
    borealis    CONSISTENT 0.000/0.513 | CONSISTENT 0.000/0.505
    smartnoise  CONSISTENT 0.000/0.526 | CONSISTENT 0.000/0.474
    gpate       CONSISTENT 0.000/0.481 | CONSISTENT 0.000/0.488
    copy        VIOLATION  4.419/1.000 | VIOLATION  4.419/1.000
    exact RR    CONSISTENT 0.671/0.736 | CONSISTENT 0.704/0.724

Cervical Cancer, GroundHog, ``--target auto``, 1,000 rounds per world, the registry's
iteration cap (1,000; every accounted generator stops earlier, after 11 to 47
iterations), ``--datasets cervical_cancer --rounds 1000 --jobs 1``; the plug-ins'
target is row 0 (``--plugin-target``); wall seconds on one core of a shared 2-core
machine, independent / fixed public:

    reference   CONSISTENT 0.000/0.500 | CONSISTENT 0.000/0.521   claim 0.998, ref 0.998   198/164
    original    VIOLATION  3.249/0.943 | VIOLATION  4.654/1.000   claim 1.000, unbounded  3676/3987
    updated     CONSISTENT 0.000/0.502 | CONSISTENT 0.000/0.500   claim 1.006, unbounded   241/215
    synthcity   VIOLATION  3.948/0.999 | VIOLATION  4.681/1.000   claim 1.068, unbounded  2059/2207
    turing      CONSISTENT 0.000/0.474 | VIOLATION  4.077/0.995   claim 1.000, unbounded   701/909
    borealis    CONSISTENT 0.000/0.522 | CONSISTENT 0.000/0.501   claim 1.007, unbounded    65/66
    smartnoise  CONSISTENT 0.000/0.523 | CONSISTENT 0.000/0.516   claim 1.007, ref 4.893   190/185
    gpate       CONSISTENT 0.000/0.500 | CONSISTENT 0.000/0.472   claim 0.717, ref 0.717  1146/573
    copy        VIOLATION  4.677/0.999 | VIOLATION  4.682/1.000                              8/8
    exact RR    CONSISTENT 0.793/0.745 | CONSISTENT 0.751/0.724   exactly 1-DP             19/16

Where the reference epsilon is unbounded and the verdict CONSISTENT, the release does
not depend on the data at all (``benchmarks/research/release_sensitivity.py``: the
same streams give bit for bit the same table for D, D' and half of D: ``updated``,
``borealis``), or
(``turing``, independent) the data reaches it but the per-round training randomness
hides the shift that fixed public randomness exposes.

Binary worst case, synthcity at 300 rounds per world (``--datasets worst-case --only
synthcity --rounds 300 --jobs 1``: 1,257 s and 1,473 s): VIOLATION 2.749/0.917
(independent) | VIOLATION 3.062/1.000 (fixed public), claim 1.021.

Cervical Cancer, GroundHog, ``--target auto``, 200 rounds per world and training capped
at 50 iterations (``--datasets cervical_cancer --rounds 200 --cap-iterations 50``; the
1,000-round, 1,000-iteration table needs hours per audit on 2 cores, days for
synthcity; the exact-RR plug-in's target is the worst case's, so it is skipped here):

    reference   CONSISTENT 0.000/0.466 | CONSISTENT 0.000/0.471   claim 0.998, ref 0.998
    original    VIOLATION  2.968/1.000 | VIOLATION  3.054/1.000   claim 1.000, unbounded
    updated     CONSISTENT 0.000/0.487 | CONSISTENT 0.000/0.500   claim 1.006, unbounded
    synthcity   VIOLATION  1.816/0.993 | VIOLATION  3.008/1.000   claim 1.068/1.060, unbounded
    turing      CONSISTENT 0.000/0.441 | VIOLATION  3.030/0.998   claim 1.000, unbounded
    borealis    CONSISTENT 0.000/0.502 | CONSISTENT 0.000/0.499   claim 1.007, unbounded
    smartnoise  CONSISTENT 0.000/0.387 | CONSISTENT 0.000/0.541   claim 1.007, ref 4.893
    gpate       CONSISTENT 0.000/0.618 | CONSISTENT 0.000/0.521   claim 0.716, ref 0.716
    copy        VIOLATION  2.968/0.994 | VIOLATION  3.054/1.000
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

import harness

from dpaudit.audit import AuditConfig, run_audit

VARIANTS = ("original", "updated", "synthcity", "turing", "borealis", "smartnoise")
PLUGINS = {
    "copy-plugin": "dpaudit.generators.toy_plugins:CopyData",
    "exact-rr-plugin": "dpaudit.generators.toy_plugins:PublicSeedRandomizedResponse",
}
ROWS = ("reference", *VARIANTS, "gpate", *PLUGINS)
#: The datasets whose target is the all-ones record (no --target); the default run keeps
#: the study's two (``--datasets``), the continuous worst case is asked for by name.
WORST_CASES = ("worst-case", "worst-case-continuous")
DATASETS = {
    "worst-case": {"dataset": "worst-case"},
    "worst-case-continuous": {"dataset": "worst-case-continuous"},
    "cervical_cancer": {
        "dataset": "cervical_cancer",
        "attack": "groundhog",
        "target": "auto",
    },
}


def _config(row: str, dataset: str, mode: str, args: argparse.Namespace) -> AuditConfig:
    keys: dict[str, Any] = dict(DATASETS[dataset])
    if row in VARIANTS:
        keys.update(generator="pategan", variant=row)
    elif row == "reference":
        keys["generator"] = "pategan"
    elif row == "gpate":
        keys["generator"] = "gpate"
    else:
        keys["generator"] = PLUGINS[row]
        if dataset not in WORST_CASES:
            keys["target"] = args.plugin_target
            if row == "exact-rr-plugin":
                # Randomized response on the membership of this row (its default,
                # the all-ones record, is the worst cases' target only).
                keys["generator_options"] = {"target": _row(dataset, args)}
    if row == "smartnoise":
        # smartnoise-synth needs 1,000 rows: the study's small-table modification.
        keys["generator_options"] = {"small_table": "study"}
    if args.cap_iterations and row in (*VARIANTS, "reference"):
        keys["generator_options"] = {
            **keys.get("generator_options", {}),
            "max_iterations": args.cap_iterations,
        }
    if args.attack and dataset in WORST_CASES:
        keys["attack"] = args.attack
    if mode == "auto":  # fixed public randomness, chosen adversarially
        keys.update(randomness="fixed_public", public_seed="auto")
    else:
        keys["randomness"] = mode
    return AuditConfig(
        rounds=args.rounds,
        jobs=args.jobs,
        seed=args.seed,
        data_dir=args.data_dir,
        **keys,
    )


def _row(dataset: str, args: argparse.Namespace) -> dict[str, Any]:
    """Row ``--plugin-target`` of ``dataset``'s training data as plain JSON values."""
    from dpaudit.data import load_dataset

    train = load_dataset(dataset, data_dir=args.data_dir).train
    return {
        name: value.item() if hasattr(value, "item") else value
        for name, value in train.iloc[args.plugin_target].items()
    }


def _fmt(value: float | None, *, none: str = "n/a") -> str:
    return none if value is None else f"{value:.3f}"


def _reference(result: Any) -> str:
    """The reference epsilon; "unbounded" where a correct accountant finds none."""
    note = result.claim.reference_note or ""
    return _fmt(
        result.eps_reference,
        none="unbounded" if note.startswith("unbounded") else "n/a",
    )


def main(argv: list[str] | None = None) -> None:
    parser = harness.parser(__doc__)
    parser.add_argument(
        "--datasets",
        default="worst-case,cervical_cancer",
        help=f"comma-separated, of: {', '.join(DATASETS)}",
    )
    parser.add_argument(
        "--only",
        default=",".join(ROWS),
        help=f"comma-separated rows of: {', '.join(ROWS)}",
    )
    parser.add_argument(
        "--modes",
        default="independent,fixed_public",
        help="comma-separated, of: independent, fixed_public, auto "
        "(fixed public randomness chosen by --public-seed auto)",
    )
    parser.add_argument("--rounds", type=int, default=1000, help="rounds per world")
    parser.add_argument("--jobs", type=int, default=-1)
    parser.add_argument(
        "--attack",
        default=None,
        help="the worst cases' attack (default: the audit's default set of each)",
    )
    parser.add_argument(
        "--cap-iterations",
        type=int,
        default=None,
        help="max_iterations for PATE-GAN rows (synthcity is slow)",
    )
    parser.add_argument(
        "--plugin-target",
        type=int,
        default=0,
        help="row index used as the plug-ins' target on real data",
    )
    parser.add_argument("--data-dir", default=os.environ.get("DPAUDIT_DATA_DIR"))
    parser.add_argument(
        "--work-dir",
        default="power-table",
        metavar="DIR",
        help="the audits and rows.jsonl",
    )
    parser.add_argument("--skip-done", action="store_true")
    args = harness.parse(
        parser,
        argv,
        smoke={
            "datasets": "worst-case",
            "only": "reference,copy-plugin",
            "modes": "independent",
            "rounds": 10,
            "jobs": 1,
        },
    )
    out = Path(args.work_dir)
    out.mkdir(parents=True, exist_ok=True)
    done = set()
    rows_file = out / "rows.jsonl"
    if args.skip_done and rows_file.exists():
        for line in rows_file.read_text().splitlines():
            row = json.loads(line)
            done.add((row["dataset"], row["generator"], row["randomness_asked"]))
    table = harness.Rows(__file__, args)
    for dataset in args.datasets.split(","):
        for row in args.only.split(","):
            for mode in args.modes.split(","):
                if (dataset, row, mode) in done:
                    continue
                config = _config(row, dataset, mode, args)
                started = time.perf_counter()
                result = run_audit(
                    config, out_dir=out / dataset / row / mode, force=True
                )
                wall = time.perf_counter() - started
                record = {
                    "dataset": dataset,
                    "generator": row,
                    "randomness_asked": mode,
                    "randomness": result.randomness,
                    "verdict": str(result.verdict),
                    "eps_emp": result.eps_emp,
                    "auc": result.auc,
                    "eps_claimed": result.eps_claimed,
                    "eps_reference": result.eps_reference,
                    "attack": result.attack,
                    "rounds_per_world": args.rounds,
                    "wall_seconds": wall,
                    "cap_iterations": args.cap_iterations,
                }
                with rows_file.open("a") as fh:
                    fh.write(json.dumps(record) + "\n")
                table.add(
                    f"{dataset} {row} {mode}",
                    **record,
                    reference=_reference(result),
                    seconds=wall,
                )
                print(f"{dataset} {row} {mode}: {result.verdict!s}", flush=True)
                table.save()
    table.finish(
        columns=(
            "dataset",
            "generator",
            "randomness",
            "verdict",
            "eps_emp",
            "auc",
            "eps_claimed",
            "reference",
            "attack",
            "seconds",
        ),
        formats={
            "eps_emp": ".3f",
            "auc": ".3f",
            "eps_claimed": ".3f",
            "seconds": ".1f",
        },
    )


if __name__ == "__main__":
    main()
