"""Calibration of the profile test: simulated audits of mechanisms whose privacy
profile is known exactly (tests/audit/test_profile_calibration.py runs the same
simulator at test size). Prints false-alarm and detection rates, mean mu_emp and
eps_emp, and the oracle ceiling.

    python benchmarks/profile_calibration.py            # the figures in docs/soundness.md
    python benchmarks/profile_calibration.py --table power   # the power table
    python benchmarks/profile_calibration.py --smoke    # seconds: 4 audits a row, both

Each mechanism releases one number per round; the attack's score is the release
itself (the likelihood ratio is monotone in it, so this is the Neyman-Pearson test),
and the audit's own analysis (:func:`dpaudit.audit.games.scores.judge_scores`) runs from the
validation and test scores on.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpaudit.audit.games import judge_scores
from dpaudit.audit.stats import ClaimedProfile, bernoulli_renyi, gdp_mu_of_eps

#: The RDP orders a simulated claim states (Opacus-like).
ORDERS: tuple[float, ...] = (
    1.5,
    1.75,
    2.0,
    2.5,
    3.0,
    4.0,
    5.0,
    6.0,
    8.0,
    16.0,
    32.0,
    64.0,
)

Sampler = Callable[[np.random.Generator, np.ndarray], np.ndarray]


def gaussian(mu: float) -> Sampler:
    """Member N(mu, 1), non-member N(0, 1): exactly mu-GDP, RDP lambda mu^2 / 2."""
    return lambda gen, bits: gen.normal(mu * bits, 1.0)


def laplace(epsilon: float) -> Sampler:
    """Member Lap(1, 1/epsilon), non-member Lap(0, 1/epsilon): exactly epsilon-DP."""
    return lambda gen, bits: gen.laplace(bits.astype(np.float64), 1.0 / epsilon)


def randomized_response(epsilon: float) -> Sampler:
    """Releases the bit b with probability e^eps / (1 + e^eps), else 1 - b."""
    keep = math.exp(epsilon) / (1.0 + math.exp(epsilon))
    return lambda gen, bits: np.where(
        gen.random(bits.size) < keep, bits, 1 - bits
    ).astype(np.float64)


def gaussian_claim(
    epsilon: float,
    *,
    delta: float = 1e-5,
    gdp: bool = True,
    rdp: bool = True,
    zcdp: bool = False,
) -> ClaimedProfile:
    """The exact profile of the (epsilon, delta)-DP Gaussian mechanism."""
    mu = gdp_mu_of_eps(epsilon, delta)
    return ClaimedProfile(
        epsilon=epsilon,
        delta=delta,
        gdp_mu=mu if gdp else None,
        zcdp_rho=mu * mu / 2 if zcdp else None,
        rdp_orders=ORDERS if rdp else (),
        rdp_epsilons=tuple(o * mu * mu / 2 for o in ORDERS) if rdp else (),
    )


def laplace_claim(epsilon: float) -> ClaimedProfile:
    """epsilon-DP (delta 0) and the Laplace mechanism's exact RDP curve (Mironov,
    CSF 2017, Prop. 6; sensitivity 1, scale 1/epsilon)."""

    def rdp(lam: float) -> float:
        e = epsilon
        return math.log(
            lam / (2 * lam - 1) * math.exp((lam - 1) * e)
            + (lam - 1) / (2 * lam - 1) * math.exp(-lam * e)
        ) / (lam - 1)

    return ClaimedProfile(
        epsilon=epsilon,
        delta=0.0,
        rdp_orders=ORDERS,
        rdp_epsilons=tuple(rdp(o) for o in ORDERS),
    )


def randomized_response_claim(epsilon: float) -> ClaimedProfile:
    """epsilon-DP (delta 0) and randomized response's exact RDP curve."""
    p = 1.0 / (1.0 + math.exp(epsilon))
    return ClaimedProfile(
        epsilon=epsilon,
        delta=0.0,
        rdp_orders=ORDERS,
        rdp_epsilons=tuple(float(bernoulli_renyi(p, 1 - p, o)) for o in ORDERS),
    )


@dataclass(frozen=True, kw_only=True, slots=True)
class Outcome:
    """Simulated audits of one mechanism against one claim: VIOLATIONs of the exact
    test (and, with ``box``, of the per-rate box it replaced, on the same scores)."""

    audits: int
    violations: int
    mean_mu_emp: float
    mean_eps_emp: float
    violations_box: int | None = None


def simulate(
    sample: Sampler,
    claim: ClaimedProfile,
    *,
    audits: int,
    validation: int,
    test: int,
    alpha: float,
    seed: int,
    box: bool = False,
) -> Outcome:
    """``audits`` audits with ``validation`` and ``test`` rounds per world; with
    ``box`` each is also decided by the per-rate box (``judge_scores(box=True)``)."""
    gen = np.random.default_rng(seed)
    y_val = np.repeat([0, 1], validation)
    y_test = np.repeat([0, 1], test)
    hits, box_hits, mus, epss = 0, 0, [], []
    for _ in range(audits):
        scores = (sample(gen, y_val), y_val, sample(gen, y_test), y_test)
        judged = judge_scores(
            *scores,
            delta=claim.delta,
            alpha=alpha,
            method="clopper_pearson",
            profile=claim,
        )
        hits += judged.point.ratio > 1.0
        mus.append(judged.point.mu_emp)
        epss.append(judged.eps_emp)
        if box:
            old = judge_scores(
                *scores,
                delta=claim.delta,
                alpha=alpha,
                method="clopper_pearson",
                profile=claim,
                box=True,
            )
            box_hits += old.point.ratio > 1.0
    return Outcome(
        audits=audits,
        violations=hits,
        mean_mu_emp=float(np.mean(mus)),
        mean_eps_emp=float(np.mean(epss)),
        violations_box=box_hits if box else None,
    )


def oracle(
    mu: float | None, claim: ClaimedProfile, test: int, alpha: float
) -> tuple[float | None, float | None]:
    """For a Gaussian of ``mu`` (``None``: no oracle), the largest probability of
    VIOLATION over its threshold tests (the Neyman-Pearson tests of its release) at
    ``test`` + ``test`` rounds: of the test that decides ``claim``
    (:func:`~dpaudit.audit.stats.violation_ceiling`), and for a claim of the lines
    alone of the rule ``eps_emp > epsilon`` that decided it before (else ``None``)."""
    from scipy import stats

    from dpaudit.audit.stats import family_counts, violation_ceiling

    if mu is None:
        return None, None
    t = np.linspace(-4.0, 10.0, 561)
    fpr, fnr = stats.norm.sf(t), stats.norm.cdf(t - mu)
    best = violation_ceiling(claim, fpr, fnr, test, test, alpha=alpha)
    if claim.has_profile:
        return best, None
    g = family_counts(claim.epsilon, test, test, alpha=alpha, delta=claim.delta)
    k0 = np.arange(test + 1)[None, :]
    inside = stats.binom.pmf(k0, test, fpr[:, None]) * stats.binom.cdf(
        g[None, :], test, fnr[:, None]
    )
    return best, float(np.max(inside.sum(axis=1)))


#: The power table's mechanisms, each exactly 4-DP (the Gaussian at delta 1e-5),
#: and its claims: the mechanism's own profile at each claimed epsilon.
POWER_EPSILONS: tuple[float, ...] = (1.0, 2.0, 2.5, 3.0, 4.0)


def power_mechanisms() -> dict[str, tuple[Sampler, Callable[[float], ClaimedProfile]]]:
    """The power table's mechanisms: name, sampler, claim at a given epsilon."""
    return {
        "gaussian": (gaussian(gdp_mu_of_eps(4.0, 1e-5)), gaussian_claim),
        "rr": (randomized_response(4.0), randomized_response_claim),
        "laplace": (laplace(4.0), laplace_claim),
    }


def power_rows(
    table: Any,
    *,
    mechanisms: list[str],
    rounds: list[int],
    epsilons: tuple[float, ...],
    audits: int,
    seed: int,
) -> None:
    """The power table: each exactly 4-DP mechanism claiming each epsilon with its
    profile, at each rounds per world (split 0.4/0.2/0.4, alpha 0.05/3 as with the
    three default attacks): VIOLATIONs of the box and of the exact test on the same
    simulated scores (a claim of 4 is true: false alarms), mean mu_emp and, for the
    Gaussian, the oracle's expected mu_emp (mu_ceiling) at that size and level."""
    from dpaudit.audit.stats import mu_ceiling

    alpha = 0.05 / 3
    made = power_mechanisms()
    for m, name in enumerate(mechanisms):
        sample, claim_of = made[name]
        for r, per_world in enumerate(rounds):
            val = round(0.2 * per_world)
            test = per_world - round(0.4 * per_world) - val
            for e, eps in enumerate(epsilons):
                label = f"{name} 4-DP claiming {eps:g}, {per_world}/world"
                with table.timed(label, audits=audits) as row:
                    out = simulate(
                        sample,
                        claim_of(eps),
                        audits=audits,
                        validation=val,
                        test=test,
                        alpha=alpha,
                        seed=10_000 * seed + 100 * m + 10 * r + e,
                        box=True,
                    )
                    mu = gdp_mu_of_eps(4.0, 1e-5) if name == "gaussian" else None
                    row.update(
                        mechanism=name,
                        claimed=eps,
                        rounds_per_world=per_world,
                        box_rate=(out.violations_box or 0) / audits,
                        exact_rate=out.violations / audits,
                        violations=out.violations,
                        violations_box=out.violations_box,
                        mean_mu_emp=out.mean_mu_emp,
                        mu_ceiling=None
                        if mu is None
                        else mu_ceiling(mu, test, test, alpha=alpha),
                    )


def main(argv: list[str] | None = None) -> None:
    # Imported here: tests/audit/test_profile_calibration.py loads this module for
    # its simulator, without benchmarks/ on the path.
    import harness

    from dpaudit.audit.stats import mu_ceiling

    parser = harness.parser(__doc__)
    parser.add_argument("--audits", type=int, default=300, help="audits per row")
    parser.add_argument(
        "--table",
        choices=("calibration", "power", "both"),
        default="calibration",
        help="the calibration rows (docs/soundness.md), the power table, or both",
    )
    for flag, default, text in (
        (
            "--mechanisms",
            "gaussian,rr,laplace",
            "power table: of gaussian, rr, laplace",
        ),
        ("--rounds", "400,1000", "power table: rounds per world"),
        (
            "--epsilons",
            ",".join(f"{e:g}" for e in POWER_EPSILONS),
            "power table: claims",
        ),
        ("--only", "", "calibration table: the rows whose name holds this text"),
    ):
        parser.add_argument(flag, default=default, help=text)
    args = harness.parse(
        parser,
        argv,
        smoke={"audits": 4, "table": "both", "rounds": "50", "epsilons": "2.5,4"},
    )
    n = args.audits
    if args.table != "calibration":
        table = harness.Rows(__file__, args)
        power_rows(
            table,
            mechanisms=args.mechanisms.split(","),
            rounds=[int(r) for r in args.rounds.split(",")],
            epsilons=tuple(float(e) for e in args.epsilons.split(",")),
            audits=n,
            seed=args.seed,
        )
        if args.table == "power":
            table.finish(
                title="exactly 4-DP mechanisms claiming epsilon with their profile, "
                "alpha 0.05/3: VIOLATION of the per-rate box and of the exact test on "
                "the same audits (a claim of 4 is true: false alarms), mean mu_emp "
                "and the oracle's (mu_ceiling; '-': no mu)",
                formats={
                    "box_rate": ".1%",
                    "exact_rate": ".1%",
                    "mean_mu_emp": ".3f",
                    "mu_ceiling": ".3f",
                    "seconds": ".1f",
                },
            )
            return
    else:
        table = harness.Rows(__file__, args)
    mu4, mu1 = gdp_mu_of_eps(4.0, 1e-5), gdp_mu_of_eps(1.0, 1e-5)
    three = 0.05 / 3
    rows = [
        # name, sampler, claim, validation, test, alpha, mu_true
        (
            "Gaussian (4,1e-5), true profile",
            gaussian(mu4),
            gaussian_claim(4.0, zcdp=True),
            100,
            200,
            0.05,
            mu4,
        ),
        (
            "Laplace eps 1, true profile",
            laplace(1.0),
            laplace_claim(1.0),
            100,
            200,
            0.05,
            None,
        ),
        (
            "RR eps 1, true profile",
            randomized_response(1.0),
            randomized_response_claim(1.0),
            100,
            200,
            0.05,
            None,
        ),
        (
            "Gaussian 4x: claims (1,1e-5), GDP + RDP",
            gaussian(mu4),
            gaussian_claim(1.0),
            200,
            400,
            three,
            mu4,
        ),
        (
            "Gaussian 4x: claims (1,1e-5), RDP only",
            gaussian(mu4),
            gaussian_claim(1.0, gdp=False),
            200,
            400,
            three,
            mu4,
        ),
        (
            "Gaussian 4x: claims (1,1e-5), lines only",
            gaussian(mu4),
            ClaimedProfile(epsilon=1.0, delta=1e-5),
            200,
            400,
            three,
            mu4,
        ),
        (
            "Gaussian 1.6x: claims (2.5,1e-5), no profile",
            gaussian(mu4),
            ClaimedProfile(epsilon=2.5, delta=1e-5),
            200,
            400,
            three,
            mu4,
        ),
        (
            "Gaussian 3x: claims (4/3,1e-5), GDP + RDP",
            gaussian(mu4),
            gaussian_claim(4.0 / 3.0),
            200,
            400,
            three,
            mu4,
        ),
        (
            "Gaussian 4x at 2,500 rounds/world, GDP + RDP",
            gaussian(mu4),
            gaussian_claim(1.0),
            500,
            1000,
            three,
            mu4,
        ),
    ]
    del mu1
    for i, (name, sample, claim, val, test, alpha, mu) in enumerate(rows):
        if args.only not in name:
            continue
        if args.smoke:  # seconds: a tenth of the rounds
            val, test = max(val // 10, 10), max(test // 10, 20)
        with table.timed(name, audits=n) as row:
            out = simulate(
                sample,
                claim,
                audits=n,
                validation=val,
                test=test,
                alpha=alpha,
                seed=100 * args.seed + i,
            )
            top = None if mu is None else mu_ceiling(mu, test, test, alpha=alpha)
            best = oracle(mu, claim, test, alpha)
            row.update(
                oracle=best[0],
                oracle_eps_rule=best[1],
                violations=out.violations,
                violation_rate=out.violations / n,
                mean_eps_emp=out.mean_eps_emp,
                mean_mu_emp=out.mean_mu_emp,
                mu_emp_over_mu=None if mu is None else out.mean_mu_emp / mu,
                ceiling_over_mu=None if top is None else top / mu,
                mu_emp_over_ceiling=None if top is None else out.mean_mu_emp / top,
            )
    table.finish(
        title="mechanism and claim: VIOLATION of audits, the oracle (the best "
        "detection rate any threshold test of the release reaches at this size and "
        "level: violation_ceiling; oracle_eps_rule: the same for a claim of the lines "
        "alone decided by eps_emp > epsilon, the rule before its own test), mean "
        "eps_emp and mu_emp, ceiling = the oracle's mu_emp (mu_ceiling; '-': no mu)",
        formats={
            "violation_rate": ".1%",
            "oracle": ".1%",
            "oracle_eps_rule": ".1%",
            **dict.fromkeys(
                (
                    "mean_eps_emp",
                    "mean_mu_emp",
                    "mu_emp_over_mu",
                    "ceiling_over_mu",
                    "mu_emp_over_ceiling",
                ),
                ".3f",
            ),
            "seconds": ".1f",
        },
    )


if __name__ == "__main__":
    main()
