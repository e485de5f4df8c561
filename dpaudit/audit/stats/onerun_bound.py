"""The one-run game's bound: from guess counts to a lower bound on epsilon.

Pure functions: no I/O, no random numbers, no global state; float64 throughout.

The statistical argument (Steinke, Nasr and Jagielski, "Privacy auditing with one (1)
training run", NeurIPS 2023, main theorem for (epsilon, delta)-DP, arXiv:2305.08846):
``m`` canaries are each included independently with probability 1/2 (the secret bits
``S``); a mechanism that is (epsilon, delta)-DP with respect to adding or removing any
one canary is run once on the data with the included canaries; a guesser that sees only
the output makes ``r`` guesses about the bits (abstaining on the other ``m - r``
canaries), ``r`` fixed in advance. Then the number ``W`` of correct guesses satisfies,
for every ``v``,

    P[W >= v] <= f(v) + 2 m delta * max_{1 <= i <= v} (f(v - i) - f(v)) / i,

where ``f(v) = P[Binomial(r, q) >= v]`` and ``q = e^epsilon / (1 + e^epsilon)`` is the
accuracy of epsilon-randomized response. (The paper's maximum runs over ``i`` up to
``m``; for ``i > v`` the numerator is ``1 - f(v)``, its value at ``i = v``, over a
larger ``i``, so those terms never attain the maximum.) With ``delta = 0`` this says
that ``W`` is stochastically dominated by ``Binomial(r, q)``.

The right-hand side, at the observed ``v``, is a p-value for the hypothesis "the
mechanism is (epsilon, delta)-DP" (:func:`p_value`). :func:`eps_lower_bound` returns
the largest ``epsilon`` such that every ``epsilon' <= epsilon`` is rejected at level
``alpha``: if the mechanism is (epsilon_true, delta)-DP, then ``eps_lower_bound >
epsilon_true`` implies that ``epsilon_true`` was rejected, which happens with
probability at most ``alpha``. So ``eps_lo <= epsilon`` with probability ``>= 1 -
alpha``.
"""

from __future__ import annotations

import math

import numpy as np

from dpaudit.errors import InvalidParameterError

__all__ = [
    "check_guess_counts",
    "eps_lower_bound",
    "eps_max_attainable",
    "p_value",
]

#: Grid step (in epsilon) of the scan that brackets the first rejection boundary.
_GRID_STEP = 0.125
#: The largest epsilon the scan considers (exp(60) overflows nothing in float64 and
#: no audit of a realistic size can show more).
_EPS_CAP = 60.0


def check_guess_counts(
    canaries: int, guesses: int, correct: int, *, least: int = 0
) -> None:
    """Refuses counts that are not integers with ``0 <= correct <= guesses <=
    canaries`` and ``canaries >= least`` (one line naming them)."""
    for name, value in (
        ("canaries", canaries),
        ("guesses", guesses),
        ("correct", correct),
    ):
        if not (isinstance(value, int | np.integer) and not isinstance(value, bool)):
            raise InvalidParameterError(f"`{name}` must be an integer. Got {value!r}.")
    if not 0 <= correct <= guesses <= canaries or canaries < least:
        at_least = f", canaries >= {least}" if least else ""
        raise InvalidParameterError(
            "`correct`, `guesses` and `canaries` must satisfy 0 <= correct <= "
            f"guesses <= canaries{at_least}. Got {correct}, {guesses}, {canaries}."
        )


def _binomial_tails(r: int, q: float) -> np.ndarray:
    """``t[k] = P[Binomial(r, q) >= k]`` for ``k = 0 .. r + 1`` (``t[0] = 1``,
    ``t[r + 1] = 0``), summed from the top so that small tails keep their precision."""
    from scipy import stats

    pmf = stats.binom.pmf(np.arange(r + 1), r, q)
    tails = np.zeros(r + 2)
    tails[: r + 1] = np.cumsum(pmf[::-1])[::-1]
    tails[0] = 1.0
    return np.minimum(tails, 1.0)


def p_value(
    *, canaries: int, guesses: int, correct: int, epsilon: float, delta: float
) -> float:
    """An upper bound on ``P[W >= correct]`` for an (epsilon, delta)-DP mechanism.

    Args:
        canaries: ``m``, the canaries (each included with probability 1/2).
        guesses: ``r``, the guesses made (fixed before the release was seen).
        correct: ``v``, the correct guesses observed.
        epsilon: the epsilon of the null hypothesis (>= 0).
        delta: the delta of the null hypothesis, in [0, 1].

    Returns:
        The bound (at most 1): a p-value for "(epsilon, delta)-DP".

    >>> round(p_value(canaries=100, guesses=10, correct=10, epsilon=0.0,
    ...               delta=0.0), 6)  # 2 ** -10
    0.000977
    >>> p_value(canaries=100, guesses=10, correct=0, epsilon=1.0, delta=1e-5)
    1.0
    """
    check_guess_counts(canaries, guesses, correct)
    if not (math.isfinite(epsilon) and epsilon >= 0):
        raise InvalidParameterError(f"`epsilon` must be >= 0. Got {epsilon!r}.")
    if not 0 <= delta <= 1:
        raise InvalidParameterError(f"`delta` must be in [0, 1]. Got {delta!r}.")
    if correct == 0:
        return 1.0
    q = 1.0 / (1.0 + math.exp(-epsilon))
    tails = _binomial_tails(guesses, q)
    f_v = float(tails[correct])
    if delta == 0:
        return min(f_v, 1.0)
    i = np.arange(1, correct + 1)
    slope = float(np.max((tails[correct - i] - f_v) / i))
    return min(f_v + 2.0 * canaries * delta * slope, 1.0)


def eps_lower_bound(
    *, canaries: int, guesses: int, correct: int, delta: float, alpha: float
) -> float:
    """The largest epsilon rejected, with every smaller one, at level ``alpha``.

    Coverage: for a mechanism that is (epsilon, delta)-DP with respect to each
    canary, ``eps_lo <= epsilon`` with probability ``>= 1 - alpha`` (module
    docstring). 0 when not even epsilon = 0 is rejected.

    Args:
        canaries, guesses, correct: as for :func:`p_value`.
        delta: the delta the bound is computed at.
        alpha: the probability that the bound overshoots, in (0, 1).

    >>> round(eps_lower_bound(canaries=1000, guesses=100, correct=100,
    ...                       delta=0.0, alpha=0.05), 3)
    3.493
    >>> eps_lower_bound(canaries=1000, guesses=100, correct=50, delta=1e-5,
    ...                 alpha=0.05)
    0.0
    """
    if not 0 < alpha < 1:
        raise InvalidParameterError(f"`alpha` must be in (0, 1). Got {alpha!r}.")

    def rejected(eps: float) -> bool:
        pv = p_value(
            canaries=canaries,
            guesses=guesses,
            correct=correct,
            epsilon=eps,
            delta=delta,
        )
        return pv <= alpha

    if not rejected(0.0):
        return 0.0
    # Scan up to the first grid point that is not rejected, then bisect inside the
    # last step: the result is below the first boundary, so every smaller epsilon
    # checked on the way is rejected too.
    lo = 0.0
    hi = _GRID_STEP
    while rejected(hi):
        lo, hi = hi, hi + _GRID_STEP
        if hi > _EPS_CAP:
            return lo
    for _ in range(50):
        mid = 0.5 * (lo + hi)
        if rejected(mid):
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-9:
            break
    return lo


def eps_max_attainable(
    *, canaries: int, guesses: int, delta: float, alpha: float
) -> float:
    """The largest :func:`eps_lower_bound` this audit could show: every guess
    correct. A claim at or above it could not have been refuted.

    >>> round(eps_max_attainable(canaries=1000, guesses=100, delta=0.0,
    ...                          alpha=0.05), 3)
    3.493
    """
    return eps_lower_bound(
        canaries=canaries, guesses=guesses, correct=guesses, delta=delta, alpha=alpha
    )


onerun_eps_lower_bound = eps_lower_bound
""":func:`eps_lower_bound` under the name :mod:`dpaudit.audit.stats` exports."""
onerun_eps_max_attainable = eps_max_attainable
""":func:`eps_max_attainable` under the name :mod:`dpaudit.audit.stats` exports."""
