"""An empirical-epsilon estimate with everything needed to report it.

:func:`estimate` bundles :func:`~dpaudit.audit.estimators.eps_lower_bound` and
:func:`~dpaudit.audit.estimators.eps_max_attainable` of one confusion matrix.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpaudit.audit.estimators import (
    AttackCounts,
    EstimatorMethod,
    _check_alpha,
    _check_counts,
    _check_delta,
    eps_lower_bound,
    eps_max_attainable,
)
from dpaudit.errors import InvalidParameterError

__all__ = ["EpsilonEstimate", "estimate"]


@dataclass(frozen=True, kw_only=True, slots=True)
class EpsilonEstimate:
    """An empirical-epsilon estimate with everything needed to report it.

    Attributes:
        eps_lo: The lower bound (:func:`eps_lower_bound`).
        eps_max_attainable: The largest value this test size could show.
        method: The rate-bound method used.
        alpha: Total overshoot probability (coverage is ``1 - alpha``).
        delta: The delta of the claim tested.
        counts: The test-round confusion matrix.

    Raises:
        InvalidParameterError: On invalid fields.
    """

    eps_lo: float
    eps_max_attainable: float
    method: str
    alpha: float
    delta: float
    counts: AttackCounts

    def __post_init__(self) -> None:
        for name in ("eps_lo", "eps_max_attainable"):
            value = getattr(self, name)
            if (
                isinstance(value, bool)
                or not isinstance(value, int | float | np.integer | np.floating)
                or not 0.0 <= float(value) < math.inf
            ):
                raise InvalidParameterError(
                    f"`{name}` must be a finite number >= 0. Got {value!r}."
                )
            object.__setattr__(self, name, float(value))
        if not isinstance(self.method, str) or not self.method:
            raise InvalidParameterError(
                f"`method` must be a non-empty string. Got {self.method!r}."
            )
        object.__setattr__(self, "alpha", _check_alpha(self.alpha))
        object.__setattr__(self, "delta", _check_delta(self.delta))
        _check_counts(self.counts)

    def to_json(self) -> dict[str, Any]:
        """The JSON form (``counts`` nested as ``{"tp", "fp", "tn", "fn"}``)."""
        return {
            "eps_lo": self.eps_lo,
            "eps_max_attainable": self.eps_max_attainable,
            "method": self.method,
            "alpha": self.alpha,
            "delta": self.delta,
            "counts": self.counts.to_json(),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> EpsilonEstimate:
        """Rebuilds an estimate from :meth:`to_json` output.

        Raises:
            InvalidParameterError: If a key is missing or a field is invalid.
        """
        keys = ("eps_lo", "eps_max_attainable", "method", "alpha", "delta", "counts")
        missing = [k for k in keys if k not in data]
        if missing:
            raise InvalidParameterError(
                f"`estimate` must be a mapping with keys {', '.join(keys)}. "
                f"Got keys {sorted(data)!r}."
            )
        return cls(
            eps_lo=data["eps_lo"],
            eps_max_attainable=data["eps_max_attainable"],
            method=data["method"],
            alpha=data["alpha"],
            delta=data["delta"],
            counts=AttackCounts.from_json(data["counts"]),
        )


def estimate(
    counts: AttackCounts,
    *,
    delta: float,
    alpha: float = 0.05,
    method: EstimatorMethod = "clopper_pearson",
) -> EpsilonEstimate:
    """Computes eps_lo and the attainable maximum for one set of test counts.

    Args:
        counts: The attack's confusion matrix on test rounds.
        delta: The delta of the claim, in [0, 1).
        alpha: Total overshoot probability, as in :func:`eps_lower_bound`.
        method: ``"clopper_pearson"`` or ``"jeffreys"``.

    Returns:
        The :class:`EpsilonEstimate`; ``P(eps_lo <= epsilon) >= 1 - alpha`` under
        the conditions of :func:`eps_lower_bound`.

    Raises:
        InvalidParameterError: On invalid counts, delta, alpha or method.

    Example:
        >>> est = estimate(AttackCounts(tp=400, fp=0, tn=400, fn=0), delta=1e-5)
        >>> est.eps_lo == est.eps_max_attainable
        True
    """
    c = _check_counts(counts)
    return EpsilonEstimate(
        eps_lo=eps_lower_bound(c, delta=delta, alpha=alpha, method=method),
        eps_max_attainable=eps_max_attainable(
            c.n_non_members, c.n_members, delta=delta, alpha=alpha, method=method
        ),
        method=method,
        alpha=alpha,
        delta=delta,
        counts=c,
    )
