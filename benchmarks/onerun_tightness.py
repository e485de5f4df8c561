"""How much of the true epsilon each one-run bound recovers from ideal Gaussian scores.

Simulated one-run audits of the ideal mu-GDP canary: each canary's score is
``N(mu, 1)`` when included and ``N(0, 1)`` when not, independently. The guesses are
the game's own (:func:`dpaudit.audit.games.one_run.rules.apply_rules` with the
default rule ``both``: a Gaussian score has no threshold, so the count rule runs at
the full alpha 0.05), with the counts the game plans for each bound from its
configuration (:func:`dpaudit.audit.games.one_run.counts.plan_counts`: the claim is
the true epsilon at delta 1e-5, so the planning Gaussian is the scores' own; the
``order`` bound adds its nested counts); ``per_side`` names the planned count. Each
bound also runs at a tenth of the canaries per side on the same scores (``counts``
``tenth``: the counts before they were planned). Per bound and family:

- ``lines``: eps_emp, the largest epsilon whose (epsilon, delta) lines are rejected:
  a lower bound on epsilon for *any* mechanism (``steinke``: Steinke, Nasr and
  Jagielski 2023; ``fdp``, ``order``: docs/soundness.md, "The one-run f-DP bound");
- ``gdp``: the epsilon at delta of mu_emp, the largest mu-GDP rejected: a bound on
  the epsilon of a mechanism whose privacy is a GDP curve (what the literature's
  fractions measure; a claim that states mu is refuted by it);
- ``ceiling``: the best any test could reach here (not an audit): the one-sided
  z-test of the mean score difference, uniformly most powerful for this Gaussian
  shift when the canaries are independent, which no one-run audit may assume.

Power rows (``power`` in the record): how often the claim of the boundary (epsilon
``eps_true`` at delta and its ``mu``: the planning claim) is refuted by the game's
rules under ``fdp`` when the scores are those of ``OVERCLAIM`` times that mu (the
claim overstates the privacy), with the planned count and with a tenth per side
(the count used before planning), on the same scores: ``--power-audits`` per cell.

``fraction`` is eps_lo / eps_true, eps_true the epsilon at delta of mu-GDP. Beside
it the literature's figure at that size where one is published (jax_privacy's test of
Steinke's bound: 0.23 / 0.21 / 0.17 of epsilon for mu = 1 / 2 / 4 at 10,000 + 10,000
canaries; Mahloujifar, Melis and Chaudhuri, ICML 2025: 35-44%; Xiang et al., arXiv
2509.08704: 67% at 1,000 canaries, 89% at 10,000).

    python benchmarks/onerun_tightness.py                  # 20 audits per row
    python benchmarks/onerun_tightness.py --json --mu 1    # JSON rows
    python benchmarks/onerun_tightness.py --record         # also the record file
    python benchmarks/onerun_tightness.py --smoke          # seconds
"""

from __future__ import annotations

import json
import math
from typing import Any

import harness
import numpy as np

from dpaudit.audit.games import apply_rules, best_outcome, count_alpha, plan_counts
from dpaudit.audit.stats import eps_of_gdp

ALPHA = 0.05
DELTA = 1e-5
BOUNDS = ("steinke", "fdp", "order")


def literature(bound: str, family: str, mu: float, canaries: int) -> str:
    """The published fraction at this size, or "" where none is."""
    if bound == "steinke" and canaries >= 10000:
        return {
            1.0: "0.23 (jax_privacy, 10k+10k)",
            2.0: "0.21 (jax_privacy, 10k+10k)",
        }.get(mu, "")
    if bound == "fdp" and family == "gdp":
        return "0.35-0.44 (Mahloujifar et al.)"
    if bound == "order" and family == "gdp":
        return {1000: "0.67 (Xiang et al.)", 10000: "0.89 (Xiang et al.)"}.get(
            canaries, ""
        )
    return ""


def simulate(mu: float, canaries: int, audits: int, seed: int) -> list[dict[str, Any]]:
    """The rows of one (mu, canaries) cell: every bound and family, and the
    ceiling."""
    gen = np.random.default_rng([seed, int(mu * 1000), canaries])
    eps_true = eps_of_gdp(mu, DELTA)
    # The counts the game plans for each bound (rule both, no threshold: the count
    # rule at the full alpha), the claim being the scores' own epsilon.
    share = count_alpha(alpha=ALPHA, rule="both", threshold=False)
    assert share is not None
    per_side = {
        bound: plan_counts(
            canaries=canaries, epsilon=eps_true, delta=DELTA, alpha=share, bound=bound
        ).guesses_in
        for bound in BOUNDS
    }
    # The counts before planning, on the same scores: a tenth of the canaries.
    tenth = max(1, canaries // 10)
    found: dict[tuple[str, str, str], list[float]] = {}
    mus: dict[tuple[str, str], list[float]] = {}
    for _ in range(audits):
        bits = gen.integers(0, 2, size=canaries)
        scores = gen.normal(size=canaries) + mu * bits
        tie = gen.random(canaries)
        for bound in BOUNDS:
            for counts, k in (("planned", per_side[bound]), ("tenth", tenth)):
                outcomes = apply_rules(
                    scores,
                    bits,
                    rule="both",
                    guesses_in=k,
                    guesses_out=k,
                    threshold=None,
                    tie_break=tie,
                    delta=DELTA,
                    alpha=ALPHA,
                    bound=bound,
                )
                found.setdefault((bound, "lines", counts), []).append(
                    best_outcome(outcomes).eps_emp
                )
                if bound != "steinke":
                    mu_lo = max(o.mu_emp or 0.0 for o in outcomes)
                    mus.setdefault((bound, counts), []).append(mu_lo)
                    found.setdefault((bound, "gdp", counts), []).append(
                        eps_of_gdp(mu_lo, DELTA)
                    )
        n1 = int(bits.sum())
        n0 = canaries - n1
        diff = float(scores[bits == 1].mean() - scores[bits == 0].mean())
        z = 1.6448536269514722  # the one-sided 95% normal quantile
        mu_lo = max(0.0, diff - z * math.sqrt(1.0 / n1 + 1.0 / n0))
        mus.setdefault(("ceiling", ""), []).append(mu_lo)
        found.setdefault(("ceiling", "gdp", ""), []).append(eps_of_gdp(mu_lo, DELTA))
    rows = []
    for (bound, family, counts), values in found.items():
        eps_lo = float(np.mean(values))
        k = per_side.get(bound) if counts == "planned" else tenth if counts else None
        rows.append(
            {
                "bound": bound,
                "family": family,
                "mu": mu,
                "canaries": canaries,
                "counts": counts or None,
                "guesses": None if k is None else 2 * k,
                "per_side": k,
                "audits": audits,
                "eps_true": eps_true,
                "eps_lo": eps_lo,
                "fraction": eps_lo / eps_true,
                "mu_lo": (
                    float(np.mean(mus[(bound, counts)])) if family == "gdp" else None
                ),
                "literature": literature(bound, family, mu, canaries),
            }
        )
    return rows


#: The true mu of the power rows, as a multiple of the claim's.
OVERCLAIM = 1.5


def power(mu: float, canaries: int, audits: int, seed: int) -> list[dict[str, Any]]:
    """The power rows of one (mu, canaries) cell: the claim of mu-GDP (and its
    epsilon at delta) audited on scores of ``OVERCLAIM * mu``, refuted by ``fdp``
    with the planned count and with a tenth, on the same scores."""
    gen = np.random.default_rng([seed, int(mu * 1000), canaries, 15])
    eps = eps_of_gdp(mu, DELTA)
    share = count_alpha(alpha=ALPHA, rule="both", threshold=False)
    assert share is not None
    counts = {
        "planned": plan_counts(
            canaries=canaries, epsilon=eps, delta=DELTA, alpha=share, bound="fdp"
        ).guesses_in,
        "tenth": max(1, canaries // 10),
    }
    refuted = dict.fromkeys(counts, 0)
    for _ in range(audits):
        bits = gen.integers(0, 2, size=canaries)
        scores = gen.normal(size=canaries) + OVERCLAIM * mu * bits
        tie = gen.random(canaries)
        for name, k in counts.items():
            outcomes = apply_rules(
                scores,
                bits,
                rule="both",
                guesses_in=k,
                guesses_out=k,
                threshold=None,
                tie_break=tie,
                delta=DELTA,
                alpha=ALPHA,
                bound="fdp",
                claim_epsilon=eps,
                claim_mu=mu,
            )
            refuted[name] += any(o.refutes for o in outcomes)
    return [
        {
            "mu": mu,
            "canaries": canaries,
            "true_mu": OVERCLAIM * mu,
            "counts": name,
            "per_side": k,
            "audits": audits,
            "refuted": refuted[name],
            "rate": refuted[name] / audits if audits else None,
        }
        for name, k in counts.items()
    ]


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    parser = harness.parser(__doc__)
    parser.add_argument(
        "--mu", type=float, action="append", default=None, help="mu (repeatable)"
    )
    parser.add_argument(
        "--canaries",
        type=int,
        action="append",
        default=None,
        help="canaries (repeatable)",
    )
    parser.add_argument("--audits", type=int, default=20, help="audits per row")
    parser.add_argument(
        "--power-audits", type=int, default=200, help="audits per power row"
    )
    parser.add_argument(
        "--json", action="store_true", help="print the rows as a JSON list"
    )
    args = harness.parse(parser, argv, smoke={"audits": 2, "power_audits": 4})
    mus = args.mu or ([1.0] if args.smoke else [0.5, 1.0, 2.0])
    sizes = args.canaries or ([200] if args.smoke else [1000, 10000])
    table = harness.Rows(__file__, args)
    rows: list[dict[str, Any]] = []
    powers: list[dict[str, Any]] = []
    for mu in mus:
        for canaries in sizes:
            for row in simulate(mu, canaries, args.audits, args.seed):
                rows.append(row)
                counts = "" if row["counts"] is None else f" ({row['counts']})"
                table.add(
                    f"{row['bound']} {row['family']}{counts}, mu {mu:g}, "
                    f"{canaries} canaries",
                    **row,
                )
            powers += power(mu, canaries, args.power_audits, args.seed)
    if args.json:
        print(json.dumps(rows, indent=1))
        table.save()
    else:
        table.finish(
            title=f"one-run bounds on ideal Gaussian scores (alpha {ALPHA}, delta "
            f"{DELTA:g}, mean over {args.audits} audits)",
            columns=[
                "row",
                "per_side",
                "eps_true",
                "eps_lo",
                "fraction",
                "mu_lo",
                "literature",
            ],
            formats={
                "eps_true": ".3f",
                "eps_lo": ".3f",
                "fraction": ".3f",
                "mu_lo": ".3f",
            },
        )
        print(
            f"\npower: the claim of mu refuted (fdp) on scores of {OVERCLAIM:g} x mu, "
            f"{args.power_audits} audits per row"
        )
        for p in powers:
            print(
                f"  mu {p['mu']:g}, {p['canaries']:,} canaries, {p['counts']} "
                f"({p['per_side']} per side): {p['refuted']} of {p['audits']}"
            )
    if args.record:
        harness.write_record(
            "onerun_tightness",
            {
                "alpha": ALPHA,
                "delta": DELTA,
                "seed": args.seed,
                "rows": rows,
                "overclaim": OVERCLAIM,
                "power": powers,
            },
            argv=argv,
        )
    return rows


if __name__ == "__main__":
    main()
