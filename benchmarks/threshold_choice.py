"""The threshold rule where the claim is out of reach: smartnoise MST's transcript at
epsilon 4 simulated (its likelihood-ratio scores are those of a Gaussian of mu
0.7054; the claim, zCDP rho 0.373, is mu 0.864), decided by the audit's own
:func:`dpaudit.audit.games.judge_scores` with the rule as it is (by the expected
reported bound where the best plug-in power is below ``POWER_CUT``) and with the
power alone (the cut at 1e-9, the rule before), on the same simulated scores.
Prints the mean mu_emp as a share of the ceiling (the oracle's expected mu_emp at
the test size), its standard deviation and the share of audits below 0.7 of it; the
median and largest best plug-in power over the audits, and the best true power of
any threshold (the oracle's: exact Gaussian rates, exactly over the binomials).

    python benchmarks/threshold_choice.py          # 200 audits, 200 + 800 rounds
    python benchmarks/threshold_choice.py --smoke  # seconds
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from dpaudit.audit.games import judge_scores
from dpaudit.audit.stats import ClaimedProfile, calibrated, mu_ceiling, thresholds

MU, RHO, DELTA, ALPHA = 0.7053547, 0.37314398, 1e-5, 0.05


CLAIM = ClaimedProfile(epsilon=4.0, delta=DELTA, zcdp_rho=RHO)


def _best_plug_in_power(s_val: np.ndarray, y_val: np.ndarray, test: int) -> float:
    """The best plug-in power over every threshold, in both directions."""
    rejection = calibrated.deciding_counts(CLAIM, test, test, alpha=ALPHA, delta=DELTA)
    n = y_val.size // 2
    order = np.sort(s_val[y_val == 0]), np.sort(s_val[y_val == 1])
    cuts = np.unique(s_val)
    fp = n - np.searchsorted(order[0], cuts, side="left")  # +1: score >= cut
    fn = np.searchsorted(order[1], cuts, side="left")
    fp_dn = np.searchsorted(order[0], cuts, side="right")  # -1: score <= cut
    fn_dn = n - np.searchsorted(order[1], cuts, side="right")
    fp, fn = np.concatenate((fp, fp_dn)), np.concatenate((fn, fn_dn))
    power = thresholds.plug_in_power(fp, n, fn, n, rejection, test)
    return float(power.max())


def oracle_power(test: int) -> float:
    """The best true power of ``score >= t`` and ``score <= t`` over a grid of t
    (exact rates)."""
    rejection = calibrated.deciding_counts(CLAIM, test, test, alpha=ALPHA, delta=DELTA)
    k0 = np.arange(test + 1)
    best = 0.0
    for t in np.linspace(-4.0, 5.0, 361):
        for fpr, fnr in (
            (stats.norm.sf(t), stats.norm.cdf(t - MU)),
            (stats.norm.cdf(t), stats.norm.sf(t - MU)),
        ):
            w0 = stats.binom.pmf(k0, test, fpr)
            hit = np.where(rejection >= 0, stats.binom.cdf(rejection, test, fnr), 0.0)
            best = max(best, float(w0 @ hit))
    return best


def simulate(
    cut: float, *, audits: int, validation: int, test: int, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """mu_emp of ``audits`` simulated audits with ``POWER_CUT`` at ``cut``, and
    each audit's best plug-in power."""
    gen = np.random.default_rng(seed)
    y_val, y_test = np.repeat([0, 1], validation), np.repeat([0, 1], test)
    kept, thresholds.POWER_CUT = thresholds.POWER_CUT, cut
    mu, power = [], []
    try:
        for _ in range(audits):
            s_val = gen.normal(MU * y_val, 1.0)
            judged = judge_scores(
                s_val,
                y_val,
                gen.normal(MU * y_test, 1.0),
                y_test,
                delta=DELTA,
                alpha=ALPHA,
                method="clopper_pearson",
                profile=CLAIM,
            )
            mu.append(judged.point.mu_emp)
            power.append(_best_plug_in_power(s_val, y_val, test))
    finally:
        thresholds.POWER_CUT = kept
    return np.asarray(mu), np.asarray(power)


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
    for name, cut in (
        ("expected bound below the cut", thresholds.POWER_CUT),
        ("power alone (the rule before)", 1e-9),
    ):
        with rows.timed(name, audits=args.audits) as row:
            mu, power = simulate(
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
                power_median=float(np.median(power)),
                power_max=float(power.max()),
            )
    best = oracle_power(args.test)
    rows.finish(
        oracle_power=best,
        title=f"a Gaussian of mu {MU} claiming zCDP rho {RHO}, "
        f"{args.validation} + {args.test} validation and test rounds per world, "
        f"alpha {ALPHA}: mu_emp as a share of the ceiling",
        formats={
            "mean_to_ceiling": ".3f",
            "sd_to_ceiling": ".3f",
            "below_70": ".1%",
            "ceiling": ".3f",
            "power_median": ".3g",
            "power_max": ".3g",
            "seconds": ".1f",
        },
    )
    print(f"the best true power of any threshold: {best:.3g}")


if __name__ == "__main__":
    main()
