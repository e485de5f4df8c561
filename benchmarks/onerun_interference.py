"""Why a one-run bound may not treat the canaries as independent: a mechanism that is
exactly mu-GDP for every canary, on which a test that is valid for independent canaries
raises false alarms far above alpha, and the game's own f-DP bound does not.

The mechanism ("rare leak"): a public coin ``C ~ Bernoulli(q)``, drawn once per
release and released with it. If ``C = 1`` every canary's score is
``clip(mu' * S_i + Z_i, mu'/2 - c, mu'/2 + c)``, if ``C = 0`` it is ``clip(Z_i, ...)``
(``Z_i`` independent standard normal, ``S_i`` the canary's inclusion bit). For one
canary, with the other bits fixed, the release is a mixture: with probability ``q``
the clipped Gaussian shift (a symmetric pair: ``x -> mu' - x`` swaps its two laws),
otherwise nothing about the canary. Its privacy profile is
``delta(eps) = q * delta_clip(eps)`` for ``eps >= 0`` (the coin is public), computed
here in closed form; it is at most the mu-GDP profile at every ``eps >= 0`` (checked
on a grid with the monotone bracket ``delta(eps_j) <= delta_mu(eps_{j+1})``, which
bounds every ``eps`` between grid points; above the largest privacy loss
``delta_clip`` is 0), and a symmetric pair whose profile is dominated by mu-GDP's is
mu-GDP (Dong, Roth and Su 2022, the primal-dual view of f-DP). ``q`` is the largest
that keeps this, times ``--q-share``.

Yet every canary's evidence is shared: with probability ``q`` all of them leak at
once, at a strength (``mu'``) the claim forbids on average but allows in a rare event.
Two tests of "the release is mu-GDP", at ``alpha``, on simulated one-run audits of
``--canaries`` canaries:

- ``independent``: treats the canaries as independent trials, as the two-world game
  treats its independent rounds: the guess "in" above a threshold fixed in advance
  (``--threshold``), the Clopper-Pearson corner of its false- and true-positive rates
  over the canaries out and in (``alpha/2`` each), rejected when the corner lies above
  the mu-GDP curve. Valid when the canaries are independent (its false alarms on the
  ideal mu-GDP Gaussian, which has independent canaries, are in the table), not here.
- ``fdp``: the game's f-DP bound (docs/soundness.md, "The one-run f-DP bound"): the
  count rule's highest and lowest scores guessed, as many as the game plans for a
  claim of mu-GDP and its epsilon at delta 1e-5 (``plan_counts``), the claim's curve
  (mu-GDP and its lines) rejected when its p-value is below ``alpha``. Sound for
  every mechanism.

    python benchmarks/onerun_interference.py            # 2,000 audits per row
    python benchmarks/onerun_interference.py --record   # also the record file
    python benchmarks/onerun_interference.py --smoke    # seconds
"""

from __future__ import annotations

import math
from typing import Any

import harness
import numpy as np
from numpy.typing import NDArray
from scipy.stats import beta as beta_law
from scipy.stats import norm

from dpaudit.audit.games import plan_counts
from dpaudit.audit.stats import eps_of_gdp, gdp_delta, rejects

ALPHA = 0.05
MU = 1.0  # the claim: mu-GDP for every canary
DELTA = 1e-5  # and its epsilon at this delta


def clip_profile(
    eps: NDArray[np.float64], shift: float, half: float
) -> NDArray[np.float64]:
    """delta(eps) of the clipped Gaussian shift: ``P = clip(N(shift, 1))`` against
    ``Q = clip(N(0, 1))`` on ``[shift/2 - half, shift/2 + half]``, in closed form:
    ``sum over outcomes of (P - e^eps Q)_+``. The interior's privacy loss
    ``shift * x - shift**2 / 2`` exceeds ``eps`` above ``x_eps = eps / shift +
    shift / 2``; the upper atom has ``P = Phi(shift/2 - half)``, ``Q = Phi(-shift/2 -
    half)``; the lower atom favours ``Q`` (no mass for ``eps >= 0``)."""
    lo, hi = shift / 2 - half, shift / 2 + half
    a = np.clip(eps / shift + shift / 2, lo, hi)
    inner = (norm.cdf(hi - shift) - norm.cdf(a - shift)) - np.exp(eps) * (
        norm.cdf(hi) - norm.cdf(a)
    )
    atom = norm.sf(hi - shift) - np.exp(eps) * norm.sf(hi)
    return np.asarray(np.maximum(inner, 0.0) + np.maximum(atom, 0.0))


def largest_q(shift: float, half: float, mu: float) -> tuple[float, float]:
    """The largest ``q`` with ``q * delta_clip(eps_j) <= delta_mu(eps_{j+1})`` on a
    grid of ``eps`` up to the clipped pair's largest privacy loss (above it
    ``delta_clip`` is 0), and that largest loss. Both profiles decrease in ``eps``,
    so the bracket holds between grid points too."""
    hi = shift / 2 + half
    top = max(
        shift * hi - shift**2 / 2,
        math.log(norm.sf(hi - shift) / norm.sf(hi)),
    )
    grid = np.linspace(0.0, top, 20001)
    leak = clip_profile(grid[:-1], shift, half)
    bound = np.array([gdp_delta(float(e), mu=mu) for e in grid[1:]])
    ratio = bound[leak > 0] / leak[leak > 0]
    return float(ratio.min()), float(top)


def clopper_pearson(k: NDArray[np.int64], n: NDArray[np.int64], level: float) -> Any:
    """One-sided Clopper-Pearson bounds of ``k / n`` at ``level``: (lower, upper)."""
    lower = np.where(k > 0, beta_law.ppf(level, k, n - k + 1), 0.0)
    upper = np.where(k < n, beta_law.ppf(1 - level, k + 1, n - k), 1.0)
    return lower, upper


def fdp_cut(canaries: int, guesses: int, alpha: float) -> int:
    """The fewest correct guesses (of ``guesses``) at which the f-DP bound rejects
    the claim's curve (mu-GDP and its epsilon at delta) at ``alpha`` (rejection grows
    with the count), or ``guesses + 1``."""
    epsilon = eps_of_gdp(MU, DELTA)
    for correct in range(guesses // 2, guesses + 1):
        if rejects(
            canaries=canaries,
            guesses=guesses,
            correct=correct,
            alpha=alpha,
            epsilon=epsilon,
            delta=DELTA,
            mu=MU,
        )[0]:
            return correct
    return guesses + 1


def planned_side(canaries: int) -> int:
    """The guesses per side the game plans for this claim (no threshold: the count
    rule at the full alpha)."""
    counts = plan_counts(
        canaries=canaries,
        epsilon=eps_of_gdp(MU, DELTA),
        delta=DELTA,
        alpha=ALPHA,
        bound="fdp",
    )
    return counts.guesses_in


def simulate(
    *,
    mechanism: str,
    canaries: int,
    audits: int,
    q: float,
    shift: float,
    half: float,
    threshold: float,
    seed: int,
) -> dict[str, int]:
    """False alarms of each test over ``audits`` simulated one-run audits."""
    gen = np.random.default_rng([seed, canaries, 1 if mechanism == "rare leak" else 0])
    bits = gen.integers(0, 2, size=(audits, canaries))
    noise = gen.normal(size=(audits, canaries))
    if mechanism == "rare leak":
        coin = gen.random(audits) < q
        raw = noise + shift * bits * coin[:, None]
        scores = np.clip(raw, shift / 2 - half, shift / 2 + half)
    else:  # the ideal mu-GDP Gaussian: independent canaries
        scores = noise + MU * bits
    n_in = bits.sum(axis=1)
    n_out = canaries - n_in
    above = scores > threshold
    tp = (above & (bits == 1)).sum(axis=1)
    fp = (above & (bits == 0)).sum(axis=1)
    tpr_lo, _ = clopper_pearson(tp, n_in, ALPHA / 2)
    _, fpr_up = clopper_pearson(fp, n_out, ALPHA / 2)
    curve = norm.cdf(norm.ppf(np.clip(fpr_up, 1e-300, 1.0)) + MU)
    independent = int(np.sum(tpr_lo > curve))
    k = planned_side(canaries)
    cut = fdp_cut(canaries, 2 * k, ALPHA)
    order = np.argsort(scores + 1e-9 * gen.random(scores.shape), axis=1)
    rows = np.arange(audits)[:, None]
    right = bits[rows, order[:, -k:]].sum(axis=1) + (1 - bits[rows, order[:, :k]]).sum(
        axis=1
    )
    fdp = int(np.sum(right >= cut))
    return {"independent": independent, "fdp": fdp}


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    parser = harness.parser(__doc__)
    parser.add_argument("--audits", type=int, default=2000, help="audits per row")
    parser.add_argument("--canaries", type=int, default=1000, help="canaries per fit")
    parser.add_argument("--shift", type=float, default=1.4, help="mu' of the leak")
    parser.add_argument("--half", type=float, default=1.0, help="clip half-width c")
    parser.add_argument(
        "--q-share", type=float, default=0.95, help="q as a share of the largest q"
    )
    parser.add_argument(
        "--threshold", type=float, default=1.2, help="the independent test's threshold"
    )
    args = harness.parse(parser, argv, smoke={"audits": 200})
    q_max, top = largest_q(args.shift, args.half, MU)
    q = args.q_share * q_max
    table = harness.Rows(__file__, args)
    rows: list[dict[str, Any]] = []
    for mechanism in ("ideal Gaussian", "rare leak"):
        found = simulate(
            mechanism=mechanism,
            canaries=args.canaries,
            audits=args.audits,
            q=q,
            shift=args.shift,
            half=args.half,
            threshold=args.threshold,
            seed=args.seed,
        )
        for test, alarms in found.items():
            upper = float(beta_law.ppf(0.95, alarms + 1, args.audits - alarms))
            row = {
                "mechanism": mechanism,
                "test": test,
                "audits": args.audits,
                "false_alarms": alarms,
                "rate": alarms / args.audits,
                "upper95": upper,
            }
            rows.append(row)
            table.add(f"{mechanism}, {test}", **row)
    figures = {
        "alpha": ALPHA,
        "mu": MU,
        "canaries": args.canaries,
        "shift": args.shift,
        "half": args.half,
        "q": q,
        "q_max": q_max,
        "largest_loss": top,
        "threshold": args.threshold,
        "fdp_per_side": planned_side(args.canaries),
        "seed": args.seed,
        "rows": rows,
        **{
            f"{r['mechanism']}/{r['test']}/{key}": r[key]
            for r in rows
            for key in ("audits", "false_alarms", "rate")
        },
    }
    table.finish(
        title=(
            f"false alarms against mu = {MU:g}-GDP (alpha {ALPHA}, {args.canaries} "
            f"canaries; rare leak: q {q:.3f}, mu' {args.shift:g}, clip half-width "
            f"{args.half:g})"
        ),
        columns=["row", "false_alarms", "audits", "rate", "upper95"],
        formats={"rate": ".3f", "upper95": ".3f"},
        **figures,
    )
    if args.record:
        harness.write_record("onerun_interference", figures, argv=argv)
    return rows


if __name__ == "__main__":
    main()
