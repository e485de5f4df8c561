"""PATE-GAN's moments accountant as pure functions over gap ledgers.

PATE-GAN's moments accountant (Jordon et al. 2019, Algorithm 1; Papernot et al. 2017,
Theorem 3). For a two-class vote with clean counts ``n0, n1`` and Laplace noise
``Lap(1/lambda)`` on each count (report-noisy-max), with ``gap = |n0 - n1|``::

    q = (2 + lambda * gap) / (4 * exp(lambda * gap))
    alpha(l) += min(2 lambda^2 l (l + 1),
                    log((1 - q) * ((1 - q) / (1 - e^{2 lambda} q))^l + q e^{2 lambda l}))
    epsilon = min_l (alpha(l) + log(1 / delta)) / l          (PATE-GAN's conversion)

``alpha(l) / l`` is the Renyi DP of order ``l + 1``, so the same log-moments also
convert with the tighter improved RDP conversion (``conversion="improved"``, see
:mod:`dpaudit.generators.accountants.conversion` and docs/formulas.md); the classic
formula stays the default because the variants reproduce it.

The data-dependent (second) term is a bound only when the aggregator adds independent
``Lap(1/lambda)`` noise to both counts and ``q < 1 / (1 + e^{2 lambda})``; elsewhere
the data-independent term ``2 lambda^2 l (l + 1)`` is used alone. Written naively the
formula divides by zero at ``q = e^{-2 lambda}`` and goes negative or NaN beyond it.

The increment depends on a query only through its gap, so a PATE-GAN ledger is a
histogram of gaps: ``gap_counts[..., g]`` = number of answered queries with gap ``g``
(``g = 0..k``). Everything here is pure: no I/O, no randomness, float64.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpaudit.errors import InvalidParameterError
from dpaudit.generators.accountants.conversion import Conversion, epsilon_from_moments

FloatArray = NDArray[np.float64]
#: ``math.exp`` overflows above about 709.78.
_EXP_LIMIT = 709.0


@dataclass(frozen=True, kw_only=True, slots=True)
class MomentsAccountantSpec:
    """How a PATE-GAN moments accountant computes its per-query increment.

    Args:
        lam: the noise parameter lambda of the mechanism the accountant assumes
            (noise ``Lap(1/lambda)`` on each count).
        orders: number of moment orders ``L`` (orders ``1..L``).
        data_dependent: use the data-dependent term where it is valid.
        index_bug: the ``accountant_index_bug`` defect: ``exp(2 lambda l + 1)`` (orders
            counted from 0) where ``exp(2 lambda (l + 1))`` is meant: the term
            ``q e^{2 lambda l}`` is multiplied by ``e^{1 - 2 lambda}``. Wherever the
            data-dependent term is the one used, it underestimates epsilon for
            lambda > 0.5 and overestimates it for lambda < 0.5 (exact at 0.5).
        missing_log: the ``accountant_missing_log`` defect: the data-dependent term
            is used without its log (then clamped to the data-independent term).
            Overestimates epsilon.
    """

    lam: float
    orders: int = 100
    data_dependent: bool = True
    index_bug: bool = False
    missing_log: bool = False

    def __post_init__(self) -> None:
        if not (self.lam > 0 and math.isfinite(self.lam)):
            raise InvalidParameterError(
                f"`lam` must be a positive number. Got {self.lam!r}."
            )
        if not (isinstance(self.orders, int) and self.orders >= 1):
            raise InvalidParameterError(
                f"`orders` must be an integer >= 1. Got {self.orders!r}."
            )


def error_bound(gap: ArrayLike, *, lam: float) -> FloatArray:
    """PATE-GAN's ``q``: a bound on the probability that the noisy vote differs from
    the clean plurality, for clean gap ``|n0 - n1|``.

    >>> float(error_bound(0, lam=1.0))
    0.5
    """
    g = np.asarray(gap, dtype=np.float64)
    with np.errstate(over="ignore"):
        return (2.0 + lam * g) / (4.0 * np.exp(lam * g))


def data_independent_increment(*, lam: float, orders: int) -> FloatArray:
    """``2 lambda^2 l (l + 1)`` for ``l = 1..orders``.

    >>> data_independent_increment(lam=0.5, orders=2).tolist()
    [1.0, 3.0]
    """
    ls = np.arange(1, orders + 1, dtype=np.float64)
    return 2.0 * lam**2 * ls * (ls + 1.0)


def moments_increment(gap: ArrayLike, spec: MomentsAccountantSpec) -> FloatArray:
    """The moments increment of one answered query with clean gap ``gap``.

    Returns an array of shape ``gap.shape + (orders,)``; never NaN, never negative.
    """
    lam, orders = spec.lam, spec.orders
    g = np.asarray(gap, dtype=np.float64)
    di = data_independent_increment(lam=lam, orders=orders)
    di_full = np.broadcast_to(di, (*g.shape, orders)).copy()
    if not spec.data_dependent:
        return di_full
    q = error_bound(g, lam=lam)[..., None]
    ls = np.arange(1, orders + 1, dtype=np.float64)
    # Papernot et al. 2017, Thm 3: the bound holds only for q < 1 / (1 + e^{2 lambda}).
    # e^{2 lambda} is inf beyond float range (a large lambda, e.g. the inverted scale
    # 1/lambda = 1000): the threshold is then 0, no q is below it, and the
    # data-independent term (finite, or inf: both sound) is used alone. Below the
    # range the arithmetic is the former one, bit for bit.
    e2 = math.exp(2.0 * lam) if 2.0 * lam < _EXP_LIMIT else math.inf
    valid = q < 1.0 / (1.0 + e2)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        denom = 1.0 - e2 * q
        ratio = np.where(valid, (1.0 - q) / np.where(valid, denom, 1.0), 1.0)
        if spec.index_bug:
            # Orders counted from 0 (l0 = l - 1) and `exp(2*lambda*l0 + 1)` written for
            # `exp(2*lambda*(l0 + 1))`.
            tail = q * np.exp(2.0 * lam * (ls - 1.0) + 1.0)
        else:
            tail = q * np.exp(2.0 * lam * ls)
        inner = (1.0 - q) * ratio**ls + tail
        dd = inner if spec.missing_log else np.log(inner)
    dd = np.where(valid & np.isfinite(dd), dd, np.inf)
    out = np.minimum(di_full, dd)
    return np.maximum(out, 0.0)


def increment_table(num_teachers: int, spec: MomentsAccountantSpec) -> FloatArray:
    """Increments for every possible gap ``0..num_teachers``: shape ``(k + 1, L)``.

    Gaps of the wrong parity cannot occur but cost nothing to tabulate.
    """
    return moments_increment(np.arange(num_teachers + 1), spec)


def moments_from_gap_counts(
    gap_counts: ArrayLike, spec: MomentsAccountantSpec
) -> FloatArray:
    """Accumulated moments ``alpha[..., L]`` of a ledger of gap counts ``[..., k + 1]``."""
    counts = np.asarray(gap_counts, dtype=np.float64)
    table = increment_table(counts.shape[-1] - 1, spec)
    return counts @ table


def pate_gan_epsilon(
    gap_counts: ArrayLike,
    spec: MomentsAccountantSpec,
    *,
    delta: float,
    conversion: Conversion = "classic",
) -> FloatArray:
    """Epsilon of a PATE-GAN ledger (a histogram of vote gaps).

    ``conversion`` picks the moments-to-``(epsilon, delta)`` conversion
    (:func:`~dpaudit.generators.accountants.conversion.epsilon_from_moments`):
    ``"classic"`` (the default: PATE-GAN's formula, what every variant computes) or
    ``"improved"`` (the tighter conversion of the same log-moments).

    >>> spec = MomentsAccountantSpec(lam=0.001, orders=100, data_dependent=False)
    >>> round(float(pate_gan_epsilon([0, 0, 0, 0, 0, 0], spec, delta=1e-5)), 6)
    0.115129
    """
    return epsilon_from_moments(
        moments_from_gap_counts(gap_counts, spec), delta=delta, conversion=conversion
    )


def max_queries_data_independent(
    *, lam: float, orders: int, epsilon: float, delta: float
) -> int:
    """The largest number of queries whose data-independent epsilon stays <= epsilon."""
    di = data_independent_increment(lam=lam, orders=orders)
    ls = np.arange(1, orders + 1, dtype=np.float64)
    budget = epsilon * ls - math.log(1.0 / delta)
    best = np.where(budget >= 0, np.floor(budget / di), -1.0)
    return int(max(best.max(), 0))


def ledger_summary(gap_counts: ArrayLike) -> dict[str, Any]:
    """JSON form of a gap-count ledger."""
    counts = np.asarray(gap_counts, dtype=np.int64)
    return {"gap_counts": counts.tolist(), "queries": int(counts.sum())}
