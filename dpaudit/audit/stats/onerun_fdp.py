"""The one-run game's f-DP bound: a trade-off curve tested against a guess count.

Pure functions: no I/O, no random numbers, no global state; float64 throughout.

In the manner of Mahloujifar, Melis and Chaudhuri ("Auditing f-differential privacy in
one run", ICML 2025), the hypothesis is a whole trade-off curve ``f`` rather than one
(epsilon, delta) pair; the theorem and its proof below are this module's own
(docs/soundness.md, "The one-run f-DP bound").

*Setting.* ``m`` canaries, each included independently with probability 1/2 (the bits
``S``); one release ``Y`` of a mechanism that is f-DP with respect to adding or
removing any one canary, in both directions (``f`` a symmetric trade-off function;
``h = 1 - f`` is then concave, nondecreasing, ``h(x) >= x``); a guesser that sees
``Y`` and public randomness, never ``S``, and makes exactly ``r`` guesses ("in" or
"out"), ``r`` fixed in advance, abstaining on the other canaries. ``W`` counts the
correct guesses.

*Theorem.* For every ``u = 1 .. r``:

    E[W 1{W >= u}] <= m h(E[(r - W) 1{W >= u - 1}] / m).            (C_u)

*Proof.* Fix canary ``i`` and the other bits ``s_{-i}``; ``P_0``, ``P_1`` are the laws
of ``Y`` with canary ``i`` out or in (neighbouring inputs). ``W_{-i}``, the correct
guesses on the other canaries, is a function of ``(Y, s_{-i})``, so
``F_1 = {i guessed in, W_{-i} >= u - 1}`` and ``F_0 = {i guessed out, W_{-i} >= u -
1}`` are tests on ``Y``: f-DP gives ``P_1(F_1) <= h(P_0(F_1))`` and ``P_0(F_0) <=
h(P_1(F_0))``. Averaged over the bit ``S_i`` (probability 1/2 each) and by concavity,
``y_i = P[i right, W >= u] <= h(x_i)`` with ``x_i = P[i wrong, W >= u - 1]`` (``i``
right and ``W >= u`` is ``i`` right and ``W_{-i} >= u - 1``; ``i`` wrong leaves ``W =
W_{-i}``); averaging over ``s_{-i}`` keeps it (Jensen). Summing over the ``m``
canaries, ``sum_i y_i = E[W 1{W >= u}]``, ``sum_i x_i = E[(r - W) 1{W >= u - 1}]``
(exactly ``r`` guesses), and ``sum_i h(x_i) <= m h(sum_i x_i / m)``. QED.

*The largest tail.* The p-value of "the mechanism is f-DP" at an observed ``v`` is the
largest ``P[W >= v]`` over the laws ``p`` of ``W`` that satisfy every ``C_u``. Moving
all mass above ``v`` onto ``v`` keeps every ``C_u`` (it lowers the left side and
raises the right one for ``u <= v``, and empties the left one above), so the top mass
is ``p_v = beta``. With ``X_u = sum_{w >= u - 1} (r - w) p_w`` and ``Y_u = sum_{w >= u}
w p_w``, the total mass is ``beta + sum_u c_u (X_u - X_{u+1})`` with ``c_u = 1 / (r - u
+ 1)`` increasing, so it increases with every ``X_u``, and every ``Y_u`` increases with
``X_{u+1} .. X_v``. Hence every feasible ``p`` has ``X_u`` at least the greedy value
``max(m g(Y_u / m), X_{u+1})`` (``g`` the inverse of ``h``), taken from ``u = v``
down, and the least total mass ``T(beta)`` is the greedy's (:func:`_least_mass`). The
constraints are preserved by scaling ``p`` down (``h(t x) >= t h(x)``), so ``T`` is
nondecreasing and ``P[W >= v] <= beta`` for every ``beta`` with ``T(beta) > 1``.

*Curves.* ``lines``: the (epsilon, delta) curve, ``h(x) = min(1, delta + e^eps x, 1 -
e^-eps (1 - delta - x))``; ``gdp``: ``h(x) = Phi(Phi^-1(x) + mu)``; ``pairs``: a privacy
profile sampled as (epsilon_j, delta_j) pairs, the minimum of their lines
(:mod:`dpaudit.audit.stats.onerun_curves`); a claim of several: their minimum (the
mechanism satisfies every one). A minimum of concave nondecreasing functions with
``h(x) >= x`` is one, so the theorem holds for it; its inverse is the maximum of the
inverses.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from dpaudit.audit.stats.onerun_bound import check_guess_counts
from dpaudit.errors import InvalidParameterError

__all__ = [
    "eps_lower_bound",
    "mu_lower_bound",
    "rejects",
    "tail_bound",
]

#: The largest epsilon (mu) the scans consider.
_EPS_CAP = 60.0
_MU_CAP = 40.0
#: Points of each pass of a vectorised scan (three passes: resolution cap / 64^3).
_SCAN = 64


def _check(canaries: int, guesses: int, correct: int) -> None:
    check_guess_counts(canaries, guesses, correct, least=1)


#: (epsilon_j, delta_j) pairs of a sampled privacy profile, each a 1-D array.
Pairs = tuple[NDArray[np.float64], NDArray[np.float64]]


def _check_pairs(pairs: Pairs | None) -> Pairs | None:
    """``pairs`` as two float64 arrays (``None`` stays ``None``)."""
    if pairs is None:
        return None
    eps, deltas = (np.asarray(v, np.float64) for v in pairs)
    if not (
        eps.ndim == 1
        and eps.shape == deltas.shape
        and bool(np.all(np.isfinite(eps) & (eps >= 0.0)))
        and bool(np.all((deltas >= 0.0) & (deltas <= 1.0)))
    ):
        raise InvalidParameterError(
            "`pairs` must be two 1-D arrays of the same length: epsilons >= 0 "
            "(finite) and deltas in [0, 1]."
        )
    return eps, deltas


def _check_curve(
    epsilon: float | None, delta: float, mu: float | None, pairs: Pairs | None = None
) -> None:
    if epsilon is None and mu is None and pairs is None:
        raise InvalidParameterError("`epsilon`, `mu` or `pairs` must be given.")
    for name, value in (("epsilon", epsilon), ("mu", mu)):
        if value is not None and not (math.isfinite(value) and value >= 0.0):
            raise InvalidParameterError(f"`{name}` must be >= 0. Got {value!r}.")
    if not 0.0 <= delta <= 1.0:
        raise InvalidParameterError(f"`delta` must be in [0, 1]. Got {delta!r}.")


def _inverse(
    y: NDArray[np.float64],
    eps: NDArray[np.float64] | None,
    delta: float,
    mu: NDArray[np.float64] | None,
    pairs: Pairs | None = None,
) -> NDArray[np.float64]:
    """``g(y)``: the least ``x`` in [0, 1] with ``h(x) >= y`` for the curve ``h`` (the
    minimum of the stated ones: the maximum of their inverses); ``inf`` for ``y >
    1``. ``eps`` and ``mu`` broadcast against ``y``; ``pairs`` is one curve for every
    entry, its inverse the maximum over its pairs' lines (a last axis of size J)."""
    from scipy.special import ndtr, ndtri

    yc = np.clip(y, 0.0, 1.0)
    out = np.zeros_like(yc)
    if eps is not None:
        with np.errstate(over="ignore", invalid="ignore"):
            a = (yc - delta) * np.exp(-eps)
            b = 1.0 - delta - np.exp(eps) * (1.0 - yc)
        out = np.maximum(out, np.nan_to_num(np.maximum(a, b), nan=0.0, neginf=0.0))
    if mu is not None:
        out = np.maximum(out, ndtr(ndtri(yc) - mu))
    if pairs is not None:
        pe, pd = pairs
        yj = yc[..., None]
        with np.errstate(over="ignore", invalid="ignore"):
            a = (yj - pd) * np.exp(-pe)
            b = 1.0 - pd - np.exp(pe) * (1.0 - yj)
        lines = np.nan_to_num(np.maximum(a, b), nan=0.0, neginf=0.0)
        out = np.maximum(out, np.max(lines, axis=-1))
    return np.asarray(np.where(y > 1.0, np.inf, np.minimum(out, 1.0)), np.float64)


def _least_mass(
    beta: NDArray[np.float64],
    *,
    canaries: int,
    guesses: int,
    correct: int,
    eps: NDArray[np.float64] | None,
    delta: float,
    mu: NDArray[np.float64] | None,
    pairs: Pairs | None = None,
) -> NDArray[np.float64]:
    """``T(beta)``: the least total mass of a law of ``W`` with ``P[W = v] = beta``
    that satisfies every ``C_u`` (module docstring), elementwise (``inf``: none),
    or, for an entry already above 1, a partial sum above 1 (every caller compares
    ``T`` with 1 only).

    The greedy stops once every entry is above 1 (``T`` only grows) or adds no mass
    at this step: a step that adds none leaves ``Y_u`` and so ``g(Y_u / m)``
    unchanged, so every later step adds none either; the result is exact."""
    m, r, v = float(canaries), guesses, correct
    y = v * beta
    x_next = (r - v) * beta
    total = beta.copy()
    for u in range(v, 0, -1):
        x_u = np.maximum(m * _inverse(y / m, eps, delta, mu, pairs), x_next)
        with np.errstate(invalid="ignore"):
            p = (x_u - x_next) / (r - u + 1)
        p = np.where(np.isfinite(p), p, np.inf)
        total = total + p
        with np.errstate(invalid="ignore"):
            y = y + (u - 1) * p
        y = np.where(np.isnan(y), np.inf, y)
        x_next = x_u
        if bool(np.all((total > 1.0) | (p == 0.0))):
            break
    return np.asarray(total, np.float64)


def tail_bound(
    *,
    canaries: int,
    guesses: int,
    correct: int,
    epsilon: float | None = None,
    delta: float = 0.0,
    mu: float | None = None,
    pairs: Pairs | None = None,
) -> float:
    """An upper bound on ``P[W >= correct]`` for any mechanism that satisfies the
    curve (the (epsilon, delta) lines, mu-GDP, the ``pairs``' lines, or the minimum
    of those given): a p-value for it.

    >>> round(tail_bound(canaries=100, guesses=10, correct=10, epsilon=0.0), 4)
    0.001
    >>> tail_bound(canaries=100, guesses=10, correct=0, mu=1.0)
    1.0
    """
    _check(canaries, guesses, correct)
    _check_curve(epsilon, delta, mu, pairs)
    pairs = _check_pairs(pairs)
    if correct == 0:
        return 1.0
    eps = None if epsilon is None else np.array([[epsilon]])
    mus = None if mu is None else np.array([[mu]])

    def mass(beta: NDArray[np.float64]) -> NDArray[np.float64]:
        total = _least_mass(
            beta[None, :],
            canaries=canaries,
            guesses=guesses,
            correct=correct,
            eps=eps,
            delta=delta,
            mu=mus,
            pairs=pairs,
        )
        return np.asarray(total[0], np.float64)

    grid = np.concatenate([[0.0], np.geomspace(1e-300, 1.0, _SCAN)])
    ok = mass(grid) <= 1.0
    if ok[-1]:
        return 1.0
    i = int(np.max(np.nonzero(ok)[0]))
    lo, hi = float(grid[i]), float(grid[i + 1])
    for _ in range(3):
        grid = np.linspace(lo, hi, _SCAN + 1)
        ok = mass(grid) <= 1.0
        i = int(np.max(np.nonzero(ok)[0]))
        lo, hi = float(grid[i]), float(grid[min(i + 1, _SCAN)])
    return min(1.0, hi)


def rejects(
    *,
    canaries: int,
    guesses: int,
    correct: int,
    alpha: float,
    epsilon: NDArray[np.float64] | float | None = None,
    delta: float = 0.0,
    mu: NDArray[np.float64] | float | None = None,
    pairs: Pairs | None = None,
) -> NDArray[np.bool_]:
    """Whether each curve is rejected at level ``alpha``: ``T(alpha) > 1``, so
    ``P[W >= correct] < alpha`` under it. ``epsilon`` and ``mu`` may be arrays (one
    curve per entry; both given: the curve of both, entrywise); ``pairs`` (one
    sampled profile, the same for every entry) joins each entry's curve.

    >>> rejects(canaries=100, guesses=10, correct=10, alpha=0.05,
    ...         epsilon=np.array([0.0, 5.0])).tolist()
    [True, False]
    """
    _check(canaries, guesses, correct)
    if not 0 < alpha < 1:
        raise InvalidParameterError(f"`alpha` must be in (0, 1). Got {alpha!r}.")
    if epsilon is None and mu is None and pairs is None:
        raise InvalidParameterError("`epsilon`, `mu` or `pairs` must be given.")
    pairs = _check_pairs(pairs)
    eps = None if epsilon is None else np.atleast_1d(np.asarray(epsilon, np.float64))
    mus = None if mu is None else np.atleast_1d(np.asarray(mu, np.float64))
    size = max(1 if eps is None else eps.size, 1 if mus is None else mus.size)
    if correct == 0:
        return np.zeros(size, dtype=bool)
    beta = np.full(size, float(alpha))
    total = _least_mass(
        beta,
        canaries=canaries,
        guesses=guesses,
        correct=correct,
        eps=eps,
        delta=delta,
        mu=mus,
        pairs=pairs,
    )
    return np.asarray(total > 1.0, dtype=bool)


def _scan(rejected: object, cap: float) -> float:
    """The largest value such that it and every smaller one on the scan are
    rejected (``rejected`` maps an array of values to an array of booleans and is
    monotone: a larger value is rejected only if every smaller one is)."""
    assert callable(rejected)
    if not bool(rejected(np.array([0.0]))[0]):
        return 0.0
    lo, hi = 0.0, cap
    for _ in range(3):
        grid = np.linspace(lo, hi, _SCAN + 1)
        ok = np.asarray(rejected(grid), dtype=bool)
        if ok.all():
            return float(grid[-1])
        first = int(np.argmin(ok))  # first value not rejected (ok[0] is True)
        lo, hi = float(grid[first - 1]), float(grid[first])
    return lo


def eps_lower_bound(
    *, canaries: int, guesses: int, correct: int, delta: float, alpha: float
) -> float:
    """The largest epsilon whose (epsilon, delta) lines are rejected at ``alpha``,
    with every smaller one: for an (epsilon, delta)-DP mechanism, ``eps_lo <=
    epsilon`` with probability ``>= 1 - alpha``.

    >>> round(eps_lower_bound(canaries=1000, guesses=100, correct=100,
    ...                       delta=0.0, alpha=0.05), 2)
    3.49
    """
    _check_curve(0.0, delta, None)
    return _scan(
        lambda e: rejects(
            canaries=canaries,
            guesses=guesses,
            correct=correct,
            alpha=alpha,
            epsilon=e,
            delta=delta,
        ),
        _EPS_CAP,
    )


def mu_lower_bound(*, canaries: int, guesses: int, correct: int, alpha: float) -> float:
    """The largest mu whose mu-GDP is rejected at ``alpha``, with every smaller one:
    for a mu-GDP mechanism, ``mu_lo <= mu`` with probability ``>= 1 - alpha``.

    >>> round(mu_lower_bound(canaries=1000, guesses=200, correct=180,
    ...                      alpha=0.05), 2)
    0.7
    """
    return _scan(
        lambda m: rejects(
            canaries=canaries,
            guesses=guesses,
            correct=correct,
            alpha=alpha,
            mu=m,
        ),
        _MU_CAP,
    )
