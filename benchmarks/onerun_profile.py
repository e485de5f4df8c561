"""What testing a stated zCDP curve adds to a one-run audit: detections of an
overclaimed Gaussian, and false alarms at the claim, with the claim's rho curve
against its (epsilon, delta) lines alone.

Simulated one-run audits of the Gaussian score: canary ``i`` scores ``N(mu S_i, 1)``
(exactly mu-GDP and ``mu^2 / 2``-zCDP per canary). The claim: zCDP ``rho = mu_c^2 /
2`` and the epsilon at delta 1e-5 of the ``mu_c``-GDP Gaussian, with ``mu_c``
``--claimed-mu``; the release is at ``mu_c`` (``true``: the claim holds, a VIOLATION
is a false alarm) or at each of ``--factors`` times it (an overclaim, a VIOLATION is
a detection). Every audit is decided by the game's own rules
(:func:`dpaudit.audit.games.apply_rules`, the ``fdp`` bound, the count rule's counts
planned for the claim by :func:`~dpaudit.audit.games.plan_counts`, alpha 0.05) three
ways from the same guesses:

- ``lines``: the claim's (epsilon, delta) lines alone (VIOLATION iff eps_emp exceeds
  the claimed epsilon: how a claim without its profile is tested);
- ``rho curve``: the claim's curve with its zCDP rho as (epsilon, delta) pairs
  (docs/soundness.md, "The one-run f-DP bound": what the game does for a claim that
  states a rho, such as the library adapters');
- ``mu curve``: for reference, the same claim stating its mu-GDP instead.

    python benchmarks/onerun_profile.py             # 2,000 audits per row, 1,000
                                                    # and 10,000 canaries
    python benchmarks/onerun_profile.py --record    # also the record file
    python benchmarks/onerun_profile.py --smoke     # seconds
"""

from __future__ import annotations

from typing import Any

import harness
import numpy as np
from scipy.stats import beta as beta_law

from dpaudit.audit.games import apply_rules, best_outcome, plan_counts
from dpaudit.audit.stats import eps_of_gdp, profile_curve

ALPHA = 0.05
DELTA = 1e-5
TESTS = ("lines", "rho curve", "mu curve")


def simulate(
    *, mu: float, claimed_mu: float, canaries: int, audits: int, seed: int
) -> dict[str, Any]:
    """VIOLATIONs of each test over ``audits`` simulated audits at ``mu``."""
    epsilon = eps_of_gdp(claimed_mu, DELTA)
    curve = profile_curve(zcdp_rho=claimed_mu**2 / 2)
    assert curve is not None
    side = plan_counts(
        canaries=canaries, epsilon=epsilon, delta=DELTA, alpha=ALPHA, bound="fdp"
    ).guesses_in
    gen = np.random.default_rng([seed, canaries, round(1000 * mu)])
    hits = dict.fromkeys(TESTS, 0)
    for _ in range(audits):
        bits = gen.integers(0, 2, size=canaries)
        scores = gen.normal(size=canaries) + mu * bits
        ties = gen.random(canaries)
        common = {
            "rule": "both",
            "guesses_in": side,
            "guesses_out": side,
            "threshold": None,
            "tie_break": ties,
            "delta": DELTA,
            "alpha": ALPHA,
            "bound": "fdp",
            "claim_epsilon": epsilon,
        }
        lines = apply_rules(scores, bits, **common)
        hits["lines"] += best_outcome(lines).eps_emp > epsilon
        rho = apply_rules(scores, bits, claim_curve=curve, **common)
        hits["rho curve"] += any(o.refutes for o in rho)
        gdp = apply_rules(scores, bits, claim_mu=claimed_mu, **common)
        hits["mu curve"] += any(o.refutes for o in gdp)
    return {"side": side, "epsilon": epsilon, "hits": hits}


def _floats(text: str) -> list[float]:
    return [float(v) for v in text.split(",")]


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    parser = harness.parser(__doc__)
    parser.add_argument("--audits", type=int, default=2000, help="audits per row")
    parser.add_argument(
        "--canaries", default="1000,10000", help="canaries, comma-separated"
    )
    parser.add_argument("--claimed-mu", type=float, default=1.0, help="mu_c")
    parser.add_argument(
        "--factors",
        default="1.5,2",
        help="the overclaims' true mu / mu_c, comma-separated",
    )
    args = harness.parse(parser, argv, smoke={"audits": 40, "canaries": "200"})
    table = harness.Rows(__file__, args)
    rows: list[dict[str, Any]] = []
    figures: dict[str, Any] = {
        "alpha": ALPHA,
        "delta": DELTA,
        "claimed_mu": args.claimed_mu,
        "rho": args.claimed_mu**2 / 2,
        "epsilon": eps_of_gdp(args.claimed_mu, DELTA),
        "audits": args.audits,
        "seed": args.seed,
    }
    for canaries in (int(c) for c in _floats(args.canaries)):
        releases = [("true", 1.0)] + [(f"{f:g}x", f) for f in _floats(args.factors)]
        for release, factor in releases:
            mu = factor * args.claimed_mu
            found = simulate(
                mu=mu,
                claimed_mu=args.claimed_mu,
                canaries=canaries,
                audits=args.audits,
                seed=args.seed,
            )
            figures[f"{canaries}/per_side"] = found["side"]
            for test, hits in found["hits"].items():
                upper = (
                    1.0
                    if hits == args.audits
                    else float(beta_law.ppf(0.95, hits + 1, args.audits - hits))
                )
                row = {
                    "canaries": canaries,
                    "release": release,
                    "mu": mu,
                    "test": test,
                    "audits": args.audits,
                    "violations": hits,
                    "rate": hits / args.audits,
                    "upper95": upper,
                }
                rows.append(row)
                table.add(f"{canaries}, {release} (mu {mu:g}), {test}", **row)
                key = f"{canaries}/{release}/{test}"
                figures[f"{key}/violations"] = hits
                figures[f"{key}/rate"] = hits / args.audits
                figures[f"{key}/upper95"] = upper
    table.finish(
        title=(
            f"one-run VIOLATIONs, claim zCDP rho {args.claimed_mu**2 / 2:g} and "
            f"epsilon {figures['epsilon']:.3f} at delta {DELTA:g} (fdp bound, the "
            f"planned counts, alpha {ALPHA})"
        ),
        columns=["row", "violations", "audits", "rate", "upper95"],
        formats={"rate": ".3f", "upper95": ".3f"},
        **figures,
        rows_detail=rows,
    )
    table.record(figures)
    return rows


if __name__ == "__main__":
    main()
