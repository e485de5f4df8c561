"""Testing a claim's privacy *profile*: Gaussian DP, Renyi DP and zCDP regions.

Pure functions and frozen dataclasses: no I/O, no random numbers, no global state;
every result is computed in float64.

An audit's test rounds bound the error rates of one membership test: with the joint
Clopper-Pearson event of :func:`~dpaudit.audit.estimators.eps_lower_bound` (each rate at
``alpha / 2``) the true pair (FPR, FNR) lies in the box ``[0, a] x [0, b]``, with ``a``
and ``b`` the upper bounds. A claim allows a *region* of error pairs: the two
(epsilon, delta) lines (Kairouz, Oh and Viswanath, ICML 2015, Thm. 2.1), and for a
profile

- mu-GDP (Dong, Roth and Su, "Gaussian differential privacy", JRSS-B 2022, Def. 2.6):
  ``FNR >= f_mu(FPR)`` with the Gaussian trade-off curve
  ``f_mu(x) = Phi(Phi^-1(1 - x) - mu)``;
- RDP at order lambda (Mironov, "Renyi differential privacy", CSF 2017): the test's
  outcome "guess member" has probability FPR without the target and 1 - FNR with
  it, so by post-processing ``D_lambda(Bern(FPR) || Bern(1 - FNR)) <= eps(lambda)``
  and the reverse direction too (add/remove neighbours, both directions);
- rho-zCDP (Bun and Steinke, TCC 2016): RDP ``rho * lambda`` at every lambda > 1.

Every region is upward closed on ``FPR + FNR <= 1``: if a pair is allowed, so is every
pair with larger rates. So when the corner ``(a, b)`` lies outside a region, so does
every pair of the box, the true one included: one joint Clopper-Pearson event covers
every region at once (docs/soundness.md, "Testing the claim's profile").

The *refutation ratio* of a corner against a claim is the largest of
``eps_lo / epsilon``, ``mu_emp / mu``, ``D_lambda / eps(lambda)`` over the stated
orders and ``D_lambda / (rho lambda)`` over every order; the claim is refuted iff it
exceeds 1 (:func:`judge_point`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpaudit.audit.estimators import (
    EstimatorMethod,
    _check_alpha,
    _check_count,
    _check_delta,
    _check_method,
    _eps_from_rates,
    _rate_upper_bounds,
)
from dpaudit.errors import InvalidParameterError

__all__ = [
    "ZCDP_GRID",
    "ClaimedProfile",
    "PointTest",
    "bernoulli_renyi",
    "box_renyi",
    "eps_ceiling",
    "eps_of_gdp",
    "gdp_delta",
    "gdp_mu_of_eps",
    "gdp_tradeoff",
    "judge_point",
    "mu_ceiling",
    "mu_lower_bound",
    "mu_max_attainable",
    "profile_rounds_needed",
    "rdp_boundary",
    "refutation_ratios",
    "zcdp_ratio",
]

#: The orders at which zCDP claims are scanned before the scalar refinement (and the
#: only ones used when thresholds are chosen): 1 + 10^-3 .. 1 + 10^4, log-spaced.
ZCDP_GRID: NDArray[np.float64] = 1.0 + np.geomspace(1e-3, 1e4, 97)


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


# ------------------------------------------------------------------------- the claim


@dataclass(frozen=True, kw_only=True, slots=True)
class ClaimedProfile:
    """What a claim allows: its (epsilon, delta) lines and any stated profile.

    Attributes:
        epsilon: The claimed epsilon (>= 0).
        delta: The delta the lines are tested at, in [0, 1).
        gdp_mu: The mechanism is claimed mu-GDP (``None``: not stated).
        zcdp_rho: The mechanism is claimed rho-zCDP (``None``: not stated).
        rdp_orders: Orders (each > 1) at which an RDP epsilon is claimed.
        rdp_epsilons: The claimed RDP epsilon at each order (``inf``: no claim there).

    Raises:
        InvalidParameterError: On a negative or non-finite value, an order <= 1 or
            orders and epsilons of different lengths.

    Example:
        >>> ClaimedProfile(epsilon=1.0, delta=1e-5).has_profile
        False
        >>> ClaimedProfile(epsilon=1.0, delta=1e-5, gdp_mu=0.5).regions
        ('lines', 'gdp')
    """

    epsilon: float
    delta: float
    gdp_mu: float | None = None
    zcdp_rho: float | None = None
    rdp_orders: tuple[float, ...] = ()
    rdp_epsilons: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", _finite_nonneg("epsilon", self.epsilon))
        object.__setattr__(self, "delta", _check_delta(self.delta))
        for name in ("gdp_mu", "zcdp_rho"):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, _finite_nonneg(name, value))
        orders = tuple(float(v) for v in self.rdp_orders)
        epsilons = tuple(float(v) for v in self.rdp_epsilons)
        if len(orders) != len(epsilons):
            raise InvalidParameterError(
                "`rdp` must have as many epsilons as orders. "
                f"Got {len(orders)} orders and {len(epsilons)} epsilons."
            )
        if any(not (math.isfinite(o) and o > 1.0) for o in orders):
            raise InvalidParameterError(
                f"`rdp.orders` must be finite numbers > 1. Got {list(orders)!r}."
            )
        if any(math.isnan(e) or e < 0.0 for e in epsilons):
            raise InvalidParameterError(
                f"`rdp.epsilons` must be numbers >= 0. Got {list(epsilons)!r}."
            )
        object.__setattr__(self, "rdp_orders", orders)
        object.__setattr__(self, "rdp_epsilons", epsilons)

    @property
    def has_profile(self) -> bool:
        """Whether anything beyond the (epsilon, delta) lines is claimed."""
        return (
            self.gdp_mu is not None
            or self.zcdp_rho is not None
            or bool(self.rdp_orders)
        )

    @property
    def regions(self) -> tuple[str, ...]:
        """The regions tested: ``lines``, then ``gdp``, ``rdp``, ``zcdp`` as stated."""
        out = ["lines"]
        if self.gdp_mu is not None:
            out.append("gdp")
        if self.rdp_orders:
            out.append("rdp")
        if self.zcdp_rho is not None:
            out.append("zcdp")
        return tuple(out)

    @classmethod
    def from_claim(
        cls, claim: Mapping[str, Any], *, delta: float | None = None
    ) -> ClaimedProfile:
        """From a stored claim dict (keys ``epsilon``, ``delta``, ``gdp_mu``,
        ``zcdp_rho``, ``rdp``: ``{"orders": [...], "epsilons": [...]}``; ``null``
        epsilons read as infinity). ``delta`` overrides the claim's own.

        >>> ClaimedProfile.from_claim({"epsilon": 1, "delta": 1e-5,
        ...     "rdp": {"orders": [2, 4], "epsilons": [0.1, None]}}).rdp_epsilons
        (0.1, inf)
        """
        rdp = claim.get("rdp") or {}
        return cls(
            epsilon=claim["epsilon"],
            delta=claim["delta"] if delta is None else delta,
            gdp_mu=claim.get("gdp_mu"),
            zcdp_rho=claim.get("zcdp_rho"),
            rdp_orders=tuple(rdp.get("orders") or ()),
            rdp_epsilons=tuple(
                math.inf if e is None else e for e in (rdp.get("epsilons") or ())
            ),
        )


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

    def term(x: NDArray[np.float64], y: NDArray[np.float64]) -> NDArray[np.float64]:
        with np.errstate(divide="ignore", invalid="ignore"):
            value = lam * np.log(x) + (1.0 - lam) * np.log(y)
        value = np.where(x == 0.0, -np.inf, value)
        return np.asarray(np.where((x > 0.0) & (y == 0.0), np.inf, value), np.float64)

    def excess(x: NDArray[np.float64], y: NDArray[np.float64]) -> NDArray[np.float64]:
        # x ((x / y)^(lambda - 1) - 1): the term's share of (sum - 1), exact near 0.
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            value = x * np.expm1((lam - 1.0) * (np.log(x) - np.log(y)))
        value = np.where(x == 0.0, 0.0, value)
        return np.asarray(np.where((x > 0.0) & (y == 0.0), np.inf, value), np.float64)

    with np.errstate(invalid="ignore"):
        total = np.logaddexp(term(pa, qa), term(1.0 - pa, 1.0 - qa))
        # Near lambda = 1 or p = q the sum is 1 + tiny: log1p of the excess keeps
        # the digits log-sum-exp loses to cancellation.
        small = excess(pa, qa) + excess(1.0 - pa, 1.0 - qa)
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


def zcdp_ratio(
    fpr_upper: float, fnr_upper: float, *, rho: float
) -> tuple[float, float]:
    """``sup over lambda > 1 of box_renyi(a, b, lambda) / (rho lambda)`` and the order
    attaining it: a grid (:data:`ZCDP_GRID`) refined by a bounded scalar optimiser.

    Any single order whose ratio exceeds 1 refutes rho-zCDP, so a value below the
    true supremum (the optimiser's tolerance) only errs towards CONSISTENT.

    Returns:
        ``(ratio, order)``; ``(0.0, nan)`` when the box forces nothing;
        ``(inf, order)`` for rho 0 and a positive divergence.

    >>> r, lam = zcdp_ratio(0.01, 0.5, rho=0.5)
    >>> round(r, 3), round(lam, 2)
    (3.64, 1.4)
    """
    a, b = float(fpr_upper), float(fnr_upper)
    r = _finite_nonneg("rho", rho)
    if a + b >= 1.0:
        return 0.0, math.nan
    div = box_renyi(a, b, ZCDP_GRID)
    if r == 0.0:
        return (math.inf, float(ZCDP_GRID[0])) if div.max() > 0 else (0.0, math.nan)
    ratios = div / (r * ZCDP_GRID)
    i = int(np.argmax(ratios))
    lo = float(ZCDP_GRID[max(i - 1, 0)])
    hi = float(ZCDP_GRID[min(i + 1, ZCDP_GRID.size - 1)])
    best, order = float(ratios[i]), float(ZCDP_GRID[i])
    if hi > lo:
        from scipy.optimize import minimize_scalar

        res = minimize_scalar(
            lambda lam: -float(box_renyi(a, b, lam)) / (r * lam),
            bounds=(lo, hi),
            method="bounded",
            options={"xatol": 1e-9},
        )
        if -float(res.fun) > best:
            best, order = -float(res.fun), float(res.x)
    return best, order


# ------------------------------------------------------------------ the test point


def _ratio(stat: NDArray[np.float64], claimed: float) -> NDArray[np.float64]:
    if claimed > 0.0:
        return np.asarray(stat / claimed, dtype=np.float64)
    return np.asarray(np.where(stat > 0.0, np.inf, 0.0), dtype=np.float64)


def refutation_ratios(
    fpr_upper: ArrayLike, fnr_upper: ArrayLike, claim: ClaimedProfile
) -> NDArray[np.float64]:
    """The refutation ratio of each corner (vectorised, for threshold selection):
    ``max(eps_lo / epsilon, mu_emp / mu, max_lambda D_lambda / eps(lambda),
    max over ZCDP_GRID of D_lambda / (rho lambda))``; a claim is refuted iff > 1.

    >>> claim = ClaimedProfile(epsilon=4.0, delta=1e-5, gdp_mu=0.925)
    >>> [round(float(r), 3) for r in refutation_ratios([0.02, 0.3], [0.6, 0.6], claim)]
    [1.946, 0.293]
    """
    a = np.asarray(fpr_upper, dtype=np.float64)
    b = np.asarray(fnr_upper, dtype=np.float64)
    with np.errstate(over="ignore"):
        out = _ratio(_eps_from_rates(a, b, claim.delta), claim.epsilon)
    if claim.gdp_mu is not None:
        out = np.maximum(out, _ratio(mu_lower_bound(a, b), claim.gdp_mu))
    return np.maximum(out, _renyi_ratios(a, b, claim))


def _renyi_ratios(
    a: NDArray[np.float64], b: NDArray[np.float64], claim: ClaimedProfile
) -> NDArray[np.float64]:
    """The largest RDP and zCDP (on :data:`ZCDP_GRID`) ratio of each corner."""
    out = np.zeros(np.broadcast(a, b).shape, dtype=np.float64)
    for order, eps in zip(claim.rdp_orders, claim.rdp_epsilons):
        if math.isfinite(eps):
            out = np.maximum(out, _ratio(box_renyi(a, b, order), eps))
    if claim.zcdp_rho is not None:
        div = box_renyi(a[..., None], b[..., None], ZCDP_GRID)
        best = np.max(_ratio(div / ZCDP_GRID, claim.zcdp_rho), axis=-1)
        out = np.maximum(out, best)
    return out


@dataclass(frozen=True, kw_only=True, slots=True)
class PointTest:
    """The test point ``(fpr_upper, fnr_upper)`` against a claimed profile.

    Attributes:
        fpr_upper: Upper bound of the FPR (``a``).
        fnr_upper: Upper bound of the FNR (``b``).
        eps_lo: The (epsilon, delta)-line bound at the claim's delta.
        mu_emp: :func:`mu_lower_bound` of the corner (for every claim).
        ratio: The refutation ratio (> 1: the claim is refuted).
        regions_violated: The regions the corner lies outside: ``lines``, ``gdp``,
            ``rdp@<order>`` (each refuted stated order), ``zcdp@<order>`` (the order
            attaining the largest ratio).
        rdp_ratio: ``max_lambda D_lambda / eps(lambda)`` over the stated orders.
        rdp_order: The stated order attaining it.
        zcdp_ratio: :func:`zcdp_ratio` (``None`` without a rho).
        zcdp_order: The order attaining it.
    """

    fpr_upper: float
    fnr_upper: float
    eps_lo: float
    mu_emp: float
    ratio: float
    regions_violated: tuple[str, ...] = ()
    rdp_ratio: float | None = None
    rdp_order: float | None = None
    zcdp_ratio: float | None = None
    zcdp_order: float | None = None


def _order_label(order: float) -> str:
    return f"{order:g}" if abs(order) < 1e4 else f"{order:.3g}"


def judge_point(fpr_upper: float, fnr_upper: float, claim: ClaimedProfile) -> PointTest:
    """Tests the corner ``(a, b)`` against every region ``claim`` states.

    Args:
        fpr_upper: ``a``, the upper bound of the FPR.
        fnr_upper: ``b``, the upper bound of the FNR.
        claim: The claim.

    Returns:
        The :class:`PointTest`; the claim is refuted iff ``ratio > 1`` iff
        ``regions_violated`` is non-empty.

    >>> claim = ClaimedProfile(epsilon=1.0, delta=1e-5, gdp_mu=0.25,
    ...                        rdp_orders=(2.0, 8.0), rdp_epsilons=(0.06, 0.25))
    >>> t = judge_point(0.05, 0.8, claim)
    >>> round(t.mu_emp, 3), t.regions_violated
    (0.803, ('lines', 'gdp', 'rdp@2', 'rdp@8'))
    """
    a, b = float(fpr_upper), float(fnr_upper)
    eps_lo = float(_eps_from_rates(a, b, claim.delta))
    mu = float(mu_lower_bound(a, b))
    violated: list[str] = []
    ratio = float(_ratio(np.asarray(eps_lo), claim.epsilon))
    if ratio > 1.0:
        violated.append("lines")
    if claim.gdp_mu is not None:
        r = float(_ratio(np.asarray(mu), claim.gdp_mu))
        ratio = max(ratio, r)
        if r > 1.0:
            violated.append("gdp")
    rdp_ratio = rdp_order = None
    if claim.rdp_orders:
        rdp_ratio = 0.0
        for order, eps in zip(claim.rdp_orders, claim.rdp_epsilons):
            if not math.isfinite(eps):
                continue
            r = float(_ratio(box_renyi(a, b, order), eps))
            if r > rdp_ratio or rdp_order is None:
                rdp_ratio, rdp_order = max(r, rdp_ratio), order
            if r > 1.0:
                violated.append(f"rdp@{_order_label(order)}")
        ratio = max(ratio, rdp_ratio)
    z_ratio = z_order = None
    if claim.zcdp_rho is not None:
        z_ratio, z_order = zcdp_ratio(a, b, rho=claim.zcdp_rho)
        ratio = max(ratio, z_ratio)
        if z_ratio > 1.0:
            violated.append(f"zcdp@{_order_label(round(z_order, 3))}")
    return PointTest(
        fpr_upper=a,
        fnr_upper=b,
        eps_lo=eps_lo,
        mu_emp=mu,
        ratio=ratio,
        regions_violated=tuple(violated),
        rdp_ratio=rdp_ratio,
        rdp_order=rdp_order,
        zcdp_ratio=z_ratio,
        zcdp_order=None if z_order is None or math.isnan(z_order) else z_order,
    )


def rdp_boundary(
    claim: ClaimedProfile, *, points: int = 201
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The lower boundary of the region the claim's RDP/zCDP statements allow, on a
    grid of FPRs: for each FPR ``x``, the smallest FNR ``y`` whose corner
    ``(x, y)`` no stated order refutes (bisection on ``y``, the region being upward
    closed). For plots; ``y = 1 - x`` where nothing is claimed.

    >>> x, y = rdp_boundary(ClaimedProfile(epsilon=9.0, delta=1e-5, zcdp_rho=0.5),
    ...                     points=3)
    >>> [round(float(v), 3) for v in y]
    [1.0, 0.107, 0.0]
    """
    xs = np.linspace(0.0, 1.0, points)
    lo = np.zeros_like(xs)
    hi = 1.0 - xs
    for _ in range(50):
        mid = (lo + hi) / 2.0
        refuted = _renyi_ratios(xs, mid, claim) > 1.0
        lo = np.where(refuted, mid, lo)
        hi = np.where(refuted, hi, mid)
    return xs, hi


# ------------------------------------------------------------------------ power


def _upper(errors: int, n: int, alpha: float, method: str) -> float:
    return float(_rate_upper_bounds(np.array(errors), np.array(n), alpha, method))


def mu_max_attainable(
    n_non_members: int,
    n_members: int,
    *,
    alpha: float = 0.05,
    method: EstimatorMethod = "clopper_pearson",
) -> float:
    """The largest mu_emp a test of this size can show (zero errors): no mu-GDP
    claim at or above it can be refuted with these test rounds.

    >>> round(mu_max_attainable(400, 400, alpha=0.05 / 3), 3)
    4.521
    """
    n0 = _check_count("n_non_members", n_non_members)
    n1 = _check_count("n_members", n_members)
    level = _check_alpha(alpha) / 2.0
    name = _check_method(method)
    return float(mu_lower_bound(_upper(0, n0, level, name), _upper(0, n1, level, name)))


def profile_rounds_needed(
    claim: ClaimedProfile,
    *,
    alpha: float = 0.05,
    split: tuple[float, float, float] = (0.4, 0.2, 0.4),
    method: EstimatorMethod = "clopper_pearson",
    max_rounds: int = 10_000_000,
) -> int | None:
    """The fewest rounds per world whose perfect attack (zero test errors) refutes
    ``claim`` (refutation ratio > 1), splitting rounds as
    :func:`~dpaudit.audit.estimators.rounds_needed` does.

    >>> profile_rounds_needed(ClaimedProfile(epsilon=4.0, delta=1e-5, gdp_mu=0.925))
    25
    >>> profile_rounds_needed(ClaimedProfile(epsilon=4.0, delta=1e-5))
    510
    """
    level = _check_alpha(alpha) / 2.0
    name = _check_method(method)

    def test_rounds(rounds: int) -> int:
        return rounds - round(split[0] * rounds) - round(split[1] * rounds)

    def refutes(n: int) -> bool:
        u = _upper(0, n, level, name)
        return bool(refutation_ratios(u, u, claim) > 1.0)

    hi = 1
    while not refutes(hi):
        if hi >= max_rounds:
            return None
        hi = min(2 * hi, max_rounds)
    lo = hi // 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if refutes(mid):
            hi = mid
        else:
            lo = mid
    rounds = max(5, int(hi / max(split[2], 1e-12)) - 10)
    while test_rounds(rounds) < hi:
        rounds += 1
    return rounds if rounds <= max_rounds else None


def _expected_best(
    n0: int,
    n1: int,
    mu_true: float,
    statistic: Callable[
        [NDArray[np.float64], NDArray[np.float64]], NDArray[np.float64]
    ],
    alpha: float,
    method: str,
) -> float:
    """max over thresholds t of E[statistic(U0(FP), U1(FN))] for the Gaussian
    test ``score >= t`` with non-member N(0, 1) and member N(mu_true, 1), exactly
    over the binomial laws of FP and FN."""
    from scipy import stats
    from scipy.optimize import minimize_scalar

    k0, k1 = np.arange(n0 + 1), np.arange(n1 + 1)
    u0 = _rate_upper_bounds(k0, np.full(k0.size, n0), alpha / 2.0, method)
    u1 = _rate_upper_bounds(k1, np.full(k1.size, n1), alpha / 2.0, method)
    table = statistic(u0[:, None], u1[None, :])

    def expected(t: float) -> float:
        p0 = float(_ndtr(-t))  # FPR of "score >= t" without the target
        p1 = float(_ndtr(t - mu_true))  # FNR with it
        w0 = stats.binom.pmf(k0, n0, p0)
        w1 = stats.binom.pmf(k1, n1, p1)
        # Only the counts with non-negligible mass (the rest adds < 1e-15).
        i0 = np.flatnonzero(w0 > 1e-18)
        i1 = np.flatnonzero(w1 > 1e-18)
        return float(w0[i0] @ table[np.ix_(i0, i1)] @ w1[i1])

    grid = np.linspace(-2.0, mu_true + 6.0, 161)
    values = np.array([expected(float(t)) for t in grid])
    i = int(np.argmax(values))
    lo, hi = float(grid[max(i - 1, 0)]), float(grid[min(i + 1, grid.size - 1)])
    res = minimize_scalar(
        lambda t: -expected(float(t)), bounds=(lo, hi), method="bounded"
    )
    return max(float(values[i]), -float(res.fun))


def mu_ceiling(
    mu_true: float,
    n_non_members: int,
    n_members: int,
    *,
    alpha: float = 0.05,
    method: EstimatorMethod = "clopper_pearson",
) -> float:
    """The expected mu_emp of the best possible test of an exactly mu_true-GDP
    mechanism at this test size and level.

    The oracle thresholds the exact likelihood ratio (the score itself, member
    N(mu, 1) against non-member N(0, 1): Neyman-Pearson), at the threshold that
    maximises the expected mu_emp, known in advance (no validation rounds spent);
    the expectation is exact over the binomial laws of FP and FN, not simulated. No
    audit of such a mechanism at this size can expect more; a ratio
    ``mean mu_emp / mu_ceiling`` near 1 means the attack is as strong as any.

    >>> round(mu_ceiling(0.925, 400, 400, alpha=0.05 / 3) / 0.925, 2)
    0.66
    """
    m = _finite_nonneg("mu_true", mu_true)
    n0 = _check_count("n_non_members", n_non_members)
    n1 = _check_count("n_members", n_members)
    return _expected_best(
        n0, n1, m, mu_lower_bound, _check_alpha(alpha), _check_method(method)
    )


def eps_ceiling(
    mu_true: float,
    n_non_members: int,
    n_members: int,
    *,
    delta: float,
    alpha: float = 0.05,
    method: EstimatorMethod = "clopper_pearson",
) -> float:
    """The expected eps_emp (the (epsilon, delta)-line bound) of the same oracle test
    as :func:`mu_ceiling`, at its own best threshold.

    >>> round(eps_ceiling(0.925, 400, 400, delta=1e-5, alpha=0.05 / 3), 2)
    0.83
    """
    m = _finite_nonneg("mu_true", mu_true)
    d = _check_delta(delta)
    n0 = _check_count("n_non_members", n_non_members)
    n1 = _check_count("n_members", n_members)
    return _expected_best(
        n0,
        n1,
        m,
        lambda a, b: _eps_from_rates(a, b, d),
        _check_alpha(alpha),
        _check_method(method),
    )
