"""Confident-GNMax: the Renyi-DP accountant of G-PATE's DPGradAgg.

Pure functions (float64, no randomness) over a ledger of threshold checks and answers;
the conversion to ``(epsilon, delta)`` is :mod:`dpaudit.generators.accountants.conversion`
(the improved conversion by default).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpaudit.errors import InvalidParameterError
from dpaudit.generators.accountants.conversion import (
    RDP_ORDERS,
    Conversion,
    _orders,
    epsilon_from_rdp,
)

FloatArray = NDArray[np.float64]

#
# G-PATE (Long et al., NeurIPS 2021) answers each coordinate of each projected,
# discretised teacher gradient with Confident-GNMax (Papernot et al., ICLR 2018,
# "Scalable Private Learning with PATE", Algorithm 1): a query is answered only if
# ``max_j n_j + N(0, sigma1^2) >= T``, and then returns
# ``argmax_j (n_j + N(0, sigma2^2))``. One record of the private data is in exactly
# one teacher's partition, so it moves one teacher's vote: the top count changes by
# at most 1 and the histogram by at most sqrt(2) in L2. The accountant composes the
# Renyi-DP (RDP, Mironov 2017) of every query and converts once, at the end:
#
#     threshold step, every query:           a / (2 sigma1^2)
#     GNMax step, answered queries only:     a / sigma2^2            (data-independent)
#                                            or Theorem 6 of Papernot et al. 2018
#                                            (data-dependent; not a DP claim unless
#                                            sanitised with smooth sensitivity)
#     epsilon = min_a RDP(a) + log((a-1)/a) - (log(delta) + log(a)) / (a - 1)
#               (improved conversion, the default; see conversion.py)
#
# Charging the GNMax step only when the (noisy, hence already accounted) threshold
# check passes is Papernot et al.'s accounting; for one fixed order it is an RDP
# filter (Feldman and Zrnic 2021). All functions below are pure: float64, no RNG.


def _check_sigma(name: str, value: float) -> float:
    if not (
        isinstance(value, int | float | np.floating)
        and math.isfinite(value)
        and value > 0
    ):
        raise InvalidParameterError(
            f"`{name}` must be a positive number. Got {value!r}."
        )
    return float(value)


def threshold_rdp(orders: ArrayLike = RDP_ORDERS, *, sigma1: float) -> FloatArray:
    """RDP of one threshold check ``max_j n_j + N(0, sigma1^2) >= T``.

    The top vote count has sensitivity 1, so this is a Gaussian mechanism with RDP
    ``a / (2 sigma1^2)`` at order ``a`` (Mironov 2017, Prop. 7; Papernot et al.
    2018, Sec. 4.2). It is charged on every query, answered or not.

    >>> threshold_rdp([2.0, 4.0], sigma1=1.0).tolist()
    [1.0, 2.0]
    """
    return _orders(orders) / (2.0 * _check_sigma("sigma1", sigma1) ** 2)


def gnmax_rdp_data_independent(
    orders: ArrayLike = RDP_ORDERS, *, sigma2: float
) -> FloatArray:
    """Data-independent RDP of one GNMax answer: ``a / sigma2^2``.

    Papernot et al. 2018, Prop. 8 (a Gaussian mechanism on a histogram with L2
    sensitivity sqrt(2), followed by an argmax).

    >>> gnmax_rdp_data_independent([2.0, 3.0], sigma2=2.0).tolist()
    [0.5, 0.75]
    """
    return _orders(orders) / _check_sigma("sigma2", sigma2) ** 2


def confident_gnmax_rdp_data_independent(
    num_queries: ArrayLike,
    num_answered: ArrayLike,
    *,
    sigma1: float,
    sigma2: float,
    orders: ArrayLike = RDP_ORDERS,
) -> FloatArray:
    """Composed data-independent RDP of ``num_queries`` threshold checks, of which
    ``num_answered`` passed and were answered by GNMax.

    Counts may be arrays (one per model); the result has shape
    ``counts.shape + (len(orders),)``.

    >>> confident_gnmax_rdp_data_independent(4, 2, sigma1=2.0, sigma2=1.0,
    ...                                      orders=[2.0]).tolist()
    [5.0]
    """
    queries = np.asarray(num_queries, dtype=np.float64)[..., None]
    answered = np.asarray(num_answered, dtype=np.float64)[..., None]
    if np.any(queries < 0) or np.any(answered < 0) or np.any(answered > queries):
        raise InvalidParameterError(
            "`num_answered` must be in [0, num_queries]. "
            f"Got {num_answered!r} of {num_queries!r}."
        )
    return queries * threshold_rdp(
        orders, sigma1=sigma1
    ) + answered * gnmax_rdp_data_independent(orders, sigma2=sigma2)


def gnmax_log_error_bound(
    counts: ArrayLike, *, sigma2: float, num_classes: int | None = None
) -> FloatArray:
    """``log q``: an upper bound on the log-probability that GNMax does not return the
    plurality class, from the clean vote counts (Papernot et al. 2018, Prop. 7).

    ``q = sum_{j != i*} Pr[N(0, 2 sigma2^2) >= n_{i*} - n_j]``
    ``  = sum_{j != i*} erfc((n_{i*} - n_j) / (2 sigma2)) / 2``, a union bound over
    the classes that could overtake the plurality class ``i*``. It is capped at
    ``1 - 1/num_classes``: the plurality class is the most likely noisy argmax (swap
    its noise with any rival's), so it wins with probability at least
    ``1 / num_classes``.

    Args:
        counts: vote counts ``[..., m]`` (any order): all the classes, or only the
            ``m`` largest counts of a histogram with ``num_classes`` classes; a class
            not given is bounded by the smallest count given (conservative).
        sigma2: the GNMax noise standard deviation.
        num_classes: the number of classes (default ``m``).

    Returns:
        ``log q`` of shape ``counts.shape[:-1]``; ``-inf`` for a single class.

    >>> round(float(gnmax_log_error_bound([5, 5], sigma2=1.0)), 6)  # a tie: the cap
    -0.693147
    >>> round(float(gnmax_log_error_bound([10, 0], sigma2=1.0)), 4)  # erfc(5) / 2
    -27.894
    """
    from scipy.special import log_ndtr

    sigma2 = _check_sigma("sigma2", sigma2)
    c = np.asarray(counts, dtype=np.float64)
    if c.ndim == 0 or c.shape[-1] == 0:
        raise InvalidParameterError(
            f"`counts` must have a last axis of at least one class. Got shape {c.shape}."
        )
    given = c.shape[-1]
    classes = given if num_classes is None else int(num_classes)
    if classes < given:
        raise InvalidParameterError(
            f"`num_classes` must be >= the {given} counts given. Got {num_classes!r}."
        )
    if classes == 1:
        return np.full(c.shape[:-1], -np.inf)
    top = np.sort(c, axis=-1)[..., ::-1]
    gaps = top[..., :1] - top[..., 1:]
    # log Pr[N(0, 2 sigma^2) >= gap] = log Phi(-gap / (sqrt(2) sigma)); log_ndtr keeps
    # its precision far in the tail, where erfc underflows.
    terms = log_ndtr(-gaps / (math.sqrt(2.0) * sigma2))
    if classes > given:
        last = log_ndtr(-(top[..., :1] - top[..., -1:]) / (math.sqrt(2.0) * sigma2))
        terms = np.concatenate([terms, last + math.log(classes - given)], axis=-1)
    log_q = np.logaddexp.reduce(terms, axis=-1)
    return np.asarray(np.minimum(log_q, math.log1p(-1.0 / classes)), dtype=np.float64)


def _log1mexp(x: FloatArray) -> FloatArray:
    """``log(1 - e^x)`` for ``x < 0``, accurate at both ends."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(x < -math.log(2.0), np.log1p(-np.exp(x)), np.log(-np.expm1(x)))


def gnmax_rdp_data_dependent(
    log_q: ArrayLike, *, sigma2: float, orders: ArrayLike = RDP_ORDERS
) -> FloatArray:
    """Data-dependent RDP of one GNMax answer whose error probability is at most
    ``q = exp(log_q)`` (Papernot et al. 2018, Theorem 6 with Prop. 10).

    Theorem 6: if a mechanism is ``(mu1, eps1)``- and ``(mu2, eps2)``-RDP and returns
    ``i*`` on ``D`` except with probability ``<= q``, then for every neighbour ``D'``
    and order ``a <= mu1``::

        D_a(M(D) || M(D')) <= log((1 - q) A^(a-1) + q B^(a-1)) / (a - 1)
        A = (1 - q) / (1 - (q e^eps2)^((mu2 - 1) / mu2)),   B = e^eps1 / q^(1/(mu1 - 1))

    provided ``q <= e^((mu2-1) eps2) / (mu1/(mu1-1) * mu2/(mu2-1))^mu2`` (the bound
    is then non-decreasing in ``q``, so an upper bound on ``q`` may be used). For
    GNMax ``eps_i = mu_i / sigma2^2`` and Prop. 10 takes
    ``mu2 = sigma2 sqrt(log(1/q))``, ``mu1 = mu2 + 1``. Where a condition fails
    (``mu2 <= 1``, ``q e^eps2 >= 1``, ``a >= mu1``, ``q`` too large), and wherever
    it is larger, the data-independent ``a / sigma2^2`` is returned instead: the
    result never exceeds it and is never negative.

    The value depends on the private data through ``q``: reporting it as a DP
    claim needs smooth-sensitivity sanitisation (Papernot et al. 2018, Sec. 4.3).

    Returns:
        RDP of shape ``log_q.shape + (len(orders),)``.

    >>> lq = gnmax_log_error_bound([100, 0], sigma2=5.0)
    >>> dd = gnmax_rdp_data_dependent(lq, sigma2=5.0, orders=[2.0, 20.0])
    >>> bool(np.all(dd < gnmax_rdp_data_independent([2.0, 20.0], sigma2=5.0)))
    True
    >>> gnmax_rdp_data_dependent(math.log(0.5), sigma2=5.0, orders=[2.0]).tolist()
    [0.08]
    """
    sigma2 = _check_sigma("sigma2", sigma2)
    a = _orders(orders)
    lq = np.asarray(log_q, dtype=np.float64)[..., None]
    if np.any(lq > 0) or np.any(np.isnan(lq)):
        raise InvalidParameterError(
            f"`log_q` must be <= 0 (a log-probability). Got {log_q!r}."
        )
    variance = sigma2**2
    independent = np.broadcast_to(a / variance, (*lq.shape[:-1], a.size))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        mu2 = sigma2 * np.sqrt(-lq)
        mu1 = mu2 + 1.0
        eps1, eps2 = mu1 / variance, mu2 / variance
        applicable = (
            np.isfinite(lq)
            & (mu2 > 1.0)
            & (a < mu1)
            & (-lq > eps2)
            & (
                lq
                <= (mu2 - 1.0) * eps2
                - mu2 * (np.log(mu1 / (mu1 - 1.0)) + np.log(mu2 / (mu2 - 1.0)))
            )
        )
        log_1mq = _log1mexp(lq)
        log_a = log_1mq - _log1mexp((lq + eps2) * (1.0 - 1.0 / mu2))
        log_b = eps1 - lq / (mu1 - 1.0)
        log_sum = np.logaddexp(log_1mq + (a - 1.0) * log_a, lq + (a - 1.0) * log_b)
        dependent = log_sum / (a - 1.0)
    out = np.where(
        applicable & np.isfinite(dependent),
        np.minimum(independent, dependent),
        independent,
    )
    # q = 0: the output is fixed, so the answer costs nothing.
    out = np.where(np.isneginf(lq), 0.0, out)
    return np.maximum(out, 0.0)


def compress_vote_histograms(
    counts: ArrayLike, weights: ArrayLike | None = None
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Distinct vote histograms, each sorted in decreasing order, with multiplicities.

    The data-dependent bound depends on a histogram only through its sorted counts,
    so a ledger of answered queries is stored as distinct sorted histograms and how
    often each occurred.

    Args:
        counts: histograms ``[n, num_classes]`` (integers).
        weights: multiplicity of each row (default 1).

    >>> rows, mult = compress_vote_histograms([[0, 3], [3, 0], [1, 2]])
    >>> rows.tolist(), mult.tolist()
    ([[2, 1], [3, 0]], [1, 2])
    """
    c = np.asarray(counts, dtype=np.int64)
    if c.ndim != 2:
        raise InvalidParameterError(
            f"`counts` must be 2-D [n, classes]. Got shape {c.shape}."
        )
    w = (
        np.ones(c.shape[0], dtype=np.int64)
        if weights is None
        else np.asarray(weights, dtype=np.int64)
    )
    if c.shape[0] == 0:
        return np.zeros((0, c.shape[1]), dtype=np.int64), np.zeros(0, dtype=np.int64)
    rows = -np.sort(-c, axis=1)
    unique, inverse = np.unique(rows, axis=0, return_inverse=True)
    mult = np.bincount(inverse.reshape(-1), weights=w, minlength=unique.shape[0])
    return unique.astype(np.int64), np.rint(mult).astype(np.int64)


@dataclass(frozen=True, kw_only=True, slots=True)
class ConfidentGnmaxLedger:
    """The privacy events of a run of Confident-GNMax queries (G-PATE's DPGradAgg).

    Mechanism (Papernot et al. 2018, Algorithm 1): per query, with clean vote counts
    ``n_1..n_C`` over ``num_classes`` classes, answer only if
    ``max_j n_j + N(0, sigma1^2) >= T``, then return ``argmax_j n_j + N(0, sigma2^2)``.
    Neighbouring relation: add or remove one record of the private data; it lies in
    one teacher's partition, so one teacher's vote changes in every query.

    Attributes:
        sigma1: noise of the threshold check.
        sigma2: noise of the GNMax answer.
        num_classes: classes per query (G-PATE: the number of bins).
        num_queries: threshold checks made (answered or not).
        num_answered: queries answered by GNMax.
        top_counts: distinct sorted vote histograms of the answered queries (each
            row in decreasing order; the ``m`` largest counts, ``m <= num_classes``);
            empty when only the data-independent bound is wanted.
        multiplicity: how many answered queries had each row of ``top_counts``.
    """

    sigma1: float
    sigma2: float
    num_classes: int
    num_queries: int = 0
    num_answered: int = 0
    top_counts: tuple[tuple[int, ...], ...] = ()
    multiplicity: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        _check_sigma("sigma1", self.sigma1)
        _check_sigma("sigma2", self.sigma2)
        if not (isinstance(self.num_classes, int) and self.num_classes >= 1):
            raise InvalidParameterError(
                f"`num_classes` must be an integer >= 1. Got {self.num_classes!r}."
            )
        if not (isinstance(self.num_queries, int) and self.num_queries >= 0):
            raise InvalidParameterError(
                f"`num_queries` must be an integer >= 0. Got {self.num_queries!r}."
            )
        if not (
            isinstance(self.num_answered, int)
            and 0 <= self.num_answered <= self.num_queries
        ):
            raise InvalidParameterError(
                f"`num_answered` must be an integer in [0, {self.num_queries}]. "
                f"Got {self.num_answered!r}."
            )
        if len(self.top_counts) != len(self.multiplicity):
            raise InvalidParameterError(
                "`top_counts` and `multiplicity` must have the same length. "
                f"Got {len(self.top_counts)} and {len(self.multiplicity)}."
            )
        if any(not 1 <= len(row) <= self.num_classes for row in self.top_counts):
            raise InvalidParameterError(
                f"each row of `top_counts` must hold 1 to {self.num_classes} counts."
            )
        if self.top_counts and sum(self.multiplicity) != self.num_answered:
            raise InvalidParameterError(
                "`multiplicity` must sum to `num_answered` "
                f"({self.num_answered}). Got {sum(self.multiplicity)}."
            )

    @property
    def has_histograms(self) -> bool:
        """Whether the ledger holds the vote histograms the data-dependent bound needs."""
        return bool(self.top_counts) or self.num_answered == 0

    def to_json(self) -> dict[str, Any]:
        return {
            "sigma1": float(self.sigma1),
            "sigma2": float(self.sigma2),
            "num_classes": int(self.num_classes),
            "num_queries": int(self.num_queries),
            "num_answered": int(self.num_answered),
            "top_counts": [list(map(int, row)) for row in self.top_counts],
            "multiplicity": [int(m) for m in self.multiplicity],
        }

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> ConfidentGnmaxLedger:
        return cls(
            sigma1=float(obj["sigma1"]),
            sigma2=float(obj["sigma2"]),
            num_classes=int(obj["num_classes"]),
            num_queries=int(obj["num_queries"]),
            num_answered=int(obj["num_answered"]),
            top_counts=tuple(
                tuple(int(c) for c in row) for row in obj.get("top_counts", [])
            ),
            multiplicity=tuple(int(m) for m in obj.get("multiplicity", [])),
        )


def confident_gnmax_rdp(
    ledger: ConfidentGnmaxLedger,
    *,
    data_dependent: bool = False,
    orders: ArrayLike = RDP_ORDERS,
) -> FloatArray:
    """Composed RDP of a Confident-GNMax ledger at each order.

    Every query pays the threshold step; every answered query pays the GNMax step,
    data-independent (``a / sigma2^2``) or, with ``data_dependent``, Theorem 6 of
    Papernot et al. 2018 at the query's own vote histogram (never more).

    Raises:
        UnsupportedEventError: ``data_dependent`` on a ledger without histograms.

    >>> ledger = ConfidentGnmaxLedger(sigma1=2.0, sigma2=1.0, num_classes=2,
    ...                               num_queries=4, num_answered=2)
    >>> confident_gnmax_rdp(ledger, orders=[2.0]).tolist()
    [5.0]
    """
    from dpaudit.errors import UnsupportedEventError

    a = _orders(orders)
    threshold = ledger.num_queries * threshold_rdp(a, sigma1=ledger.sigma1)
    if not data_dependent:
        return threshold + ledger.num_answered * gnmax_rdp_data_independent(
            a, sigma2=ledger.sigma2
        )
    if not ledger.has_histograms:
        raise UnsupportedEventError(
            "the data-dependent Confident-GNMax bound needs the vote histograms of the "
            "answered queries; this ledger records only their number. Use "
            "`data_dependent=False`."
        )
    if ledger.num_answered == 0:
        return threshold
    total = np.zeros_like(a)
    # Rows may have different lengths (top-m histograms): group them by length.
    lengths = np.array([len(row) for row in ledger.top_counts])
    mult = np.asarray(ledger.multiplicity, dtype=np.float64)
    for m in np.unique(lengths):
        pick = np.flatnonzero(lengths == m)
        rows = np.array([ledger.top_counts[i] for i in pick], dtype=np.float64)
        log_q = gnmax_log_error_bound(
            rows, sigma2=ledger.sigma2, num_classes=ledger.num_classes
        )
        rdp = gnmax_rdp_data_dependent(log_q, sigma2=ledger.sigma2, orders=a)
        total = total + mult[pick] @ rdp
    return threshold + total


def confident_gnmax_epsilon(
    ledger: ConfidentGnmaxLedger,
    *,
    delta: float,
    data_dependent: bool = False,
    orders: ArrayLike = RDP_ORDERS,
    conversion: Conversion = "improved",
) -> float:
    """Epsilon of a Confident-GNMax ledger at ``delta`` (0 when nothing was asked).

    With ``data_dependent`` the value is itself a function of the private data and
    is not a DP claim unless sanitised (Papernot et al. 2018, Sec. 4.3).

    >>> ledger = ConfidentGnmaxLedger(sigma1=1500.0, sigma2=600.0, num_classes=10,
    ...                               num_queries=16000, num_answered=8000)
    >>> round(confident_gnmax_epsilon(ledger, delta=1e-5), 4)
    0.9117
    >>> round(confident_gnmax_epsilon(ledger, delta=1e-5, conversion="classic"), 4)
    1.1154
    """
    if ledger.num_queries == 0:
        return 0.0
    rdp = confident_gnmax_rdp(ledger, data_dependent=data_dependent, orders=orders)
    return float(
        epsilon_from_rdp(rdp, delta=delta, orders=orders, conversion=conversion)
    )


def calibrate_confident_gnmax_sigmas(
    *,
    epsilon: float,
    delta: float,
    num_queries: int,
    ratio: float = 2.5,
    orders: ArrayLike = RDP_ORDERS,
    conversion: Conversion = "improved",
) -> tuple[float, float]:
    """The smallest ``(sigma1, sigma2) = (ratio * s, s)`` whose data-independent epsilon
    for ``num_queries`` Confident-GNMax queries, all answered, is ``epsilon``.

    The noise is calibrated to a planned number of queries, as DP-SGD calibrates its
    noise to a planned number of steps: with it, at least ``num_queries`` queries fit
    the budget whatever the votes (unanswered queries cost less). The default ratio
    is the published G-PATE Credit setting (sigma1 / sigma2 = 1500 / 600). The
    epsilon is strictly decreasing in ``s``; the root is found by Brent's method on
    ``log s``.

    >>> s1, s2 = calibrate_confident_gnmax_sigmas(epsilon=1.0, delta=1e-5,
    ...                                           num_queries=16000)
    >>> round(s2, 1), round(s1 / s2, 6)
    (752.1, 2.5)
    >>> round(calibrate_confident_gnmax_sigmas(epsilon=1.0, delta=1e-5, num_queries=16000,
    ...                                        conversion="classic")[1], 1)
    911.2
    """
    from scipy.optimize import brentq

    if not (math.isfinite(epsilon) and epsilon > 0):
        raise InvalidParameterError(
            f"`epsilon` must be a positive number. Got {epsilon!r}."
        )
    if not (isinstance(num_queries, int) and num_queries >= 1):
        raise InvalidParameterError(
            f"`num_queries` must be a positive integer. Got {num_queries!r}."
        )
    if not (math.isfinite(ratio) and ratio > 0):
        raise InvalidParameterError(
            f"`ratio` must be a positive number. Got {ratio!r}."
        )

    def gap(log_sigma: float) -> float:
        s = math.exp(log_sigma)
        rdp = confident_gnmax_rdp_data_independent(
            num_queries, num_queries, sigma1=ratio * s, sigma2=s, orders=orders
        )
        return (
            float(
                epsilon_from_rdp(rdp, delta=delta, orders=orders, conversion=conversion)
            )
            - epsilon
        )

    lo, hi = math.log(1e-6), math.log(1e12)
    if gap(hi) > 0:
        raise InvalidParameterError(
            f"No noise scale reaches `epsilon`={epsilon!r} at `delta`={delta!r} with the "
            "orders given: raise epsilon or delta."
        )
    s2 = math.exp(brentq(gap, lo, hi, xtol=1e-12, rtol=1e-12))
    return ratio * s2, s2
