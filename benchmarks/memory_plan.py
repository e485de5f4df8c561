"""The memory plan (dpaudit/audit/memory.py): refusals and the estimate against the
measured peak.

Prints, for the three inputs of issue 23 (a 1e6-row table, ``rounds = 1000000000``
in a TOML config, a domain with 10,000 categories), the time to the refusal and the
refusing process's peak resident memory; then, for a few normal audits, the plan's
estimate beside the audit's measured peak. Each command runs in a fresh wrapper
process that reports its child's peak (``getrusage(RUSAGE_CHILDREN).ru_maxrss``,
the kernel's ``VmHWM`` of the finished child).

    PYTHONPATH=. python benchmarks/memory_plan.py            # everything
    PYTHONPATH=. python benchmarks/memory_plan.py --refusals  # the refusals only
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

WRAPPER = (
    "import resource, subprocess, sys\n"
    "r = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
    "peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
    "sys.stderr.write(r.stderr[-2000:])\n"
    "print(r.returncode, peak)\n"
)


def measure(args: list[str], cwd: Path) -> tuple[int, float, float, str]:
    """``dpaudit args`` in ``cwd``: exit code, seconds, peak MiB, stderr tail."""
    started = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", WRAPPER, sys.executable, "-m", "dpaudit", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=os.environ,
        check=False,
    )
    seconds = time.perf_counter() - started
    code, peak_kib = out.stdout.split()[-2:]
    return int(code), seconds, int(peak_kib) / 1024, out.stderr.strip()


def write_inputs(folder: Path) -> None:
    """The three inputs of issue 23, and a small CSV table for a normal audit."""
    rng = np.random.default_rng(0)
    values = rng.integers(0, 10, size=(1_000_000, 3))
    np.savetxt(
        folder / "big.csv", values, fmt="%d", delimiter=",", header="a,b,c", comments=""
    )
    integer = [{"name": c, "kind": "integer", "lower": 0, "upper": 9} for c in "abc"]
    (folder / "big.json").write_text(json.dumps({"columns": integer}))
    categories = [f"c{i}" for i in range(10_000)]
    rows = "".join(f"c{i},{i % 5}\n" for i in range(200))
    (folder / "cats.csv").write_text("x,y\n" + rows)
    columns = [
        {"name": "x", "kind": "categorical", "categories": categories},
        {"name": "y", "kind": "integer", "lower": 0, "upper": 4},
    ]
    (folder / "cats.json").write_text(json.dumps({"columns": columns}))
    (folder / "rounds.toml").write_text("[audit]\nrounds = 1000000000\n")


REFUSALS = {
    "1e6-row table (PATE-GAN)": [
        "--dataset",
        "big.csv",
        "--domain",
        "big.json",
        "--target",
        "0",
    ],
    "rounds = 1e9 (TOML)": ["--config", "rounds.toml"],
    "10,000 categories": [
        "--dataset",
        "cats.csv",
        "--domain",
        "cats.json",
        "--target",
        "0",
    ],
}
NORMAL = {
    "worst case, 100 rounds": ["--rounds", "100"],
    "worst case, default (1,000 rounds)": [],
    "cervical cancer, 50 rounds, target 0": [
        "--dataset",
        "cervical_cancer",
        "--target",
        "0",
        "--rounds",
        "50",
    ],
}


def estimate(args: list[str], cwd: Path) -> str:
    """The plan's line for ``dpaudit audit args`` (parsed as the CLI does)."""
    code = (
        "import sys\n"
        "from dpaudit.cli import build_parser\n"
        "from dpaudit.commands.audit import config_mapping\n"
        "from dpaudit.audit.config import AuditConfig\n"
        "from dpaudit.audit.memory import describe, plan_memory\n"
        "args = build_parser().parse_args(['audit', *sys.argv[1:]])\n"
        "print(describe(plan_memory(AuditConfig.from_mapping(config_mapping(args)))))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )
    return (out.stdout or out.stderr).strip().splitlines()[-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--refusals", action="store_true", help="refusals only")
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        write_inputs(folder)
        print("refusals (no --max-memory: the limit is this machine's MemAvailable)")
        for name, args in REFUSALS.items():
            out = folder / "out"
            code, seconds, peak, err = measure(
                ["audit", *args, "--out", str(out), "--quiet"], folder
            )
            last = err.splitlines()[-1] if err else ""
            print(
                f"  {name:28s} exit {code}  {seconds:5.1f} s  peak {peak:6.0f} MiB  "
                f"lines {len(err.splitlines())}  folder created: {out.exists()}"
            )
            print(f"    {last}")
        if opts.refusals:
            return
        print("normal audits: the plan's estimate and the measured peak")
        for name, args in NORMAL.items():
            out = folder / f"out-{len(name)}"
            full = ["audit", *args, "--out", str(out), "--quiet"]
            line = estimate([*args, "--out", str(out)], folder)
            code, seconds, peak, err = measure(full, folder)
            print(f"  {name:36s} exit {code}  {seconds:6.1f} s  peak {peak:6.0f} MiB")
            print(f"    {line}")
            if code not in (0, 1, 3, 4, 5):
                print(f"    {err.splitlines()[-1] if err else ''}")


if __name__ == "__main__":
    main()
