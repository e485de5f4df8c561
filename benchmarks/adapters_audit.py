"""Audits of the real smartnoise-synth PATEGAN and MST (and synthcity's PATE-GAN).

Runs ``dpaudit audit`` once per row, one after the other, and prints a table: verdict,
eps_emp, attainable maximum, AUC, the claim (the library's own accountant value) and
wall time. The dataset is the worst case sized for the libraries: N - 1 records
(0, 0, 0) and the target (1, 1, 1), N = ``--rows`` (smartnoise's PATEGAN needs 1,000).

Two ways to reach the library:

- ``--mode worker`` (default): ``--dataset worst-case --dataset-rows N --python PATH``:
  dpaudit runs the adapter in a worker under the library's own interpreter.
- ``--mode in-process``: the library and dpaudit share one interpreter (``--python``
  names it: an environment where both are installed); the table is a hand-made CSV of
  N rows, the target its last row (``--target N-1``), with its domain.

    python benchmarks/adapters_audit.py       # --python: the `smartnoise` environment
    python benchmarks/adapters_audit.py --mode in-process --python PYTHON
    python benchmarks/adapters_audit.py --only synthcity-pategan --rounds 20 \\
        --python ~/.cache/dpaudit/envs/synthcity/bin/python
    python benchmarks/adapters_audit.py --smoke    # seconds: a toy plug-in, this Python

``--python`` defaults to the interpreter of ``dpaudit env``'s ``smartnoise``
environment (``$DPAUDIT_ENV_HOME/smartnoise/bin/python``, by default under
``~/.cache/dpaudit/envs``). ``--smoke`` audits the toy plug-in ``CopyData`` through the
same path (a worker under ``--python``, by default this interpreter) at 10 rounds per
world.

Every row is appended to ``--work-dir``/rows.jsonl as it finishes (``--skip-done``
continues a killed run). Measured here (worker mode, 2,000 released rows, 2 shared CPU
cores, two audits side by side; docs/adapters.md has the table):

    smartnoise-pategan library   VIOLATION     1.308  1.308  1.000   1.007    1334   50 rounds/world
    smartnoise-pategan public    CONSISTENT    0.000  1.308  0.519   1.007    1340   50
    smartnoise-mst library       CONSISTENT    0.882  1.308  0.900   1.000     992   50
    smartnoise-mst library       VIOLATION     1.779  2.062  0.925   1.000     826   100
    smartnoise-mst public        CONSISTENT    0.000  1.308  0.480   1.000    1035   50
    synthcity-pategan library    INCONCLUSIVE  0.199  0.199  1.000   0.433     587   20 (200 rows)
    synthcity-pategan library    VIOLATION     1.053  1.053  1.000   0.439     566   40 (200 rows)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import harness

ROOT = Path(__file__).resolve().parents[1]

AUDITS: dict[str, tuple[str, list[str]]] = {
    # row name: (generator name, options)
    "smartnoise-pategan library": ("smartnoise-pategan", ["preprocessing=library"]),
    "smartnoise-pategan public": ("smartnoise-pategan", ["preprocessing=public"]),
    "smartnoise-mst library": ("smartnoise-mst", ["preprocessing=library"]),
    "smartnoise-mst public": ("smartnoise-mst", ["preprocessing=public"]),
    # synthcity's defaults train up to 200 outer iterations of 10 GAN steps with ten
    # XGBoost teachers each (hours per fit here): one outer iteration of 2 steps.
    "synthcity-pategan library": (
        "synthcity-pategan",
        ["preprocessing=library", "n_iter=1", "generator_n_iter=2"],
    ),
}
DEFAULT = [name for name in AUDITS if name.startswith("smartnoise")]
SMOKE = "toy CopyData"
AUDITS[SMOKE] = ("dpaudit.generators.toy_plugins:CopyData", [])


def _adapter(name: str) -> str:
    """The ``module:Class`` of an adapter (the FOREIGN_ADAPTERS table)."""
    if ":" in name:  # a plug-in already
        return name
    sys.path.insert(0, str(ROOT))
    from dpaudit.adapters import FOREIGN_ADAPTERS

    return FOREIGN_ADAPTERS[name]


def _worst_case_csv(rows: int, folder: Path) -> tuple[Path, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    data, domain = folder / f"worst_case_{rows}.csv", folder / "worst_case.domain.json"
    lines = ["a,b,c"] + ["0,0,0"] * (rows - 1) + ["1,1,1"]
    data.write_text("\n".join(lines) + "\n")
    domain.write_text(
        json.dumps({"columns": [{"name": c, "kind": "binary"} for c in "abc"]})
    )
    return data, domain


def command(row: str, args: argparse.Namespace, out: Path) -> list[str]:
    """The ``dpaudit audit`` command line of one row."""
    generator, options = AUDITS[row]
    common = [
        *(arg for option in options for arg in ("--option", option)),
        "--rounds",
        str(args.rounds),
        "--synthetic-rows",
        str(args.synthetic_rows),
        "--jobs",
        "1",
        "--batch-size",
        "10",
        "--seed",
        str(args.seed),
        "--out",
        str(out),
        "--force",
        "--quiet",
        *(["--attack", "querybased"] if args.smoke else []),
    ]
    if args.mode == "worker":
        return [
            sys.executable,
            "-m",
            "dpaudit",
            "audit",
            "--generator",
            generator,
            "--dataset",
            "worst-case",
            "--dataset-rows",
            str(args.rows),
            "--python",
            args.python,
            *common,
        ]
    data, domain = _worst_case_csv(args.rows, Path(args.work_dir) / "data")
    return [
        args.python,
        "-m",
        "dpaudit",
        "audit",
        "--generator",
        _adapter(generator),
        "--dataset",
        str(data),
        "--domain",
        str(domain),
        "--target",
        str(args.rows - 1),
        *common,
    ]


def summary(
    row: str, cmd: list[str], out: Path, wall: float, rc: int
) -> dict[str, Any]:
    """One table row from the audit's result.json."""
    result_path = out / "result.json"
    found: dict[str, Any] = {
        "row": row,
        "rc": rc,
        "wall_s": round(wall, 1),
        "command": " ".join(cmd),
    }
    if not result_path.exists():
        return found
    result = json.loads(result_path.read_text())

    def pick(*keys: str) -> Any:
        for key in keys:
            for part in (
                result,
                result.get("estimate", {}),
                result.get("power", {}),
                result.get("claim", {}),
                result.get("config", {}),
            ):
                if isinstance(part, dict) and key in part:
                    return part[key]
        return None

    found.update(
        {
            "verdict": pick("verdict"),
            "eps_emp": pick("eps_emp"),
            "eps_max_attainable": pick("eps_max_attainable"),
            "auc": pick("auc"),
            "eps_claimed": pick("eps_claimed", "epsilon"),
            "rounds": pick("rounds"),
            "iterations": pick("iterations"),
        }
    )
    return found


def main(argv: list[str] | None = None) -> None:
    parser = harness.parser(__doc__)
    parser.add_argument("--mode", choices=["worker", "in-process"], default="worker")
    harness.add_python(parser, "smartnoise", "the library")
    parser.add_argument(
        "--only",
        default=",".join(DEFAULT),
        help=f"comma-separated rows of {list(AUDITS)}",
    )
    parser.add_argument("--rounds", type=int, default=50, help="rounds per world")
    parser.add_argument("--rows", type=int, default=2000, help="table size N")
    parser.add_argument("--synthetic-rows", type=int, default=2000)
    parser.add_argument(
        "--work-dir",
        default="adapters_audit_out",
        metavar="DIR",
        help="the audits and rows.jsonl",
    )
    parser.add_argument("--skip-done", action="store_true")
    args = harness.parse(
        parser,
        argv,
        smoke={"only": SMOKE, "rounds": 10, "rows": 100, "synthetic_rows": 100},
    )
    if args.smoke and not args.python:
        args.python = sys.executable
    args.python = harness.python_for(args, "smartnoise", required=True)
    rows = [r.strip() for r in args.only.split(",") if r.strip()]
    unknown = [r for r in rows if r not in AUDITS]
    if unknown:
        parser.error(f"--only: unknown rows {unknown}; choose from {list(AUDITS)}")
    base = Path(args.work_dir)
    base.mkdir(parents=True, exist_ok=True)
    log = base / "rows.jsonl"
    done = set()
    if args.skip_done and log.exists():
        done = {
            json.loads(line)["row"] for line in log.read_text().splitlines() if line
        }
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    table = harness.Rows(__file__, args)
    for row in rows:
        if row in done:
            continue
        out = base / row.replace(" ", "_")
        cmd = command(row, args, out)
        start = time.perf_counter()
        rc = subprocess.run(cmd, env=env, cwd=ROOT, check=False).returncode
        found = summary(row, cmd, out, time.perf_counter() - start, rc)
        with log.open("a") as fh:
            fh.write(json.dumps(found) + "\n")
        per_world = found.get("rounds")
        if isinstance(per_world, dict):
            per_world = per_world.get("per_world")
        table.add(**found, rounds_per_world=per_world, seconds=found["wall_s"])
        print(f"{row}: {found.get('verdict') or f'exit {rc}'}", flush=True)
        table.save()
    table.finish(
        columns=(
            "row",
            "verdict",
            "eps_emp",
            "eps_max_attainable",
            "auc",
            "eps_claimed",
            "rounds_per_world",
            "seconds",
        ),
        formats={
            "eps_emp": ".3f",
            "eps_max_attainable": ".3f",
            "auc": ".3f",
            "eps_claimed": ".3f",
            "seconds": ".0f",
        },
    )
    if any(r.get("rc") for r in table.rows):
        sys.exit("an audit failed (its exit status is in the row)")


if __name__ == "__main__":
    main()
