"""eps_emp, mu_emp and the verdict from the exact test (:mod:`dpaudit.audit.stats.exact`).

Pure functions and frozen dataclasses; the families and calibrated levels are cached
per process (they depend only on the test sizes, the level, delta and the claim).

*The families.* eps_emp and mu_emp come from families of exact tests, one per
interval of values (:mod:`dpaudit.audit.stats.families`, which states them).

*The claim's test.* For a claim that states a profile, the level is calibrated on the
claim's own region (every stated region at once); the verdict is VIOLATION iff the
corner at that level lies outside it (:func:`judge_counts`). A claim of the lines
alone is tested the same way, on the lines' own region (its trade-off curve): its
rejection set holds the family's rejection of its epsilon (eps_emp > epsilon), so
it refutes whenever the family would, and more often (docs/soundness.md, "A claim of
the lines alone"). Without a claim, the families alone.
"""

from __future__ import annotations

import functools
import math
import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpaudit.audit.stats import exact, families, levels, memo
from dpaudit.audit.stats.estimators import _eps_from_rates
from dpaudit.audit.stats.families import STEPS, Family, family
from dpaudit.audit.stats.profile import (
    ZCDP_GRID,
    ZCDP_SELECTION_GRID,
    ClaimedProfile,
    PointTest,
    _renyi_ratios,
    judge_point,
    refutation_ratios,
)
from dpaudit.audit.stats.tradeoff import box_renyi, mu_lower_bound

__all__ = [
    "STEPS",
    "Family",
    "applies",
    "claim_level",
    "family",
    "judge_counts",
]

applies = exact.applies

# ------------------------------------------------------------------ the claim's test


def _scaled(stat: NDArray[np.float64], claimed: float) -> NDArray[np.float64]:
    """``stat / claimed`` as the refutation ratio computes it (a claim of 0: inf for
    any positive ``stat``, else 0); over 1 iff the claim is refuted."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if claimed > 0.0:
            return np.asarray(stat / claimed, np.float64)
        return np.asarray(np.where(stat > 0.0, np.inf, 0.0), np.float64)


def _claim_terms(
    claim: ClaimedProfile, zcdp_orders: NDArray[np.float64], *, renyi_only: bool
) -> exact.Terms:
    """The claim's outside as :class:`exact.Terms`, each term computed as
    :func:`~dpaudit.audit.stats.profile.refutation_ratios` computes it (so a corner
    is outside iff its ratio exceeds 1): the lines and the GDP curve (unless
    ``renyi_only``), each finite stated RDP order, and with a rho each order of
    ``zcdp_orders``."""
    finite = [
        (o, e) for o, e in zip(claim.rdp_orders, claim.rdp_epsilons) if e < math.inf
    ]
    lead = [] if renyi_only else ["lines"] + ([] if claim.gdp_mu is None else ["gdp"])
    zcdp = zcdp_orders if claim.zcdp_rho is not None else np.zeros(0)
    orders = np.concatenate(([o for o, _ in finite], zcdp)).astype(np.float64)
    # Per Renyi term: the divisor of its divergence (its epsilon, or lambda rho).
    first_z = len(finite)

    def ratio(
        a: NDArray[np.float64], b: NDArray[np.float64], t: NDArray[np.intp]
    ) -> NDArray[np.float64]:
        out = np.zeros(t.size)
        for k, name in enumerate(lead):
            pick = np.flatnonzero(t == k)
            if name == "lines":
                stat = _eps_from_rates(a[pick], b[pick], claim.delta)
                out[pick] = _scaled(stat, claim.epsilon)
            else:
                stat = mu_lower_bound(a[pick], b[pick])
                out[pick] = _scaled(stat, claim.gdp_mu or 0.0)
        pick = np.flatnonzero(t >= len(lead))
        if pick.size:
            r = t[pick] - len(lead)
            div = box_renyi(a[pick], b[pick], orders[r])
            rdp = r < first_z
            eps = np.array([e for _, e in finite] or [1.0])[np.where(rdp, r, 0)]
            with np.errstate(divide="ignore", invalid="ignore"):
                # RDP: D / eps(lambda); zCDP: (D / lambda) / rho, as the ratios are.
                by_eps = np.where(
                    eps > 0.0, div / eps, np.where(div > 0.0, np.inf, 0.0)
                )
                z = div / orders[r]
                rho = claim.zcdp_rho or 0.0
                z = z / rho if rho > 0.0 else np.where(z > 0.0, np.inf, 0.0)
            out[pick] = np.where(rdp, by_eps, z)
        return out

    return exact.Terms(len(lead) + orders.size, ratio=ratio)


def _claim_outside(claim: ClaimedProfile) -> exact.Terms:
    return _claim_terms(claim, ZCDP_GRID, renyi_only=False)


def _at(
    x: NDArray[np.float64],
) -> Callable[
    [NDArray[np.intp], NDArray[np.float64]],
    tuple[NDArray[np.float64], NDArray[np.float64]],
]:
    return lambda i, y: (x[i], y)


def renyi_boundary(
    x: NDArray[np.float64], claim: ClaimedProfile
) -> NDArray[np.float64]:
    """Per rate ``x``, the lower end of a 30-step bisection of ``y`` in
    ``[0, 1 - x]`` for the boundary of the claim's Renyi regions (RDP at its finite
    orders, zCDP on :data:`ZCDP_SELECTION_GRID`): ``(x, y)`` is refuted when some
    order's ratio (:func:`~dpaudit.audit.stats.profile._renyi_ratios`) exceeds 1.
    Each lower end it moves to is refuted by an order's ratio (computed as with every
    order: :func:`exact.bisect_terms`), so the result is a lower bound of the
    boundary."""
    terms = _claim_terms(claim, ZCDP_SELECTION_GRID, renyi_only=True)
    out = []
    for s in range(0, x.size, 256):  # the rates are independent: in parts (memory)
        part = x[s : s + 256]
        lo, hi = np.zeros_like(part), np.clip(1.0 - part, 0.0, 1.0)
        out.append(exact.bisect_terms(lo, hi, terms, _at(part), steps=30))
    return np.concatenate(out) if out else np.zeros(0)


@functools.lru_cache(maxsize=64)
def _claim_boundary(claim: ClaimedProfile) -> exact.Boundary:
    """A lower bound of the boundary of every region the claim states at once: the
    largest of the lines', the GDP curve's and the Renyi regions' (bisection, its
    lower end; zCDP on :data:`ZCDP_SELECTION_GRID` only, a larger region, so a lower
    boundary). Values are kept per rate: the size is bounded on the same grids."""
    lines = exact.lines_boundary(claim.epsilon, claim.delta)
    gdp = None if claim.gdp_mu is None else exact.gdp_boundary(claim.gdp_mu)
    renyi = claim.zcdp_rho is not None or bool(claim.rdp_orders)
    known: dict[float, float] = {}

    def compute(x: NDArray[np.float64]) -> NDArray[np.float64]:
        y = lines(x)
        if gdp is not None:
            y = np.maximum(y, gdp(x))
        if renyi:
            y = np.maximum(y, renyi_boundary(x, claim))
        return y

    def f(x: NDArray[np.float64]) -> NDArray[np.float64]:
        keys = x.tolist()
        missing = sorted({k for k in keys if k not in known})
        if missing:
            known.update(zip(missing, compute(np.asarray(missing)).tolist()))
        return np.asarray([known[k] for k in keys], np.float64)

    return f


@functools.lru_cache(maxsize=256)
def _claim_test(
    claim: ClaimedProfile, n0: int, n1: int, alpha: float, method: str
) -> tuple[int, NDArray[np.int64]] | None:
    """:func:`claim_level` and its rejection set (``g``, read-only). The search
    starts at the eps family's first level (``v_0 = 0``: the test of the lines at
    epsilon 0, within a few levels of the claim's on every claim tried, and kept for
    the family the audit computes next); the answer does not depend on the start
    (:mod:`dpaudit.audit.stats.levels`). A store installed with
    :func:`dpaudit.audit.stats.memo.use_store` keeps the level between processes; a
    kept level is used only where
    :func:`~dpaudit.audit.stats.levels.is_largest_level` finds it is the search's
    answer (its rejection set is the check's, never read), else it is searched."""
    parts = (claim, n0, n1, alpha, method)
    search: dict[str, Any] = {
        "method": method,
        "alpha": alpha,
        "outside": _claim_outside(claim),
        "boundary": _claim_boundary(claim),
    }
    kept = memo.load("claim_test", *parts)
    if kept is not None and set(kept) == {"level"} and kept["level"].shape == ():
        level = kept["level"]
        if level.dtype == np.int64:
            # Used only where it is the level the search finds (one or two tests).
            ok, g = levels.is_largest_level(int(level), n0, n1, **search)
            if ok:
                if g is None:
                    return None
                g.setflags(write=False)
                return int(level), g
    found = levels.largest_level(
        n0,
        n1,
        **search,
        start=families.first_level(
            "eps", n0, n1, alpha=alpha, delta=claim.delta, method=method
        ),
    )
    if found is not None:
        found[1].setflags(write=False)
    memo.save(
        "claim_test",
        parts,
        {"level": np.asarray(-1 if found is None else found[0], np.int64)},
    )
    return found


def claim_level(
    claim: ClaimedProfile, n0: int, n1: int, *, alpha: float, method: str
) -> int | None:
    """The calibrated level (an index into :data:`exact.LEVELS`) of the test of
    ``claim``'s whole region; ``None`` when no level keeps the size at ``alpha``."""
    found = _claim_test(claim, n0, n1, alpha, method)
    return None if found is None else found[0]


def _corner_ratio(
    fp: int, n0: int, fn: int, n1: int, *, claim: ClaimedProfile, alpha: float
) -> tuple[float, float, float] | None:
    """The corner at :func:`claim_level` and its ratio against every stated region
    (zCDP on :data:`ZCDP_GRID`, as calibrated); ``None`` without a valid level."""
    level = claim_level(claim, n0, n1, alpha=alpha, method="clopper_pearson")
    if level is None:  # pragma: no cover - LEVELS[0] = 1e-9 is always valid
        return None
    a = float(exact.corner(n0, "clopper_pearson", level)[fp])
    b = float(exact.corner(n1, "clopper_pearson", level)[fn])
    return a, b, float(refutation_ratios(a, b, claim, zcdp_orders=ZCDP_GRID))


def judge_counts(
    fp: int, n0: int, fn: int, n1: int, *, claim: ClaimedProfile, alpha: float
) -> PointTest:
    """The claim's calibrated test of these counts: the corner at
    :func:`claim_level`, judged against every stated region; the ratio is the one
    the level was calibrated with (zCDP on :data:`ZCDP_GRID`), so ``ratio > 1`` iff
    the counts lie in the calibrated rejection set."""
    found = _corner_ratio(fp, n0, fn, n1, claim=claim, alpha=alpha)
    if found is None:  # pragma: no cover - LEVELS[0] = 1e-9 is always valid
        return judge_point(1.0, 1.0, claim)
    a, b, ratio = found
    point = judge_point(a, b, claim)
    regions = point.regions_violated if ratio > 1.0 else ()
    if ratio > 1.0 and claim.zcdp_rho is not None:
        z = float(_renyi_ratios(np.asarray(a), np.asarray(b), claim)) > 1.0
        regions = tuple(r for r in regions if z or not r.startswith("zcdp@"))
    return replace(point, ratio=ratio, regions_violated=regions)


# ----------------------------------------------------------------- what an audit uses


def _interval(kind: str, value: float, size: int) -> int:
    """The index of the interval holding ``value`` (the last one past the end)."""
    steps = value / STEPS[kind]  # a claim of 1e308 overflows here: past the end
    if not math.isfinite(steps):
        return max(size - 1, 0)
    return min(max(math.ceil(steps - 1e-9), 0), max(size - 1, 0))


def _families(n0: int, n1: int, alpha: float, delta: float) -> tuple[Family, Family]:
    return (
        family("eps", n0, n1, alpha=alpha, delta=delta),
        family("mu", n0, n1, alpha=alpha, delta=0.0),
    )


def deciding_level(
    profile: ClaimedProfile | None, n0: int, n1: int, *, alpha: float, delta: float
) -> float:
    """The per-rate level of the test that decides on ``n0`` + ``n1`` test rounds:
    the claim's calibrated level (any claim: with a profile or of the lines alone),
    or without a claim the eps family's first interval's level. Threshold selection on
    validation rounds uses it."""
    if profile is not None:
        claim = replace(profile, delta=delta)
        level = claim_level(claim, n0, n1, alpha=alpha, method="clopper_pearson")
        return float(exact.LEVELS[0 if level is None else level])
    eps = _families(n0, n1, alpha, delta)[0]
    if eps.levels.size == 0:
        return float(exact.LEVELS[0])
    return float(exact.LEVELS[eps.levels[0]])


@functools.lru_cache(maxsize=256)
def _deciding_counts(
    profile: ClaimedProfile | None, n0: int, n1: int, alpha: float, delta: float
) -> NDArray[np.int64]:
    outside: exact.Outside | exact.Terms
    if profile is not None:
        claim = replace(profile, delta=delta)
        found = _claim_test(claim, n0, n1, alpha, "clopper_pearson")
        if found is not None:  # the counts its level was calibrated with
            return found[1]
        outside = _claim_outside(claim)
    else:

        def outside(
            a: NDArray[np.float64], b: NDArray[np.float64]
        ) -> NDArray[np.bool_]:
            return np.asarray(_eps_from_rates(a, b, delta) > 0.0)

    level = deciding_level(profile, n0, n1, alpha=alpha, delta=delta)
    index = int(np.argmin(np.abs(exact.LEVELS - level)))
    u0 = exact.corner(n0, "clopper_pearson", index)
    u1 = exact.corner(n1, "clopper_pearson", index)
    out = exact.boundary_counts(u0, u1, outside)
    out.setflags(write=False)
    return out


def deciding_counts(
    profile: ClaimedProfile | None, n0: int, n1: int, *, alpha: float, delta: float
) -> NDArray[np.int64]:
    """The rejection set of the test that decides (as :func:`deciding_level`):
    ``g[k0]`` the largest FN count it rejects with ``k0`` FPs (-1: none); without a
    claim, the corners whose eps_lo exceeds 0 at the eps family's first level. Threshold selection maximises the
    probability of landing in it (:func:`~dpaudit.audit.stats.thresholds.plug_in_power`)
    where that probability reaches one half at the validation rates, and the expected
    reported bound otherwise (:func:`~dpaudit.audit.stats.thresholds.select_threshold`)."""
    return _deciding_counts(profile, n0, n1, alpha, delta)


@dataclass(frozen=True, kw_only=True, slots=True)
class ExactResult:
    """One attack's figures from the exact test.

    Attributes:
        eps_emp: the eps family's lower bound (at most the claimed epsilon unless
            the claim is refuted).
        mu_emp: the mu family's (at most a claimed mu unless refuted).
        eps_max_attainable: ``eps_emp`` of a perfect attack (no claim).
        mu_max_attainable: ``mu_emp`` of a perfect attack.
        point: the deciding test's corner, ratio and regions (``eps_lo`` and
            ``mu_emp`` set to the two above).
    """

    eps_emp: float
    mu_emp: float
    eps_max_attainable: float
    mu_max_attainable: float
    point: PointTest


def judge(
    fp: int,
    n0: int,
    fn: int,
    n1: int,
    *,
    delta: float,
    alpha: float,
    profile: ClaimedProfile | None = None,
) -> ExactResult:
    """The exact test of ``fp`` of ``n0`` and ``fn`` of ``n1`` test errors against
    ``profile`` (at ``delta``; ``None``: no claim, the figures alone).

    A claim with a profile is decided by its calibrated test (:func:`judge_counts`);
    where it is not refuted, eps_emp and mu_emp are reported at most the claimed
    epsilon and mu (a smaller lower bound is still one), so no figure contradicts the
    verdict. A claim of the lines alone is decided by the same test on its lines
    (where it is not refuted eps_emp is at most epsilon already: the family's
    rejection of epsilon lies in the test's rejection set; where it is, eps_emp may
    be at most epsilon too: the family pays for a bound over every epsilon at once).

    >>> r = judge(0, 400, 0, 400, delta=1e-5, alpha=0.05 / 3)
    >>> round(r.eps_emp, 2), round(r.mu_emp, 2), r.eps_emp == r.eps_max_attainable
    (4.44, 4.85, True)
    """
    eps, mu = _families(n0, n1, alpha, delta)
    eps_emp, mu_emp = eps.value(fp, fn), mu.value(fp, fn)
    top_eps, top_mu = eps.value(0, 0), mu.value(0, 0)
    if profile is not None:
        claim = replace(profile, delta=delta)
        point = judge_counts(fp, n0, fn, n1, claim=claim, alpha=alpha)
        if point.ratio <= 1.0:
            eps_emp = min(eps_emp, claim.epsilon)
            if claim.gdp_mu is not None:
                mu_emp = min(mu_emp, claim.gdp_mu)
        point = replace(point, eps_lo=eps_emp, mu_emp=mu_emp)
    else:
        if eps.levels.size:
            a, b = eps.corner(eps.levels.size - 1, fp, fn)
        else:
            a, b = 1.0, 1.0
        point = PointTest(
            fpr_upper=a,
            fnr_upper=b,
            eps_lo=eps_emp,
            mu_emp=mu_emp,
            ratio=0.0,
            regions_violated=(),
        )
    return ExactResult(
        eps_emp=eps_emp,
        mu_emp=mu_emp,
        eps_max_attainable=top_eps,
        mu_max_attainable=top_mu,
        point=point,
    )


def refutes_perfectly(
    profile: ClaimedProfile, n0: int, n1: int, *, alpha: float, delta: float
) -> bool:
    """Whether a perfect attack (no test error) refutes the claim on these rounds:
    the ratio :func:`judge` gives, computed without the figures it does not need
    (the claim's calibrated test alone)."""
    claim = replace(profile, delta=delta)
    found = _corner_ratio(0, n0, 0, n1, claim=claim, alpha=alpha)
    if found is None:  # pragma: no cover - LEVELS[0] = 1e-9 is always valid
        return judge_counts(0, n0, 0, n1, claim=claim, alpha=alpha).ratio > 1.0
    return found[2] > 1.0


def family_counts(
    epsilon: float, n0: int, n1: int, *, alpha: float, delta: float
) -> NDArray[np.int64]:
    """The rejection set of ``eps_emp > epsilon`` (the eps family's rule; a claim of
    the lines alone was decided by it before its own test): ``g[k0]`` the largest FN
    count with ``eps_emp > epsilon`` at ``k0`` FPs (-1: none). The claim's test
    (:func:`deciding_counts`) rejects every count it holds."""
    table = families.family_table("eps", n0, n1, alpha=alpha, delta=delta)
    over = table > epsilon  # a down-set: eps_emp decreases with either count
    g = np.where(over.any(axis=1), over.shape[1] - 1 - np.argmax(over[:, ::-1], 1), -1)
    return np.asarray(g, np.int64)


def eps_max_attainable(n0: int, n1: int, *, alpha: float, delta: float) -> float:
    """The largest eps_emp of the exact test on these rounds (a perfect attack).

    >>> round(eps_max_attainable(400, 400, alpha=0.05, delta=1e-5), 2)
    4.69
    """
    return _families(n0, n1, alpha, delta)[0].value(0, 0)


def mu_max_attainable(n0: int, n1: int, *, alpha: float) -> float:
    """The largest mu_emp of the exact test on these rounds (a perfect attack)."""
    return _families(n0, n1, alpha, 0.0)[1].value(0, 0)


def rounds_needed(
    *,
    eps_claimed: float,
    delta: float,
    alpha: float,
    split: tuple[float, float, float] = (0.4, 0.2, 0.4),
    max_rounds: int = 10_000_000,
) -> int | None:
    """The fewest rounds per world whose perfect attack refutes ``eps_claimed`` by
    the exact test (eps_emp > epsilon), split as
    :func:`~dpaudit.audit.stats.estimators.rounds_needed` splits them.

    With 7 + 7 test rounds and no error the exact test refutes epsilon 1 (no
    (1, 1e-5)-DP mechanism makes no error in 14 rounds with probability above 0.0125),
    where the per-rate box needs 12 + 12 (30 rounds per world):

    >>> rounds_needed(eps_claimed=1.0, delta=1e-5, alpha=0.05)
    16
    """
    from dpaudit.audit.stats.estimators import eps_max_attainable as box_max
    from dpaudit.audit.stats.sizing import fewest_rounds

    def refutes(n: int) -> bool:
        if not applies(n, n):  # the per-rate box beyond the exact test's sizes
            return box_max(n, n, delta=delta, alpha=alpha) > eps_claimed
        until = eps_claimed + STEPS["eps"]
        fam = family("eps", n, n, alpha=alpha, delta=delta, until=until)
        return fam.value(0, 0) > eps_claimed

    # The box's answer (cheap) is a close guess: the search starts there.
    guess, lo = 1, 0
    while box_max(guess, guess, delta=delta, alpha=alpha) <= eps_claimed:
        if guess >= max_rounds:
            return None  # not even the box at the search limit: none feasible
        lo, guess = guess, min(2 * guess, max_rounds)
    while guess - lo > 1:
        mid = (lo + guess) // 2
        if box_max(mid, mid, delta=delta, alpha=alpha) > eps_claimed:
            guess = mid
        else:
            lo = mid
    return fewest_rounds(refutes, split=split, max_rounds=max_rounds, start=guess)


def clear_caches() -> None:
    """Empties every per-process cache of the exact test (its tables, levels and
    families): what a fresh process would compute (``benchmarks/exact_cost.py``)."""
    for module in (exact, families, sys.modules[__name__]):
        for value in vars(module).values():
            if isinstance(value, functools._lru_cache_wrapper):
                value.cache_clear()
