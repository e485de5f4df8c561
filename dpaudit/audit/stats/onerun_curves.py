"""A claim's stated zCDP or RDP profile as a trade-off curve for the one-run f-DP bound.

Pure functions and a frozen dataclass: no I/O, no random numbers, float64.

A mechanism with an RDP curve ``RDP(a)`` (orders ``a > 1``; rho-zCDP is ``RDP(a) = rho
a`` at every order) is ``(epsilon_j, delta_j)``-DP at every ``delta_j`` with
``epsilon_j`` from the improved conversion (Balle, Barthe, Gaboardi, Hsu, Sato 2020;
Canonne, Kamath, Steinke 2020; docs/soundness.md, "From RDP to (ε, δ)";
:func:`dpaudit.generators.accountants.epsilon_from_rdp`, the project's one
implementation of it). Each pair is a valid guarantee in both directions of the
add/remove relation (the RDP claims are), so the mechanism's ``h = 1 - f`` lies below
each pair's lines and below their minimum, which the one-run f-DP bound tests
(:func:`dpaudit.audit.stats.onerun_fdp.rejects`, ``pairs``; docs/soundness.md, "The
one-run f-DP bound").

*Rounding.* The conversion is taken over finite grids of orders (the stated ones, or
:data:`~dpaudit.generators.accountants.RDP_ORDERS` for zCDP) and deltas
(:data:`PROFILE_DELTAS`): a minimum over fewer orders is a larger epsilon, and pairs at
fewer deltas are fewer constraints, both a larger region (sound, less powerful).
Every epsilon is then raised by :data:`_ROUND_UP` (relative and absolute), far above
the float64 error of the formula: a pair is never below the exact conversion at its
order, only above.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpaudit.errors import InvalidParameterError
from dpaudit.generators.accountants.conversion import RDP_ORDERS, epsilon_from_rdp

__all__ = ["PROFILE_DELTAS", "ProfileCurve", "profile_curve", "profile_pairs"]

#: The deltas at which a stated zCDP or RDP profile is sampled, fixed in the code:
#: 64 log-spaced from 1e-12 up to 0.05, then 32 evenly spaced from 0.05 to 0.999
#: (the large deltas set the curve where few guesses are wrong, at large mu).
PROFILE_DELTAS: NDArray[np.float64] = np.concatenate(
    [np.geomspace(1e-12, 0.05, 64, endpoint=False), np.linspace(0.05, 0.999, 32)]
)
PROFILE_DELTAS.setflags(write=False)

#: Each converted epsilon is raised by this fraction of itself plus this much
#: (the conversion's float64 error is below 1e-13 at the magnitudes involved).
_ROUND_UP = 1e-9


def profile_pairs(
    *,
    zcdp_rho: float | None = None,
    rdp_orders: Sequence[float] = (),
    rdp_epsilons: Sequence[float] = (),
) -> tuple[NDArray[np.float64], NDArray[np.float64]] | None:
    """The ``(epsilon_j, delta_j)`` pairs of a stated zCDP rho and/or RDP curve, one
    per delta of :data:`PROFILE_DELTAS` (the smaller epsilon of the two where both
    are stated: each is valid alone), rounded up; ``None`` when neither is stated.
    Infinite RDP epsilons (no claim at that order) are skipped; a delta whose
    epsilon is infinite (no stated order converts) is dropped.

    >>> eps, deltas = profile_pairs(zcdp_rho=0.5)
    >>> deltas.size, float(deltas[0]), round(float(eps[0]), 2)
    (96, 1e-12, 7.52)
    >>> profile_pairs() is None
    True
    """
    curves: list[NDArray[np.float64]] = []
    if zcdp_rho is not None:
        rho = float(zcdp_rho)
        if not (math.isfinite(rho) and rho >= 0.0):
            raise InvalidParameterError(f"`zcdp_rho` must be >= 0. Got {zcdp_rho!r}.")
        curves.append(_convert(rho * RDP_ORDERS, RDP_ORDERS))
    orders = np.asarray(rdp_orders, np.float64)
    epsilons = np.asarray(rdp_epsilons, np.float64)
    if orders.shape != epsilons.shape or orders.ndim != 1:
        raise InvalidParameterError(
            "`rdp` must have as many epsilons as orders, one of each per order."
        )
    keep = np.isfinite(epsilons)
    if bool(np.any(keep)):
        if bool(np.any(orders[keep] <= 1.0)) or bool(np.any(epsilons[keep] < 0.0)):
            raise InvalidParameterError(
                "`rdp.orders` must be > 1 and `rdp.epsilons` >= 0."
            )
        curves.append(_convert(epsilons[keep], orders[keep]))
    if not curves:
        return None
    eps = np.min(np.stack(curves), axis=0)
    finite = np.isfinite(eps)
    eps = eps[finite] * (1.0 + _ROUND_UP) + _ROUND_UP
    return np.asarray(eps, np.float64), np.asarray(PROFILE_DELTAS[finite], np.float64)


def _convert(
    rdp: NDArray[np.float64], orders: NDArray[np.float64]
) -> NDArray[np.float64]:
    """The improved conversion of one RDP curve at every delta of the grid."""
    return np.array(
        [
            float(epsilon_from_rdp(rdp, delta=float(d), orders=orders))
            for d in PROFILE_DELTAS
        ],
        np.float64,
    )


@dataclass(frozen=True, slots=True)
class ProfileCurve:
    """A stated zCDP or RDP profile as ``(epsilon_j, delta_j)`` pairs (hashable, so
    the tests that read it may be remembered).

    Attributes:
        name: what was stated, for the verdict's reason (``zCDP rho 0.373``, ``RDP
            at 46 orders``, or both).
        epsilons, deltas: the pairs (:func:`profile_pairs`).
    """

    name: str
    epsilons: tuple[float, ...]
    deltas: tuple[float, ...]

    @property
    def pairs(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """The pairs as arrays, for :func:`~dpaudit.audit.stats.onerun_fdp.rejects`."""
        return np.array(self.epsilons, np.float64), np.array(self.deltas, np.float64)


def profile_curve(
    *, zcdp_rho: float | None = None, rdp: Mapping[str, Any] | None = None
) -> ProfileCurve | None:
    """The curve a claim's stated ``zcdp_rho`` and ``rdp`` (``{"orders": [...],
    "epsilons": [...]}``, ``null`` epsilons infinite) give; ``None`` when neither
    states anything usable.

    >>> profile_curve(zcdp_rho=0.373).name
    'zCDP rho 0.373'
    >>> profile_curve(rdp={"orders": [2.0, 8.0], "epsilons": [0.1, None]}).name
    'RDP at 1 order'
    >>> profile_curve() is None
    True
    """
    orders = tuple((rdp or {}).get("orders") or ())
    epsilons = tuple(
        math.inf if e is None else float(e) for e in ((rdp or {}).get("epsilons") or ())
    )
    pairs = profile_pairs(zcdp_rho=zcdp_rho, rdp_orders=orders, rdp_epsilons=epsilons)
    if pairs is None or pairs[0].size == 0:
        return None
    names = [] if zcdp_rho is None else [f"zCDP rho {float(zcdp_rho):.3g}"]
    stated = sum(1 for e in epsilons if math.isfinite(e))
    if stated:
        names.append(f"RDP at {stated} order{'s' if stated != 1 else ''}")
    return ProfileCurve(
        name=" and ".join(names),
        epsilons=tuple(float(e) for e in pairs[0]),
        deltas=tuple(float(d) for d in pairs[1]),
    )
