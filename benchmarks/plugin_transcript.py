"""docs/plugins.md's two transcript audits of the toy ``NoisyMarginals`` plug-in, as
the page prints them (seed 0, 1,000 rounds per world, the transcript's default split):
one adding a quarter of the noise it states (``noise_scale=0.25``), one adding what it
states. Records each verdict, mu_emp, refutation ratio and the oracle's ceiling, the
figures the page quotes::

    PYTHONPATH=. python benchmarks/plugin_transcript.py --record  # records/plugin_transcript.json
    PYTHONPATH=. python benchmarks/plugin_transcript.py --smoke   # seconds: a test runs it
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import harness

AUDITS = (("quarter", {"noise_scale": 0.25}), ("honest", {}))


def main(argv: list[str] | None = None) -> dict[str, object]:
    made = harness.parser(__doc__)
    made.add_argument("--rounds", type=int, default=1000, help="rounds per world")
    args = harness.parse(made, argv, smoke={"rounds": 20})
    from dpaudit.audit import AuditConfig, run_audit

    rows = harness.Rows(__file__, args)
    figures: dict[str, object] = {}
    with tempfile.TemporaryDirectory(prefix="plugin_transcript-") as tmp:
        for name, options in AUDITS:
            config = AuditConfig.from_mapping(
                {
                    "generator": "dpaudit.generators.toy_plugins:NoisyMarginals",
                    "dataset": "worst-case",
                    "release": "transcript",
                    "rounds": args.rounds,
                    "seed": args.seed,
                    "generator_options": options,
                }
            )
            with rows.timed(name, rounds=args.rounds) as row:
                result = run_audit(config, out_dir=Path(tmp) / name)
                power = result.power
                row.update(
                    verdict=result.verdict.value,
                    mu_emp=round(result.mu_emp or 0.0, 3),
                    ratio=round(result.refutation_ratio or 0.0, 2),
                    mu_ceiling=round(power.mu_ceiling or 0.0, 3) if power else None,
                    mu_claimed=round(result.claim.gdp_mu or 0.0, 3),
                )
            for key in ("verdict", "mu_emp", "ratio", "mu_ceiling", "mu_claimed"):
                figures[f"{name}/{key}"] = row[key]
    rows.record(figures)
    return rows.finish(title="docs/plugins.md: NoisyMarginals' transcript audits")


if __name__ == "__main__":
    main()
