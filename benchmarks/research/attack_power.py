"""Which attack detects which variant: the power table under fixed public randomness.

Runs one real worst-case audit per generator configuration with ``--attack all`` (so
every registered attack sees the same rounds; each attack's eps_emp is computed at the
Bonferroni level alpha / number of attacks) and prints, per configuration, the verdict
and, per attack, eps_emp and AUC.

    PYTHONPATH=$PWD python benchmarks/research/attack_power.py --rounds 1000 --jobs 2 \
        --out /tmp/attack_power

An audit whose ``result.json`` is already in ``--out`` is read, not rerun (``--rerun``
forces it). ``synthcity`` is capped with ``--option max_iterations=20`` (its full
training takes about 20 minutes per audit on two cores); the table says so.

Measured (2 shared cores, ``--rounds 1000``, 40 s to 70 s per audit; synthcity
``--rounds 100``, where 300 did not finish one batch in 11 minutes), eps_emp / AUC:

    config      verdict     querybased  moments     fingerprint nearest     distance
    reference   CONSISTENT  0.00/0.500  0.00/0.500  0.00/0.500  0.00/0.500  0.00/0.500
    original    VIOLATION   4.21/1.000  4.21/1.000  4.20/1.000  4.21/1.000  4.21/1.000
    updated     VIOLATION   0.00/0.500  4.21/1.000  4.21/1.000  4.21/1.000  4.21/1.000
    synthcity   VIOLATION   1.69/1.000  1.69/1.000  1.69/1.000  1.69/1.000  1.69/1.000
    turing      CONSISTENT  0.00/0.500  0.00/0.500  0.00/0.500  0.00/0.500  0.00/0.500
    borealis    CONSISTENT  0.00/0.500  0.00/0.491  0.00/0.501  0.00/0.516  0.00/0.482
    smartnoise  CONSISTENT  0.00/0.500  0.00/0.500  0.00/0.500  0.00/0.500  0.00/0.500
    CopyData    VIOLATION   4.21/1.000  4.21/1.000  4.21/1.000  4.21/1.000  4.21/1.000

4.21 (1.69 at 100 rounds) is the attainable maximum at alpha / 9. reference, turing and smartnoise
release one and the same table in all 600 rounds of both worlds (a single fingerprint):
no function of the release can tell the worlds apart. borealis releases a new table
every round (fresh noise reaches the release) and no attack separates them.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

#: (label, extra CLI arguments) of every configuration in the table.
CONFIGS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("reference", ()),
    ("original", ("--variant", "original")),
    ("updated", ("--variant", "updated")),
    (
        "synthcity (max_iterations=20)",
        ("--variant", "synthcity", "--option", "max_iterations=20"),
    ),
    ("turing", ("--variant", "turing")),
    ("borealis", ("--variant", "borealis")),
    # smartnoise-synth needs 1,000 rows: the study's small-table modification.
    ("smartnoise", ("--variant", "smartnoise", "--option", "small_table=study")),
    ("CopyData plug-in", ("--generator", "dpaudit.generators.toy_plugins:CopyData")),
)


def slug(label: str) -> str:
    """A folder name for a configuration label."""
    return "".join(ch if ch.isalnum() else "_" for ch in label.split(" (")[0]).strip(
        "_"
    )


def run_audit(
    args: Sequence[str],
    *,
    out: Path,
    rounds: int,
    jobs: int,
    attack: str,
    rerun: bool,
    extra: Sequence[str] = (),
) -> dict[str, Any]:
    """Runs (or reads) one worst-case audit and returns its result.json document."""
    result = out / "result.json"
    if rerun or not result.exists():
        command = [
            sys.executable,
            "-m",
            "dpaudit",
            "audit",
            "--rounds",
            str(rounds),
            "--attack",
            attack,
            "--jobs",
            str(jobs),
            "--quiet",
            "--force",
            "--out",
            str(out),
            *args,
            *extra,
        ]
        print("$", " ".join(command[1:]), file=sys.stderr, flush=True)
        start = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if not result.exists():
            raise RuntimeError(
                f"audit failed ({done.returncode}): {done.stderr[-2000:]}"
            )
        print(f"  {time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)
    doc: dict[str, Any] = json.loads(result.read_text())
    return doc


def attack_cells(doc: dict[str, Any]) -> dict[str, tuple[float, float]]:
    """attack -> (eps_emp, AUC) of one result document."""
    return {
        name: (float(a["eps_emp"]), float(a["auc"]))
        for name, a in doc["attacks"].items()
    }


def print_table(rows: Sequence[tuple[str, dict[str, Any]]]) -> None:
    """Prints one line per configuration: verdict, eps_emp, then eps_emp/AUC per attack."""
    attacks = list(rows[0][1]["attacks"]) if rows else []
    head = f"{'configuration':<30} {'verdict':<12} {'eps_emp':>7} {'claim':>6}"
    print(head + "".join(f" {a[:14]:>14}" for a in attacks))
    for label, doc in rows:
        cells = attack_cells(doc)
        line = (
            f"{label:<30} {doc['verdict']:<12} {doc['eps_emp']:>7.2f} "
            f"{doc['eps_claimed']:>6.2f}"
        )
        line += "".join(
            f" {cells[a][0]:>6.2f}/{cells[a][1]:>6.3f}" if a in cells else f" {'-':>14}"
            for a in attacks
        )
        print(line)
    print(
        "cells: eps_emp / AUC per attack (alpha split by Bonferroni over the attacks)"
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=1000)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--attack", default="all")
    parser.add_argument("--out", type=Path, default=Path("/tmp/attack_power"))
    parser.add_argument("--only", nargs="*", help="configuration labels (prefixes)")
    parser.add_argument("--rerun", action="store_true")
    parser.add_argument("--randomness", default="fixed_public")
    ns = parser.parse_args(argv)
    os.environ.setdefault("DPAUDIT_DATA_DIR", str(Path("../shared/data").resolve()))
    rows = []
    for label, args in CONFIGS:
        if ns.only and not any(label.startswith(p) for p in ns.only):
            continue
        doc = run_audit(
            args,
            out=ns.out / f"{slug(label)}-{ns.rounds}",
            rounds=ns.rounds,
            jobs=ns.jobs,
            attack=ns.attack,
            rerun=ns.rerun,
            extra=("--randomness", ns.randomness),
        )
        rows.append((label, doc))
    print(
        f"worst case, {ns.rounds} rounds per world, randomness {ns.randomness}, "
        f"--attack {ns.attack}"
    )
    print_table(rows)


if __name__ == "__main__":
    main()
