"""The exact size of the audit's test on a claimed region, and its calibrated level.

Pure functions: no I/O, no random numbers; float64 throughout; the binomial tables
and calibrated levels are cached per process (they depend only on the test sizes, the
level and the region).

The test. An attack's test rounds give ``FP ~ Bin(n0, x)`` and ``FN ~ Bin(n1, y)``,
independent, with ``(x, y)`` its true error rates. A claim allows a region
``R = {(x, y): y >= f(x)}`` of them, upward closed with ``f`` non-increasing
(:mod:`dpaudit.audit.stats.profile`). The test rejects on a *down-set* ``S`` of counts
(fewer errors, more evidence): the counts whose Clopper-Pearson corner at a per-rate
level ``a`` lies outside the region. ``P_{x, y}(S)`` decreases in both rates (each
binomial is stochastically increasing in its rate), so the size
``sup over R of P(S)`` is attained on the boundary ``y = f(x)``; between two grid
points ``x_i <= x <= x_{i+1}``, ``P_{x, f(x)}(S) <= P_{x_i, f(x_{i+1})}(S)`` since ``f``
decreases, and a lower bound of ``f(x_{i+1})`` on the grid of rates only raises the
bound. :func:`size` is this rigorous upper bound (counts out of the binomials'
computed range add their whole mass);
:func:`dpaudit.audit.stats.levels.largest_level` the largest level of :data:`LEVELS`
whose size is at most the attack's ``alpha`` (docs/soundness.md, "The exact test of
the claimed region").
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpaudit.audit.stats.estimators import rate_upper_bounds
from dpaudit.audit.stats.rejection import (
    Guess,
    Outside,
    Terms,
    bisect_terms,
    boundary_counts,
)

__all__ = [
    "EXACT_MAX_N",
    "GRID",
    "LEVELS",
    "Guess",
    "Outside",
    "Terms",
    "applies",
    "bisect_terms",
    "boundary_counts",
    "corner",
    "size",
]

#: The most test rounds per world the exact test is computed for: its tables grow
#: as the grid times the rounds (above it the audit keeps the per-rate box, valid and
#: more cautious; :func:`applies`).
EXACT_MAX_N = 5000


def applies(n0: int, n1: int) -> bool:
    """Whether the exact test is computed for ``n0`` + ``n1`` test rounds."""
    return 0 < n0 <= EXACT_MAX_N and 0 < n1 <= EXACT_MAX_N


#: The per-rate levels a calibrated test may use: log-spaced, each 10% above the
#: last, from 1e-9 to 0.5 (a one-sided bound at 0.5 is the median).
LEVELS: NDArray[np.float64] = np.geomspace(1e-9, 0.5, 211)

#: The fine grid of true rates (FPRs and FNRs alike): 0, 1 and the logistic of
#: -18 .. 18 in steps of 0.005 (0.5% apart near 0 and 1).
FINE: NDArray[np.float64] = np.concatenate(
    ([0.0], 1.0 / (1.0 + np.exp(-np.linspace(-18.0, 18.0, 7201))), [1.0])
)
#: The coarse grid the size is first bounded on: every eighth fine rate (0 and 1
#: kept); an interval whose coarse bound exceeds the level is bounded again on the
#: eight fine intervals it holds.
GRID: NDArray[np.float64] = FINE[::8]
_STEP = 8


#: Sizes are compared with ``alpha (1 - _SLACK)``: the sums' rounding is ~1e-15.
_SLACK = 1e-9
#: The cheap bounds of :meth:`_Table.bounds` are compared with ``limit / 2`` after
#: raising them by this much (their rounding is ~1e-13 at most).
_MARGIN = 1e-6


def upper_bounds_at(n: int, method: str, level: float) -> NDArray[np.float64]:
    """The one-sided upper bounds of ``k = 0..n`` errors out of ``n`` at the
    per-rate ``level`` (any float in (0, 1); the audit uses :func:`corner`)."""
    k = np.arange(n + 1)
    return rate_upper_bounds(k, np.full(n + 1, n), level, method)


@functools.lru_cache(maxsize=1024)
def corner(n: int, method: str, level: int) -> NDArray[np.float64]:
    """The one-sided upper bounds of ``k = 0..n`` errors out of ``n`` at
    ``LEVELS[level]`` (read-only)."""
    out = upper_bounds_at(n, method, float(LEVELS[level]))
    out.setflags(write=False)
    return out


def _window(n: int, rates: NDArray[np.float64]) -> tuple[NDArray[np.int64], int]:
    """Per rate, the first count of a window of ``width`` counts holding all but a
    negligible mass of ``Bin(n, x)`` (8 standard deviations and 8 counts either
    side; what falls outside is added whole, so the window only affects tightness).
    One width for all, the widest (at rate 1/2): a row's values do not depend on
    the rates computed with it."""
    half = 8.0 * np.sqrt(n * rates * (1.0 - rates)) + 8.0
    lo = np.clip(np.floor(n * rates - half), 0, n).astype(np.int64)
    width = int(min(n + 1, np.ceil(2.0 * (8.0 * np.sqrt(n * 0.25) + 8.0)) + 2))
    return np.minimum(lo, n + 1 - width), width


def _cdf_at(
    n: int, rates: NDArray[np.float64], m: NDArray[np.float64]
) -> NDArray[np.float64]:
    """``P(Bin(n, x) <= m)`` (broadcast), exact at the edges (``m < 0``, ``m >= n``,
    ``x`` 0 or 1), from the regularised incomplete beta (elementwise: the value of
    one ``(x, m)`` does not depend on the others)."""
    from scipy import special

    x, mm = np.broadcast_arrays(rates, m)
    with np.errstate(invalid="ignore"):
        cdf = special.bdtr(np.clip(mm, 0, max(n - 1, 0)), n, x)
    cdf = np.where(x == 0.0, 1.0, np.where(x == 1.0, 0.0, cdf))
    return np.asarray(np.where(mm < 0, 0.0, np.where(mm >= n, 1.0, cdf)), np.float64)


def _sf_at(
    n: int, rates: NDArray[np.float64], m: NDArray[np.float64]
) -> NDArray[np.float64]:
    """``P(Bin(n, x) > m)``, as :func:`_cdf_at`."""
    from scipy import special

    x, mm = np.broadcast_arrays(rates, m)
    with np.errstate(invalid="ignore"):
        sf = special.bdtrc(np.clip(mm, 0, max(n - 1, 0)), n, x)
    sf = np.where(x == 0.0, 0.0, np.where(x == 1.0, 1.0, sf))
    return np.asarray(np.where(mm < 0, 1.0, np.where(mm >= n, 0.0, sf)), np.float64)


#: Rows of a table computed at once (bounds the temporaries: a few MiB).
_CHUNK = 256


def _pmf_rows(
    n0: int, rates: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.int64], NDArray[np.float64]]:
    """Per rate ``x_i``: the ``Bin(n0, x_i)`` probabilities of the ``width`` counts
    from ``lo_i`` (:func:`_window`, one width for the rates given together), ``lo``,
    and the mass outside the window (added whole: an upper bound, exact to rounding).
    Each probability is the difference of whichever tail is smaller (no cancellation
    against 1); only the tails used are computed."""
    lo, width = _window(n0, rates)
    pmf = np.empty((rates.size, width))
    tail = np.empty(rates.size)
    for s in range(0, rates.size, _CHUNK):
        x = rates[s : s + _CHUNK, None]
        edges = (lo[s : s + _CHUNK, None] + np.arange(-1, width)[None, :]).astype(
            np.float64
        )
        cdf = _cdf_at(n0, x, edges)
        # sf at edge e is used where cdf[e + 1] >= 0.5 (by edges e and e + 1) and at
        # the last edge (the tail).
        upper_half = cdf[:, 1:] >= 0.5
        need = np.zeros(cdf.shape, dtype=np.bool_)
        need[:, :-1] |= upper_half
        need[:, 1:] |= upper_half
        need[:, -1] = True
        rows, cols = np.nonzero(need)
        sf = np.zeros(cdf.shape)
        sf[rows, cols] = _sf_at(n0, x[rows, 0], edges[rows, cols])
        lower = cdf[:, 1:] - cdf[:, :-1]
        upper = sf[:, :-1] - sf[:, 1:]
        pmf[s : s + _CHUNK] = np.maximum(np.where(upper_half, upper, lower), 0.0)
        tail[s : s + _CHUNK] = cdf[:, 0] + sf[:, -1]
    return pmf, lo, tail


def _cdf_rows(
    n1: int, rates: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.int64], int]:
    """``P(Bin(n1, y) <= m)`` for every ``m >= -1``, per rate, stored on a window
    (:func:`_window`): ``row[c]`` for ``c = clip(m - lo + 1, 0, width + 1)``. Exact
    for ``lo - 1 <= m < lo + width``; below the window the mass up to ``lo - 1``,
    above it 1 (upper bounds, so probabilities built on it are upper bounds).
    Returns the rows, ``lo`` and ``width``."""
    lo, width = _window(n1, rates)
    out = np.ones((rates.size, width + 2))
    for s in range(0, rates.size, _CHUNK):
        m = lo[s : s + _CHUNK, None] + np.arange(-1, width)[None, :]
        out[s : s + _CHUNK, :-1] = _cdf_at(
            n1, rates[s : s + _CHUNK, None], m.astype(np.float64)
        )
    return out, lo, width


def _counts(lo0: NDArray[np.int64], width: int, n0: int) -> NDArray[np.intp]:
    """The counts of windows of ``width`` from ``lo0`` (past ``n0``: ``n0``)."""
    k0 = np.minimum(lo0[:, None] + np.arange(width)[None, :], n0)
    return np.asarray(k0, dtype=np.intp)


def _probabilities(
    g: NDArray[np.int64],
    pmf: NDArray[np.float64],
    k0: NDArray[np.intp],
    tail: NDArray[np.float64],
    cdf: NDArray[np.float64],
    at: NDArray[np.int64],
    lo1: NDArray[np.int64],
    top1: NDArray[np.int64],
) -> NDArray[np.float64]:
    """``sum_k pmf_i[k] P(FN <= g[k0_i[k]]) + tail_i`` per row ``i`` (``k0``: the
    counts of ``pmf``'s window, :func:`_counts`; padding has probability 0), from
    the FN row ``cdf[at_i]`` (windowed: :func:`_cdf_rows`, ``top1 = width + 1``)."""
    out = np.empty(pmf.shape[0])
    w1 = cdf.shape[1]
    flat = cdf.ravel()
    for s in range(0, out.size, 4 * _CHUNK):
        e = s + 4 * _CHUNK
        # The column of P(FN <= g) in the windowed row: g - lo1 + 1, in [0, top1].
        col = g.take(k0[s:e])
        col -= (lo1[s:e] - 1 - at[s:e] * w1)[:, None]
        np.maximum(col, (at[s:e] * w1)[:, None], out=col)
        np.minimum(col, (top1[s:e] + at[s:e] * w1)[:, None], out=col)
        out[s:e] = np.einsum("ij,ij->i", pmf[s:e], flat.take(col)) + tail[s:e]
    return out


class _Table:
    """The binomial rows of :func:`size` on a set of rates: ``n0``'s probabilities
    (:func:`_pmf_rows`) and ``n1``'s windowed CDF (:func:`_cdf_rows`)."""

    def __init__(self, n0: int, n1: int, rates: NDArray[np.float64]) -> None:
        self.pmf, self.lo0, self.tail = _pmf_rows(n0, rates)
        self.k0 = _counts(self.lo0, self.pmf.shape[1], n0)
        self.cdf, self.lo1, width = _cdf_rows(n1, rates)
        self.top1 = np.full(rates.size, width + 1, dtype=np.int64)
        # Each row's mass up to each count of its window, and in all.
        self.cum = np.cumsum(self.pmf, axis=1)
        self.mass = self.cum[:, -1].copy()
        for arr in (self.pmf, self.lo0, self.k0, self.tail, self.cdf, self.lo1):
            arr.setflags(write=False)
        for arr in (self.top1, self.cum, self.mass):
            arr.setflags(write=False)

    def bounds(self, g: NDArray[np.int64], j: NDArray[np.int64]) -> NDArray[np.float64]:
        """Per row ``i`` (rate ``x_i``, FN row ``j_i``), an upper bound of what
        :func:`_probabilities` computes, less rounding: the FPs of ``S`` are at most
        ``K`` (the last count with ``g >= 0``) and its FNs at most ``g[0]``, so
        ``P(S) <= min(P(FP <= K), P(FN <= g[0])) + (the FN row's value below its
        window) + tail`` (the window's mass in place of 1)."""
        rows = np.arange(j.size)
        last = int(np.count_nonzero(g >= 0)) - 1
        k = last - self.lo0[rows]
        up_k = np.where(
            k < 0, 0.0, self.cum[rows, np.clip(k, 0, self.cum.shape[1] - 1)]
        )
        col = np.clip(int(g[0]) - self.lo1[j] + 1, 0, self.top1[j])
        mass = self.mass[rows]
        below = self.cdf[j, 0] * mass
        return np.asarray(
            np.minimum(up_k, self.cdf[j, col] * mass) + below + self.tail[rows],
            np.float64,
        )


@functools.lru_cache(maxsize=16)
def _tables(n0: int, n1: int) -> _Table:
    """:class:`_Table` on :data:`GRID`."""
    return _Table(n0, n1, GRID)


class _Rows:
    """Rows of a table on :data:`FINE`, computed when first needed and kept in a
    growing array (a bounded interval touches few of them)."""

    def __init__(self, width: int, dtype: type = np.float64) -> None:
        self.data: NDArray[Any] = np.zeros((64, width), dtype=dtype)
        self.at = np.full(FINE.size, -1, dtype=np.int64)
        self.size = 0

    def missing(self, rows: NDArray[np.int64]) -> NDArray[np.int64]:
        return np.unique(rows[self.at[rows] < 0])

    def add(self, rows: NDArray[np.int64], values: NDArray[Any]) -> None:
        end = self.size + rows.size
        if end > self.data.shape[0]:
            grown = np.zeros(
                (max(end, 2 * self.data.shape[0]), self.data.shape[1]),
                dtype=self.data.dtype,
            )
            grown[: self.size] = self.data[: self.size]
            self.data = grown
        self.data[self.size : end, : values.shape[1]] = values
        self.at[rows] = np.arange(self.size, end)
        self.size = end

    def __getitem__(self, rows: NDArray[np.int64]) -> NDArray[Any]:
        return self.data[self.at[rows]]


class _FineRows:
    """The tables of :func:`_tables` on :data:`FINE`, row by row when needed (each
    on the widest window, as :func:`_tables`'s: a row's values do not depend on the
    rows computed with it)."""

    def __init__(self, n0: int, n1: int) -> None:
        self.n0, self.n1 = n0, n1
        widest = np.array([0.5])
        self.pmf = _Rows(_window(n0, widest)[1])
        self.lo0 = np.zeros(FINE.size, dtype=np.int64)
        self.tail = np.zeros(FINE.size)
        self.cdf = _Rows(_window(n1, widest)[1] + 2)
        self.lo1 = np.zeros(FINE.size, dtype=np.int64)
        self.top1 = np.zeros(FINE.size, dtype=np.int64)

    def probabilities(
        self, i: NDArray[np.int64], j: NDArray[np.int64], g: NDArray[np.int64]
    ) -> NDArray[np.float64]:
        """``P_{FINE[i], FINE[j]}(S)`` for each pair (upper bounds, as :func:`size`)."""
        new_i = self.pmf.missing(i)
        if new_i.size:
            pmf, self.lo0[new_i], self.tail[new_i] = _pmf_rows(self.n0, FINE[new_i])
            self.pmf.add(new_i, pmf)
        new_j = self.cdf.missing(j)
        if new_j.size:
            cdf, self.lo1[new_j], width = _cdf_rows(self.n1, FINE[new_j])
            self.top1[new_j] = width + 1
            self.cdf.add(new_j, cdf)
        pmf = self.pmf[i]
        return _probabilities(
            g,
            pmf,
            _counts(self.lo0[i], pmf.shape[1], self.n0),
            self.tail[i],
            self.cdf.data,
            self.cdf.at[j],
            self.lo1[j],
            self.top1[j],
        )


@functools.lru_cache(maxsize=16)
def _fine(n0: int, n1: int) -> _FineRows:
    return _FineRows(n0, n1)


Boundary = Callable[[NDArray[np.float64]], NDArray[np.float64]]


def size(
    g: NDArray[np.int64],
    boundary: Boundary,
    n1: int,
    *,
    limit: float = 0.0,
) -> float:
    """An upper bound on ``sup over the region of P(counts in S)``.

    Args:
        g: ``g[k0]`` = the largest FN count rejected with ``k0`` FPs (-1: none):
            ``S = {(k0, k1): k1 <= g[k0]}``, a down-set.
        boundary: a lower bound of the region's boundary ``f`` at given rates
            (vectorised).
        n1: the member test rounds (``len(g) - 1`` is ``n0``).
        limit: coarse intervals whose bound exceeds it are bounded again on the
            fine grid (the result is then the finer bound); 0: every interval.
            With a limit, only whether the result exceeds it is exact: intervals
            whose bound cannot reach ``limit / 2`` keep a cheaper bound, and once
            one interval's fine bound exceeds the limit the rest keep their coarse
            bounds (the result is still an upper bound).
    """
    n0 = g.size - 1
    t = _tables(n0, n1)
    # Interval [x_i, x_{i+1}]: P_{x_i, y} at the largest grid FNR y <= f(x_{i+1}).
    j = np.maximum(np.searchsorted(GRID, boundary(GRID[1:]), side="right") - 1, 0)
    if limit > 0.0:
        # Intervals whose cheap bound is well under the limit keep it (it bounds
        # what the sum computes, and the sum could not exceed the limit).
        p = t.bounds(g, j)
        sums = np.flatnonzero(p * (1.0 + _MARGIN) >= limit / 2.0)
    else:
        p, sums = np.zeros(j.size), np.arange(j.size)
    p[sums] = _probabilities(
        g,
        t.pmf[sums],
        t.k0[sums],
        t.tail[sums],
        t.cdf,
        j[sums],
        t.lo1[j[sums]],
        t.top1[j[sums]],
    )
    coarse = np.flatnonzero(p > limit)
    if coarse.size == 0:
        return float(np.max(p))
    if limit > 0.0:
        # Largest first, in parts: once a fine bound exceeds the limit the size
        # does too (the rest keep their coarse bounds, still upper bounds).
        coarse = coarse[np.argsort(-p[coarse], kind="stable")]
    parts = [coarse] if limit <= 0.0 else np.array_split(coarse, -(-coarse.size // 32))
    for part in parts:
        # The same bound on the fine intervals inside each coarse one.
        left = (part[:, None] * _STEP + np.arange(_STEP)[None, :]).ravel()
        fj = np.searchsorted(FINE, boundary(FINE[left + 1]), side="right") - 1
        fine = _fine(n0, n1).probabilities(left, np.maximum(fj, 0), g)
        p[part] = fine.reshape(part.size, _STEP).max(axis=1)
        if np.max(p[part]) > limit > 0.0:
            break
    return float(np.max(p))


def lines_boundary(eps: float, delta: float) -> Boundary:
    """A lower bound of the (eps, delta) lines' boundary:
    ``max(0, 1 - delta - e^eps x, e^-eps (1 - delta - x))`` less rounding."""
    e = math.exp(min(eps, 700.0))

    def f(x: NDArray[np.float64]) -> NDArray[np.float64]:
        y = np.maximum(1.0 - delta - e * x, (1.0 - delta - x) / e)
        return np.asarray(np.clip(y - 1e-12, 0.0, 1.0), np.float64)

    return f


def gdp_boundary(mu: float) -> Boundary:
    """A lower bound of the mu-GDP trade-off curve."""
    from dpaudit.audit.stats.tradeoff import gdp_tradeoff

    def f(x: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.asarray(np.clip(gdp_tradeoff(x, mu=mu) - 1e-12, 0.0, 1.0), np.float64)

    return f
