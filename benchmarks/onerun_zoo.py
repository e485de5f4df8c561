"""False alarms of the one-run game on real audits of the known-epsilon zoo.

Each audit is the library's whole pipeline (:func:`dpaudit.audit.run.run_audit`,
``game="one-run"``: the plug-in worker, the canaries, one fit, the default guess rule
and the default bound ``auto``) of an exact mechanism of :mod:`dpaudit.generators.zoo`
whose claim is true (``true_epsilon`` = the claimed epsilon 1, delta 1e-5, the claim
stating the mechanism's exact profile: every mechanism's RDP curve and the Gaussian's
``gdp_mu``, which the f-DP bound tests as one curve with the lines). A VIOLATION is a false alarm. The audits run round-robin
over the mechanisms, seed ``--seed + i``; every finished audit is saved to ``--out``
at once.

Prints per mechanism the VIOLATIONs of the audits, and the pooled rate with its
one-sided 95% Clopper-Pearson upper bound, which must be at most alpha 0.05.

    python benchmarks/onerun_zoo.py --audits 70 --record   # 210 audits
    python benchmarks/onerun_zoo.py --smoke                 # one audit
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

import harness
from scipy import stats

from dpaudit.audit import AuditConfig, run_audit

EPSILON = 1.0
DELTA = 1e-5
ALPHA = 0.05
MECHANISMS = ("ExactGaussian", "ExactRandomizedResponse", "ExactLaplace")


def audit_once(mechanism: str, seed: int, canaries: int, work: Path) -> dict[str, Any]:
    config = AuditConfig(
        generator=f"dpaudit.generators.zoo:{mechanism}",
        epsilon=EPSILON,
        delta=DELTA,
        seed=seed,
        game="one-run",
        canaries=canaries,
    )
    started = time.perf_counter()
    result = run_audit(config, out_dir=work / f"{mechanism}-{seed}", force=True)
    s = result.one_run
    assert s is not None
    return {
        "mechanism": mechanism,
        "seed": seed,
        "verdict": result.verdict.value,
        "eps_emp": result.eps_emp,
        "mu_emp": s.mu_emp,
        "bound": s.bound,
        "correct": s.correct,
        "guesses": s.guesses,
        "seconds": time.perf_counter() - started,
    }


def upper_95(k: int, n: int) -> float:
    """The one-sided 95% Clopper-Pearson upper bound of a rate, ``k`` of ``n``."""
    return 1.0 if n == 0 or k == n else float(stats.beta.ppf(0.95, k + 1, n - k))


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = harness.parser(__doc__)
    parser.add_argument("--audits", type=int, default=70, help="audits per mechanism")
    parser.add_argument("--canaries", type=int, default=200, help="canaries per audit")
    parser.add_argument(
        "--mechanisms", default=",".join(MECHANISMS), help="comma-separated zoo classes"
    )
    args = harness.parse(
        parser, argv, smoke={"audits": 1, "mechanisms": "ExactRandomizedResponse"}
    )
    table = harness.Rows(__file__, args)
    audits: list[dict[str, Any]] = []
    mechanisms = [m for m in args.mechanisms.split(",") if m]
    with tempfile.TemporaryDirectory(prefix="dpaudit-onerun-zoo-") as tmp:
        for i in range(args.audits):
            for mechanism in mechanisms:
                audits.append(
                    audit_once(mechanism, args.seed + i, args.canaries, Path(tmp))
                )
                table.save(audits=audits)
    for mechanism in mechanisms:
        mine = [a for a in audits if a["mechanism"] == mechanism]
        k = sum(a["verdict"] == "VIOLATION" for a in mine)
        table.add(
            mechanism,
            audits=len(mine),
            violations=k,
            rate=k / len(mine),
            upper_95_one_sided=upper_95(k, len(mine)),
            verdicts={
                v: sum(a["verdict"] == v for a in mine)
                for v in sorted({a["verdict"] for a in mine})
            },
            mean_eps_emp=sum(a["eps_emp"] for a in mine) / len(mine),
            mean_seconds=sum(a["seconds"] for a in mine) / len(mine),
        )
    k = sum(a["verdict"] == "VIOLATION" for a in audits)
    pooled = {
        "audits": len(audits),
        "violations": k,
        "rate": k / len(audits),
        "upper_95_one_sided": upper_95(k, len(audits)),
    }
    table.add("pooled", **pooled)
    payload = table.finish(
        title=f"one-run false alarms on the zoo's true claims (epsilon {EPSILON:g}, "
        f"delta {DELTA:g}, {args.canaries} canaries, alpha {ALPHA})",
        columns=["row", "audits", "violations", "rate", "upper_95_one_sided"],
        audits=audits,
    )
    if args.record:
        harness.write_record(
            "onerun_zoo",
            {
                "alpha": ALPHA,
                "pooled": pooled,
                "rows": [r for r in table.rows if r["row"] != "pooled"],
            },
            argv=argv,
        )
    return payload


if __name__ == "__main__":
    main()
