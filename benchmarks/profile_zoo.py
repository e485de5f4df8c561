"""The known-epsilon zoo against the profile test: per row, real audits over seeds.

Rows: the exact randomized response, Laplace and Gaussian count mechanisms of
:mod:`dpaudit.generators.zoo` (true epsilon 4; claims 4 (true), 2, 4/3 and 1: the true
claim and 2x, 3x and 4x overclaims, each stating its exact profile; the Gaussian also
stating its RDP curve alone), the reference PATE-GAN (``dpaudit audit``'s default),
G-PATE and smartnoise MST with public preprocessing (through ``--python``, by
default the ``dpaudit env`` environment ``smartnoise``, where it exists). Every audit
runs through the library API (:func:`dpaudit.audit.run.run_audit`), the whole
pipeline: the plug-in worker, the game, the default attacks, the estimator.

Per row, over the seeds: the rate of VIOLATION by the (epsilon, delta) lines and by
the profile test (the claim's stated regions: the lines, GDP,
RDP at every stated order, zCDP), a detection rate on an overclaim, a false-alarm rate
on a true claim; mean eps_emp and mu_emp; tightness ``mu_emp / mu_true``; the ratio of
mean mu_emp to the ceiling ``mu_ceiling`` (the expected mu_emp of the Neyman-Pearson
test with its best threshold known in advance, at the audit's test size and
per-attack level); the mean wall time of one audit.

The profile test is the audit's own verdict (it tests every region the claim states,
thresholds chosen on validation rounds by the refutation ratio); "lines" is whether
some attack's test point lies outside the (epsilon, delta) lines at those thresholds;
a row stating no profile (``profile=none``) is the classic lines-only audit. For a
result without the profile fields (an older dpaudit) the test is computed here from
each attack's test counts (:func:`dpaudit.audit.stats.profile.judge_point`); the output says
which.

    python benchmarks/profile_zoo.py --seeds 5 --out profile_zoo.json
    python benchmarks/profile_zoo.py --smoke            # seconds: a test runs it
    python benchmarks/profile_zoo.py --only gaussian --seeds 20 --rounds 1000
"""

from __future__ import annotations

import math
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import harness
import numpy as np
from scipy import stats

from dpaudit.audit import AuditConfig, run_audit
from dpaudit.audit.stats import (
    ClaimedProfile,
    judge_point,
    mu_ceiling,
    mu_lower_bound,
    rate_upper_bound,
    rate_upper_bounds,
)
from dpaudit.audit.storage import ResultStore
from dpaudit.generators.zoo import analytic_gaussian_mu

TRUE_EPSILON = 4.0
DELTA = 1e-5


@dataclass(frozen=True, kw_only=True)
class Row:
    """One row: an audit configuration and what is known about its truth."""

    name: str
    generator: str
    epsilon: float
    mechanism: str | None = None  # rr, laplace, gaussian (a zoo row)
    overclaim: float | None = None  # true epsilon / claimed epsilon (a zoo row)
    options: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)  # AuditConfig fields
    rounds: int | None = None  # None: --rounds


def zoo_rows(
    mechanisms: tuple[str, ...], factors: tuple[int, ...] = (1, 2, 3, 4)
) -> list[Row]:
    classes = {
        "rr": "ExactRandomizedResponse",
        "laplace": "ExactLaplace",
        "gaussian": "ExactGaussian",
    }
    rows = []
    for mech in mechanisms:
        for factor in factors:
            label = "true" if factor == 1 else f"{factor}x"
            rows.append(
                Row(
                    name=f"{mech} {label}",
                    generator=f"dpaudit.generators.zoo:{classes[mech]}",
                    epsilon=TRUE_EPSILON / factor,
                    mechanism=mech,
                    overclaim=float(factor),
                    options={"true_epsilon": TRUE_EPSILON},
                )
            )
        if mech == "gaussian":
            for factor in [f for f in factors if f in (1, 4)]:
                label = "true" if factor == 1 else f"{factor}x"
                for stated in ("rdp", "none"):
                    if stated == "none" and factor == 1:
                        continue
                    rows.append(
                        Row(
                            name=f"gaussian {label} {stated}-only"
                            if stated == "rdp"
                            else f"gaussian {label} point only",
                            generator="dpaudit.generators.zoo:ExactGaussian",
                            epsilon=TRUE_EPSILON / factor,
                            mechanism="gaussian",
                            overclaim=float(factor),
                            options={"true_epsilon": TRUE_EPSILON, "profile": stated},
                        )
                    )
    return rows


def other_rows(
    names: tuple[str, ...], mst_rounds: int, python: str | None
) -> list[Row]:
    rows = []
    if "pategan" in names:
        rows.append(
            Row(name="PATE-GAN (default audit)", generator="pategan", epsilon=1)
        )
    if "gpate" in names:
        rows.append(Row(name="G-PATE", generator="gpate", epsilon=1))
    if "mst" in names and python is not None:
        rows.append(
            Row(
                name="smartnoise MST (public)",
                generator="smartnoise-mst",
                epsilon=1,
                options={"preprocessing": "public"},
                extra={"python": python},
                rounds=mst_rounds,
            )
        )
    return rows


# ------------------------------------------------------------------ the truth


def mu_true(row: Row) -> float | None:
    """The exact GDP mu of a zoo row's mechanism (the smallest mu it is mu-GDP for),
    None elsewhere. Gaussian: the analytic calibration. Randomized response: its
    trade-off is the two chords through ``(p, p)``, ``p = 1 / (1 + e^eps)``, and a
    convex symmetric curve through that point lies below its chords, so
    ``mu = 2 Phi^-1(1 - p)``. Laplace: ``sup_t Phi^-1(F(t)) - Phi^-1(F(t - eps))``
    (``F`` the standard Laplace CDF), on a grid."""
    if row.mechanism is None:
        return None
    eps = TRUE_EPSILON
    if row.mechanism == "gaussian":
        return analytic_gaussian_mu(eps, DELTA)
    if row.mechanism == "rr":
        return float(2.0 * stats.norm.isf(1.0 / (1.0 + math.exp(eps))))
    t = np.linspace(-30.0, 30.0 + eps, 200_001)
    lap = stats.laplace
    gap = stats.norm.ppf(lap.cdf(t)) - stats.norm.ppf(lap.cdf(t - eps))
    return float(np.nanmax(gap[np.isfinite(gap)]))


def oracle_rates(row: Row) -> tuple[np.ndarray, np.ndarray]:
    """(FPR, FNR) of the Neyman-Pearson tests of a zoo row's mechanism on its own
    noisy answer (worst case: count 0 against 1), over a grid of thresholds."""
    eps = TRUE_EPSILON
    if row.mechanism == "rr":
        p = 1.0 / (1.0 + math.exp(eps))
        return np.array([p]), np.array([p])
    t = np.linspace(-3.0, 4.0, 141)
    if row.mechanism == "laplace":
        law = stats.laplace(scale=1.0 / eps)
    else:
        law = stats.norm(scale=1.0 / analytic_gaussian_mu(eps, DELTA))
    return law.sf(t), law.cdf(t - 1.0)


def ceiling(row: Row, n0: int, n1: int, alpha: float) -> float | None:
    """The expected mu_emp of the oracle test with its best threshold known in
    advance (exact over the binomial laws of the errors): for the Gaussian the
    library's :func:`mu_ceiling`; for randomized response and Laplace the same
    expectation over their own laws."""
    if row.mechanism is None:
        return None
    if row.mechanism == "gaussian":
        return mu_ceiling(mu_true(row) or 0.0, n0, n1, alpha=alpha)
    k0, k1 = np.arange(n0 + 1), np.arange(n1 + 1)
    u0 = rate_upper_bounds(k0, np.full(k0.size, n0), alpha / 2, "clopper_pearson")
    u1 = rate_upper_bounds(k1, np.full(k1.size, n1), alpha / 2, "clopper_pearson")
    table = mu_lower_bound(u0[:, None], u1[None, :])
    best = 0.0
    for p0, p1 in zip(*oracle_rates(row), strict=True):
        w0, w1 = stats.binom.pmf(k0, n0, p0), stats.binom.pmf(k1, n1, p1)
        best = max(best, float(w0 @ table @ w1))
    return best


# -------------------------------------------------------------- one audit


def stored_claim(out: Path) -> dict[str, Any]:
    """The round claim with the largest epsilon (the one the verdict judges)."""
    with ResultStore(out) as store:
        claims = list(store.claims().values())
    return max(claims, key=lambda c: float(c["epsilon"]))


def profile_of(result: dict[str, Any], claim: dict[str, Any]) -> dict[str, Any]:
    """The profile test of one audit: the audit's own (its verdict tests every region
    the claim states, with thresholds chosen by the refutation ratio; per attack
    ``mu_emp`` and ``regions_violated``), or, for a result without it, computed here
    from each attack's test counts (module docstring). ``lines``: some attack's test
    point lies outside the (epsilon, delta) lines; ``mu_emp``: the largest over the
    attacks (each at its Bonferroni level, so the maximum holds overall)."""
    attacks = result["attacks"]
    if all(
        "regions_violated" in a and a.get("mu_emp") is not None
        for a in attacks.values()
    ):
        regions = sorted(
            {
                f"{name}:{r.split('@')[0]}"
                for name, a in attacks.items()
                for r in a["regions_violated"]
            }
        )
        return {
            "source": "audit",
            "violation": result["verdict"] == "VIOLATION",
            "lines": any("lines" in a["regions_violated"] for a in attacks.values()),
            "mu_emp": max(float(a["mu_emp"]) for a in attacks.values()),
            "regions": regions,
        }
    profile = ClaimedProfile.from_claim(claim, delta=float(result["delta"]))
    violation, lines, mu_emp, regions = False, False, 0.0, []
    for name, attack in attacks.items():
        c, alpha = attack["counts"], float(attack["alpha"])
        n0, n1 = c["fp"] + c["tn"], c["tp"] + c["fn"]
        a = rate_upper_bound(c["fp"], n0, alpha=alpha / 2)
        b = rate_upper_bound(c["fn"], n1, alpha=alpha / 2)
        point = judge_point(a, b, profile)
        mu_emp = max(mu_emp, point.mu_emp)
        if point.regions_violated:
            violation = True
            lines = lines or "lines" in point.regions_violated
            kinds = {r.split("@")[0] for r in point.regions_violated}
            regions += [f"{name}:{k}" for k in sorted(kinds)]
    return {
        "source": "post hoc",
        "violation": violation,
        "lines": lines,
        "mu_emp": mu_emp,
        "regions": regions,
    }


def audit_once(row: Row, seed: int, rounds: int, workdir: Path) -> dict[str, Any]:
    out = workdir / f"{row.name.replace(' ', '_').replace('/', '_')}-{seed}"
    config = AuditConfig(
        generator=row.generator,
        epsilon=row.epsilon,
        delta=DELTA,
        rounds=row.rounds or rounds,
        seed=seed,
        generator_options=row.options,
        **row.extra,
    )
    started = time.perf_counter()
    result = run_audit(config, out_dir=out, force=True).to_json()
    seconds = time.perf_counter() - started
    claim = stored_claim(out)
    profile = profile_of(result, claim)
    attack = next(iter(result["attacks"].values()))
    c = attack["counts"]
    return {
        "seed": seed,
        "verdict": result["verdict"],
        "eps_emp": float(result["eps_emp"]),
        "profile": profile,
        "n0": c["fp"] + c["tn"],
        "n1": c["tp"] + c["fn"],
        "alpha": float(attack["alpha"]),
        "stated": [k for k in ("gdp_mu", "zcdp_rho", "rdp") if claim.get(k)],
        "mu_ceiling_audit": result["power"].get("mu_ceiling"),
        "claim": claim,
        "seconds": seconds,
    }


def summarise(row: Row, audits: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(audits)
    lines = sum(a["profile"]["lines"] for a in audits) / n
    prof = sum(a["profile"]["violation"] for a in audits) / n
    mu_emp = float(np.mean([a["profile"]["mu_emp"] for a in audits]))
    truth = mu_true(row)
    ceil = ceiling(row, audits[0]["n0"], audits[0]["n1"], audits[0]["alpha"])
    return {
        "row": row.name,
        "generator": row.generator,
        "claimed_epsilon": row.epsilon,
        "overclaim": row.overclaim,
        "stated": audits[0]["stated"],
        "seeds": n,
        "rounds": row.rounds,
        "lines_violation_rate": lines,
        "profile_violation_rate": prof,
        "mean_eps_emp": float(np.mean([a["eps_emp"] for a in audits])),
        "mean_mu_emp": mu_emp,
        "mu_true": truth,
        "tightness": None if not truth else mu_emp / truth,
        "mu_ceiling": ceil,
        "ceiling_ratio": None if not ceil else mu_emp / ceil,
        "mean_seconds": float(np.mean([a["seconds"] for a in audits])),
        "profile_source": sorted({a["profile"]["source"] for a in audits}),
        "audits": audits,
    }


#: The table's columns (every figure, and each audit, is in --out's rows).
COLUMNS = (
    "row",
    "stated",
    "seeds",
    "lines_violation_rate",
    "profile_violation_rate",
    "mean_eps_emp",
    "mean_mu_emp",
    "mu_true",
    "tightness",
    "mu_ceiling",
    "ceiling_ratio",
    "mean_seconds",
)
FORMATS = {
    "lines_violation_rate": ".2f",
    "profile_violation_rate": ".2f",
    "mean_eps_emp": ".2f",
    "mean_mu_emp": ".3f",
    "mu_true": ".3f",
    "tightness": ".2f",
    "mu_ceiling": ".3f",
    "ceiling_ratio": ".2f",
    "mean_seconds": ".1f",
}


def main(argv: list[str] | None = None) -> None:
    parser = harness.parser(__doc__)
    parser.add_argument("--seeds", type=int, default=3, help="audits per row")
    parser.add_argument("--rounds", type=int, default=1000, help="rounds per world")
    parser.add_argument(
        "--only",
        default="rr,laplace,gaussian,pategan,gpate,mst",
        help="comma-separated rows: rr, laplace, gaussian, pategan, gpate, mst",
    )
    parser.add_argument(
        "--factors",
        default="1,2,3,4",
        help="overclaim factors of the zoo rows (1: the true claim)",
    )
    parser.add_argument("--mst-rounds", type=int, default=25)
    harness.add_python(parser, "smartnoise", "smartnoise-synth (the MST row)")
    args = harness.parse(
        parser, argv, smoke={"seeds": 1, "rounds": 10, "only": "rr,gaussian"}
    )
    only = tuple(s.strip() for s in args.only.split(",") if s.strip())
    factors = tuple(int(f) for f in args.factors.split(","))
    rows = zoo_rows(
        tuple(m for m in ("rr", "laplace", "gaussian") if m in only), factors
    )
    if args.smoke:
        rows = [r for r in rows if r.name in ("rr true", "gaussian 4x")]
    python = harness.python_for(args, "smartnoise", required=False)
    if "mst" in only and python is None:
        print(
            f"skipping MST: no --python and {harness.env_python('smartnoise')} is absent"
        )
    rows += other_rows(only, args.mst_rounds, python)
    print(
        f"{len(rows)} rows x {args.seeds} seeds, {args.rounds} rounds per world "
        f"(MST: {args.mst_rounds})"
    )
    table = harness.Rows(__file__, args)
    with tempfile.TemporaryDirectory(prefix="profile_zoo-") as tmp:
        for row in rows:
            started = time.perf_counter()
            audits = [
                audit_once(row, seed, args.rounds, Path(tmp))
                for seed in range(args.seed, args.seed + args.seeds)
            ]
            summary = summarise(row, audits)
            summary["rounds"] = row.rounds or args.rounds
            summary["seconds"] = time.perf_counter() - started
            table.add(**summary)
            print(
                f"  {row.name}: {summary['profile_violation_rate']:.2f} profile, "
                f"{summary['lines_violation_rate']:.2f} lines, mu_emp "
                f"{summary['mean_mu_emp']:.3f}, {summary['mean_seconds']:.1f} s/audit",
                flush=True,
            )
            table.save()
    print()
    table.finish(columns=COLUMNS, formats=FORMATS)
    print(
        "lines/profile: fraction of audits with VIOLATION by the (epsilon, delta) lines "
        "(the audit's verdict) and by the profile test (detection on an overclaim, "
        "false alarm on a true claim); tightness: mean mu_emp / mu_true; mu_ceiling: "
        "the oracle's expected mu_emp at this test size; ceiling_ratio: mean mu_emp / "
        "mu_ceiling."
    )


if __name__ == "__main__":
    main()
