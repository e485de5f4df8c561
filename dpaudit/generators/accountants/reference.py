"""The accountants' compositions and conversions as dp-accounting computes them.

dpaudit converts RDP curves itself (:mod:`~dpaudit.generators.accountants.conversion`):
its stopping rules convert ``M`` models' curves at 301 orders on every training
iteration, and dp-accounting's ``compute_epsilon`` is a Python loop over the orders of
one curve. This module states the same quantities through dp-accounting (Google's
``dp_accounting`` 0.6): the tests and benchmarks check dpaudit's numbers against it.

Confident-GNMax's data-independent RDP is a composition of Gaussian mechanisms: the
threshold check adds ``N(0, sigma1^2)`` to a count of sensitivity 1
(``GaussianDpEvent(sigma1)``: RDP ``a / (2 sigma1^2)``), and GNMax adds
``N(0, sigma2^2)`` to a histogram of L2 sensitivity ``sqrt(2)`` (noise multiplier
``sigma2 / sqrt(2)``: RDP ``a / sigma2^2``; the argmax is post-processing).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import dp_accounting
import numpy as np
from dp_accounting.rdp import rdp_privacy_accountant
from numpy.typing import ArrayLike

from dpaudit.generators.accountants.conversion import _check_delta, _orders
from dpaudit.validation import require


def dp_accounting_epsilon(rdp: ArrayLike, *, delta: float, orders: ArrayLike) -> float:
    """dp-accounting's ``compute_epsilon`` (the improved conversion) of one RDP curve.

    >>> round(dp_accounting_epsilon([0.5, 0.6], delta=math.exp(-1.0),
    ...                             orders=[2.0, 3.0]), 6)
    0.113706
    """
    a = _orders(orders)
    r = np.asarray(rdp, dtype=np.float64)
    require(r.shape == a.shape, "rdp", f"a 1-D array of {a.size} values", r.shape)
    eps, _ = rdp_privacy_accountant.compute_epsilon(
        a.tolist(), r.tolist(), _check_delta(delta)
    )
    return float(eps)


def confident_gnmax_dp_event(
    num_queries: int, num_answered: int, *, sigma1: float, sigma2: float
) -> dp_accounting.DpEvent:
    """The data-independent Confident-GNMax ledger as a dp-accounting event:
    ``num_queries`` threshold checks and ``num_answered`` GNMax answers."""
    require(
        isinstance(num_queries, int) and num_queries >= 0,
        "num_queries",
        "an integer >= 0",
        num_queries,
    )
    require(
        isinstance(num_answered, int) and 0 <= num_answered <= num_queries,
        "num_answered",
        f"an integer in [0, {num_queries}]",
        num_answered,
    )
    require(math.isfinite(sigma1) and sigma1 > 0, "sigma1", "a positive number", sigma1)
    require(math.isfinite(sigma2) and sigma2 > 0, "sigma2", "a positive number", sigma2)
    return dp_accounting.ComposedDpEvent(
        [
            dp_accounting.SelfComposedDpEvent(
                dp_accounting.GaussianDpEvent(sigma1), num_queries
            ),
            dp_accounting.SelfComposedDpEvent(
                dp_accounting.GaussianDpEvent(sigma2 / math.sqrt(2.0)), num_answered
            ),
        ]
    )


def confident_gnmax_epsilon_dp_accounting(
    num_queries: int,
    num_answered: int,
    *,
    sigma1: float,
    sigma2: float,
    delta: float,
    orders: Sequence[float] | None = None,
) -> tuple[float, float]:
    """``(epsilon, optimal order)`` of the data-independent ledger by dp-accounting's
    ``RdpAccountant`` (its default orders unless ``orders`` is given).

    >>> eps, order = confident_gnmax_epsilon_dp_accounting(
    ...     10_000, 10_000, sigma1=1500.0, sigma2=600.0, delta=1e-5)
    >>> round(eps, 4), order
    (0.9901, 18.0)
    """
    accountant = rdp_privacy_accountant.RdpAccountant(orders)
    accountant.compose(
        confident_gnmax_dp_event(
            num_queries, num_answered, sigma1=sigma1, sigma2=sigma2
        )
    )
    eps, order = accountant.get_epsilon_and_optimal_order(_check_delta(delta))
    return float(eps), float(order)
