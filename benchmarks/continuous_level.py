"""What the size left below alpha is worth: the exact test's calibrated level on
its grid (dpaudit/audit/stats/levels.py, ``exact.LEVELS``, each 10% above the last)
against a continuous level and a randomized test, exactly over the binomials (no
simulation).

The test of a claim rejects on the counts whose Clopper-Pearson corner at a per-rate
level lies outside the claimed region; the audit uses the largest grid level ``A``
whose size bound on the region's boundary (:func:`dpaudit.audit.stats.exact.size`)
is at most alpha. Two ways to spend what that level leaves:

- *a continuous level*: the largest level in ``[LEVELS[A], LEVELS[A + 1])`` whose
  test passes the same check, found by bisection in log(level) (the rejection sets
  grow with the level, so the passing levels are an interval; the level is a
  function of the claim, the sizes and alpha alone, as the grid level is);
- *a randomized test*: reject on ``S_A``, and on ``S_{A+1} minus S_A`` with
  probability ``gamma = (alpha - s_A) / (s_{A+1} - s_A)`` (``s`` the size bounds):
  its size is at most ``(1 - gamma) s_A + gamma s_{A+1} = alpha`` (the supremum of
  a mixture is at most the mixture of the suprema). ``randomized_above`` does the
  same above the continuous level (``S_c`` and the next larger set of the chain):
  the most a coin can add to any level of this chain.

Per case: the size bounds in units of alpha (grid, continuous, the next grid
level's, the randomized test's: 1 by construction), and the oracle, the largest
probability of VIOLATION over the threshold tests of the mechanism's release (the
Neyman-Pearson tests, their threshold known in advance: the best detection rate any
threshold test reaches at that size and level, as
:func:`dpaudit.audit.stats.violation_ceiling` computes it for the grid level). On a
claim the mechanism meets, detection is a false alarm and stays at most alpha. The
review of the exact test (the "Power left in the two-world statistics") expected a
continuous level to add about 2 points of detection (``review_points``).

    PYTHONPATH=. python benchmarks/continuous_level.py            # every case
    PYTHONPATH=. python benchmarks/continuous_level.py --record   # and the record
    PYTHONPATH=. python benchmarks/continuous_level.py --smoke    # 60 + 60, seconds
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import harness
import numpy as np
from numpy.typing import NDArray
from profile_calibration import gaussian_claim
from scipy import stats

from dpaudit.audit.stats import ClaimedProfile, gdp_mu_of_eps, level_gap

ALPHA = 0.05 / 3
DELTA = 1e-5
METHOD = "clopper_pearson"
#: The review's figure: "a continuous level adds about 2 more" points of detection.
REVIEW_POINTS = 2.0
#: Bisection of the continuous level: in log(level), to this width.
LOG_WIDTH = 1e-10


@dataclass(frozen=True)
class Case:
    """One claim and the mechanism tested against it (its threshold tests' rates)."""

    name: str
    key: str
    claim: ClaimedProfile
    fpr: NDArray[np.float64]
    fnr: NDArray[np.float64]
    rounds: int
    true_claim: bool


def gaussian_rates(mu: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The threshold tests of N(0, 1) against N(mu, 1), as
    benchmarks/profile_calibration.py's oracle takes them."""
    t = np.linspace(-4.0, 10.0, 561)
    return stats.norm.sf(t), stats.norm.cdf(t - mu)


def rr_rates(epsilon: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Randomized response's threshold tests: the trivial two and the one that
    guesses the released bit, ``FPR = FNR = 1 / (1 + e^eps)``."""
    p = 1.0 / (1.0 + math.exp(epsilon))
    return np.array([0.0, p, 1.0]), np.array([1.0, p, 0.0])


def cases() -> list[Case]:
    """The lines-only claims of docs/soundness.md's size table against their own
    mechanisms, the 4x and 1.6x overclaims of its power figures."""
    out: list[Case] = []
    for eps in (0.5, 1.0, 2.0, 4.0):
        lines = ClaimedProfile(epsilon=eps, delta=DELTA)
        out.append(
            Case(
                f"RR {eps:g}, claims ({eps:g},1e-5) lines",
                f"rr-{eps:g}",
                lines,
                *rr_rates(eps),
                400,
                True,
            )
        )
        mu = gdp_mu_of_eps(eps, DELTA)
        out.append(
            Case(
                f"Gaussian ({eps:g},1e-5), claims it, lines",
                f"gaussian-{eps:g}",
                lines,
                *gaussian_rates(mu),
                400,
                True,
            )
        )
    mu4 = gdp_mu_of_eps(4.0, DELTA)
    g4 = gaussian_rates(mu4)
    out.append(
        Case(
            "Gaussian 4x: claims (1,1e-5), lines",
            "4x-lines",
            ClaimedProfile(epsilon=1.0, delta=DELTA),
            *g4,
            400,
            False,
        )
    )
    for n in (160, 400, 1000):
        out.append(
            Case(
                f"Gaussian 1.6x: claims (2.5,1e-5), GDP + RDP, {n}",
                f"1.6x-profile-{n}",
                gaussian_claim(2.5),
                *g4,
                n,
                False,
            )
        )
    out.append(
        Case(
            "Gaussian 1.6x: claims (2.5,1e-5), lines",
            "1.6x-lines",
            ClaimedProfile(epsilon=2.5, delta=DELTA),
            *g4,
            400,
            False,
        )
    )
    return out


def detection(
    g: NDArray[np.int64], fpr: NDArray[np.float64], fnr: NDArray[np.float64], n: int
) -> NDArray[np.float64]:
    """Per threshold test, ``P((FP, FN) in S)`` for ``S = {k1 <= g[k0]}``, exactly
    over ``Bin(n, fpr)`` and ``Bin(n, fnr)`` (as ``violation_ceiling``)."""
    k0 = np.arange(n + 1)[None, :]
    inside = stats.binom.pmf(k0, n, fpr[:, None]) * stats.binom.cdf(
        g[None, :], n, fnr[:, None]
    )
    return np.asarray(inside.sum(axis=1), np.float64)


def measure(case: Case, alpha: float = ALPHA) -> dict[str, Any]:
    """The case's figures (the module's text)."""
    n = case.rounds
    gap = level_gap(case.claim, n, alpha, METHOD, LOG_WIDTH)
    g_grid, g_lo, g_next, g_hi = (
        gap.g_grid,
        gap.g_continuous,
        gap.g_next,
        gap.g_above,
    )
    s_grid, s_cont, s_next, s_above = (
        gap.size_grid,
        gap.size_continuous,
        gap.size_next,
        gap.size_above,
    )
    d_grid, d_cont, d_next, d_above = (
        detection(g, case.fpr, case.fnr, n) for g in (g_grid, g_lo, g_next, g_hi)
    )
    gamma = (alpha - s_grid) / (s_next - s_grid) if s_next > alpha else 1.0
    gamma_above = (alpha - s_cont) / (s_above - s_cont) if s_above > alpha else 1.0
    oracle_grid = float(d_grid.max())
    oracle_cont = float(d_cont.max())
    oracle_rand = float(((1.0 - gamma) * d_grid + gamma * d_next).max())
    oracle_above = float(((1.0 - gamma_above) * d_cont + gamma_above * d_above).max())
    return {
        "case": case.name,
        "key": case.key,
        "rounds": n,
        "alpha": alpha,
        "true_claim": case.true_claim,
        "grid_level": gap.grid_level,
        "continuous_level": gap.continuous_level,
        "next_grid_level": gap.next_level,
        "size_grid": s_grid / alpha,
        "size_continuous": s_cont / alpha,
        "size_next_grid": s_next / alpha,
        "size_randomized": ((1.0 - gamma) * s_grid + gamma * s_next) / alpha,
        "gamma": gamma,
        "counts_added": int(np.sum(g_lo - g_grid)),
        "oracle_grid": oracle_grid,
        "oracle_continuous": oracle_cont,
        "oracle_randomized": oracle_rand,
        "oracle_randomized_above": oracle_above,
        "points_continuous": 100.0 * (oracle_cont - oracle_grid),
        "points_randomized": 100.0 * (oracle_rand - oracle_grid),
        "points_randomized_above": 100.0 * (oracle_above - oracle_grid),
        "review_points": REVIEW_POINTS,
    }


#: Smoke: these cases, at this many test rounds per world.
SMOKE_ONLY = ("RR 1,", "Gaussian 4x", "GDP + RDP, 400")
SMOKE_ROUNDS = 60

#: The cases swept over the test rounds per world (``--sweep``): where the grid
#: level's size falls between the grid's steps moves with the rounds, so what a
#: continuous level adds does too.
SWEEP_CASES = ("4x-lines", "1.6x-profile-400")
METHODS = ("continuous", "randomized", "randomized_above")


def sweep(case: Case, sizes: range) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The case measured at each test-round count of ``sizes``, and per way of
    spending the size left (``METHODS``): the mean and largest gain in points, the
    rounds of the largest, and how many counts gain 2 points or more."""
    rows = [measure(replace(case, rounds=n)) for n in sizes]
    summary: dict[str, Any] = {
        "case": case.name.removesuffix(f", {case.rounds}"),
        "rounds": f"{sizes.start}..{sizes[-1]} step {sizes.step}",
        "sizes": len(rows),
        "size_grid_mean": float(np.mean([r["size_grid"] for r in rows])),
        "size_grid_min": float(min(r["size_grid"] for r in rows)),
    }
    for method in METHODS:
        points = [r[f"points_{method}"] for r in rows]
        at = int(np.argmax(points))
        summary[f"{method}_mean"] = float(np.mean(points))
        summary[f"{method}_max"] = float(points[at])
        summary[f"{method}_max_rounds"] = rows[at]["rounds"]
        summary[f"{method}_max_oracle_grid"] = rows[at]["oracle_grid"]
        summary[f"{method}_sizes_over_2"] = int(sum(p >= 2.0 for p in points))
    return rows, summary


def _span(text: str) -> range:
    """``FROM:TO:STEP`` (TO included) as a range; empty text: none."""
    if not text:
        return range(0)
    start, stop, step = (int(v) for v in text.split(":"))
    return range(start, stop + 1, step)


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    parser = harness.parser(__doc__)
    parser.add_argument(
        "--only", default="", help="only the cases whose name holds this text"
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=None,
        help="test rounds per world for every case (default: each case's own)",
    )
    parser.add_argument(
        "--sweep",
        default="100:1000:20",
        metavar="FROM:TO:STEP",
        help="test rounds per world the sweep cases are measured at (TO included; "
        "default 100:1000:20; '' for no sweep)",
    )
    args = harness.parse(
        parser, argv, smoke={"rounds": SMOKE_ROUNDS, "sweep": "40:60:20"}
    )
    table = harness.Rows(__file__, args)
    rows: list[dict[str, Any]] = []
    for case in cases():
        if args.only not in case.name:
            continue
        if args.smoke and not any(s in case.name for s in SMOKE_ONLY):
            continue
        if args.rounds is not None:
            case = replace(case, rounds=args.rounds)
        with table.timed(case.name) as row:
            row.update(measure(case))
        rows.append(row)
    swept: list[dict[str, Any]] = []
    summaries: dict[str, dict[str, Any]] = {}
    sizes = _span(args.sweep)
    for case in cases():
        if case.key in SWEEP_CASES and args.only in case.name and len(sizes):
            points, summaries[case.key] = sweep(case, sizes)
            swept.extend(points)
    percent = ".2%"
    table.finish(
        title=f"grid level against a continuous level and a randomized test (alpha "
        f"{ALPHA:.4g}; sizes in units of alpha; oracle = the best detection rate of "
        "any threshold test of the release at that size and level; points = its "
        f"gain over the grid level; the review expected about {REVIEW_POINTS:g})",
        columns=[
            "row",
            "rounds",
            "size_grid",
            "size_continuous",
            "size_next_grid",
            "gamma",
            "oracle_grid",
            "oracle_continuous",
            "oracle_randomized",
            "oracle_randomized_above",
            "points_continuous",
            "points_randomized",
            "review_points",
            "seconds",
        ],
        formats={
            "size_grid": ".4f",
            "size_continuous": ".4f",
            "size_next_grid": ".4f",
            "gamma": ".3f",
            "oracle_grid": percent,
            "oracle_continuous": percent,
            "oracle_randomized": percent,
            "oracle_randomized_above": percent,
            "points_continuous": "+.2f",
            "points_randomized": "+.2f",
            "review_points": "+.0f",
            "seconds": ".1f",
        },
        sweep=swept,
        sweep_summary=summaries,
    )
    if summaries:
        print(
            "\nthe gain in points over the grid level, swept over the test rounds per "
            f"world ({args.sweep}): mean, largest (at rounds; sizes gaining >= 2)"
        )
        print(
            harness.table(
                [
                    {
                        "case": s["case"],
                        "grid size (mean, min)": f"{s['size_grid_mean']:.3f}, "
                        f"{s['size_grid_min']:.3f}",
                        **{
                            m: f"{s[m + '_mean']:+.2f}, {s[m + '_max']:+.2f} (at "
                            f"{s[m + '_max_rounds']}; {s[m + '_sizes_over_2']})"
                            for m in METHODS
                        },
                    }
                    for s in summaries.values()
                ]
            )
        )
    figures = {
        f"{r['key']}/{key}": r[key]
        for r in rows
        for key in r
        if key not in ("row", "case", "key", "seconds")
    }
    for key, summary in summaries.items():
        figures.update(
            {f"sweep/{key}/{k}": v for k, v in summary.items() if k != "case"}
        )
    table.record(figures)
    return rows


if __name__ == "__main__":
    main()
