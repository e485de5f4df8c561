"""The count rule's guess counts, planned from the configuration alone.

Without ``--guesses`` the one-run game guesses "in" for the ``k`` highest scores
and "out" for the ``k`` lowest, ``k`` planned here (:func:`plan_counts`) before any
bit is drawn or any fit made: a pure function of the total canaries, the budget
epsilon and delta given to the generator, the count rule's share of alpha and the
bound. Soundness (docs/soundness.md, "Guess counts planned from the
configuration"): the theorems need ``r = 2k`` fixed before the release is seen; the
planner reads no data, no release, no bits and no score, so ``r`` is fixed in
advance, and its planning model affects power only.

The planning model is the claim's boundary: the mu-GDP Gaussian whose epsilon at
delta equals the configured epsilon (where a true claim meets a false one),
seen through ideal canary scores, ``N(mu, 1)`` if included and ``N(0, 1)`` if not.
For each count of :data:`CANDIDATES` the planner finds the fewest correct guesses
that refute the planning claim as the verdict reads it (its whole curve, the
(epsilon, delta) lines and mu-GDP, for ``fdp`` and ``order``; epsilon for
``steinke``), and the smallest mu whose ideal scores give that many correct guesses
in expectation (the expected number computed exactly from the two-Gaussian
mixture's quantile, no simulation): the count's *detectable mu*. The count with the
smallest detectable mu is planned (the test that refutes the smallest overclaim at
the median), among those whose attainable maximum (every guess right) exceeds the
configured epsilon where any does, so that a gross overclaim of a claim that states
the lines alone stays detectable. ``benchmarks/onerun_tightness.py`` and
docs/onerun.md ("Bounds") give the measurements behind this choice.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

from dpaudit.audit.stats import onerun_fdp
from dpaudit.audit.stats.onerun_bound import eps_lower_bound as steinke_eps
from dpaudit.audit.stats.onerun_bound import p_value as steinke_p_value
from dpaudit.audit.stats.tradeoff import gdp_mu_of_eps
from dpaudit.errors import InvalidParameterError

__all__ = [
    "CANDIDATES",
    "FALLBACK",
    "ORDER_SIZES",
    "PLANNING_DELTA",
    "GuessCounts",
    "count_alpha",
    "expected_correct",
    "order_counts",
    "plan_counts",
]

#: The candidate guess counts per side, in thousandths of all canaries (each at
#: least 1 and at most half of them): fixed in the code, never read from a release.
#: The smallest serve large audits (1,000 per side of 1,000,000 canaries).
CANDIDATES: tuple[int, ...] = (
    1, 2, 3, 5, 7, 10, 15, 20, 25, 30, 35, 40, 50, 60, 70, 80, 90, 100, 110, 125, 150, 175, 200, 250
)  # fmt: skip

#: Guesses per side, in thousandths, where no candidate count could refute the
#: planning claim even with every guess right: the model has no preference, and a
#: tenth is the count used before planning.
FALLBACK = 100

#: The delta the planning Gaussian is read at when the configured delta is 0 (no
#: Gaussian is (epsilon, 0)-DP; the plan only needs a model, not a guarantee).
PLANNING_DELTA = 1e-5

#: The largest mu the planner considers a mechanism to have.
MU_CAP = 40.0

#: The nested guess counts of the ``order`` bound's count rule (``k``, ``k/2``, ...).
ORDER_SIZES = 4


def order_counts(guesses_in: int, guesses_out: int) -> tuple[tuple[int, int], ...]:
    """The ``order`` bound's nested counts: ``(guesses_in, guesses_out)`` halved
    :data:`ORDER_SIZES` - 1 times (rounded up, a nonzero count kept >= 1),
    duplicates dropped, fixed before any release.

    >>> order_counts(100, 100)
    ((100, 100), (50, 50), (25, 25), (13, 13))
    >>> order_counts(1, 0)
    ((1, 0),)
    """
    out: list[tuple[int, int]] = []
    for j in range(ORDER_SIZES):
        pair = tuple(
            0 if n == 0 else max(1, -(-n // 2**j)) for n in (guesses_in, guesses_out)
        )
        if pair not in out:
            out.append((pair[0], pair[1]))
    return tuple(out)


@dataclass(frozen=True, kw_only=True, slots=True)
class GuessCounts:
    """The count rule's guesses "in" and "out", fixed before any release.

    Attributes:
        guesses_in, guesses_out: the counts.
        planned: planned by :func:`plan_counts` (``False``: given by
            ``--guesses``/``--guesses-out``).
        planning_mu: the mu of the planning Gaussian (``None``: not planned).
    """

    guesses_in: int
    guesses_out: int
    planned: bool = False
    planning_mu: float | None = None


def count_alpha(*, alpha: float, rule: str, threshold: bool) -> float | None:
    """The count rule's share of ``alpha`` under ``rule`` (as
    :func:`~dpaudit.audit.games.one_run.rules.apply_rules` splits it): all of it for
    ``count``, or for ``both`` when the score has no ``threshold``; half for
    ``both``; ``None`` when the count rule does not run (``threshold``).

    >>> count_alpha(alpha=0.05, rule="both", threshold=True)
    0.025
    >>> count_alpha(alpha=0.05, rule="both", threshold=False)
    0.05
    """
    if rule == "threshold":
        return None if threshold else alpha
    if rule == "both" and threshold:
        return alpha / 2
    return alpha


def expected_correct(*, canaries: int, guesses: int, mu: float) -> float:
    """The expected correct guesses of ``guesses`` "in" (the highest scores) and as
    many "out" (the lowest) among ``canaries`` ideal scores of a mu-GDP canary
    (``N(mu, 1)`` with probability 1/2, else ``N(0, 1)``), for many canaries: the
    top threshold ``t`` solves ``(Q(t - mu) + Q(t)) / 2 = guesses / canaries``, and
    by the mixture's symmetry about ``mu / 2`` the "out" guesses are right as often
    as the "in" ones, ``canaries * Q(t - mu) / 2`` each.

    >>> round(expected_correct(canaries=1000, guesses=100, mu=0.0), 6)
    100.0
    >>> round(expected_correct(canaries=1000, guesses=50, mu=1.0), 1)
    90.3
    """
    from scipy.optimize import brentq
    from scipy.special import ndtr

    share = guesses / canaries
    if not 0.0 < share <= 0.5:
        raise InvalidParameterError(
            f"`guesses` must be in [1, canaries / 2]. Got {guesses} of {canaries}."
        )

    def excess(t: float) -> float:
        return float((ndtr(mu - t) + ndtr(-t)) / 2 - share)

    top = float(brentq(excess, -40.0, 40.0 + mu, xtol=1e-12))
    return float(canaries * ndtr(mu - top))


def _refutes(
    canaries: int,
    r: int,
    v: int,
    level: float,
    bound: str,
    epsilon: float,
    delta: float,
    mu: float,
) -> bool:
    """Whether ``v`` of ``r`` right refutes the planning claim at ``level``: its
    whole curve (the (epsilon, delta) lines and mu-GDP) for ``fdp`` and ``order``,
    epsilon for ``steinke`` (as the verdict reads each)."""
    if bound == "steinke":
        p = steinke_p_value(
            canaries=canaries, guesses=r, correct=v, epsilon=epsilon, delta=delta
        )
        return p < level
    return bool(
        onerun_fdp.rejects(
            canaries=canaries,
            guesses=r,
            correct=v,
            alpha=level,
            epsilon=epsilon,
            delta=delta,
            mu=mu,
        )[0]
    )


def _detectable(
    canaries: int,
    per_side: int,
    *,
    alpha: float,
    bound: str,
    epsilon: float,
    delta: float,
    mu: float,
) -> tuple[float, float]:
    """(the smallest mu whose ideal scores give, in expectation, enough correct
    guesses to refute the planning claim; ``inf``: none; the attainable maximum)
    for ``per_side`` guesses each way (``order``: the best of its nested counts,
    each at its share of the level)."""
    from scipy.optimize import brentq

    counts = (
        order_counts(per_side, per_side) if bound == "order" else ((per_side,) * 2,)
    )
    level = alpha / len(counts)
    least, top = math.inf, 0.0
    for n_in, _ in counts:
        r = 2 * n_in
        top = max(top, _attainable(canaries, r, level, bound, delta))
        if not _refutes(canaries, r, r, level, bound, epsilon, delta, mu):
            continue
        low, high = 0, r  # the fewest right that refute: high
        while high - low > 1:
            mid = (low + high) // 2
            if _refutes(canaries, r, mid, level, bound, epsilon, delta, mu):
                high = mid
            else:
                low = mid
        if high <= n_in:  # refuted at chance: no signal needed
            return 0.0, top
        if expected_correct(canaries=canaries, guesses=n_in, mu=MU_CAP) <= high:
            continue

        def short(x: float, n: int = n_in, v: int = high) -> float:
            return expected_correct(canaries=canaries, guesses=n, mu=x) - v

        least = min(least, float(brentq(short, 0.0, MU_CAP, xtol=1e-6)))
    return least, top


def _attainable(canaries: int, r: int, level: float, bound: str, delta: float) -> float:
    """eps_emp with all ``r`` guesses right (the lines of ``bound``)."""
    if bound == "steinke":
        return steinke_eps(
            canaries=canaries, guesses=r, correct=r, delta=delta, alpha=level
        )
    return onerun_fdp.eps_lower_bound(
        canaries=canaries, guesses=r, correct=r, delta=delta, alpha=level
    )


@functools.lru_cache(maxsize=256)
def plan_counts(
    *, canaries: int, epsilon: float, delta: float, alpha: float, bound: str
) -> GuessCounts:
    """The guesses per side for ``canaries`` canaries (all fits), planned on the
    mu-GDP Gaussian whose epsilon at ``delta`` is ``epsilon`` (the claim's
    boundary): the count of :data:`CANDIDATES` with the smallest detectable mu
    under ``bound`` (``steinke``, ``fdp`` or ``order``, at the count rule's level
    ``alpha``), among the counts whose attainable maximum exceeds ``epsilon``
    where any does (module docstring); where no count can refute the claim, the
    able count nearest :data:`FALLBACK`. A pure function of its arguments: no
    data, release, bit or score is read.

    >>> c = plan_counts(canaries=1000, epsilon=4.0, delta=1e-5, alpha=0.05,
    ...                 bound="fdp")
    >>> c.guesses_in == c.guesses_out, c.planned, round(c.planning_mu or 0.0, 3)
    (True, True, 0.925)
    """
    if canaries < 2:
        raise InvalidParameterError(f"`canaries` must be >= 2. Got {canaries}.")
    if bound not in ("steinke", "fdp", "order"):
        raise InvalidParameterError(
            f"`bound` must be steinke, fdp or order. Got {bound!r}."
        )
    if not (math.isfinite(epsilon) and epsilon > 0.0):
        raise InvalidParameterError(f"`epsilon` must be > 0. Got {epsilon!r}.")
    mu = gdp_mu_of_eps(epsilon, delta if delta > 0.0 else PLANNING_DELTA)
    sides = sorted(
        {min(canaries // 2, max(1, round(canaries * c / 1000))) for c in CANDIDATES}
    )
    scored = [
        (
            k,
            *_detectable(
                canaries,
                k,
                alpha=alpha,
                bound=bound,
                epsilon=epsilon,
                delta=delta,
                mu=mu,
            ),
        )
        for k in sides
    ]
    able = [s for s in scored if s[2] > epsilon] or scored
    if min(s[1] for s in able) < math.inf:
        # The smallest detectable mu; among equal ones the smaller count.
        best = min(able, key=lambda s: (s[1], s[0]))[0]
    else:  # nothing refutable at any count: the fallback, or the nearest able count
        tenth = min(canaries // 2, max(1, round(canaries * FALLBACK / 1000)))
        best = min(able, key=lambda s: (abs(s[0] - tenth), s[0]))[0]
    return GuessCounts(guesses_in=best, guesses_out=best, planned=True, planning_mu=mu)
