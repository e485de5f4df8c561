"""Testing a claim's privacy *profile*: Gaussian DP, Renyi DP and zCDP regions.

Pure functions and frozen dataclasses: no I/O, no random numbers, no global state;
every result is computed in float64.

An audit's test rounds bound the error rates of one membership test: with the joint
Clopper-Pearson event of :func:`~dpaudit.audit.stats.estimators.eps_lower_bound` (each rate at
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
exceeds 1 (:func:`judge_point`). The curves and divergences live in
:mod:`dpaudit.audit.stats.tradeoff` (re-exported here), the power of the test (attainable
maximum, rounds needed, the oracle's ceiling) in :mod:`dpaudit.audit.stats.ceiling`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpaudit.audit.stats.estimators import _check_delta, _eps_from_rates
from dpaudit.audit.stats.tradeoff import (
    _finite_nonneg,
    bernoulli_renyi,
    box_renyi,
    eps_of_gdp,
    gdp_delta,
    gdp_mu_of_eps,
    gdp_tradeoff,
    mu_lower_bound,
)
from dpaudit.errors import InvalidParameterError

__all__ = [
    "ZCDP_GRID",
    "ZCDP_SELECTION_GRID",
    "ClaimedProfile",
    "PointTest",
    "bernoulli_renyi",
    "box_renyi",
    "eps_of_gdp",
    "gdp_delta",
    "gdp_mu_of_eps",
    "gdp_tradeoff",
    "judge_point",
    "mu_lower_bound",
    "rdp_boundary",
    "refutation_ratios",
    "zcdp_ratio",
]

#: The orders at which zCDP claims are scanned before the scalar refinement (and the
#: only ones used when thresholds are chosen): 1 + 10^-3 .. 1 + 10^4, log-spaced.
ZCDP_GRID: NDArray[np.float64] = 1.0 + np.geomspace(1e-3, 1e4, 97)
#: The coarser grid (every fourth order) thresholds are chosen with: a cheaper
#: statistic on validation rounds changes the power, never the validity (rule 4).
ZCDP_SELECTION_GRID: NDArray[np.float64] = ZCDP_GRID[::4]


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
    fpr_upper: ArrayLike,
    fnr_upper: ArrayLike,
    claim: ClaimedProfile,
    *,
    zcdp_orders: NDArray[np.float64] = ZCDP_GRID,
) -> NDArray[np.float64]:
    """The refutation ratio of each corner (vectorised, for threshold selection):
    ``max(eps_lo / epsilon, mu_emp / mu, max_lambda D_lambda / eps(lambda),
    max over zcdp_orders of D_lambda / (rho lambda))``; a claim is refuted iff > 1
    (threshold selection passes :data:`ZCDP_SELECTION_GRID`).

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
    return np.maximum(out, _renyi_ratios(a, b, claim, zcdp_orders))


def _renyi_ratios(
    a: NDArray[np.float64],
    b: NDArray[np.float64],
    claim: ClaimedProfile,
    zcdp_orders: NDArray[np.float64] = ZCDP_GRID,
) -> NDArray[np.float64]:
    """The largest RDP and zCDP (on ``zcdp_orders``) ratio of each corner."""
    out = np.zeros(np.broadcast(a, b).shape, dtype=np.float64)
    finite = [
        (o, e) for o, e in zip(claim.rdp_orders, claim.rdp_epsilons) if e < math.inf
    ]
    if finite:
        orders = np.array([o for o, _ in finite], dtype=np.float64)
        claimed = np.array([e for _, e in finite], dtype=np.float64)
        div = box_renyi(a[..., None], b[..., None], orders)  # every order at once
        with np.errstate(divide="ignore", invalid="ignore"):
            ratios = np.where(
                claimed > 0.0, div / claimed, np.where(div > 0.0, np.inf, 0.0)
            )
        out = np.maximum(out, np.max(ratios, axis=-1))
    if claim.zcdp_rho is not None:
        div = box_renyi(a[..., None], b[..., None], zcdp_orders)
        best = np.max(_ratio(div / zcdp_orders, claim.zcdp_rho), axis=-1)
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
