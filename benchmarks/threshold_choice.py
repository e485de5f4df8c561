"""The threshold rule where the claim is out of reach: smartnoise MST's transcript at
epsilon 4 simulated (its likelihood-ratio scores are those of a Gaussian of mu
0.7054; the claim, zCDP rho 0.373, is mu 0.864), decided by the audit's own
:func:`dpaudit.audit.games.judge_scores` with the rule as it is (by the expected
reported bound where the best plug-in power is below the cut, 1/2) and with the
power alone (the cut at 1e-9: the rule before), on the same simulated scores.
Prints the mean mu_emp as a share of the ceiling (the oracle's expected mu_emp at
the test size), its standard deviation and the share of audits below 0.7 of it.

    python benchmarks/threshold_choice.py          # 200 audits, 200 + 800 rounds
    python benchmarks/threshold_choice.py --smoke  # seconds
"""

from __future__ import annotations

import numpy as np

from dpaudit.audit.games import judge_scores
from dpaudit.audit.stats import ClaimedProfile, mu_ceiling

MU, RHO, DELTA, ALPHA = 0.7053547, 0.37314398, 1e-5, 0.05
CLAIM = ClaimedProfile(epsilon=4.0, delta=DELTA, zcdp_rho=RHO)
#: The rule as it is (thresholds.POWER_CUT) and the rule before.
RULES = (("expected bound below the cut", 0.5), ("power alone (the rule before)", 1e-9))


def simulate(
    cut: float, *, audits: int, validation: int, test: int, seed: int
) -> np.ndarray:
    """mu_emp of ``audits`` simulated audits with the threshold rule's cut at
    ``cut`` (the same scores for every cut at one seed)."""
    gen = np.random.default_rng(seed)
    y_val, y_test = np.repeat([0, 1], validation), np.repeat([0, 1], test)
    return np.asarray(
        [
            judge_scores(
                gen.normal(MU * y_val, 1.0),
                y_val,
                gen.normal(MU * y_test, 1.0),
                y_test,
                delta=DELTA,
                alpha=ALPHA,
                method="clopper_pearson",
                profile=CLAIM,
                power_cut=cut,
            ).point.mu_emp
            for _ in range(audits)
        ]
    )


def main(argv: list[str] | None = None) -> None:
    import harness

    parser = harness.parser(__doc__, seed=6)
    parser.add_argument("--audits", type=int, default=200)
    parser.add_argument("--validation", type=int, default=200, help="per world")
    parser.add_argument("--test", type=int, default=800, help="per world")
    args = harness.parse(
        parser, argv, smoke={"audits": 3, "validation": 50, "test": 100}
    )
    rows = harness.Rows(__file__, args)
    ceiling = mu_ceiling(MU, args.test, args.test, alpha=ALPHA)
    for name, cut in RULES:
        with rows.timed(name, audits=args.audits) as row:
            mu = simulate(
                cut,
                audits=args.audits,
                validation=args.validation,
                test=args.test,
                seed=args.seed,
            )
            row.update(
                cut=cut,
                mean_to_ceiling=float(mu.mean()) / ceiling,
                sd_to_ceiling=float(mu.std(ddof=1)) / ceiling if mu.size > 1 else 0.0,
                below_70=float(np.mean(mu < 0.7 * ceiling)),
                ceiling=ceiling,
            )
    rows.finish(
        title=f"a Gaussian of mu {MU} claiming zCDP rho {RHO}, "
        f"{args.validation} + {args.test} validation and test rounds per world, "
        f"alpha {ALPHA}: mu_emp as a share of the ceiling",
        formats={
            "mean_to_ceiling": ".3f",
            "sd_to_ceiling": ".3f",
            "below_70": ".1%",
            "ceiling": ".3f",
            "seconds": ".1f",
        },
    )


if __name__ == "__main__":
    main()
