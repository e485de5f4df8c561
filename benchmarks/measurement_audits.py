"""Real measurement-transcript audits of the toy plug-in that states its transcript
(``dpaudit.generators.toy_plugins:NoisyMarginals``: Gaussian one-way marginals):
false alarms of the honest plug-in and the verdicts of one adding a quarter of the
noise it states, through the whole pipeline (``run_audit`` with ``--release
transcript``: worker processes, the measurement release, the analysis).

Per audit (a seed): the verdict, mu_emp, the exact mu of the stated measurements, the
ceiling of the best possible test at the audit's test size, and the wall time.
Printed at the end: VIOLATIONs of each kind over the audits.

    PYTHONPATH=. python benchmarks/measurement_audits.py --audits 20 --out m.json
    PYTHONPATH=. python benchmarks/measurement_audits.py --smoke   # seconds
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import harness

from dpaudit.audit import AuditConfig, run_audit

TOY = "dpaudit.generators.toy_plugins:NoisyMarginals"
COLUMNS = ["row", "seed", "verdict", "mu_emp", "mu_exact", "mu_ceiling", "seconds"]


def audit(noise_scale: float, seed: int, rounds: int, out: Path) -> dict[str, object]:
    """One audit of the toy at ``noise_scale`` (1: the noise it states)."""
    config = AuditConfig(
        generator=TOY,
        dataset="worst-case",
        release="transcript",
        generator_options={"noise_scale": noise_scale},
        rounds=rounds,
        seed=seed,
        jobs=1,
    )
    started = time.perf_counter()
    result = run_audit(config, out_dir=out)
    m = result.measurements
    assert m is not None
    return {
        "seed": seed,
        "verdict": result.verdict.value,
        "mu_emp": result.mu_emp,
        "mu_exact": m.mu_exact,
        "mu_ceiling": m.mu_ceiling,
        "spent": m.spent,
        "claimed": m.claimed,
        "seconds": time.perf_counter() - started,
    }


def main(argv: list[str] | None = None) -> None:
    parser = harness.parser(__doc__)
    parser.add_argument("--audits", type=int, default=20, help="audits of each kind")
    parser.add_argument("--rounds", type=int, default=1000, help="rounds per world")
    args = harness.parse(parser, argv, smoke={"audits": 1, "rounds": 20})
    table = harness.Rows(__file__, args)
    with tempfile.TemporaryDirectory() as tmp:
        for name, scale in (("honest", 1.0), ("quarter noise", 0.25)):
            for k in range(args.audits):
                seed = args.seed + k
                row = audit(scale, seed, args.rounds, Path(tmp) / f"{name}-{seed}")
                table.add(name, **row)
                table.save()
    verdicts = {
        name: sum(r["verdict"] == "VIOLATION" for r in table.rows if r["row"] == name)
        for name in ("honest", "quarter noise")
    }
    table.finish(
        columns=COLUMNS,
        formats={"seconds": ".1f", "mu_emp": ".3f", "mu_exact": ".3f"},
        violations=verdicts,
    )
    print(f"VIOLATIONs of {args.audits} audits each: {verdicts}")


if __name__ == "__main__":
    main()
