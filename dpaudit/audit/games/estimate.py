"""An empirical-epsilon estimate with everything needed to report it.

:func:`estimate` bundles :func:`~dpaudit.audit.stats.estimators.eps_lower_bound` and
:func:`~dpaudit.audit.stats.estimators.eps_max_attainable` of one confusion matrix.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from dpaudit.audit.stats.estimators import (
    AttackCounts,
    EstimatorMethod,
    _check_alpha,
    _check_counts,
    _check_delta,
    bonferroni_alpha,
    eps_lower_bound,
    eps_max_attainable,
)
from dpaudit.errors import InvalidParameterError

if TYPE_CHECKING:
    from dpaudit.audit.config.model import AuditConfig

__all__ = [
    "EpsilonEstimate",
    "attack_names",
    "attainable_maximum",
    "estimate",
    "per_attack_alpha",
    "planned_attainable_maximum",
]


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


def per_attack_alpha(alpha: float, n_attacks: int) -> float:
    """The level each attack's bound uses when the largest of ``n_attacks`` bounds is
    reported at overall level ``alpha``: ``alpha / n_attacks`` (Bonferroni), ``alpha``
    for one attack.

    >>> per_attack_alpha(0.05, 1), round(per_attack_alpha(0.05, 3), 6)
    (0.05, 0.016667)
    """
    return bonferroni_alpha(alpha, n_attacks) if n_attacks > 1 else _check_alpha(alpha)


def attainable_maximum(
    n_non_members: int,
    n_members: int,
    *,
    delta: float,
    alpha: float,
    n_attacks: int = 1,
    method: EstimatorMethod = "clopper_pearson",
) -> float:
    """The largest eps_emp an audit can report: :func:`eps_max_attainable` of its test
    split at the per-attack level (:func:`per_attack_alpha` of the overall ``alpha``).

    The one definition used by the analysis (``power.eps_max_attainable``) and by any
    forecast made before the run, so the two never disagree.

    With Clopper-Pearson it is the exact test's
    (:func:`dpaudit.audit.stats.calibrated.eps_max_attainable`), with Jeffreys the
    per-rate bound's.

    >>> round(attainable_maximum(400, 400, delta=1e-5, alpha=0.05), 2)
    4.69
    >>> round(attainable_maximum(400, 400, delta=1e-5, alpha=0.05, n_attacks=3), 2)
    4.44
    """
    level = per_attack_alpha(alpha, n_attacks)
    if method == "clopper_pearson":
        from dpaudit.audit.stats import calibrated

        n0, n1 = int(n_non_members), int(n_members)
        if calibrated.applies(n0, n1):
            return calibrated.eps_max_attainable(n0, n1, alpha=level, delta=delta)
    return float(
        eps_max_attainable(
            n_non_members, n_members, delta=delta, alpha=level, method=method
        )
    )


def attack_names(config: AuditConfig) -> tuple[str, ...]:
    """The attacks an audit with ``config`` runs (its release's: the transcript's
    likelihood ratio, or its attack set expanded for the dataset's kind), without
    loading the data."""
    return config.attack_names


def planned_attainable_maximum(config: AuditConfig) -> float:
    """The attainable maximum of an audit, known before it runs: the test split its
    game will use, its ``delta`` and ``alpha`` split over its attacks exactly as the
    analysis splits it (a claimed delta larger than ``config.delta`` can only lower
    the figure the result then records). For a sequential audit: its last look.
    """
    from dpaudit.audit.games.looks import audit_looks
    from dpaudit.audit.games.plan import GamePlan

    # A sequential audit's full size is its last look, at that look's level.
    looks = audit_looks(config)
    n0, n1 = GamePlan.create(
        rounds=config.rounds,
        split=config.fractions,
        seed=config.seed,
        looks=looks.per_world if config.sequential else (),
    ).world_sizes("test")
    return attainable_maximum(
        int(n0),
        int(n1),
        delta=config.delta,
        alpha=looks.alphas[-1],
        n_attacks=len(attack_names(config)),
        method=config.estimator,
    )
