"""The one-run game's guess rules: how the scores of one release become guesses, and
the level each rule is tested at.

Soundness (docs/soundness.md, "Guesses from the release"):

- ``count``: ``guesses_in`` "in" for the highest scores, ``guesses_out`` "out" for the
  lowest, both numbers fixed by the configuration before any release. Steinke, Nasr and
  Jagielski's theorem for ``r = guesses_in + guesses_out`` guesses, at the rule's level.
- ``threshold``: "in" for the canaries whose score reaches a threshold fixed by the
  canary design before any fit (:data:`THRESHOLDS`: the release holds the canary's
  exact row, or its value), abstain elsewhere. Their number ``R`` is a function of the
  release, so it is rounded down to the largest size ``r_k <= R`` of a grid fixed in
  advance (:func:`threshold_sizes`; the ``r_k`` highest scores among those that pass,
  ties by the public key), and the theorem is applied for ``r_k`` at the rule's level
  divided by the grid's size: a union bound over the sizes the release could select.
- ``both`` (the default): each of the two at half of ``alpha``; eps_emp is the larger
  bound (Bonferroni over the two rules).

The bound (``onerun_bound``; docs/soundness.md, "The one-run f-DP bound"): ``steinke``
(:mod:`dpaudit.audit.stats.onerun_bound`), ``fdp`` (:mod:`dpaudit.audit.stats.onerun_fdp`:
the same guesses, the claim's trade-off curve tested against their count: its lines
with its stated mu-GDP, zCDP or RDP curve, :mod:`dpaudit.audit.stats.onerun_curves`;
eps_emp from the (epsilon, delta) lines, mu_emp from the GDP curves) or ``order`` (``fdp`` at
:data:`ORDER_SIZES` nested counts of the count rule, ``k``, ``k/2``, ``k/4``, ...,
each at its share of the rule's level: a union bound over counts fixed in advance).
``auto`` is :func:`resolve_bound`, a function of the configuration alone.

Every rule reads the scores and the public tie-break key only; the bits are read
after the guesses are made, to count them.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpaudit.audit.config.names import GuessRule, OneRunBound
from dpaudit.audit.games.one_run.counts import ORDER_SIZES, order_counts
from dpaudit.audit.games.one_run.plan import Guesses, guess
from dpaudit.audit.stats import onerun_fdp
from dpaudit.audit.stats.onerun_bound import eps_lower_bound
from dpaudit.audit.stats.onerun_curves import ProfileCurve
from dpaudit.errors import InvalidParameterError

__all__ = [
    "BOUNDS",
    "ORDER_SIZES",
    "THRESHOLDS",
    "BoundDecision",
    "RuleOutcome",
    "apply_rules",
    "best_outcome",
    "decide_bound",
    "every_bound",
    "order_counts",
    "resolve_bound",
    "threshold_guess",
    "threshold_sizes",
]

#: The threshold of each score (by the name the result records), fixed before any
#: fit: a ``canary-distance`` of 0 (up to 1e-9 of the scaled domain: the release
#: holds the canary's row) and a ``canary-presence`` of at least one released row.
THRESHOLDS: Mapping[str, float] = MappingProxyType(
    {"canary-distance": -1e-9, "canary-presence": 1.0}
)


#: The bounds sound for every mechanism and game setting, in the order a result
#: lists them (``auto`` resolves to one of them: :func:`resolve_bound`).
BOUNDS = ("steinke", "fdp", "order")


def resolve_bound(bound: OneRunBound | str, canaries: int) -> str:
    """The bound ``bound`` names for an audit of ``canaries`` canaries; ``auto``:
    ``fdp`` at every size, with the count rule's guesses planned for it
    (:func:`~dpaudit.audit.games.one_run.counts.plan_counts`): on the tightness
    benchmark's grid (mu 0.5, 1, 2 at 1,000 and 10,000 canaries) planned ``fdp``
    was stronger than ``order`` in every cell (docs/onerun.md, "Bounds"). A
    function of the configuration alone, fixed before any fit (``canaries`` is
    kept for callers that resolve by size).

    >>> resolve_bound("auto", 1000), resolve_bound("auto", 10000)
    ('fdp', 'fdp')
    >>> resolve_bound("steinke", 10000)
    'steinke'
    """
    if bound not in ("auto", "steinke", "fdp", "order"):
        raise InvalidParameterError(
            f"`onerun_bound` must be auto, steinke, fdp or order. Got {bound!r}."
        )
    if bound == "auto":
        return "fdp"
    return str(bound)


@functools.lru_cache(maxsize=4096)
def _bound(
    canaries: int,
    guesses: int,
    correct: int,
    delta: float,
    alpha: float,
    bound: str = "steinke",
) -> float:
    """eps_emp of ``bound`` (:func:`eps_lower_bound` or the f-DP lines), remembered
    (a pure function of its counts): the calibration's audits repeat the same few
    counts."""
    if bound == "steinke":
        return eps_lower_bound(
            canaries=canaries,
            guesses=guesses,
            correct=correct,
            delta=delta,
            alpha=alpha,
        )
    return onerun_fdp.eps_lower_bound(
        canaries=canaries, guesses=guesses, correct=correct, delta=delta, alpha=alpha
    )


@functools.lru_cache(maxsize=4096)
def _mu(canaries: int, guesses: int, correct: int, alpha: float) -> float:
    """mu_emp of the f-DP bound, remembered."""
    return onerun_fdp.mu_lower_bound(
        canaries=canaries, guesses=guesses, correct=correct, alpha=alpha
    )


@functools.lru_cache(maxsize=4096)
def _refutes(
    canaries: int,
    guesses: int,
    correct: int,
    alpha: float,
    epsilon: float,
    delta: float,
    mu: float | None,
    curve: ProfileCurve | None = None,
) -> bool:
    """Whether the f-DP bound rejects the claim's curve (its lines, its mu-GDP and
    its zCDP or RDP pairs, as stated) at ``alpha``, remembered."""
    return bool(
        onerun_fdp.rejects(
            canaries=canaries,
            guesses=guesses,
            correct=correct,
            alpha=alpha,
            epsilon=epsilon,
            delta=delta,
            mu=mu,
            pairs=None if curve is None else curve.pairs,
        )[0]
    )


def curve_name(claim_mu: float | None, claim_curve: ProfileCurve | None) -> str | None:
    """What the f-DP bounds test beyond the claim's lines, in words (``None``:
    nothing: the lines alone).

    >>> curve_name(0.5, None)
    'mu-GDP 0.5'
    """
    names = [] if claim_mu is None else [f"mu-GDP {claim_mu:.3g}"]
    names += [] if claim_curve is None else [claim_curve.name]
    return ", ".join(names) or None


def threshold_sizes(canaries: int) -> tuple[int, ...]:
    """The guess counts the ``threshold`` rule may test: 1, 2, 3, 4, 6, 8, 12, ...
    (``2^j`` and ``3 * 2^j``) up to ``canaries``, fixed before any release.

    >>> threshold_sizes(20)
    (1, 2, 3, 4, 6, 8, 12, 16)
    >>> len(threshold_sizes(1000))
    19
    """
    if canaries < 1:
        raise InvalidParameterError(f"`canaries` must be >= 1. Got {canaries}.")
    sizes: set[int] = set()
    power = 1
    while power <= canaries:
        sizes.add(power)
        if 3 * power // 2 <= canaries and power >= 2:
            sizes.add(3 * power // 2)
        power *= 2
    return tuple(sorted(sizes))


def threshold_guess(
    scores: NDArray[np.float64],
    bits: NDArray[np.int64],
    *,
    threshold: float,
    sizes: tuple[int, ...],
    tie_break: NDArray[np.float64],
) -> tuple[Guesses, int]:
    """ "In" for the canaries whose score reaches ``threshold``, as many as the
    largest of ``sizes`` that does not exceed their number (the highest scores, ties
    by ``tie_break``); abstain elsewhere. Returns the guesses and how many passed.

    >>> g, passed = threshold_guess(np.array([0.0, -0.5, 0.0, 0.0, -1.0]),
    ...     np.array([1, 0, 1, 0, 1]), threshold=0.0, sizes=(1, 2),
    ...     tie_break=np.array([0.1, 0.2, 0.3, 0.0, 0.5]))
    >>> g.guess.tolist(), g.correct_in, passed
    ([1, 0, 1, 0, 0], 2, 3)
    """
    flat = np.asarray(scores, dtype=np.float64).ravel()
    passing = int(np.sum(flat >= threshold))  # NaN never passes
    chosen = max((r for r in sizes if r <= passing), default=0)
    made = guess(flat, bits, guesses_in=chosen, guesses_out=0, tie_break=tie_break)
    return made, passing


@dataclass(frozen=True, kw_only=True, slots=True)
class RuleOutcome:
    """One rule's guesses and bound.

    Attributes:
        rule: ``count`` or ``threshold``.
        made: the guesses and how many were right.
        guesses_in, guesses_out: the guesses of each kind (the bound's ``r`` is
            their sum).
        alpha: the level the rule's bound is computed at (its share of the audit's
            alpha, divided by the grid's size for ``threshold``).
        eps_emp: the rule's lower bound.
        eps_max: its bound with every guess right.
        passed: ``threshold``: the canaries whose score reached the threshold
            (before rounding down to a size of the grid); ``None`` for ``count``.
        bound: the bound (``steinke``, ``fdp`` or ``order``).
        mu_emp: the f-DP bound's largest mu-GDP rejected (``None``: steinke).
        refutes: the f-DP bound rejects the claim's stated curve (its lines with
            its mu-GDP, zCDP or RDP curve; ``False`` for steinke, or without a
            stated profile).
        refutable: it would with every guess right.
    """

    rule: str
    made: Guesses
    guesses_in: int
    guesses_out: int
    alpha: float
    eps_emp: float
    eps_max: float
    passed: int | None = None
    bound: str = "steinke"
    mu_emp: float | None = None
    refutes: bool = False
    refutable: bool = False

    @property
    def guesses(self) -> int:
        return self.guesses_in + self.guesses_out


def _bounded(
    rule: str,
    made: Guesses,
    *,
    guesses_in: int,
    guesses_out: int,
    canaries: int,
    alpha: float,
    delta: float,
    passed: int | None = None,
    bound: str = "steinke",
    claim_epsilon: float | None = None,
    claim_mu: float | None = None,
    claim_curve: ProfileCurve | None = None,
) -> RuleOutcome:
    r = guesses_in + guesses_out
    fdp = bound != "steinke"
    family = "steinke" if not fdp else "fdp"
    profile = claim_mu is not None or claim_curve is not None
    stated = fdp and profile and claim_epsilon is not None
    mu = None if claim_mu is None else float(claim_mu)
    return RuleOutcome(
        rule=rule,
        made=made,
        guesses_in=guesses_in,
        guesses_out=guesses_out,
        alpha=alpha,
        eps_emp=_bound(canaries, r, made.correct, delta, alpha, family),
        eps_max=_bound(canaries, r, r, delta, alpha, family),
        passed=passed,
        bound=bound,
        mu_emp=_mu(canaries, r, made.correct, alpha) if fdp else None,
        refutes=stated
        and _refutes(
            canaries,
            r,
            made.correct,
            alpha,
            float(claim_epsilon or 0.0),
            delta,
            mu,
            claim_curve,
        ),
        refutable=stated
        and _refutes(
            canaries,
            r,
            r,
            alpha,
            float(claim_epsilon or 0.0),
            delta,
            mu,
            claim_curve,
        ),
    )


def apply_rules(
    scores: NDArray[np.float64],
    bits: NDArray[np.int64],
    *,
    rule: GuessRule,
    guesses_in: int,
    guesses_out: int,
    threshold: float | None,
    tie_break: NDArray[np.float64],
    delta: float,
    alpha: float,
    bound: str = "steinke",
    claim_epsilon: float | None = None,
    claim_mu: float | None = None,
    claim_curve: ProfileCurve | None = None,
) -> tuple[RuleOutcome, ...]:
    """Every rule that ``rule`` names, each at its share of ``alpha``, bounded by
    ``bound`` (``steinke``, ``fdp`` or ``order``; resolved, not ``auto``). The f-DP
    bounds also test the claim's curve (``claim_epsilon`` at ``delta`` with
    ``claim_mu`` and ``claim_curve``'s pairs) where a profile is stated.

    ``threshold=None`` (a score without one) leaves ``threshold`` out of ``both``
    (``count`` then gets all of ``alpha``) and refuses ``threshold`` alone.
    """
    if bound not in ("steinke", "fdp", "order"):
        raise InvalidParameterError(
            f"`bound` must be steinke, fdp or order. Got {bound!r}."
        )

    canaries = int(np.asarray(bits).size)
    names = ("count", "threshold") if rule == "both" else (rule,)
    if threshold is None:
        if rule == "threshold":
            raise InvalidParameterError(
                "`guess_rule` must be count or both for this score: it has no "
                "threshold fixed in advance."
            )
        names = ("count",)
    share = alpha / len(names)
    outcomes: list[RuleOutcome] = []
    for name in names:
        if name == "count":
            counts = (
                order_counts(guesses_in, guesses_out)
                if bound == "order"
                else ((guesses_in, guesses_out),)
            )
            for n_in, n_out in counts:
                made = guess(
                    scores,
                    bits,
                    guesses_in=n_in,
                    guesses_out=n_out,
                    tie_break=tie_break,
                )
                outcomes.append(
                    _bounded(
                        "count",
                        made,
                        guesses_in=n_in,
                        guesses_out=n_out,
                        canaries=canaries,
                        alpha=share / len(counts),
                        delta=delta,
                        bound=bound,
                        claim_epsilon=claim_epsilon,
                        claim_mu=claim_mu,
                        claim_curve=claim_curve,
                    )
                )
            continue
        assert threshold is not None
        sizes = threshold_sizes(canaries)
        made, passed = threshold_guess(
            scores, bits, threshold=threshold, sizes=sizes, tie_break=tie_break
        )
        outcomes.append(
            _bounded(
                "threshold",
                made,
                guesses_in=int(np.sum(made.guess == 1)),
                guesses_out=0,
                canaries=canaries,
                alpha=share / len(sizes),
                delta=delta,
                passed=passed,
                bound=bound,
                claim_epsilon=claim_epsilon,
                claim_mu=claim_mu,
                claim_curve=claim_curve,
            )
        )
    return tuple(outcomes)


def best_outcome(outcomes: tuple[RuleOutcome, ...]) -> RuleOutcome:
    """The rule whose bound is the audit's: one that refutes the claim's curve
    first, then the largest eps_emp, the largest mu_emp, the largest attainable
    maximum, then the first named."""
    return max(
        outcomes,
        key=lambda o: (o.refutes, o.eps_emp, o.mu_emp or 0.0, o.eps_max),
    )


@dataclass(frozen=True, kw_only=True, slots=True)
class BoundDecision:
    """What one bound makes of the rules' guesses: the audit's figures had it been
    the configured bound.

    Attributes:
        bound: ``steinke``, ``fdp`` or ``order``.
        outcomes: every rule's guesses and bound (:func:`apply_rules`).
        chosen: the rule whose bound is the audit's (:func:`best_outcome`).
        eps_emp: its eps_emp; with a stated profile under an f-DP bound and the
            claim's curve not rejected, at most the claimed epsilon (the curve is
            the test).
        eps_max: the largest attainable maximum over the rules.
        mu_emp: the f-DP bounds' largest mu-GDP rejected (at most a claimed mu
            unless the curve is rejected); ``None``: steinke.
        refuted: the claim's curve (lines with its mu-GDP, zCDP or RDP curve) is
            rejected; ``None``: steinke, or no profile stated (eps_emp against the
            claim decides).
        refutable: it would be with every guess right (``None`` as ``refuted``).
        curve: what the curve tests beyond the lines (:func:`curve_name`;
            ``None`` as ``refuted``).
    """

    bound: str
    outcomes: tuple[RuleOutcome, ...]
    chosen: RuleOutcome
    eps_emp: float
    eps_max: float
    mu_emp: float | None
    refuted: bool | None
    refutable: bool | None
    curve: str | None = None


def decide_bound(
    outcomes: tuple[RuleOutcome, ...],
    *,
    bound: str,
    claim_epsilon: float,
    claim_mu: float | None,
    claim_curve: ProfileCurve | None = None,
) -> BoundDecision:
    """The audit's figures from ``bound``'s ``outcomes`` (docs/soundness.md, "The
    one-run f-DP bound": a stated mu, zCDP rho or RDP curve under an f-DP bound
    makes the claim's whole curve the test; unrejected, no figure exceeds the
    claim's)."""
    chosen = best_outcome(outcomes)
    eps_emp = chosen.eps_emp
    mu_emp = max((o.mu_emp for o in outcomes if o.mu_emp is not None), default=None)
    name = curve_name(claim_mu, claim_curve)
    profile = bound != "steinke" and name is not None
    refuted = any(o.refutes for o in outcomes) if profile else None
    if profile and not refuted:
        eps_emp = min(eps_emp, claim_epsilon)
        if claim_mu is not None and mu_emp is not None:
            mu_emp = min(mu_emp, float(claim_mu))
    return BoundDecision(
        bound=bound,
        outcomes=outcomes,
        chosen=chosen,
        eps_emp=eps_emp,
        eps_max=max(o.eps_max for o in outcomes),
        mu_emp=mu_emp,
        refuted=refuted,
        refutable=any(o.refutable for o in outcomes) if profile else None,
        curve=name if profile else None,
    )


def every_bound(
    scores: NDArray[np.float64],
    bits: NDArray[np.int64],
    *,
    claim_epsilon: float,
    claim_mu: float | None,
    claim_curve: ProfileCurve | None = None,
    **settings: Any,
) -> dict[str, BoundDecision]:
    """:func:`decide_bound` of each of :data:`BOUNDS` from the same scores, bits and
    guess settings (``settings``: :func:`apply_rules`' keywords but ``bound``).
    Post-processing of one set of scores: the configured bound's entry decides the
    verdict; the others are descriptive (docs/soundness.md, "Every bound's figure
    beside the verdict").
    """
    return {
        bound: decide_bound(
            apply_rules(
                scores,
                bits,
                bound=bound,
                claim_epsilon=claim_epsilon,
                claim_mu=claim_mu,
                claim_curve=claim_curve,
                **settings,
            ),
            bound=bound,
            claim_epsilon=claim_epsilon,
            claim_mu=claim_mu,
            claim_curve=claim_curve,
        )
        for bound in BOUNDS
    }
