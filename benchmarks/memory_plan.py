"""The memory plan (dpaudit/audit/games/memory.py): refusals and the estimate against the
measured peak.

Prints, for the three inputs of issue 23 (a 1e6-row table, ``rounds = 1000000000``
in a TOML config, a domain with 10,000 categories), the time to the refusal and the
refusing process's peak resident memory; then, for a few normal audits, the plan's
estimate beside the audit's measured peak. Each command runs in a fresh wrapper
process that reports its child's peak (``getrusage(RUSAGE_CHILDREN).ru_maxrss``,
the kernel's ``VmHWM`` of the finished child).

    PYTHONPATH=. python benchmarks/memory_plan.py            # everything
    PYTHONPATH=. python benchmarks/memory_plan.py --refusals  # the refusals only
    PYTHONPATH=. python benchmarks/memory_plan.py --smoke     # one refusal, seconds
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import harness
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


def write_inputs(folder: Path, *, seed: int, big: bool = True) -> None:
    """The three inputs of issue 23 (the 1e6-row table only if ``big``)."""
    if big:
        rng = np.random.default_rng(seed)
        values = rng.integers(0, 10, size=(1_000_000, 3))
        np.savetxt(
            folder / "big.csv",
            values,
            fmt="%d",
            delimiter=",",
            header="a,b,c",
            comments="",
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
    "cervical cancer, 128 rounds, 256 models at once": [
        "--dataset",
        "cervical_cancer",
        "--target",
        "0",
        "--rounds",
        "128",
        "--jobs",
        "1",
        "--batch-size",
        "256",
    ],
}


def estimate(args: list[str], cwd: Path) -> str:
    """The plan's line for ``dpaudit audit args`` (parsed as the CLI does)."""
    code = (
        "import sys\n"
        "from dpaudit.cli import build_parser\n"
        "from dpaudit.commands.audit import config_mapping\n"
        "from dpaudit.audit.config.model import AuditConfig\n"
        "from dpaudit.audit.games.memory import describe, plan_memory\n"
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


MODEL_PEAK = """
import json, sys
import numpy as np, pandas as pd
from dpaudit.data import Domain
from dpaudit.generators.pate_gan import PateGan, config_from_options
from dpaudit.generators.registry import get_spec
from dpaudit.rng import Rngs

def hwm():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM"):
            return int(line.split()[1]) * 1024

n, m = int(sys.argv[1]), int(sys.argv[2])
table = pd.DataFrame(np.random.default_rng(0).integers(0, 10, (n, 3)), columns=list("abc"))
cols = [{"name": c, "kind": "integer", "lower": 0, "upper": 9} for c in "abc"]
domain = Domain.from_json({"columns": cols})
k = max(2, n // 125)
cfg = config_from_options(epsilon=1e9, delta=1e-5, device="cpu", num_teachers=k,
                          max_iterations=2, fixed_iterations=2)
before = hwm()
model = PateGan(cfg)
model.fit_many([table] * m, domain=domain, rngs=[Rngs.from_seed(i) for i in range(m)])
est = get_spec("pategan").model_bytes(model, rows=n + 1, width=domain.encoded_dim, released=0)
print(json.dumps({"k": k, "measured": (hwm() - before) / m, "estimate": est}))
"""


def model_peaks(table: harness.Rows) -> None:
    """One PATE-GAN model's memory in training, measured (``fit_many`` of ``M``
    models, two iterations, the peak's growth over the loaded table divided by
    ``M``) against PATE-GAN's registry figure (``GeneratorSpec.model_bytes``)."""
    for n, m in ((20_000, 64), (100_000, 16)):
        with table.timed(f"one model, {n:,} rows, M={m}") as row:
            out = subprocess.run(
                [sys.executable, "-c", MODEL_PEAK, str(n), str(m)],
                capture_output=True,
                text=True,
                check=False,
            )
            if out.returncode:
                row["error"] = out.stderr.strip().splitlines()[-1]
                continue
            found = json.loads(out.stdout.strip().splitlines()[-1])
            row.update(
                teachers=found["k"],
                measured_mib=found["measured"] / 2**20,
                estimate_mib=found["estimate"] / 2**20,
            )


#: The refusal --smoke runs (no 1e6-row table to write and read).
SMOKE_REFUSALS = ("rounds = 1e9 (TOML)",)


def main(argv: list[str] | None = None) -> None:
    parser = harness.parser(__doc__)
    parser.add_argument("--refusals", action="store_true", help="refusals only")
    opts = harness.parse(parser, argv)
    refusals = {
        k: v for k, v in REFUSALS.items() if not opts.smoke or k in SMOKE_REFUSALS
    }
    table = harness.Rows(__file__, opts)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        write_inputs(folder, seed=opts.seed, big=not opts.smoke)
        for name, args in refusals.items():
            out = folder / "out"
            code, seconds, peak, err = measure(
                ["audit", *args, "--out", str(out), "--quiet"], folder
            )
            table.add(
                f"refusal: {name}",
                exit=code,
                peak_mib=peak,
                lines=len(err.splitlines()),
                folder_created=out.exists(),
                message=err.splitlines()[-1] if err else "",
                seconds=seconds,
            )
        if not (opts.refusals or opts.smoke):
            model_peaks(table)
            for name, args in NORMAL.items():
                out = folder / f"out-{len(name)}"
                full = ["audit", *args, "--out", str(out), "--quiet"]
                line = estimate([*args, "--out", str(out)], folder)
                code, seconds, peak, err = measure(full, folder)
                table.add(
                    f"audit: {name}",
                    exit=code,
                    peak_mib=peak,
                    plan=line,
                    seconds=seconds,
                    **(
                        {}
                        if code in (0, 1, 3, 4, 5)
                        else {"error": err.splitlines()[-1] if err else ""}
                    ),
                )
    table.finish(
        title="refusals (no --max-memory: the limit is this machine's MemAvailable); "
        "one model in training: measured (peak growth / M) and estimated; normal "
        "audits: the plan's estimate (plan) and the measured peak",
        formats={"peak_mib": ".0f", "measured_mib": ".1f", "estimate_mib": ".1f"},
    )


if __name__ == "__main__":
    main()
