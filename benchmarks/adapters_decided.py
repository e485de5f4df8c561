"""Every adapter decided: audits each adapter of ``dpaudit.adapters.FOREIGN_ADAPTERS``
x {library, public} preprocessing x {worst-case, worst-case-continuous} until its
verdict is decided, prints the table and writes JSON.

A cell starts at ``--rounds`` rounds per world and is audited again, larger, while
the verdict is not decided:

- INCONCLUSIVE (the attainable maximum does not exceed the claim): again at the
  result's ``power.rounds_needed``, unless the release was constant (then no number
  of rounds helps: decided);
- CONSISTENT with one-sided errors (no false positive, or no false negative): again
  at the rounds that would refute the claim if the attack kept its error rates
  (``dpaudit.reports.claimview.decide_rounds``, docs/adapters.md "Deciding a
  CONSISTENT");
- VIOLATION, a constant release, or a CONSISTENT with two-sided errors: decided.

No cell grows past ``--max-rounds`` (it is then reported as undecided, with why).
A cell the adapter refuses (synthcity has no public preprocessing; pac-synth takes
no continuous column) is reported with the adapter's one line. Each audit's own
``dpaudit audit`` command is recorded.

    python benchmarks/adapters_decided.py --python /work/venvs/smartnoise/bin/python \\
        --only smartnoise-mwem --out adapters_decided_out
    python benchmarks/adapters_decided.py --smoke      # seconds: one toy plug-in

Every finished audit is appended to ``--out``/cells.jsonl (``--skip-done`` continues
a killed run); the table goes to stdout and ``--out``/table.json.
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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from dpaudit.adapters import FOREIGN_ADAPTERS  # noqa: E402
from dpaudit.reports.claimview import decide_rounds  # noqa: E402
from dpaudit.reports.model import load_result  # noqa: E402

DATASETS = ("worst-case", "worst-case-continuous")
MODES = ("library", "public")
SMOKE_GENERATORS = ("dpaudit.generators.toy_plugins:CopyData",)
"""Smoke mode: a plug-in with no privacy, one attack, 10 rounds per world (too few:
INCONCLUSIVE), then the rounds needed (a VIOLATION): the escalation, in seconds."""


def cell_options(generator: str, mode: str, dataset: str) -> list[str] | str:
    """The ``--option`` values of a cell, or the reason it cannot run."""
    if ":" in generator:  # a toy plug-in (smoke mode): no preprocessing option
        return []
    if generator.startswith("synthcity") and mode == "public":
        return "synthcity 0.2.12 has no public preprocessing (the adapter refuses it)"
    if generator == "smartnoise-pacsynth" and dataset == "worst-case-continuous":
        return "pac-synth takes only categorical columns (the library refuses others)"
    options = [f"preprocessing={mode}"]
    if (
        generator.startswith("smartnoise")
        and mode == "library"
        and dataset == "worst-case-continuous"
    ):
        # smartnoise refuses continuous columns without a budget for their bounds.
        options.append("preprocessor_eps=0.1")
    return options


def audit_command(
    generator: str,
    options: list[str],
    dataset: str,
    rounds: int,
    args: argparse.Namespace,
    out: Path,
) -> list[str]:
    cmd = [
        sys.executable,
        "-m",
        "dpaudit",
        "audit",
        "--generator",
        generator,
        "--dataset",
        dataset,
        "--rounds",
        str(rounds),
        "--seed",
        str(args.seed),
        "--jobs",
        "1",
        "--batch-size",
        "10",
        "--out",
        str(out),
        "--force",
        "--quiet",
    ]
    for option in options:
        cmd += ["--option", option]
    if args.smoke:
        cmd += ["--attack", "querybased"]
    else:
        cmd += [
            "--dataset-rows",
            str(args.rows),
            "--synthetic-rows",
            str(args.synthetic_rows),
        ]
        if args.python:
            cmd += ["--python", args.python]
    return cmd


def next_rounds(out: Path, rounds: int, cap: int) -> tuple[int | None, str]:
    """The rounds of the next audit of a cell (None: decided) and why."""
    result = load_result(out)
    verdict = str(result.verdict)
    power = result.power
    if verdict == "VIOLATION":
        return None, "VIOLATION"
    if power is not None and power.constant_release:
        return None, "constant release: no number of rounds separates the worlds"
    if verdict == "INCONCLUSIVE":
        need = power.rounds_needed if power is not None else None
        if need is None:
            return None, "INCONCLUSIVE: no feasible number of rounds"
        return (need if need <= cap else None), f"INCONCLUSIVE: needs {need} rounds"
    need = decide_rounds(result)
    if need is None:
        return None, "CONSISTENT with two-sided errors (or none)"
    need = max(need, rounds + 1)
    if need > cap:
        return None, f"undecided: one-sided errors would need {need} > --max-rounds"
    return need, f"CONSISTENT with one-sided errors: again at {need}"


def row_of(out: Path) -> dict[str, Any]:
    result = load_result(out)
    c = result.counts
    return {
        "verdict": str(result.verdict),
        "eps_emp": result.eps_emp,
        "eps_max_attainable": result.eps_max_attainable,
        "auc": result.auc,
        "eps_claimed": result.eps_claimed,
        "fp": c.fp,
        "tp": c.tp,
        "n0": c.fp + c.tn,
        "n1": c.tp + c.fn,
        "rounds": result.rounds.per_world,
        "library": (result.claim.extra.get("library") or {}).get("values", [None])[0],
        "seconds": result.timing.total_seconds,
    }


def run_cell(
    generator: str,
    mode: str,
    dataset: str,
    args: argparse.Namespace,
    log: Path,
) -> dict[str, Any]:
    """Audits one cell until it is decided; returns its table row."""
    name = f"{generator} {mode} {dataset}"
    options = cell_options(generator, mode, dataset)
    if isinstance(options, str):
        return {"cell": name, "verdict": "not run", "why": options, "audits": []}
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    rounds, audits, why = args.rounds, [], ""
    wall = 0.0
    while rounds is not None:
        out = Path(args.out) / name.replace(" ", "_").replace(":", "_") / str(rounds)
        cmd = audit_command(generator, options, dataset, rounds, args, out)
        start = time.perf_counter()
        done = subprocess.run(
            cmd, env=env, cwd=ROOT, check=False, capture_output=True, text=True
        )
        seconds = time.perf_counter() - start
        wall += seconds
        entry: dict[str, Any] = {
            "cell": name,
            "rounds": rounds,
            "rc": done.returncode,
            "wall_s": round(seconds, 1),
            "command": " ".join(cmd[2:]).replace("dpaudit audit", "dpaudit audit", 1),
        }
        if done.returncode != 0 or not (out / "result.json").exists():
            entry["error"] = done.stderr.strip().splitlines()[-1:] or ["no output"]
            audits.append(entry)
            why = f"failed: {entry['error'][0]}"
            break
        entry.update(row_of(out))
        audits.append(entry)
        with log.open("a") as fh:
            fh.write(json.dumps(entry) + "\n")
        rounds, why = next_rounds(out, rounds, args.max_rounds)
    last = audits[-1] if audits else {}
    return {
        "cell": name,
        **{k: v for k, v in last.items() if k not in ("cell", "command")},
        "why": why,
        "wall_s_total": round(wall, 1),
        "audits": audits,
    }


def fmt(value: Any, spec: str = ".3f") -> str:
    return format(value, spec) if isinstance(value, (int, float)) else "-"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--python", help="the interpreter that has the library")
    parser.add_argument("--only", default="", help="comma-separated adapter names")
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument("--rounds", type=int, default=50, help="first rounds/world")
    parser.add_argument("--max-rounds", type=int, default=400)
    parser.add_argument("--rows", type=int, default=2000, help="worst-case size N")
    parser.add_argument("--synthetic-rows", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="adapters_decided_out")
    parser.add_argument("--smoke", action="store_true", help="one toy plug-in")
    args = parser.parse_args(argv)
    if args.smoke:
        generators = list(SMOKE_GENERATORS)
        modes, datasets = ["library"], ["worst-case"]
        args.rounds, args.max_rounds = 10, 40
    else:
        if not args.python:
            parser.error("--python is required (the library's interpreter)")
        generators = [g.strip() for g in args.only.split(",") if g.strip()] or list(
            FOREIGN_ADAPTERS
        )
        modes = [m for m in args.modes.split(",") if m]
        datasets = [d for d in args.datasets.split(",") if d]
    base = Path(args.out)
    base.mkdir(parents=True, exist_ok=True)
    log = base / "cells.jsonl"
    table = []
    print(
        f"{'cell':58s} {'verdict':12s} {'eps_emp':>7s} {'max':>6s} {'AUC':>5s} "
        f"{'FP':>7s} {'TP':>7s} {'claim':>6s} {'rounds':>6s} {'wall s':>7s}  why",
        flush=True,
    )
    for generator in generators:
        for mode in modes:
            for dataset in datasets:
                row = run_cell(generator, mode, dataset, args, log)
                table.append(row)
                print(
                    f"{row['cell']:58s} {row.get('verdict', '-'):12s} "
                    f"{fmt(row.get('eps_emp')):>7s} "
                    f"{fmt(row.get('eps_max_attainable')):>6s} "
                    f"{fmt(row.get('auc'), '.2f'):>5s} "
                    f"{str(row.get('fp', '-')) + '/' + str(row.get('n0', '-')):>7s} "
                    f"{str(row.get('tp', '-')) + '/' + str(row.get('n1', '-')):>7s} "
                    f"{fmt(row.get('eps_claimed')):>6s} "
                    f"{row.get('rounds', '-')!s:>6s} "
                    f"{fmt(row.get('wall_s_total'), '.0f'):>7s}  {row['why']}",
                    flush=True,
                )
    (base / "table.json").write_text(json.dumps(table, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
