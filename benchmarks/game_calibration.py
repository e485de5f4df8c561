"""Calibration and power of the two cheaper games: sequential looks and one run.

Simulated audits of mechanisms whose privacy is known exactly, decided by the
audit's own code from the scores on (the nested plan of :mod:`dpaudit.audit.games.looks`
and :func:`dpaudit.audit.games.scores.judge_scores` for the looks; the guesses and the
bound of :mod:`dpaudit.audit.games.one_run` for one run). Prints, per row, the rate of
VIOLATION (a false alarm on a true claim, a detection on an overclaim), the mean
number of fits to the verdict, the mean bound, and beside it the ceiling at that test
size: the attainable maximum (a perfect attack) and, for the looks, the expected
mu_emp of the Neyman-Pearson oracle (:func:`dpaudit.audit.stats.ceiling.mu_ceiling`).

    python benchmarks/game_calibration.py             # 300 audits per row
    python benchmarks/game_calibration.py --smoke     # seconds: 4 audits, 100 rounds

The looks: an exactly mu-GDP Gaussian (member scores N(mu, 1), non-member N(0, 1);
the attack's score is the release, the Neyman-Pearson test), 1,000 rounds per world,
one attack at alpha 0.05, the claim stating its GDP profile; the same audits analysed
once beside them. One run: each canary's inclusion bit passed through
randomized response (exactly eps-DP per canary), guesses on the released bits.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass

import harness
import numpy as np

from dpaudit.audit.games import GamePlan, guess, judge_scores, plan_looks
from dpaudit.audit.stats import (
    ClaimedProfile,
    gdp_mu_of_eps,
    mu_ceiling,
    mu_max_attainable,
)
from dpaudit.audit.stats import onerun_eps_lower_bound as eps_lower_bound
from dpaudit.audit.stats import onerun_eps_max_attainable as eps_max_attainable

SPLIT = (0.4, 0.2, 0.4)
DELTA = 1e-5


@dataclass(frozen=True)
class Row:
    """One printed row."""

    name: str
    audits: int
    violations: int
    mean_fits: float
    bound: str
    mean_bound: float
    ceiling: str


def _claim(epsilon: float) -> ClaimedProfile:
    return ClaimedProfile(
        epsilon=epsilon, delta=DELTA, gdp_mu=gdp_mu_of_eps(epsilon, DELTA)
    )


def _judge(
    released: np.ndarray, game: GamePlan, level: float, claim: ClaimedProfile
) -> tuple[bool, float]:
    """A look's (or the whole game's) verdict and mu_emp, by the audit's own code."""
    val, test = game.indices("validation"), game.indices("test")
    point = judge_scores(
        released[val],
        game.bits[val],
        released[test],
        game.bits[test],
        delta=DELTA,
        alpha=level,
        method="clopper_pearson",
        profile=claim,
    ).point
    return bool(point.ratio > 1.0), float(point.mu_emp)


def looks_rows(
    *, true_epsilon: float, claimed: float, rounds: int, audits: int, seed: int
) -> list[Row]:
    """Sequential and analysed-once audits of the same simulated releases."""
    mu = gdp_mu_of_eps(true_epsilon, DELTA)
    claim = _claim(claimed)
    looks = plan_looks(rounds, split=SPLIT, alpha=0.05)
    gen = np.random.default_rng(seed)
    seq_hits = once_hits = 0
    seq_fits: list[int] = []
    seq_mu: list[float] = []
    once_mu: list[float] = []
    for a in range(audits):
        plan = GamePlan.create(
            rounds=rounds, split=SPLIT, seed=seed * 100_003 + a, looks=looks.per_world
        )
        released = gen.normal(mu * plan.bits, 1.0)

        for k, level in enumerate(looks.alphas):
            hit, value = _judge(released, plan.at_look(k), level, claim)
            if hit or k == len(looks.alphas) - 1:
                seq_hits += hit
                seq_fits.append(2 * looks.per_world[k])
                seq_mu.append(value)
                break
        # Analysed once: its own plan (the looks' nested blocks are another
        # order of the rounds), its own releases of the same mechanism.
        once = GamePlan.create(rounds=rounds, split=SPLIT, seed=seed * 100_003 + a)
        hit, value = _judge(gen.normal(mu * once.bits, 1.0), once, 0.05, claim)
        once_hits += hit
        once_mu.append(value)
    n = rounds - round(SPLIT[0] * rounds) - round(SPLIT[1] * rounds)
    oracle = mu_ceiling(mu, n, n, alpha=0.05)
    last = looks.per_world[-1] - round(SPLIT[0] * looks.per_world[-1])
    last -= round(SPLIT[1] * looks.per_world[-1])
    ceiling_once = (
        f"mu attainable {mu_max_attainable(n, n, alpha=0.05):.2f}, "
        f"oracle mu {oracle:.3f} (mu {mu:.3f})"
    )
    ceiling_seq = (
        f"mu attainable at the last look "
        f"{mu_max_attainable(last, last, alpha=looks.alphas[-1]):.2f}, oracle mu "
        f"{mu_ceiling(mu, last, last, alpha=looks.alphas[-1]):.3f}"
    )
    label = f"Gaussian ({true_epsilon:g}, 1e-5) claiming ({claimed:g}, 1e-5) + GDP"
    return [
        Row(
            f"{label}, once",
            audits,
            once_hits,
            2.0 * rounds,
            "mu_emp",
            float(np.mean(once_mu)),
            ceiling_once,
        ),
        Row(
            f"{label}, --sequential",
            audits,
            seq_hits,
            float(np.mean(seq_fits)),
            "mu_emp",
            float(np.mean(seq_mu)),
            ceiling_seq,
        ),
    ]


def one_run_row(
    *,
    true_epsilon: float,
    claimed: float,
    canaries: int,
    guesses: int,
    audits: int,
    seed: int,
) -> Row:
    """One-run audits of per-canary randomized response (exactly eps-DP)."""
    gen = np.random.default_rng(seed)
    q = math.exp(true_epsilon) / (1.0 + math.exp(true_epsilon))
    cache: dict[int, float] = {}
    hits = 0
    bounds: list[float] = []
    for _ in range(audits):
        bits = gen.integers(0, 2, size=canaries)
        shown = np.where(gen.random(canaries) < q, bits, 1 - bits)
        made = guess(
            shown.astype(np.float64),
            bits,
            guesses_in=guesses,
            guesses_out=guesses,
            tie_break=gen.random(canaries),
        )
        if made.correct not in cache:
            cache[made.correct] = eps_lower_bound(
                canaries=canaries,
                guesses=2 * guesses,
                correct=made.correct,
                delta=0.0,
                alpha=0.05,
            )
        bound = cache[made.correct]
        hits += bound > claimed
        bounds.append(bound)
    top = eps_max_attainable(
        canaries=canaries, guesses=2 * guesses, delta=0.0, alpha=0.05
    )
    return Row(
        f"one run, RR eps {true_epsilon:g} claiming {claimed:g}, {canaries} canaries",
        audits,
        hits,
        1.0,
        "eps_emp",
        float(np.mean(bounds)),
        f"eps attainable {top:.2f} (all {2 * guesses} guesses right)",
    )


def main(argv: list[str] | None = None) -> list[Row]:
    parser = harness.parser(__doc__)
    parser.add_argument("--audits", type=int, default=300, help="audits per row")
    parser.add_argument("--rounds", type=int, default=1000, help="looks: per world")
    args = harness.parse(parser, argv, smoke={"audits": 4, "rounds": 100})
    table = harness.Rows(__file__, args)
    rows: list[Row] = []

    def record(made: list[Row], seconds: float) -> None:
        for r in made:
            rows.append(r)
            table.add(r.name, **{k: v for k, v in asdict(r).items() if k != "name"})
            table.rows[-1]["seconds"] = seconds / len(made)

    for true_epsilon, claimed in ((1.0, 1.0), (4.0, 1.0)):
        started = time.perf_counter()
        made = looks_rows(
            true_epsilon=true_epsilon,
            claimed=claimed,
            rounds=args.rounds,
            audits=args.audits,
            seed=args.seed,
        )
        record(made, time.perf_counter() - started)
    for true_epsilon, claimed in ((1.0, 1.0), (2.0, 1.0), (4.0, 1.0)):
        started = time.perf_counter()
        made = [
            one_run_row(
                true_epsilon=true_epsilon,
                claimed=claimed,
                canaries=1000,
                guesses=100,
                audits=args.audits,
                seed=args.seed,
            )
        ]
        record(made, time.perf_counter() - started)
    table.finish(
        title="VIOLATION of audits per row; the once and --sequential rows of a "
        "Gaussian share their audits (seconds: half the pair's)",
        formats={"mean_fits": ".0f", "mean_bound": ".3f", "seconds": ".2f"},
    )
    return rows


if __name__ == "__main__":
    main()
