"""How the number of released rows changes an audit's power (worst case, fixed randomness).

Runs real worst-case audits with ``--synthetic-rows`` 100, 1,000 and 10,000 for the
reference PATE-GAN and a few variants, each with ``--attack all``, and prints per
configuration and release size: the verdict, eps_emp, the best attack and the eps_emp
/ AUC of the attacks in ``--show``.

    PYTHONPATH=$PWD python benchmarks/research/release_size.py --rounds 300 --jobs 2 \
        --out /tmp/release_size

An audit whose ``result.json`` is already in ``--out`` is read, not rerun.

Measured (``--rounds 200``, 2 shared cores), eps_emp / AUC:

    config      rows   verdict     querybased  moments     fingerprint nearest
    reference     100  CONSISTENT  0.00/0.500  0.00/0.500  0.00/0.500  0.00/0.500
    reference    1000  CONSISTENT  0.00/0.500  0.00/0.500  0.00/0.500  0.00/0.500
    reference   10000  CONSISTENT  0.00/0.500  0.00/0.500  0.00/0.500  0.00/0.500
    updated       100  VIOLATION   0.00/0.500  2.54/1.000  2.57/1.000  2.57/1.000
    updated      1000  VIOLATION   2.50/0.981  2.57/1.000  2.57/1.000  2.57/1.000
    updated     10000  VIOLATION   2.57/1.000  2.57/1.000  2.57/1.000  2.57/1.000
    turing        100  CONSISTENT  0.00/0.500  0.00/0.500  0.00/0.500  0.00/0.500
    turing       1000  CONSISTENT  0.00/0.500  0.00/0.500  0.00/0.500  0.00/0.500
    turing      10000  CONSISTENT  0.00/0.500  0.00/0.500  0.00/0.500  0.00/0.500

More rows only help the decoded counts (querybased on updated); the default set is at
the attainable maximum (2.57) from 100 rows, so the worst case keeps 100.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from attack_power import attack_cells, run_audit, slug

#: (label, extra CLI arguments) of every configuration.
CONFIGS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("reference", ()),
    ("updated", ("--variant", "updated")),
    ("turing", ("--variant", "turing")),
    # smartnoise-synth needs 1,000 rows: the study's small-table modification.
    ("smartnoise", ("--variant", "smartnoise", "--option", "small_table=study")),
)
SIZES = (100, 1000, 10000)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--attack", default="all")
    parser.add_argument("--out", type=Path, default=Path("/tmp/release_size"))
    parser.add_argument("--only", nargs="*", help="configuration labels (prefixes)")
    parser.add_argument("--sizes", nargs="*", type=int, default=list(SIZES))
    parser.add_argument(
        "--show", nargs="*", default=["querybased", "moments", "fingerprint", "nearest"]
    )
    ns = parser.parse_args(argv)
    os.environ.setdefault("DPAUDIT_DATA_DIR", str(Path("../shared/data").resolve()))
    print(
        f"worst case, {ns.rounds} rounds per world, fixed public randomness, "
        f"--attack {ns.attack}"
    )
    head = (
        f"{'configuration':<12} {'rows':>6} {'verdict':<12} {'eps_emp':>7} {'best':<14}"
    )
    print(head + "".join(f" {a[:14]:>14}" for a in ns.show))
    for label, args in CONFIGS:
        if ns.only and not any(label.startswith(p) for p in ns.only):
            continue
        for rows in ns.sizes:
            doc = run_audit(
                args,
                out=ns.out / f"{slug(label)}-{rows}-{ns.rounds}",
                rounds=ns.rounds,
                jobs=ns.jobs,
                attack=ns.attack,
                rerun=False,
                extra=("--synthetic-rows", str(rows)),
            )
            cells = attack_cells(doc)
            line = (
                f"{label:<12} {rows:>6} {doc['verdict']:<12} "
                f"{doc['eps_emp']:>7.2f} {doc['attack'][:14]:<14}"
            )
            line += "".join(
                f" {cells[a][0]:>6.2f}/{cells[a][1]:>6.3f}"
                if a in cells
                else f" {'-':>14}"
                for a in ns.show
            )
            print(line, flush=True)
    print(
        "cells: eps_emp / AUC per attack (alpha split by Bonferroni over the attacks)"
    )


if __name__ == "__main__":
    main()
