"""Empirical-epsilon estimators: from attack outcomes to a lower bound on epsilon.

Pure functions and frozen dataclasses: no I/O, no random numbers, no global state;
every result is computed in float64.

The statistical argument (Kairouz, Oh and Viswanath, "The composition theorem for
differential privacy", ICML 2015, Thm. 2.1; used for auditing by Jagielski, Ullman
and Oprea, "Auditing differentially private machine learning", NeurIPS 2020, Sec. 3,
and Nasr et al., "Adversary instantiation", IEEE S&P 2021): if a mechanism is
(epsilon, delta)-DP, every membership test on its output has false-positive rate
FPR and false-negative rate FNR with

    FPR + e^epsilon * FNR >= 1 - delta   and   FNR + e^epsilon * FPR >= 1 - delta,

so epsilon >= max{log((1 - FPR - delta) / FNR), log((1 - FNR - delta) / FPR), 0}.
The true rates are unknown; replacing them by upper confidence bounds computed on
test rounds gives a bound that holds with a stated probability (docs/soundness.md, rule 5).

Convention for ``alpha``: it is the *total* probability that the reported lower
bound overshoots. :func:`eps_lower_bound` bounds each of the two rates at one-sided
level ``alpha / 2`` (the upper end of the two-sided ``1 - alpha`` Clopper-Pearson
interval, as ``statsmodels.stats.proportion.proportion_confint(k, n, alpha=alpha,
method="beta")`` returns it), and a union bound over the two rates gives coverage
``1 - alpha``. With the default ``alpha = 0.05`` and zero errors this reproduces the
study's figures: 4.68 for 400 + 400 test rounds and 5.60 for 1,000 + 1,000
(docs/formulas.md, "Empirical epsilon"). :func:`rate_upper_bound` itself is a plain
one-sided bound at the ``alpha`` it is given.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, get_args

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpaudit.audit.stats.sizing import fewest_rounds
from dpaudit.errors import InvalidParameterError

__all__ = [
    "AttackCounts",
    "EstimatorMethod",
    "bonferroni_alpha",
    "eps_lower_bound",
    "eps_max_attainable",
    "rate_upper_bound",
    "rounds_needed",
]

EstimatorMethod = Literal["clopper_pearson", "jeffreys"]
"""How a binomial rate is bounded: exact Clopper-Pearson or the Jeffreys interval."""

_METHODS: tuple[str, ...] = get_args(EstimatorMethod)


# --------------------------------------------------------------------------- checks


def _check_count(name: str, value: object) -> int:
    if (
        isinstance(value, bool | np.bool_)
        or not isinstance(value, int | np.integer)
        or value < 0
    ):
        raise InvalidParameterError(
            f"`{name}` must be a non-negative integer. Got {value!r}."
        )
    return int(value)


def _check_alpha(alpha: object, name: str = "alpha") -> float:
    if (
        isinstance(alpha, bool)
        or not isinstance(alpha, int | float | np.integer | np.floating)
        or not 0.0 < float(alpha) < 1.0
    ):
        raise InvalidParameterError(f"`{name}` must be in (0, 1). Got {alpha!r}.")
    return float(alpha)


def _check_delta(delta: object) -> float:
    if (
        isinstance(delta, bool)
        or not isinstance(delta, int | float | np.integer | np.floating)
        or not 0.0 <= float(delta) < 1.0
    ):
        raise InvalidParameterError(f"`delta` must be in [0, 1). Got {delta!r}.")
    return float(delta)


def _check_method(method: object) -> str:
    if method not in _METHODS:
        raise InvalidParameterError(
            f"`method` must be one of {', '.join(map(repr, _METHODS))}. Got {method!r}."
        )
    return str(method)


def _check_counts(counts: object) -> AttackCounts:
    if not isinstance(counts, AttackCounts):
        raise InvalidParameterError(
            f"`counts` must be an AttackCounts. Got {type(counts).__name__}."
        )
    return counts


def _as_labels(labels: ArrayLike, name: str = "labels") -> NDArray[np.int64]:
    arr = np.asarray(labels)
    if arr.ndim != 1:
        raise InvalidParameterError(
            f"`{name}` must be a 1-D array of 0/1. Got shape {arr.shape!r}."
        )
    if arr.dtype == np.bool_:
        return arr.astype(np.int64)
    if arr.size and (
        not np.issubdtype(arr.dtype, np.number) or not np.all((arr == 0) | (arr == 1))
    ):
        bad = sorted({str(v) for v in np.unique(arr) if v not in (0, 1)})[:5]
        raise InvalidParameterError(
            f"`{name}` must be a 1-D array of 0/1. Got values {bad!r}."
        )
    return arr.astype(np.int64)


def _as_scores(scores: ArrayLike, n: int) -> NDArray[np.float64]:
    try:
        arr = np.asarray(scores, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise InvalidParameterError(
            f"`scores` must be a 1-D array of finite numbers. Got {scores!r}."
        ) from err
    if arr.ndim != 1 or arr.shape[0] != n:
        raise InvalidParameterError(
            f"`scores` must be a 1-D array as long as `labels` ({n}). "
            f"Got shape {arr.shape!r}."
        )
    if not np.all(np.isfinite(arr)):
        raise InvalidParameterError(
            "`scores` must be a 1-D array of finite numbers. Got NaN or infinity."
        )
    return arr


def _check_direction(direction: object) -> int:
    if isinstance(direction, bool) or direction not in (1, -1):
        raise InvalidParameterError(f"`direction` must be 1 or -1. Got {direction!r}.")
    return 1 if direction == 1 else -1


# ---------------------------------------------------------------------- counts


@dataclass(frozen=True, kw_only=True, slots=True)
class AttackCounts:
    """The confusion matrix of a membership attack over test rounds.

    A round with membership bit b = 1 (the target was in the training data) is a
    *member* round. A positive guess means "member".

    Attributes:
        tp: Member rounds guessed member.
        fp: Non-member rounds guessed member.
        tn: Non-member rounds guessed non-member.
        fn: Member rounds guessed non-member.

    Raises:
        InvalidParameterError: If a count is not a non-negative integer.

    Example:
        >>> counts = AttackCounts(tp=90, fp=10, tn=390, fn=310)
        >>> counts.n_members, counts.n_non_members, counts.fpr
        (400, 400, 0.025)
    """

    tp: int
    fp: int
    tn: int
    fn: int

    def __post_init__(self) -> None:
        for name in ("tp", "fp", "tn", "fn"):
            object.__setattr__(self, name, _check_count(name, getattr(self, name)))

    @property
    def n_members(self) -> int:
        """Number of member rounds (b = 1): ``tp + fn``."""
        return self.tp + self.fn

    @property
    def n_non_members(self) -> int:
        """Number of non-member rounds (b = 0): ``fp + tn``."""
        return self.fp + self.tn

    @property
    def fpr(self) -> float:
        """Observed false-positive rate ``fp / n_non_members`` (NaN without such rounds)."""
        n = self.n_non_members
        return self.fp / n if n else math.nan

    @property
    def fnr(self) -> float:
        """Observed false-negative rate ``fn / n_members`` (NaN without such rounds)."""
        n = self.n_members
        return self.fn / n if n else math.nan

    def to_json(self) -> dict[str, int]:
        """The JSON form: ``{"tp": ..., "fp": ..., "tn": ..., "fn": ...}``."""
        return {"tp": self.tp, "fp": self.fp, "tn": self.tn, "fn": self.fn}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> AttackCounts:
        """Rebuilds counts from :meth:`to_json` output.

        Raises:
            InvalidParameterError: If a key is missing or a count is invalid.
        """
        missing = [k for k in ("tp", "fp", "tn", "fn") if k not in data]
        if missing:
            raise InvalidParameterError(
                "`counts` must be a mapping with keys tp, fp, tn, fn. "
                f"Got keys {sorted(data)!r}."
            )
        return cls(tp=data["tp"], fp=data["fp"], tn=data["tn"], fn=data["fn"])

    @classmethod
    def from_guesses(cls, guesses: ArrayLike, labels: ArrayLike) -> AttackCounts:
        """Counts an attack's hard guesses against the true membership bits.

        Args:
            guesses: 1-D array of 0/1 (or bool); 1 means "guessed member".
            labels: 1-D array of 0/1 (or bool), same length; 1 means member (b = 1).

        Returns:
            The confusion matrix.

        Raises:
            InvalidParameterError: If an array is not 1-D 0/1 or the lengths differ.

        Example:
            >>> AttackCounts.from_guesses([1, 0, 1, 0], [1, 1, 0, 0]).to_json()
            {'tp': 1, 'fp': 1, 'tn': 1, 'fn': 1}
        """
        g = _as_labels(guesses, "guesses")
        y = _as_labels(labels)
        if g.shape != y.shape:
            raise InvalidParameterError(
                f"`guesses` must be as long as `labels` ({y.shape[0]}). "
                f"Got {g.shape[0]}."
            )
        return cls(
            tp=int(np.sum((g == 1) & (y == 1))),
            fp=int(np.sum((g == 1) & (y == 0))),
            tn=int(np.sum((g == 0) & (y == 0))),
            fn=int(np.sum((g == 0) & (y == 1))),
        )

    @classmethod
    def from_scores(
        cls,
        scores: ArrayLike,
        labels: ArrayLike,
        *,
        threshold: float,
        direction: int = 1,
    ) -> AttackCounts:
        """Thresholds attack scores and counts the resulting guesses.

        With ``direction=+1`` a round is guessed member when ``score >= threshold``;
        with ``direction=-1`` when ``score <= threshold``. Equivalently: member when
        ``direction * score >= direction * threshold``.

        Args:
            scores: 1-D array of finite attack scores, one per round.
            labels: 1-D array of 0/1, same length; 1 means member (b = 1).
            threshold: The decision threshold (chosen on other rounds; see
                :func:`select_threshold`).
            direction: +1 (high score means member) or -1 (low score means member).

        Returns:
            The confusion matrix.

        Raises:
            InvalidParameterError: On malformed arrays, a non-finite threshold or a
                direction other than +1/-1.

        Example:
            >>> AttackCounts.from_scores([0.9, 0.2, 0.6], [1, 0, 0], threshold=0.5)
            AttackCounts(tp=1, fp=1, tn=1, fn=0)
        """
        y = _as_labels(labels)
        s = _as_scores(scores, y.shape[0])
        sign = _check_direction(direction)
        if (
            isinstance(threshold, bool)
            or not isinstance(threshold, int | float | np.integer | np.floating)
            or not math.isfinite(float(threshold))
        ):
            raise InvalidParameterError(
                f"`threshold` must be a finite number. Got {threshold!r}."
            )
        guesses = (sign * s >= sign * float(threshold)).astype(np.int64)
        return cls.from_guesses(guesses, y)


# ------------------------------------------------------------- rate bounds (vectorised)


def rate_upper_bounds(
    errors: NDArray[np.int64],
    n: NDArray[np.int64],
    alpha: float,
    method: str,
) -> NDArray[np.float64]:
    """Vectorised one-sided upper bounds; inputs already validated."""
    k = np.asarray(errors, dtype=np.float64)
    m = np.asarray(n, dtype=np.float64)
    full = k >= m  # covers n == 0 and k == n: the bound is the whole interval
    # Safe parameters where the answer is 1 anyway, so beta.ppf sees no b <= 0.
    if method == "clopper_pearson":
        a_par, b_par = k + 1.0, np.where(full, 1.0, m - k)
    else:
        a_par, b_par = k + 0.5, np.where(full, 1.0, m - k + 0.5)
    from scipy import stats  # lazily: the command line's parser imports this module

    upper = stats.beta.ppf(1.0 - alpha, a_par, b_par)
    return np.where(full, 1.0, np.asarray(upper, dtype=np.float64))


def _eps_from_rates(
    fpr: NDArray[np.float64] | float,
    fnr: NDArray[np.float64] | float,
    delta: float,
) -> NDArray[np.float64]:
    """max{log((1-fpr-delta)/fnr), log((1-fnr-delta)/fpr), 0}, elementwise.

    A non-positive numerator (or a zero denominator with a non-positive numerator)
    contributes 0: the DP constraint it comes from is then vacuous.
    """
    x = np.asarray(fpr, dtype=np.float64)
    y = np.asarray(fnr, dtype=np.float64)
    num1 = 1.0 - x - delta
    num2 = 1.0 - y - delta
    with np.errstate(divide="ignore", invalid="ignore"):
        t1 = np.where(num1 > 0.0, np.log(np.where(num1 > 0.0, num1, 1.0) / y), 0.0)
        t2 = np.where(num2 > 0.0, np.log(np.where(num2 > 0.0, num2, 1.0) / x), 0.0)
    return np.maximum(np.maximum(t1, t2), 0.0)


def _eps_lower_bounds(
    fp: NDArray[np.int64],
    n0: NDArray[np.int64],
    fn: NDArray[np.int64],
    n1: NDArray[np.int64],
    delta: float,
    alpha: float,
    method: str,
) -> NDArray[np.float64]:
    # Union bound: each rate at one-sided alpha / 2 gives joint coverage 1 - alpha.
    a = rate_upper_bounds(fp, n0, alpha / 2.0, method)
    b = rate_upper_bounds(fn, n1, alpha / 2.0, method)
    return _eps_from_rates(a, b, delta)


# ------------------------------------------------------------------ public bounds


def rate_upper_bound(
    errors: int, n: int, *, alpha: float, method: EstimatorMethod = "clopper_pearson"
) -> float:
    """One-sided ``1 - alpha`` upper confidence bound of a binomial proportion.

    Clopper-Pearson (Clopper and Pearson, Biometrika 1934): the exact bound
    ``Beta.ppf(1 - alpha; k + 1, n - k)``; for every true proportion p,
    ``P(p <= bound) >= 1 - alpha``. Jeffreys (Brown, Cai and DasGupta, Statistical
    Science 2001, Sec. 4.1.1): ``Beta.ppf(1 - alpha; k + 1/2, n - k + 1/2)``, the
    posterior quantile under the Jeffreys prior; tighter, with coverage close to but
    not guaranteed at ``1 - alpha``. Both bounds are 1.0 when ``k == n``, and with
    ``n == 0`` (nothing observed) the bound is 1.0.

    This bound equals the upper end of the *two-sided* ``1 - 2 * alpha`` interval of
    ``statsmodels.stats.proportion.proportion_confint``.

    Args:
        errors: Number of errors k (0 <= k <= n).
        n: Number of trials.
        alpha: One-sided error probability, in (0, 1).
        method: ``"clopper_pearson"`` or ``"jeffreys"``.

    Returns:
        The upper bound, in (0, 1].

    Raises:
        InvalidParameterError: On negative counts, ``errors > n``, ``alpha`` outside
            (0, 1) or an unknown method.

    Example:
        >>> round(rate_upper_bound(0, 400, alpha=0.025), 5)  # 1 - 0.025 ** (1/400)
        0.00918
    """
    k = _check_count("errors", errors)
    m = _check_count("n", n)
    if k > m:
        raise InvalidParameterError(f"`errors` must be at most `n` ({m}). Got {k}.")
    level = _check_alpha(alpha)
    name = _check_method(method)
    return float(rate_upper_bounds(np.array(k), np.array(m), level, name))


def eps_lower_bound(
    counts: AttackCounts,
    *,
    delta: float,
    alpha: float = 0.05,
    method: EstimatorMethod = "clopper_pearson",
) -> float:
    """Empirical epsilon: a high-confidence lower bound on the true epsilon.

    ``a`` is the one-sided ``1 - alpha/2`` upper bound of the FPR (``fp`` errors out
    of ``n_non_members``), ``b`` that of the FNR (``fn`` out of ``n_members``), and

        eps_lo = max{log((1 - a - delta) / b), log((1 - b - delta) / a), 0},

    a non-positive numerator contributing 0 (Kairouz et al. 2015, Thm. 2.1;
    Jagielski et al., NeurIPS 2020, Sec. 3; Nasr et al., IEEE S&P 2021, Sec. 4).

    Coverage: if the mechanism is (epsilon, delta)-DP and the test rounds are
    independent of how the attack and its threshold were chosen, then
    ``P(eps_lo <= epsilon) >= 1 - alpha`` (union bound over the two rates, each
    bounded at ``alpha / 2``). With ``method="clopper_pearson"`` the guarantee is
    exact; ``"jeffreys"`` gives a tighter (larger) value whose coverage is only
    approximately ``1 - alpha``. The default ``alpha = 0.05`` uses the upper ends of
    the two-sided 95% intervals per rate, as in the audit study.

    Args:
        counts: The attack's confusion matrix on *test* rounds.
        delta: The delta of the claim being tested, in [0, 1).
        alpha: Total probability that the bound overshoots, in (0, 1).
        method: ``"clopper_pearson"`` (exact) or ``"jeffreys"``.

    Returns:
        eps_lo >= 0.

    Raises:
        InvalidParameterError: On invalid counts, delta, alpha or method.

    Example:
        >>> counts = AttackCounts(tp=400, fp=0, tn=400, fn=0)
        >>> round(eps_lower_bound(counts, delta=1e-5), 2)
        4.68
    """
    c = _check_counts(counts)
    d = _check_delta(delta)
    level = _check_alpha(alpha)
    name = _check_method(method)
    return float(
        _eps_lower_bounds(
            np.array(c.fp),
            np.array(c.n_non_members),
            np.array(c.fn),
            np.array(c.n_members),
            d,
            level,
            name,
        )
    )


def eps_max_attainable(
    n_non_members: int,
    n_members: int,
    *,
    delta: float,
    alpha: float = 0.05,
    method: EstimatorMethod = "clopper_pearson",
) -> float:
    """The largest empirical epsilon a test of this size can show (zero errors).

    It is :func:`eps_lower_bound` of a perfect attack. A claimed epsilon above it
    can never be refuted with this many test rounds, whatever the attack.

    Args:
        n_non_members: Number of test rounds with b = 0.
        n_members: Number of test rounds with b = 1.
        delta: The delta of the claim, in [0, 1).
        alpha: Total overshoot probability, as in :func:`eps_lower_bound`.
        method: ``"clopper_pearson"`` or ``"jeffreys"``.

    Returns:
        The ceiling on eps_lo, >= 0.

    Raises:
        InvalidParameterError: On invalid sizes, delta, alpha or method.

    Example:
        >>> round(eps_max_attainable(1000, 1000, delta=1e-5), 2)
        5.6
    """
    n0 = _check_count("n_non_members", n_non_members)
    n1 = _check_count("n_members", n_members)
    return eps_lower_bound(
        AttackCounts(tp=n1, fp=0, tn=n0, fn=0), delta=delta, alpha=alpha, method=method
    )


def rounds_needed(
    *,
    eps_claimed: float,
    delta: float,
    alpha: float = 0.05,
    split: tuple[float, float, float] = (0.4, 0.2, 0.4),
    method: EstimatorMethod = "clopper_pearson",
    max_rounds: int = 10_000_000,
) -> int | None:
    """The fewest rounds per world whose attainable maximum exceeds ``eps_claimed``.

    With ``R`` rounds per world the game tests ``R - round(split[0] R) -
    round(split[1] R)`` rounds of each world (as :class:`~dpaudit.audit.games.plan.GamePlan`
    splits them); the answer is the smallest ``R`` with
    ``eps_max_attainable(n, n) > eps_claimed``.

    Args:
        eps_claimed: The claim to refute, >= 0.
        delta: The claim's delta, in [0, 1).
        alpha: Total overshoot probability of the bound.
        split: Fractions of each world's rounds for train, validation and test.
        method: ``"clopper_pearson"`` or ``"jeffreys"``.
        max_rounds: Search limit.

    Returns:
        Rounds per world, or ``None`` when no ``R <= max_rounds`` suffices.

    Example:
        >>> rounds_needed(eps_claimed=1.0, delta=1e-5)
        30
    """
    if not (math.isfinite(eps_claimed) and eps_claimed >= 0):
        raise InvalidParameterError(
            f"`eps_claimed` must be a finite number >= 0. Got {eps_claimed!r}."
        )

    def exceeds(n_test: int) -> bool:
        return (
            eps_max_attainable(n_test, n_test, delta=delta, alpha=alpha, method=method)
            > eps_claimed
        )

    return fewest_rounds(exceeds, split=split, max_rounds=max_rounds)


# -------------------------------------------------------------------- bookkeeping


def bonferroni_alpha(alpha: float, n_tests: int) -> float:
    """Per-test alpha so that ``n_tests`` bounds hold simultaneously with ``1 - alpha``.

    When several attacks are audited and the largest eps_lo is reported, each must
    use ``alpha / n_tests`` (Bonferroni union bound) for the maximum to keep
    coverage ``1 - alpha``.

    Args:
        alpha: Family-wise overshoot probability, in (0, 1).
        n_tests: Number of bounds computed, >= 1.

    Returns:
        ``alpha / n_tests``.

    Raises:
        InvalidParameterError: On alpha outside (0, 1) or n_tests < 1.

    Example:
        >>> bonferroni_alpha(0.05, 5)
        0.01
    """
    level = _check_alpha(alpha)
    n = _check_count("n_tests", n_tests)
    if n < 1:
        raise InvalidParameterError(f"`n_tests` must be a positive integer. Got {n}.")
    return level / n
