"""Calibration of the audit on real audits: detection and false alarms of the
known-epsilon zoo's exact mechanisms (:mod:`dpaudit.generators.zoo`), each audit the
library's whole pipeline (:func:`dpaudit.audit.run.run_audit`: the plug-in worker,
the game, the default attacks, the exact test), many audits in one process.

Rows (all true epsilon 4, each claim stating the exact profile of the same mechanism
at the claimed epsilon):

- ``gaussian 1.6x``: the exactly (4, 1e-5)-DP Gaussian claiming (2.5, 1e-5): an
  overclaim, its VIOLATIONs are detections;
- ``gaussian true``, ``rr true``, ``laplace true``: true claims of 4: VIOLATIONs are
  false alarms.

The audits run round-robin over the rows (audit ``i`` of every row before audit
``i + 1`` of any), seed ``--seed + i``, and every finished audit is saved to ``--out``
at once: a run stopped at any point keeps what it finished, and ``--resume`` continues
it (the audits already in ``--out`` are kept, not rerun).

Per row: VIOLATIONs of audits, the rate and its 95% Clopper-Pearson interval, the mean
wall time of one audit, and the oracle: the largest probability of VIOLATION that a
threshold test of the mechanism's own noisy answer reaches at the audit's test size
and per-attack level, its threshold known in advance
(:func:`dpaudit.audit.stats.violation_ceiling`; the release rounds that answer, so no
attack on it does better): the best detection rate on the overclaim, the worst
false-alarm rate of one attack on a true claim (at most the per-attack level, by the
exact test's construction). The summary pools the true claims' false alarms.
``--resume --audits 0`` recomputes the summary of the audits in ``--out``.

    python benchmarks/zoo_calibration.py --audits 200 --out zoo_calibration.json
    python benchmarks/zoo_calibration.py --audits 300 --resume --out zoo_calibration.json
    python benchmarks/zoo_calibration.py --smoke        # seconds: a test runs it
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import harness
import numpy as np
from profile_zoo import DELTA, TRUE_EPSILON, Row, audit_once, oracle_rates
from scipy import stats

from dpaudit.audit.stats import ClaimedProfile, violation_ceiling

#: The overclaim's claimed epsilon (the true one is 4).
OVERCLAIM = 2.5
ALPHA = 0.05


def rows(names: tuple[str, ...]) -> list[Row]:
    """The benchmark's rows, in the order named (module docstring)."""
    classes = {
        "gaussian": "ExactGaussian",
        "rr": "ExactRandomizedResponse",
        "laplace": "ExactLaplace",
    }
    made = {
        "gaussian 1.6x": Row(
            name="gaussian 1.6x",
            generator="dpaudit.generators.zoo:ExactGaussian",
            epsilon=OVERCLAIM,
            mechanism="gaussian",
            overclaim=TRUE_EPSILON / OVERCLAIM,
            options={"true_epsilon": TRUE_EPSILON},
        ),
        **{
            f"{mech} true": Row(
                name=f"{mech} true",
                generator=f"dpaudit.generators.zoo:{cls}",
                epsilon=TRUE_EPSILON,
                mechanism=mech,
                overclaim=1.0,
                options={"true_epsilon": TRUE_EPSILON},
            )
            for mech, cls in classes.items()
        },
    }
    unknown = [n for n in names if n not in made]
    if unknown:
        raise SystemExit(f"--rows: unknown {unknown}; choose from {sorted(made)}")
    return [made[n] for n in names]


def clopper_pearson(k: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """The two-sided Clopper-Pearson interval of a rate, ``k`` of ``n``."""
    if n == 0:
        return 0.0, 1.0
    ci = stats.binomtest(k, n).proportion_ci(confidence_level=level, method="exact")
    return float(ci.low), float(ci.high)


def oracle(row: Row, audits: list[dict[str, Any]]) -> float:
    """The oracle's probability of VIOLATION (module docstring) at each audit's test
    rounds, per-attack level and claim, averaged over the audits (an audit that
    drops a constant attack tests the others at a larger level)."""
    fpr, fnr = oracle_rates(row)
    cache: dict[tuple[int, int, float], float] = {}
    for a in audits:
        key = (a["n0"], a["n1"], a["alpha"])
        if key not in cache:
            claim = ClaimedProfile.from_claim(a["claim"], delta=DELTA)
            cache[key] = violation_ceiling(claim, fpr, fnr, *key[:2], alpha=key[2])
    return float(np.mean([cache[(a["n0"], a["n1"], a["alpha"])] for a in audits]))


def summary(row: Row, audits: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(audits)
    k = sum(a["verdict"] == "VIOLATION" for a in audits)
    low, high = clopper_pearson(k, n)
    kind = "detection" if (row.overclaim or 1.0) > 1.0 else "false alarm"
    return {
        "row": row.name,
        "kind": kind,
        "claimed_epsilon": row.epsilon,
        "audits": n,
        "violations": k,
        "rate": k / n if n else None,
        "ci_low": low,
        "ci_high": high,
        "oracle": oracle(row, audits) if n else None,
        "verdicts": {
            v: sum(a["verdict"] == v for a in audits) for v in _verdicts(audits)
        },
        "mean_eps_emp": float(np.mean([a["eps_emp"] for a in audits])) if n else None,
        "mean_mu_emp": float(np.mean([a["profile"]["mu_emp"] for a in audits]))
        if n
        else None,
        "test_rounds": f"{audits[0]['n0']}+{audits[0]['n1']}" if n else None,
        "per_attack_alpha": audits[0]["alpha"] if n else None,
        "mean_seconds": float(np.mean([a["seconds"] for a in audits])) if n else None,
    }


def _verdicts(audits: list[dict[str, Any]]) -> list[str]:
    return sorted({a["verdict"] for a in audits})


def pooled(summaries: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The true claims' false alarms pooled, with the one-sided 95% upper
    Clopper-Pearson bound (the rate's largest value consistent with them)."""
    true = [s for s in summaries if s["kind"] == "false alarm"]
    n = sum(s["audits"] for s in true)
    if not n:
        return None
    k = sum(s["violations"] for s in true)
    return {
        "row": "true claims pooled",
        "kind": "false alarm",
        "audits": n,
        "violations": k,
        "rate": k / n,
        "ci_low": clopper_pearson(k, n)[0],
        "ci_high": clopper_pearson(k, n)[1],
        "upper_95_one_sided": clopper_pearson(k, n, level=0.90)[1],
    }


COLUMNS = (
    "row",
    "kind",
    "audits",
    "violations",
    "rate",
    "ci_low",
    "ci_high",
    "upper_95_one_sided",
    "oracle",
    "mean_mu_emp",
    "test_rounds",
    "per_attack_alpha",
    "mean_seconds",
)
FORMATS = {
    "rate": ".3f",
    "ci_low": ".3f",
    "ci_high": ".3f",
    "upper_95_one_sided": ".3f",
    "oracle": ".3f",
    "mean_mu_emp": ".3f",
    "per_attack_alpha": ".4f",
    "mean_seconds": ".1f",
}


def main(argv: list[str] | None = None) -> None:
    parser = harness.parser(__doc__)
    parser.add_argument("--audits", type=int, default=200, help="audits per row")
    parser.add_argument("--rounds", type=int, default=1000, help="rounds per world")
    parser.add_argument(
        "--rows",
        default="gaussian 1.6x,gaussian true,rr true,laplace true",
        help="comma-separated: gaussian 1.6x, gaussian true, rr true, laplace true",
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="keep the audits already in --out and run the rest",
    )
    args = harness.parse(
        parser,
        argv,
        smoke={"audits": 1, "rounds": 10, "rows": "gaussian 1.6x,gaussian true"},
    )
    chosen = rows(tuple(s.strip() for s in args.rows.split(",") if s.strip()))
    done: dict[str, list[dict[str, Any]]] = {r.name: [] for r in chosen}
    if args.resume and args.out is not None and Path(args.out).exists():
        for kept in json.loads(Path(args.out).read_text()).get("audits", []):
            if kept["row"] in done and kept["rounds"] == args.rounds:
                done[kept["row"]].append(kept)
    table = harness.Rows(__file__, args)
    print(
        f"{len(chosen)} rows x {args.audits} audits, {args.rounds} rounds per world "
        f"({sum(map(len, done.values()))} audits kept from {args.out})",
        flush=True,
    )

    def save() -> list[dict[str, Any]]:
        made = [summary(r, done[r.name]) for r in chosen if done[r.name]]
        table.rows = [*made, *([p] if (p := pooled(made)) else [])]
        every = [a for r in chosen for a in done[r.name]]
        table.save(audits=every)
        return made

    with tempfile.TemporaryDirectory(prefix="zoo_calibration-") as tmp:
        for i in range(args.audits):
            seed = args.seed + i
            for row in chosen:
                if any(a["seed"] == seed for a in done[row.name]):
                    continue
                started = time.perf_counter()
                work = Path(tempfile.mkdtemp(dir=tmp))
                audit = audit_once(row, seed, args.rounds, work)
                shutil.rmtree(work, ignore_errors=True)
                audit.update(row=row.name, rounds=args.rounds)
                done[row.name].append(audit)
                print(
                    f"  {row.name} seed {seed}: {audit['verdict']}, "
                    f"{time.perf_counter() - started:.1f} s",
                    flush=True,
                )
                save()
    save()
    print()
    table.finish(
        title=f"real zoo audits, {args.rounds} rounds per world: VIOLATIONs (detections "
        "on the overclaim, false alarms on true claims), 95% Clopper-Pearson interval, "
        "the oracle's VIOLATION probability at this size",
        columns=COLUMNS,
        formats=FORMATS,
        audits=[a for r in chosen for a in done[r.name]],
    )


if __name__ == "__main__":
    main()
