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
delta equals the configured epsilon (where a true claim meets a false one, the
audit is most powerful), seen through ideal canary scores, ``N(mu, 1)`` if included
and ``N(0, 1)`` if not. For each count of :data:`CANDIDATES` the expected number of
correct guesses is computed exactly from the two-Gaussian mixture's quantile (no
simulation), and the bound's figure at that number is evaluated: ``mu_emp`` for
``fdp`` and ``order`` (the figure that refutes a claim stating mu, and the one the
tightness benchmark measures), ``eps_emp`` of Steinke's bound for ``steinke``. The
count with the largest figure is planned, among those whose attainable maximum (every
guess right) exceeds the configured epsilon where any does, so that a gross
overclaim stays detectable.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

from dpaudit.audit.stats import onerun_fdp
from dpaudit.audit.stats.onerun_bound import eps_lower_bound as steinke_eps
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
CANDIDATES: tuple[int, ...] = (
    5, 10, 15, 20, 25, 30, 35, 40, 50, 60, 70, 80, 90, 100, 110, 125, 150, 175, 200, 250
)  # fmt: skip

#: Guesses per side, in thousandths, where the planning Gaussian shows nothing at any
#: candidate (its expected figure is 0 everywhere): the model has no preference, and
#: a tenth is the count used before planning.
FALLBACK = 100

#: The delta the planning Gaussian is read at when the configured delta is 0 (no
#: Gaussian is (epsilon, 0)-DP; the plan only needs a model, not a guarantee).
PLANNING_DELTA = 1e-5

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


def _figure(
    canaries: int, per_side: int, mu: float, alpha: float, bound: str, delta: float
) -> tuple[float, float]:
    """(the bound's figure at the expected correct count, its attainable maximum)
    for ``per_side`` guesses each way."""
    counts = (
        order_counts(per_side, per_side) if bound == "order" else ((per_side,) * 2,)
    )
    level = alpha / len(counts)
    figure = top = 0.0
    for n_in, _ in counts:
        r = 2 * n_in
        right = min(float(r), expected_correct(canaries=canaries, guesses=n_in, mu=mu))
        low = math.floor(right)
        # Linear between the two whole counts around the expected one: the figure
        # of a count is then continuous in the count, not jagged by rounding.
        value = sum(
            weight * _at(canaries, r, v, level, bound, delta)
            for v, weight in ((low, 1.0 - (right - low)), (low + 1, right - low))
            if weight > 0.0 and v <= r
        )
        most = _at(
            canaries, r, r, level, "lines" if bound != "steinke" else bound, delta
        )
        figure, top = max(figure, value), max(top, most)
    return figure, top


def _at(canaries: int, r: int, v: int, level: float, bound: str, delta: float) -> float:
    """``mu_emp`` of the f-DP bound (``fdp``, ``order``), eps_emp of its lines
    (``lines``) or of Steinke's bound (``steinke``) at ``v`` of ``r`` right."""
    if bound == "steinke":
        return steinke_eps(
            canaries=canaries, guesses=r, correct=v, delta=delta, alpha=level
        )
    if bound == "lines":
        return onerun_fdp.eps_lower_bound(
            canaries=canaries, guesses=r, correct=v, delta=delta, alpha=level
        )
    return onerun_fdp.mu_lower_bound(
        canaries=canaries, guesses=r, correct=v, alpha=level
    )


@functools.lru_cache(maxsize=256)
def plan_counts(
    *, canaries: int, epsilon: float, delta: float, alpha: float, bound: str
) -> GuessCounts:
    """The guesses per side for ``canaries`` canaries (all fits), planned on the
    mu-GDP Gaussian whose epsilon at ``delta`` is ``epsilon`` (the claim's
    boundary): the count of :data:`CANDIDATES` with the largest figure of ``bound``
    (``steinke``, ``fdp`` or ``order``, at the count rule's level ``alpha``) at
    the expected correct count, among the counts whose attainable maximum exceeds
    ``epsilon`` where any does (module docstring). A pure function of its
    arguments: no data, release, bit or score is read.

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
    scored = [(k, *_figure(canaries, k, mu, alpha, bound, delta)) for k in sides]
    able = [s for s in scored if s[2] > epsilon] or scored
    if max(s[1] for s in able) > 0.0:
        # The largest figure; among equal figures the smaller count.
        best = max(able, key=lambda s: (s[1], -s[0]))[0]
    else:  # nothing visible at the boundary: the fallback, or the nearest able count
        tenth = min(canaries // 2, max(1, round(canaries * FALLBACK / 1000)))
        best = min(able, key=lambda s: (abs(s[0] - tenth), s[0]))[0]
    return GuessCounts(guesses_in=best, guesses_out=best, planned=True, planning_mu=mu)
