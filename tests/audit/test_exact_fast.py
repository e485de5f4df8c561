"""The exact test's fast paths (dpaudit/audit/stats/exact.py, calibrated.py) against
direct, slow computations of the same quantities on random inputs: the grid bound
of the size against SciPy's binomials on every fine interval, the sparse bisections
(:func:`exact.bisect_terms`) against bisections that evaluate every order, and the
calibrated levels' size bounds against alpha. Deterministic (seeded); no statistical
claim, so no failure probability."""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
from scipy import stats

from dpaudit.audit.stats import calibrated, exact, families, levels
from dpaudit.audit.stats.estimators import _eps_from_rates
from dpaudit.audit.stats.profile import (
    ZCDP_GRID,
    ZCDP_SELECTION_GRID,
    ClaimedProfile,
    _renyi_ratios,
    refutation_ratios,
)
from dpaudit.audit.stats.tradeoff import gdp_tradeoff, mu_lower_bound

CP = "clopper_pearson"
DELTA = 1e-5


@functools.lru_cache(maxsize=8)
def _pmf(n: int) -> np.ndarray:
    """SciPy's ``Bin(n, x)`` probabilities of every count, rows: :data:`exact.FINE`."""
    return np.asarray(
        stats.binom.pmf(np.arange(n + 1)[None, :], n, exact.FINE[:, None])
    )


@functools.lru_cache(maxsize=8)
def _cdf(n: int) -> np.ndarray:
    """``P(Bin(n, y) <= m)`` for ``m = -1..n`` (SciPy), rows: :data:`exact.FINE`."""
    m = np.arange(n + 1)[None, :]
    cdf = np.asarray(stats.binom.cdf(m, n, exact.FINE[:, None]))
    return np.concatenate((np.zeros((exact.FINE.size, 1)), cdf), axis=1)


def _direct_bound(g: np.ndarray, f: exact.Boundary, n1: int) -> float:
    """The grid bound :func:`exact.size` computes with ``limit=0`` (every interval
    refined), directly: ``max over fine intervals [x_i, x_{i+1}]`` of
    ``P_{x_i, y_j}(S)`` with ``y_j`` the largest fine rate at most
    ``f(x_{i+1})``, from SciPy's full binomial rows (no window)."""
    j = np.maximum(np.searchsorted(exact.FINE, f(exact.FINE[1:]), side="right") - 1, 0)
    rows = _cdf(n1)[j[:, None], g[None, :] + 1]
    return float(np.max(np.sum(_pmf(g.size - 1)[:-1] * rows, axis=1)))


def _random_case(
    rng: np.random.Generator,
) -> tuple[np.ndarray, exact.Boundary, int, float]:
    """A down-set at a random level (lines or GDP statistic), the region of a
    slightly larger value, the member test rounds and a limit."""
    n0, n1 = (int(n) for n in rng.choice([4, 9, 23, 40], size=2))
    level = int(rng.integers(100, exact.LEVELS.size))
    u0, u1 = exact.corner(n0, CP, level), exact.corner(n1, CP, level)
    v = float(rng.uniform(0.0, 2.0))
    if rng.random() < 0.5:
        g = exact.boundary_counts(u0, u1, lambda a, b: _eps_from_rates(a, b, DELTA) > v)
        boundary = exact.lines_boundary(v + 0.02, DELTA)
    else:
        g = exact.boundary_counts(u0, u1, lambda a, b: mu_lower_bound(a, b) > v)
        boundary = exact.gdp_boundary(v + 0.02)
    return g, boundary, n1, float(rng.choice([0.01, 0.05 / 3, 0.05]))


def test_the_size_bound_equals_a_direct_computation() -> None:
    """With ``limit=0`` the windowed tables give the grid bound of SciPy's full
    binomial rows within 1e-12 (absolute; the windows add at most their outside
    mass, ~1e-15, and never less); with a limit, the same answer to ``<= limit``
    and never below the direct bound (24 random down-sets, 4 to 40 test rounds)."""
    rng = np.random.default_rng(20261127)
    checked = 0
    for _ in range(24):
        g, boundary, n1, limit = _random_case(rng)
        if g[0] < 0:
            continue
        direct = _direct_bound(g, boundary, n1)
        full = exact.size(g, boundary, n1)
        assert direct - 1e-15 <= full <= direct + 1e-12, (full, direct)
        fast = exact.size(g, boundary, n1, limit=limit)
        assert fast >= direct - 1e-15
        assert (fast <= limit) == (direct <= limit), (fast, direct, limit)
        checked += 1
    assert checked >= 12


def _claims() -> list[ClaimedProfile]:
    orders = tuple(float(o) for o in range(2, 40))
    return [
        # PATE-GAN's kind: a linear RDP curve at many orders.
        ClaimedProfile(
            epsilon=1.0,
            delta=DELTA,
            rdp_orders=orders,
            rdp_epsilons=tuple(0.03 * o for o in orders),
        ),
        ClaimedProfile(epsilon=4.0, delta=DELTA, zcdp_rho=0.3),
        ClaimedProfile(
            epsilon=2.0,
            delta=DELTA,
            gdp_mu=0.8,
            zcdp_rho=0.2,
            rdp_orders=(2.0, 4.0, 8.0, 16.0, 32.0),
            rdp_epsilons=(0.6, 1.1, 1.5, 1.8, math.inf),
        ),
        ClaimedProfile(
            epsilon=1.0, delta=DELTA, rdp_orders=(2.0, 3.0), rdp_epsilons=(0.0, 0.5)
        ),
    ]


@pytest.mark.parametrize("claim", _claims())
def test_the_renyi_boundary_is_the_full_bisections(claim: ClaimedProfile) -> None:
    """:func:`calibrated.renyi_boundary` (each rate keeps the orders that can still
    refute) returns the 30-step bisection that evaluates every order, within 1e-12
    (a different step would differ by 2^-30 of the interval), on 600 random rates;
    and each positive result is refuted (a lower bound of the boundary)."""
    rng = np.random.default_rng(7)
    x = np.sort(rng.uniform(0.0, 1.0, 600))
    x[:3] = (0.0, 1e-9, 1.0 - 1e-9)
    lo, hi = np.zeros_like(x), np.clip(1.0 - x, 0.0, 1.0)
    for _ in range(30):
        mid = (lo + hi) / 2.0
        refuted = _renyi_ratios(x, mid, claim, ZCDP_SELECTION_GRID) > 1.0
        lo, hi = np.where(refuted, mid, lo), np.where(refuted, hi, mid)
    fast = calibrated.renyi_boundary(x, claim)
    np.testing.assert_allclose(fast, lo, rtol=0.0, atol=1e-12)
    pos = fast > 0.0
    assert np.all(_renyi_ratios(x[pos], fast[pos], claim, ZCDP_SELECTION_GRID) > 1.0)


@pytest.mark.parametrize("claim", _claims())
def test_the_claims_counts_are_the_full_bisections(claim: ClaimedProfile) -> None:
    """The claim's rejection set from :class:`exact.Terms` equals the bisection on
    the refutation ratio of every region at once, at random levels and sizes."""
    rng = np.random.default_rng(11)
    for _ in range(6):
        n0, n1 = (int(v) for v in rng.integers(2, 300, size=2))
        level = int(rng.integers(0, exact.LEVELS.size))
        u0, u1 = exact.corner(n0, CP, level), exact.corner(n1, CP, level)
        fast = exact.boundary_counts(u0, u1, calibrated._claim_outside(claim))
        direct = exact.boundary_counts(
            u0,
            u1,
            lambda a, b: np.asarray(
                refutation_ratios(a, b, claim, zcdp_orders=ZCDP_GRID) > 1.0
            ),
        )
        np.testing.assert_array_equal(fast, direct)


@pytest.mark.parametrize("claim", _claims()[:3])
def test_the_calibrated_levels_size_is_at_most_alpha(claim: ClaimedProfile) -> None:
    """At the calibrated level the grid bound with every interval refined, and its
    direct computation, are at most alpha; one level up exceeds it (the level is
    the largest), for 30 + 24 test rounds at two alphas."""
    n0, n1 = 30, 24
    for alpha in (0.05, 0.05 / 3):
        level = calibrated.claim_level(claim, n0, n1, alpha=alpha, method=CP)
        assert level is not None

        def counts(lv: int) -> np.ndarray:
            u0, u1 = exact.corner(n0, CP, lv), exact.corner(n1, CP, lv)
            return exact.boundary_counts(u0, u1, calibrated._claim_outside(claim))

        boundary = calibrated._claim_boundary(claim)
        g = counts(level)
        assert exact.size(g, boundary, n1) <= alpha
        assert _direct_bound(g, boundary, n1) <= alpha
        if level + 1 < exact.LEVELS.size:
            up = counts(level + 1)
            assert up[0] >= 0
            assert exact.size(up, boundary, n1, limit=alpha) > alpha * (1.0 - 1e-9)


def test_the_families_levels_keep_their_size() -> None:
    """Each interval of the eps and mu families (25 + 25 test rounds, alpha 0.05)
    has a grid bound at most alpha on the region of its value, computed directly."""
    n, alpha = 25, 0.05
    for kind, delta in (("eps", DELTA), ("mu", 0.0)):
        fam = calibrated.family(kind, n, n, alpha=alpha, delta=delta)
        assert fam.values.size > 10
        for j in range(0, fam.values.size, 12):
            v = float(fam.values[j])
            boundary = (
                exact.lines_boundary(v, delta)
                if kind == "eps"
                else exact.gdp_boundary(v)
            )
            assert _direct_bound(fam.counts[j], boundary, n) <= alpha


def test_gdp_boundary_is_below_the_curve() -> None:
    """The GDP boundary the size is computed on is a lower bound of the curve."""
    x = np.linspace(0.0, 1.0, 101)
    assert np.all(exact.gdp_boundary(1.0)(x) <= gdp_tradeoff(x, mu=1.0))


@pytest.mark.parametrize(
    "claim", [*_claims()[:2], ClaimedProfile(epsilon=1.0, delta=DELTA)]
)
def test_refutes_perfectly_is_the_judges_ratio(claim: ClaimedProfile) -> None:
    """:func:`calibrated.refutes_perfectly` (only the test that decides) answers as
    the full :func:`calibrated.judge` of zero errors does."""
    for n in (2, 3, 7, 16):
        full = calibrated.judge(0, n, 0, n, delta=DELTA, alpha=0.05, profile=claim)
        fast = calibrated.refutes_perfectly(claim, n, n, alpha=0.05, delta=DELTA)
        assert fast == (full.point.ratio > 1.0)


# ------------------------------------------------- computing the same thing once


def _search_claims() -> list[ClaimedProfile]:
    return [*_claims(), ClaimedProfile(epsilon=4.0, delta=DELTA, gdp_mu=0.925)]


def _search(
    claim: ClaimedProfile, n0: int, n1: int, alpha: float, start: int | None = None
) -> tuple[int, np.ndarray] | None:
    """The claim's level by a search from ``start`` (``None``: the plain bisection
    over the levels)."""
    return levels.largest_level(
        n0,
        n1,
        method=CP,
        alpha=alpha,
        outside=calibrated._claim_outside(claim),
        boundary=calibrated._claim_boundary(claim),
        start=start,
    )


@pytest.mark.parametrize("claim", _search_claims())
def test_the_search_from_a_guess_is_the_bisection(claim: ClaimedProfile) -> None:
    """:func:`levels.largest_level` from any start (the first level, the top, the
    eps family's first level, random levels) returns the plain bisection's level and
    rejection set, and so do :func:`calibrated.claim_level` and
    :func:`calibrated.deciding_counts` (4 random sizes of 2 to 60 test rounds and
    alphas from 0.01 to 0.2 per claim)."""
    rng = np.random.default_rng(20261128)
    for _ in range(4):
        n0, n1 = (int(v) for v in rng.integers(2, 61, size=2))
        alpha = float(rng.choice([0.01, 0.025, 0.05 / 3, 0.05, 0.2]))
        plain = _search(claim, n0, n1, alpha)
        assert plain is not None
        first = families.first_level("eps", n0, n1, alpha=alpha, delta=DELTA, method=CP)
        starts = {0, exact.LEVELS.size - 1, plain[0], *rng.integers(0, 211, size=3)}
        for start in sorted({*starts, *([] if first is None else [first])}):
            found = _search(claim, n0, n1, alpha, int(start))
            assert found is not None and found[0] == plain[0], (start, found, plain)
            np.testing.assert_array_equal(found[1], plain[1])
        assert calibrated.claim_level(claim, n0, n1, alpha=alpha, method=CP) == plain[0]
        counts = calibrated.deciding_counts(claim, n0, n1, alpha=alpha, delta=DELTA)
        np.testing.assert_array_equal(counts, plain[1])


@pytest.mark.parametrize("claim", _search_claims()[::2])
def test_the_levels_that_pass_are_a_prefix(claim: ClaimedProfile) -> None:
    """At every level of :data:`exact.LEVELS` the claim's test (its size bound at
    most alpha) passes exactly up to the calibrated level and fails above it: the
    monotonicity that lets a search from a guess stand for the bisection (9 + 7 and
    23 + 30 test rounds)."""
    outside = calibrated._claim_outside(claim)
    boundary = calibrated._claim_boundary(claim)
    for n0, n1, alpha in ((9, 7, 0.05), (23, 30, 0.01)):
        limit = alpha * (1.0 - 1e-9)
        passed = []
        for level in range(exact.LEVELS.size):
            u0, u1 = exact.corner(n0, CP, level), exact.corner(n1, CP, level)
            g = exact.boundary_counts(u0, u1, outside)
            passed.append(g[0] < 0 or exact.size(g, boundary, n1, limit=limit) <= limit)
        top = calibrated.claim_level(claim, n0, n1, alpha=alpha, method=CP)
        assert top is not None and 0 < top < exact.LEVELS.size - 1
        assert passed == [level <= top for level in range(exact.LEVELS.size)]


def _direct_family(
    kind: str, n0: int, n1: int, alpha: float, delta: float, until: float
) -> tuple[list[float], list[int], list[list[int]]]:
    """A family computed afresh, as the loop before the growing lists did."""
    values: list[float] = []
    found_levels: list[int] = []
    counts: list[list[int]] = []
    level: int | None = None
    j = 0
    while j == 0 or values[-1] <= until:
        rule = max(j - 1, 0) * 0.02
        stat = families._statistic(kind, delta)
        found = levels.largest_level(
            n0,
            n1,
            method=CP,
            alpha=alpha,
            outside=lambda a, b, r=rule, s=stat: np.asarray(s(a, b) > r),
            boundary=families._boundary(kind, j * 0.02, delta),
            below=level,
            guess=families._guess(kind, rule, delta),
        )
        if found is None or found[1][0] < 0:
            break
        level = found[0]
        values.append(j * 0.02)
        found_levels.append(level)
        counts.append(found[1].tolist())
        j += 1
    return values, found_levels, counts


@pytest.mark.parametrize("whole_first", [False, True])
def test_a_familys_cuts_are_computed_once_and_equal(whole_first: bool) -> None:
    """Every cut of a family (``until``) equals the family computed afresh up to it,
    whether the whole family or a cut is asked for first, and the mu family is the
    same object at any delta (25 + 20 test rounds, alpha 0.05)."""
    n0, n1, alpha = 25, 20, 0.05
    calibrated.clear_caches()
    cuts = [-1.0, 0.0, 0.5, 1.01, math.inf]
    for kind, delta in (("eps", DELTA), ("mu", DELTA)):
        for until in [math.inf, *cuts] if whole_first else cuts:
            fam = calibrated.family(kind, n0, n1, alpha=alpha, delta=delta, until=until)
            values, found, counts = _direct_family(kind, n0, n1, alpha, delta, until)
            assert fam.values.tolist() == values and fam.levels.tolist() == found
            assert fam.counts.tolist() == counts
    mu = calibrated.family("mu", n0, n1, alpha=alpha, delta=0.0)
    assert calibrated.family("mu", n0, n1, alpha=alpha, delta=DELTA) is mu
    first = families.first_level("eps", n0, n1, alpha=alpha, delta=DELTA, method=CP)
    assert first == int(
        calibrated.family("eps", n0, n1, alpha=alpha, delta=DELTA).levels[0]
    )


def _direct_table(fam: calibrated.Family) -> np.ndarray:
    """:meth:`Family.table` as computed before: every interval against every count."""
    out = np.zeros((fam.n0 + 1, fam.n1 + 1))
    fn = np.arange(fam.n1 + 1)
    stat = families._statistic(fam.kind, fam.delta)
    j = (fam.counts[:, :, None] >= fn[None, None, :]).sum(axis=0) - 1
    for level in np.unique(fam.levels):
        u0 = exact.corner(fam.n0, fam.method, int(level))
        u1 = exact.corner(fam.n1, fam.method, int(level))
        rows, cols = np.nonzero((j >= 0) & (fam.levels[np.maximum(j, 0)] == level))
        out[rows, cols] = np.minimum(
            stat(u0[rows], u1[cols]), fam.values[j[rows, cols]]
        )
    return out


def test_the_familys_table_is_the_direct_one() -> None:
    """:meth:`Family.table` (intervals counted from histograms) equals the direct
    count over every interval bitwise, and :meth:`Family.value` at sampled counts
    (eps and mu families, 60 + 45 test rounds, two alphas)."""
    for alpha in (0.05, 0.01):
        for kind in ("eps", "mu"):
            fam = calibrated.family(kind, 60, 45, alpha=alpha, delta=DELTA)
            table = fam.table()
            np.testing.assert_array_equal(table, _direct_table(fam))
            for fp, fn in ((0, 0), (3, 7), (60, 0), (0, 45), (30, 20), (59, 44)):
                assert table[fp, fn] == fam.value(fp, fn)


@pytest.mark.parametrize("claim", _search_claims())
def test_one_candidate_term_bisects_as_every_term(claim: ClaimedProfile) -> None:
    """:func:`exact.bisect_terms` with the terms' ratios (a candidate term per row,
    checked at its last inside point) returns bitwise what it returns with their
    answers alone (every term kept while it can be over): the Renyi boundary on 900
    rates and the rejection sets at 4 levels of 400 + 400 and 37 + 120 rounds."""
    terms = calibrated._claim_terms(claim, ZCDP_SELECTION_GRID, renyi_only=True)
    if terms.count:
        x = exact.GRID[1:]
        both = []
        for plain in (False, True):
            t = exact.Terms(terms.count, terms.over) if plain else terms
            lo, hi = np.zeros_like(x), np.clip(1.0 - x, 0.0, 1.0)
            both.append(exact.bisect_terms(lo, hi, t, lambda i, y: (x[i], y), steps=30))
        np.testing.assert_array_equal(*both)
    outside = calibrated._claim_outside(claim)
    for n0, n1 in ((400, 400), (37, 120)):
        for level in (60, 150, 190, 205):
            u0, u1 = exact.corner(n0, CP, level), exact.corner(n1, CP, level)
            fast = exact.boundary_counts(u0, u1, outside)
            plain = exact.boundary_counts(
                u0, u1, exact.Terms(outside.count, outside.over)
            )
            np.testing.assert_array_equal(fast, plain)
