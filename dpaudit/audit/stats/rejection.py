"""The rejection sets of the exact test (:mod:`dpaudit.audit.stats.exact`): per FP
count, the largest FN count whose corner lies outside a region, by bisection.

Pure functions: no I/O, no random numbers, no state. The region's outside is given
as a function of the corner (decreasing: outside at a corner, outside at every
smaller one), or as a union of terms (:class:`Terms`, each decreasing), which lets a
bisection evaluate fewer of them without changing any answer (docs/soundness.md,
"Computing less without changing the test").
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["Guess", "Outside", "Terms", "bisect_terms", "boundary_counts"]

Outside = Callable[[NDArray[np.float64], NDArray[np.float64]], NDArray[np.bool_]]
Pairs = Callable[[NDArray[np.float64], NDArray[np.float64], NDArray[np.intp]], Any]


class Terms:
    """A region's outside as a union of terms: a corner lies outside iff some term
    is over it. Each term must be decreasing in the corner (over at a corner, over
    at every smaller one), which lets a bisection drop the terms that are not over
    its last outside point (:func:`bisect_terms`). ``over(a, b, term)`` per pair:
    whether that term is over; or ``ratio`` (then ``over`` is ``ratio > 1``), which
    also ranks the terms (:func:`_bisect_candidates`)."""

    def __init__(
        self, count: int, over: Pairs | None = None, *, ratio: Pairs | None = None
    ) -> None:
        self.count = count
        self.ratio = ratio
        if over is None:
            assert ratio is not None, "Terms needs over or ratio"
            over = lambda a, b, t: np.asarray(ratio(a, b, t) > 1.0)  # noqa: E731
        self.over = over


Corner = Callable[
    [NDArray[np.intp], NDArray[Any]], tuple[NDArray[np.float64], NDArray[np.float64]]
]


def bisect_terms(
    lo: NDArray[Any],
    hi: NDArray[Any],
    terms: Terms,
    corner: Corner,
    *,
    steps: int | None = None,
    floor: Any = None,
) -> NDArray[Any]:
    """Per row ``i``, a bisection between ``lo[i]`` (outside, or a start) and
    ``hi[i]`` (inside) of the points ``corner(i, mid)`` (decreasing in ``mid``):
    ``steps`` halvings of a real interval, or (``None``) integer points until
    ``hi - lo == 1``. Returns the last ``lo`` (modified in place, as ``hi``).

    Every point it visits gets the answer ``any term over it`` would: a term that
    is not over the current ``lo`` is over no point above it, so each row keeps only
    the terms that were over its last outside point (all of them until one is
    found) and evaluates those alone. With ``floor`` (at most every point visited)
    the rows start with the terms over ``corner(i, floor)``: no other is over any
    point above it. With :attr:`Terms.ratio`, :func:`_bisect_candidates`."""
    if terms.ratio is not None and lo.size >= 4 * _EVERY:
        return _bisect_candidates(lo, hi, terms, corner, (steps, floor))
    return _bisect_keep(lo, hi, terms, corner, steps=steps, floor=floor)[0]


def _bisect_keep(
    lo: NDArray[Any],
    hi: NDArray[Any],
    terms: Terms,
    corner: Corner,
    *,
    steps: int | None,
    floor: Any,
) -> tuple[NDArray[Any], NDArray[np.bool_]]:
    """:func:`bisect_terms` keeping per row the terms over its last outside point;
    returns ``lo`` and those terms (the start's where no point was outside)."""
    keep = np.ones((lo.size, terms.count), dtype=np.bool_)
    if floor is not None:
        r, t = np.nonzero(keep)
        keep[r, t] = terms.over(*corner(r, np.full(r.size, floor)), t)
    for _ in range(steps if steps is not None else 1 << 62):
        rows, mid = _open(lo, hi, steps)
        if rows.size == 0:
            break
        r, t = np.nonzero(keep[rows])
        a, b = corner(rows[r], mid[r])
        over = terms.over(a, b, t)
        out = np.zeros(rows.size, dtype=np.bool_)
        out[r[over]] = True
        lo[rows[out]] = mid[out]
        hi[rows[~out]] = mid[~out]
        moved = out[r]
        keep[rows[r[moved]], t[moved]] = over[moved]
    return lo, keep


def _open(
    lo: NDArray[Any], hi: NDArray[Any], steps: int | None
) -> tuple[NDArray[np.intp], NDArray[Any]]:
    """The rows a bisection step moves and their midpoints."""
    if steps is None:
        rows = np.flatnonzero(hi - lo > 1)
        return rows, (lo[rows] + hi[rows]) // 2
    return np.arange(lo.size), (lo + hi) / 2.0


#: :func:`_bisect_candidates` bisects every this many rows with every term.
_EVERY = 8

_How = tuple[int | None, Any]  # a bisection's steps and floor (bisect_terms)


def _bisect_candidates(
    lo: NDArray[Any], hi: NDArray[Any], terms: Terms, corner: Corner, how: _How
) -> NDArray[Any]:
    """:func:`bisect_terms` by one candidate term per row. Each term's outside is a
    down-set of the points, so the union's is the largest of them. Every
    ``_EVERY``-th row (rows in order: neighbours share their deciding term) is
    bisected with every term (:func:`_bisect_keep`); of the terms over its last
    outside point, the one with the largest ratio there is the candidate of the rows
    up to the next one. Each such row bisects with its candidate alone, then checks
    every term at its last inside point ``hi`` (every inside point it visited is at
    or above ``hi``): if none is over there, every visited point got the answer all
    the terms give (outside: the candidate is over; inside: none is), so the path
    and ``lo`` are the full bisection's; otherwise the row is bisected with every
    term. (A floor changes nothing here: no term that is not over it is over any
    point above it.)"""
    assert terms.ratio is not None
    steps, floor = how
    lo0, hi0 = lo.copy(), hi.copy()
    sample = np.arange(0, lo.size, _EVERY)
    lo[sample], keep = _full(lo, hi, sample, terms, corner, steps, floor)
    ratios = _ratios(terms, corner, sample, lo[sample])
    ratios[~keep] = -np.inf
    candidate = np.repeat(np.argmax(ratios, axis=1), _EVERY)[: lo.size]
    rows = np.setdiff1d(np.arange(lo.size), sample)
    sub_lo, sub_hi = lo[rows], hi[rows]
    for _ in range(steps if steps is not None else 1 << 62):
        moving, mid = _open(sub_lo, sub_hi, steps)
        if moving.size == 0:
            break
        a, b = corner(rows[moving], mid)
        out = np.asarray(terms.over(a, b, candidate[rows[moving]]))
        sub_lo[moving[out]] = mid[out]
        sub_hi[moving[~out]] = mid[~out]
    lo[rows], hi[rows] = sub_lo, sub_hi
    visited = rows[hi[rows] != hi0[rows]]
    failed = visited[(_ratios(terms, corner, visited, hi[visited]) > 1.0).any(axis=1)]
    lo[failed], hi[failed] = lo0[failed], hi0[failed]
    lo[failed] = _full(lo, hi, failed, terms, corner, steps, floor)[0]
    return lo


def _full(
    lo: NDArray[Any],
    hi: NDArray[Any],
    rows: NDArray[np.intp],
    terms: Terms,
    corner: Corner,
    steps: int | None,
    floor: Any,
) -> tuple[NDArray[Any], NDArray[np.bool_]]:
    """:func:`_bisect_keep` of ``rows`` (``hi`` updated in place)."""
    sub_lo, sub_hi = lo[rows], hi[rows]
    found = _bisect_keep(
        sub_lo,
        sub_hi,
        terms,
        lambda i, m: corner(rows[i], m),
        steps=steps,
        floor=floor,
    )
    hi[rows] = sub_hi
    return found


def _ratios(
    terms: Terms, corner: Corner, rows: NDArray[np.intp], at: NDArray[Any]
) -> NDArray[np.float64]:
    """Every term's ratio at ``corner(rows, at)``, one row per row given."""
    assert terms.ratio is not None
    r = np.repeat(rows, terms.count)
    t = np.tile(np.arange(terms.count), rows.size)
    a, b = corner(r, np.repeat(at, terms.count))
    out = np.asarray(terms.ratio(a, b, t), np.float64)
    return out.reshape(rows.size, terms.count)


Guess = Callable[[NDArray[np.float64]], NDArray[np.float64]]


def boundary_counts(
    u0: NDArray[np.float64],
    u1: NDArray[np.float64],
    outside: Outside | Terms,
    guess: Guess | None = None,
) -> NDArray[np.int64]:
    """``g[k0]``: the largest ``k1`` whose corner ``(u0[k0], u1[k1])`` lies outside
    (``outside`` true), -1 where none; ``outside`` must be decreasing in the corner
    (true for smaller rates), so a bisection on ``k1`` per ``k0`` finds it (with
    :class:`Terms`, :func:`bisect_terms`: the same points, fewer terms).

    ``guess(a)``: the FNR below which ``(a, b)`` is outside, in closed form; the
    count it gives is kept where ``outside`` confirms it (outside there, inside one
    count up: by monotonicity the bisection's answer), the rest are bisected."""
    n1 = u1.size - 1
    if guess is not None and not isinstance(outside, Terms):
        g = np.searchsorted(u1, guess(u0), side="left").astype(np.int64) - 1
        g = np.clip(g, -1, n1)
        ok = (g < 0) | outside(u0, u1[np.maximum(g, 0)])
        ok &= (g >= n1) | ~outside(u0, u1[np.minimum(g + 1, n1)])
        if ok.all():
            return g
        rest = np.flatnonzero(~ok)
        g[rest] = boundary_counts(u0[rest], u1, outside)
        return g
    lo = np.full(u0.size, -1, dtype=np.int64)  # outside at lo (or lo = -1)
    hi = np.full(u0.size, n1 + 1, dtype=np.int64)  # inside at hi (or hi = n1 + 1)
    if isinstance(outside, Terms):
        return bisect_terms(
            lo, hi, outside, lambda i, m: (u0[i], u1[np.clip(m, 0, n1)]), floor=0
        )
    while True:
        open_ = hi - lo > 1
        if not open_.any():
            return lo
        mid = (lo + hi) // 2
        out = outside(u0, u1[np.clip(mid, 0, n1)])
        lo = np.where(open_ & out, mid, lo)
        hi = np.where(open_ & ~out, mid, hi)
