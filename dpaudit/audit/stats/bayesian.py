"""A Bayesian (credible) epsilon bound, for comparison with the frequentist one.

See :mod:`dpaudit.audit.stats.estimators` for the frequentist bound the verdict uses.
"""

from __future__ import annotations

import math
import warnings

from scipy import integrate, optimize, special

from dpaudit.audit.stats.estimators import (
    AttackCounts,
    _check_alpha,
    _check_counts,
    _check_delta,
)
from dpaudit.errors import InvalidParameterError

__all__ = ["eps_bayesian"]


def _check_prior(prior: object) -> tuple[float, float]:
    try:
        a0, b0 = (float(v) for v in prior)  # type: ignore[attr-defined]
    except (TypeError, ValueError) as err:
        raise InvalidParameterError(
            f"`prior` must be a pair of positive finite numbers. Got {prior!r}."
        ) from err
    if not (math.isfinite(a0) and math.isfinite(b0) and a0 > 0.0 and b0 > 0.0):
        raise InvalidParameterError(
            f"`prior` must be a pair of positive finite numbers. Got {prior!r}."
        )
    return a0, b0


def eps_bayesian(
    counts: AttackCounts,
    *,
    delta: float,
    alpha: float = 0.05,
    prior: tuple[float, float] = (1.0, 1.0),
) -> float:
    """Lower credible bound of epsilon under the joint-beta posterior.

    Zanella-Béguelin et al., "Bayesian estimation of differential privacy",
    ICML 2023, Sec. 3: with a Beta(a0, b0) prior on each rate, the posteriors are
    independent, FPR ~ Beta(fp + a0, tn + b0) and FNR ~ Beta(fn + a0, tp + b0).
    Epsilon is the function eps(FPR, FNR) = max{log((1 - FPR - delta)/FNR),
    log((1 - FNR - delta)/FPR), 0} of the pair, and the estimate is its
    ``alpha``-quantile: the posterior probability that epsilon is at least the
    returned value is ``1 - alpha``. Because the two rates are bounded jointly
    rather than separately, no union bound is paid and the value is usually above
    :func:`eps_lower_bound`. It is a credible bound (a statement about the
    posterior), not a frequentist confidence bound.

    Computed deterministically: for e > 0, eps >= e exactly when
    FNR <= g_e(FPR) = max{(1 - FPR - delta) e^-e, 1 - delta - e^e FPR}, so

        P(eps >= e) = integral over u in (0, 1) of F_FNR(g_e(F_FPR^-1(u))) du,

    integrated adaptively (scipy ``quad``) on the FPR quantile scale, and the root of
    ``P(eps >= e) = 1 - alpha`` is found with Brent's method (``xtol`` 1e-10).

    Args:
        counts: The attack's confusion matrix on test rounds.
        delta: The delta of the claim, in [0, 1).
        alpha: Posterior probability left below the estimate, in (0, 1).
        prior: The (a0, b0) parameters of the Beta prior of each rate; (1, 1) is
            uniform, (0.5, 0.5) Jeffreys.

    Returns:
        The ``alpha``-quantile of the posterior of epsilon, >= 0 (0.0 when the
        posterior puts at most ``1 - alpha`` on epsilon > 0).

    Raises:
        InvalidParameterError: On invalid counts, delta, alpha or prior.

    Example:
        >>> counts = AttackCounts(tp=400, fp=0, tn=400, fn=0)
        >>> eps_bayesian(counts, delta=1e-5) > eps_lower_bound(counts, delta=1e-5)
        True
    """
    c = _check_counts(counts)
    d = _check_delta(delta)
    level = _check_alpha(alpha)
    a0, b0 = _check_prior(prior)
    x_a, x_b = c.fp + a0, c.tn + b0  # FPR posterior
    y_a, y_b = c.fn + a0, c.tp + b0  # FNR posterior
    target = 1.0 - level

    def survival(e: float) -> float:
        shrink, grow = math.exp(-e), math.exp(e)

        def integrand(u: float) -> float:
            x = float(special.betaincinv(x_a, x_b, u))
            g = max((1.0 - x - d) * shrink, 1.0 - d - grow * x)
            if g <= 0.0:
                return 0.0
            if g >= 1.0:
                return 1.0
            return float(special.betainc(y_a, y_b, g))

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", integrate.IntegrationWarning)
            value, _ = integrate.quad(
                integrand, 0.0, 1.0, epsabs=1e-11, epsrel=1e-10, limit=400
            )
        return min(max(float(value), 0.0), 1.0)

    # At e = 0 both regions are {FPR + FNR <= 1 - delta}, i.e. P(eps > 0).
    if survival(0.0) <= target:
        return 0.0
    hi = 1.0
    while survival(hi) > target:
        hi *= 2.0
        if hi > 1e4:  # pragma: no cover - the posterior has a bounded quantile
            raise ArithmeticError("eps_bayesian: no bracket for the quantile")
    root: float = optimize.brentq(lambda e: survival(e) - target, 0.0, hi, xtol=1e-10)
    return float(root)
