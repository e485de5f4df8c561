"""Trade-off curves and divergences of two-point tests: Gaussian DP and Renyi DP.

Pure functions: no I/O, no random numbers, no global state; float64 throughout. The
building blocks of :mod:`dpaudit.audit.stats.profile`, which states what they are used for
and why one joint Clopper-Pearson event covers every region they define.

- mu-GDP (Dong, Roth and Su, "Gaussian differential privacy", JRSS-B 2022): the
  Gaussian trade-off curve ``f_mu(x) = Phi(Phi^-1(1 - x) - mu)``, its epsilon at
  delta (Cor. 2.13) and the largest mu a box of error rates refutes;
- Renyi DP (Mironov, CSF 2017): the Renyi divergence of two Bernoulli laws, the
  two-point distributions of a membership test's outcome.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpaudit.audit.stats.estimators import _check_delta
from dpaudit.errors import InvalidParameterError

__all__ = [
    "bernoulli_renyi",
    "box_renyi",
    "eps_of_gdp",
    "gdp_delta",
    "gdp_mu_of_eps",
    "gdp_tradeoff",
    "mu_lower_bound",
]


def _ndtr(x: Any) -> Any:
    from scipy.special import ndtr

    return ndtr(x)


def _ndtri(x: Any) -> Any:
    from scipy.special import ndtri

    return ndtri(x)


def _finite_nonneg(name: str, value: object) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float | np.integer | np.floating)
        or not 0.0 <= float(value) < math.inf
    ):
        raise InvalidParameterError(
            f"`{name}` must be a finite number >= 0. Got {value!r}."
        )
    return float(value)


# ------------------------------------------------------------------------------ GDP


def gdp_tradeoff(x: ArrayLike, *, mu: float) -> NDArray[np.float64]:
    """The Gaussian trade-off curve ``f_mu(x) = Phi(Phi^-1(1 - x) - mu)``: the
    smallest FNR a mu-GDP mechanism allows at FPR ``x`` (Dong, Roth and Su 2022,
    Eq. 2.5). ``f_0(x) = 1 - x``; the curve is symmetric (its own inverse).

    >>> [round(float(v), 4) for v in gdp_tradeoff([0.0, 0.05, 0.5, 1.0], mu=1.0)]
    [1.0, 0.7405, 0.1587, 0.0]
    """
    m = _finite_nonneg("mu", mu)
    arr = np.clip(np.asarray(x, dtype=np.float64), 0.0, 1.0)
    # Phi^-1(1 - x) = -Phi^-1(x): exact for small x, where 1 - x would round.
    return np.asarray(_ndtr(-_ndtri(arr) - m), dtype=np.float64)


def mu_lower_bound(fpr_upper: ArrayLike, fnr_upper: ArrayLike) -> NDArray[np.float64]:
    """The largest mu whose mu-GDP the box ``[0, a] x [0, b]`` refutes:
    ``max(0, Phi^-1(1 - a) - Phi^-1(b))``.

    Every pair in the box has ``FNR <= b < f_mu(a) <= f_mu(FPR)`` for each smaller
    mu, so with ``a``, ``b`` the joint Clopper-Pearson upper bounds this is
    ``mu_emp``, a lower bound on any mu for which the mechanism is mu-GDP (at the
    bounds' confidence). Elementwise; 0 where ``a + b >= 1``.

    >>> round(float(mu_lower_bound(0.05, 0.5)), 4)
    1.6449
    >>> float(mu_lower_bound(0.6, 0.5))
    0.0
    """
    a = np.asarray(fpr_upper, dtype=np.float64)
    b = np.asarray(fnr_upper, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        mu = -_ndtri(a) - _ndtri(b)
    # inf where a rate bound is 0 (and the other below 1): nothing is mu-GDP then.
    return np.asarray(np.where(mu > 0.0, mu, 0.0), np.float64)  # NaN > 0 is False


def gdp_delta(eps: float, *, mu: float) -> float:
    """delta(eps) of a mu-GDP mechanism (Dong, Roth and Su 2022, Cor. 2.13):
    ``Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)``, computed in logs.

    >>> round(gdp_delta(0.0, mu=1.0), 4)  # = 2 Phi(1/2) - 1
    0.3829
    """
    m = _finite_nonneg("mu", mu)
    e = float(eps)
    if m == 0.0:
        return 0.0
    from scipy.special import log_ndtr

    la = float(log_ndtr(-e / m + m / 2.0))
    lb = float(log_ndtr(-e / m - m / 2.0)) + e
    if lb >= la:
        return 0.0
    return float(math.exp(la) * -math.expm1(lb - la))


def eps_of_gdp(mu: float, delta: float) -> float:
    """The epsilon at ``delta`` of a mu-GDP mechanism: the smallest eps with
    :func:`gdp_delta` ``(eps) <= delta`` (Cor. 2.13 inverted numerically; ``inf``
    for ``delta == 0`` and mu > 0).

    >>> round(eps_of_gdp(1.0, 1e-5), 3)
    4.377
    >>> eps_of_gdp(0.0, 1e-5)
    0.0
    """
    m = _finite_nonneg("mu", mu)
    d = _check_delta(delta)
    if m == 0.0 or gdp_delta(0.0, mu=m) <= d:
        return 0.0
    if d == 0.0:
        return math.inf
    from scipy.optimize import brentq

    hi = 1.0
    while gdp_delta(hi, mu=m) > d:
        hi *= 2.0
    log_d = math.log(d)

    def gap(e: float) -> float:
        value = gdp_delta(e, mu=m)
        return (math.log(value) if value > 0 else -math.inf) - log_d

    return float(brentq(gap, 0.0, hi, xtol=1e-12, rtol=1e-12))


def gdp_mu_of_eps(eps: float, delta: float) -> float:
    """The mu of the Gaussian mechanism that is exactly (eps, delta)-DP: the mu with
    ``gdp_delta(eps, mu) == delta`` (delta grows with mu).

    >>> round(gdp_mu_of_eps(4.0, 1e-5), 3)
    0.925
    >>> round(eps_of_gdp(gdp_mu_of_eps(2.0, 1e-5), 1e-5), 9)
    2.0
    """
    e = _finite_nonneg("eps", eps)
    d = _check_delta(delta)
    if d <= 0.0:
        raise InvalidParameterError(f"`delta` must be in (0, 1). Got {delta!r}.")
    from scipy.optimize import brentq

    hi = 1.0
    while gdp_delta(e, mu=hi) < d:
        hi *= 2.0
    return float(
        brentq(lambda m: gdp_delta(e, mu=m) - d, 1e-12, hi, xtol=1e-13, rtol=1e-13)
    )


# ------------------------------------------------------------------------------ RDP


def bernoulli_renyi(
    p: ArrayLike, q: ArrayLike, order: ArrayLike
) -> NDArray[np.float64]:
    """Renyi divergence ``D_lambda(Bern(p) || Bern(q))`` of order lambda > 1.

    ``1/(lambda - 1) log(p^lambda q^(1-lambda) + (1-p)^lambda (1-q)^(1-lambda))``,
    summed in logs (log-sum-exp, or ``log1p`` of the sum's excess over 1 when that
    is small, as near lambda = 1 or p = q); a term with ``p_i = 0`` contributes 0 and one with
    ``p_i > 0 = q_i`` makes the divergence infinite. Broadcasts over its arguments.

    Raises:
        InvalidParameterError: On an order <= 1 or a probability outside [0, 1].

    >>> round(float(bernoulli_renyi(0.5, 0.5, 2.0)), 12)
    0.0
    >>> round(float(bernoulli_renyi(0.1, 0.6, 2.0)), 6)  # log(.01/.6 + .81/.4)
    0.713766
    >>> float(bernoulli_renyi(0.1, 0.0, 3.0))
    inf
    """
    pa, qa, lam = np.broadcast_arrays(
        np.asarray(p, dtype=np.float64),
        np.asarray(q, dtype=np.float64),
        np.asarray(order, dtype=np.float64),
    )
    if np.any(~(lam > 1.0)) or np.any(~np.isfinite(lam)):
        raise InvalidParameterError(
            "`order` must be a finite number > 1. Got "
            f"{np.unique(lam[~((lam > 1.0) & np.isfinite(lam))])[:3].tolist()!r}."
        )
    for name, arr in (("p", pa), ("q", qa)):
        if np.any(~((arr >= 0.0) & (arr <= 1.0))):
            raise InvalidParameterError(f"`{name}` must be in [0, 1]. Got {arr!r}.")

    def side(
        x: NDArray[np.float64],
        log_x: NDArray[np.float64],
        log_y: NDArray[np.float64],
        y_zero: NDArray[np.bool_],
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        # x^lambda y^(1-lambda) = x e^d with d = (lambda - 1) log(x / y): its log,
        # and its excess x (e^d - 1) over x (exact near d = 0).
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            d = (lam - 1.0) * (log_x - log_y)
            log_term = log_x + d
            excess = x * np.expm1(d)
        infinite = (x > 0.0) & y_zero
        log_term = np.where(x == 0.0, -np.inf, np.where(infinite, np.inf, log_term))
        excess = np.where(x == 0.0, 0.0, np.where(infinite, np.inf, excess))
        return log_term, excess

    with np.errstate(divide="ignore"):
        logs = np.log(pa), np.log(qa), np.log1p(-pa), np.log1p(-qa)
    t1, e1 = side(pa, logs[0], logs[1], qa == 0.0)
    t2, e2 = side(1.0 - pa, logs[2], logs[3], qa == 1.0)
    with np.errstate(invalid="ignore"):
        total = np.logaddexp(t1, t2)
        # Near lambda = 1 or p = q the sum is 1 + tiny: log1p of the excess keeps
        # the digits log-sum-exp loses to cancellation.
        small = e1 + e2
        near = np.isfinite(small) & (np.abs(small) < 0.5)
        total = np.where(near, np.log1p(np.where(near, small, 0.0)), total)
    out = np.maximum(total / (lam - 1.0), 0.0)  # >= 0 up to rounding
    return np.asarray(out, dtype=np.float64)


def box_renyi(
    fpr_upper: ArrayLike, fnr_upper: ArrayLike, order: ArrayLike
) -> NDArray[np.float64]:
    """The Renyi divergence the box ``[0, a] x [0, b]`` forces at order lambda:
    ``max(D(Bern(a) || Bern(1 - b)), D(Bern(1 - b) || Bern(a)))``, 0 where
    ``a + b >= 1``.

    For every pair (x, y) in the box with ``a + b < 1``:
    ``x <= a < 1 - b <= 1 - y``, and the Renyi divergence between Bernoullis grows as
    their parameters move apart (``sum p_i^lambda q_i^(1 - lambda)`` is convex in
    each argument with its minimum at ``p = q``), so the true test forces at least
    this much in each direction; by post-processing the mechanism does too.

    >>> round(float(box_renyi(0.1, 0.4, 2.0)), 6)  # the reverse direction: log(3.6 + .16/.9)
    1.329136
    >>> float(box_renyi(0.5, 0.5, 2.0))
    0.0
    """
    a = np.asarray(fpr_upper, dtype=np.float64)
    q = 1.0 - np.asarray(fnr_upper, dtype=np.float64)
    ok = a < q
    a_ok = np.where(ok, a, 0.25)
    q_ok = np.where(ok, q, 0.75)
    forward = bernoulli_renyi(a_ok, q_ok, order)
    backward = bernoulli_renyi(q_ok, a_ok, order)
    return np.asarray(np.where(ok, np.maximum(forward, backward), 0.0), np.float64)
