"""What ``dpaudit check``'s ``quick`` preset catches, by size: the per-column Laplace
histogram plug-in (``examples/laplace_marginals.py``) claiming epsilon 1 with a
quarter of the noise it needs (``noise_factor = 0.25``: truly 4-DP, a 4x overclaim)
and the correct one (``noise_factor = 1``), each seed its own one-audit policy with
``preset = "quick"`` and, per size, ``rounds`` set in ``[defaults]`` (the preset's
other settings and the check's sequential looks unchanged), run by
:func:`dpaudit.ci.run_check` in this process: the check's own exit code.

Per generator and size: exit 1 (VIOLATION) of the seeds, the rate with its 95%
Clopper-Pearson interval, the range of eps_emp, and the mean wall time of one
check (docs/ci.md, "The `quick` preset and its power").

    python benchmarks/quick_preset.py --rounds 200,400,600 --seeds 20 --out quick.json
    python benchmarks/quick_preset.py --smoke      # seconds: a test runs it
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import harness
import numpy as np
from zoo_calibration import clopper_pearson

from dpaudit.ci import parse_policy, run_check

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
GENERATORS = {"overclaim": 0.25, "correct": 1.0}


def policy(noise_factor: float, rounds: int | None, seed: int) -> dict[str, Any]:
    """``examples/laplace_check.toml`` with ``seed`` and (unless None) ``rounds``."""
    defaults: dict[str, Any] = {"epsilon": 1.0, "seed": seed}
    if rounds is not None:
        defaults["rounds"] = rounds
    return {
        "alpha": 0.05,
        "preset": "quick",
        "defaults": defaults,
        "audit": [
            {
                "name": "laplace",
                "generator": "laplace_marginals:LaplaceMarginals",
                "generator_options": {"noise_factor": noise_factor},
            }
        ],
    }


def check_once(noise_factor: float, rounds: int | None, seed: int) -> dict[str, Any]:
    parsed = parse_policy(policy(noise_factor, rounds, seed), source="quick_preset")
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="quick_preset-") as tmp:
        report = run_check(parsed, out_dir=tmp, reports=False)
    outcome = report.outcomes[0]
    result = outcome.result
    return {
        "seed": seed,
        "exit": report.exit_code,
        "verdict": outcome.status,
        "eps_emp": None if result is None else float(result.eps_emp),
        "error": outcome.error,
        "seconds": time.perf_counter() - started,
    }


def main(argv: list[str] | None = None) -> None:
    parser = harness.parser(__doc__)
    parser.add_argument("--seeds", type=int, default=20, help="checks per row")
    for flag, default, text in (
        ("--rounds", "preset", "rounds per world, comma-separated ('preset': its own)"),
        ("--generators", "overclaim,correct", "overclaim (noise 0.25), correct (1)"),
    ):
        parser.add_argument(flag, default=default, help=text)
    args = harness.parse(
        parser, argv, smoke={"seeds": 1, "rounds": "10", "generators": "overclaim"}
    )
    # The plug-in is found on the path, in this process and in its workers.
    sys.path.insert(0, str(EXAMPLES))
    os.environ["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(EXAMPLES), os.environ.get("PYTHONPATH")) if p
    )
    sizes = [None if r == "preset" else int(r) for r in args.rounds.split(",")]
    table = harness.Rows(__file__, args)
    for name in args.generators.split(","):
        for size in sizes:
            checks = []
            for seed in range(args.seed, args.seed + args.seeds):
                checks.append(check_once(GENERATORS[name], size, seed))
                print(
                    f"  {name} {size or 'preset'} seed {seed}: {checks[-1]}", flush=True
                )
            k = sum(c["exit"] == 1 for c in checks)
            low, high = clopper_pearson(k, len(checks))
            eps = [c["eps_emp"] for c in checks if c["eps_emp"] is not None]
            table.add(
                f"{name}, rounds {size or 'preset'}",
                generator=name,
                rounds=size,
                seeds=len(checks),
                exit_1=k,
                rate=k / len(checks),
                ci_low=low,
                ci_high=high,
                exits=sorted({c["exit"] for c in checks}),
                eps_emp_min=min(eps, default=None),
                eps_emp_max=max(eps, default=None),
                mean_seconds=float(np.mean([c["seconds"] for c in checks])),
                checks=checks,
            )
            table.save()
    table.finish(
        title="dpaudit check, preset quick, laplace_marginals claiming epsilon 1: "
        "exit 1 (VIOLATION) of the seeds, by rounds per world",
        columns=(
            "row",
            "seeds",
            "exit_1",
            "rate",
            "ci_low",
            "ci_high",
            "exits",
            "eps_emp_min",
            "eps_emp_max",
            "mean_seconds",
        ),
        formats={
            "rate": ".2f",
            "ci_low": ".3f",
            "ci_high": ".3f",
            "eps_emp_min": ".2f",
            "eps_emp_max": ".2f",
            "mean_seconds": ".1f",
        },
    )


if __name__ == "__main__":
    main()
