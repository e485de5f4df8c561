"""The audit's power, side by side: independent versus fixed public randomness.

For each dataset (the worst case and the continuous worst case, each with its default
attack set; Cervical Cancer with GroundHog and ``--target auto``) and each generator (the reference PATE-GAN, its six variants,
G-PATE, a plug-in that copies its data and a plug-in that is exactly epsilon-DP for any
public seed), runs the audit with ``--randomness independent`` and with
``--randomness fixed_public`` and prints one row per audit: verdict, eps_emp, AUC,
claim, reference epsilon, attack, wall time. Rows are printed as audits finish and
appended as JSON lines to ``--out``/rows.jsonl (a killed run keeps what it printed;
``--skip-done`` continues it).

    python benchmarks/power_table.py                              # everything (hours on 2 cores)
    python benchmarks/power_table.py --datasets worst-case --rounds 1000
    python benchmarks/power_table.py --datasets worst-case-continuous --rounds 1000
    python benchmarks/power_table.py --only reference,original --rounds 200
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

from dpaudit.audit.runner import AuditConfig, run_audit

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
    "cervical_cancer": {"dataset": "cervical_cancer", "attack": "groundhog",
                        "target": "auto"},
}


def _config(row: str, dataset: str, mode: str, args: argparse.Namespace
            ) -> AuditConfig:
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
    if args.cap_iterations and row in (*VARIANTS, "reference"):
        keys["generator_options"] = {"max_iterations": args.cap_iterations}
    if args.attack and dataset in WORST_CASES:
        keys["attack"] = args.attack
    return AuditConfig(rounds=args.rounds, jobs=args.jobs, seed=args.seed,
                       randomness=mode, data_dir=args.data_dir, **keys)


def _fmt(value: float | None, *, none: str = "n/a") -> str:
    return none if value is None else f"{value:.3f}"


def _reference(result: Any) -> str:
    """The reference epsilon; "unbounded" where a correct accountant finds none."""
    note = str((result.claim or {}).get("reference_note") or "")
    return _fmt(result.eps_reference,
                none="unbounded" if note.startswith("unbounded") else "n/a")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default="worst-case,cervical_cancer",
                        help=f"comma-separated, of: {', '.join(DATASETS)}")
    parser.add_argument("--only", default=",".join(ROWS),
                        help=f"comma-separated rows of: {', '.join(ROWS)}")
    parser.add_argument("--modes", default="independent,fixed_public")
    parser.add_argument("--rounds", type=int, default=1000, help="rounds per world")
    parser.add_argument("--jobs", type=int, default=-1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--attack", default=None, help="the worst cases' attack (default: "
                        "the audit's default set of each)")
    parser.add_argument("--cap-iterations", type=int, default=None,
                        help="max_iterations for PATE-GAN rows (synthcity is slow)")
    parser.add_argument("--plugin-target", type=int, default=0,
                        help="row index used as the plug-ins' target on real data")
    parser.add_argument("--data-dir", default=os.environ.get("DPAUDIT_DATA_DIR"))
    parser.add_argument("--out", default="power-table")
    parser.add_argument("--skip-done", action="store_true")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    done = set()
    rows_file = out / "rows.jsonl"
    if args.skip_done and rows_file.exists():
        for line in rows_file.read_text().splitlines():
            row = json.loads(line)
            done.add((row["dataset"], row["generator"], row["randomness_asked"]))
    header = (f"{'dataset':21s} {'generator':16s} {'randomness':13s} {'verdict':12s} "
              f"{'eps_emp':>8s} {'AUC':>6s} {'claim':>7s} {'reference':>10s} "
              f"{'attack':18s} {'wall s':>7s}")
    print(header, flush=True)
    for dataset in args.datasets.split(","):
        for row in args.only.split(","):
            for mode in args.modes.split(","):
                if (dataset, row, mode) in done:
                    continue
                if row == "exact-rr-plugin" and dataset not in WORST_CASES:
                    continue  # its target (all ones) is the worst cases' only
                config = _config(row, dataset, mode, args)
                started = time.perf_counter()
                result = run_audit(config, out_dir=out / dataset / row / mode, force=True)
                wall = time.perf_counter() - started
                record = {
                    "dataset": dataset, "generator": row, "randomness_asked": mode,
                    "randomness": result.randomness, "verdict": str(result.verdict),
                    "eps_emp": result.eps_emp, "auc": result.auc,
                    "eps_claimed": result.eps_claimed,
                    "eps_reference": result.eps_reference, "attack": result.attack,
                    "rounds_per_world": args.rounds, "wall_seconds": wall,
                    "cap_iterations": args.cap_iterations,
                }
                with rows_file.open("a") as fh:
                    fh.write(json.dumps(record) + "\n")
                print(f"{dataset:21s} {row:16s} {result.randomness!s:13s} "
                      f"{result.verdict!s:12s} {_fmt(result.eps_emp):>8s} "
                      f"{(result.auc or 0):6.3f} {result.eps_claimed:7.3f} "
                      f"{_reference(result):>10s} {result.attack:18s} "
                      f"{wall:7.1f}", flush=True)


if __name__ == "__main__":
    main()
