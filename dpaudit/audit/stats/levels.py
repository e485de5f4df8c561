"""The calibrated level of an exact test: the largest level of
:data:`dpaudit.audit.stats.exact.LEVELS` whose test has size at most alpha.

Pure functions: no I/O, no random numbers; what they compute is cached by their
callers (:mod:`dpaudit.audit.stats.families`, :mod:`dpaudit.audit.stats.calibrated`).

*Why any search finds the same level.* The test at level ``L`` passes when its
rejection set is empty at zero FPs (``g[0] < 0``) or its size bound
(:func:`exact.size`) is at most ``alpha (1 - 1e-9)``. It fails at every level above
one where it fails:

- the corner decreases in the level (a one-sided upper bound at a larger level is
  smaller), and outside the region is closed downwards, so ``g`` (the largest FN
  count rejected with each FP count) does not decrease: ``S_L`` is a subset of
  ``S_{L+1}``;
- each interval's bound ``sum_k P(FP = k) P(FN <= g[k]) + tail`` has non-negative
  factors and a CDF row that does not decrease in the count, so it does not decrease
  with ``g`` (and rounding to nearest keeps the order of sums and products of
  non-negative numbers); the cheap bound that spares an interval its sum is below
  ``alpha / 2``, so an interval decides nothing unless its sum does, and whether the
  sum and the fine bounds exceed the limit does not depend on the early stop (which
  only leaves other intervals coarse).

So the passing levels are ``0 .. A`` for one ``A`` (or none), and a bisection, a
search from a guess, or a scan all return ``A`` with the same ``g`` (the test is a
function of the level alone). The plain bisection already rests on this.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from dpaudit.audit.stats import exact

__all__ = ["is_largest_level", "largest_level"]

Test = Callable[[int], tuple[bool, NDArray[np.int64]]]


def largest_level(
    n0: int,
    n1: int,
    *,
    method: str,
    alpha: float,
    outside: exact.Outside | exact.Terms,
    boundary: exact.Boundary,
    below: int | None = None,
    guess: exact.Guess | None = None,
    start: int | None = None,
) -> tuple[int, NDArray[np.int64]] | None:
    """The largest index into :data:`exact.LEVELS` (at most ``below``) whose test
    (corner outside the region) has :func:`exact.size` at most ``alpha``, with its
    ``g``; ``None`` when no level is valid (``guess``: as
    :func:`exact.boundary_counts`).

    The rejection sets grow with the level, so the size does too (the module's
    text): a bisection over the levels, or with ``start`` (a guess of the answer) a
    search that steps out from it, 1, 2, 4, ... levels, and bisects the bracket it
    finds: two tests when the guess is right, where a bisection takes nine. The
    answer is the same."""
    test = _tester(n0, n1, method, alpha, outside, boundary, guess)
    top = exact.LEVELS.size - 1 if below is None else below
    if start is not None:
        return _from_guess(test, min(max(start, 0), top), top)
    ok, g = test(top)
    if ok:
        return top, g
    if below is not None and top > 0:
        # A family's next level is most often the same or the one below it.
        ok, g = test(top - 1)
        if ok:
            return top - 1, g
        top -= 1
    return _bisect(test, -1, None, top)


def _tester(
    n0: int,
    n1: int,
    method: str,
    alpha: float,
    outside: exact.Outside | exact.Terms,
    boundary: exact.Boundary,
    guess: exact.Guess | None,
) -> Test:
    """The test at a level: whether it passes (:func:`passes`), and its ``g``."""

    def test(level: int) -> tuple[bool, NDArray[np.int64]]:
        u0 = exact.corner(n0, method, level)
        u1 = exact.corner(n1, method, level)
        g = exact.boundary_counts(u0, u1, outside, guess)
        return passes(g, boundary, n1, alpha), g

    return test


def passes(
    g: NDArray[np.int64], boundary: exact.Boundary, n1: int, alpha: float
) -> bool:
    """Whether the rejection set ``{k1 <= g[k0]}`` is a valid test at ``alpha``:
    empty at zero FPs, or its size bound on ``boundary`` at most ``alpha`` (less
    the rounding slack)."""
    limit = alpha * (1.0 - exact._SLACK)
    return bool(g[0] < 0 or exact.size(g, boundary, n1, limit=limit) <= limit)


def is_largest_level(
    level: int,
    n0: int,
    n1: int,
    *,
    method: str,
    alpha: float,
    outside: exact.Outside | exact.Terms,
    boundary: exact.Boundary,
    below: int | None = None,
    guess: exact.Guess | None = None,
) -> tuple[bool, NDArray[np.int64] | None]:
    """Whether ``level`` (``-1``: none) is what :func:`largest_level` returns with
    the same arguments, and its ``g`` (``None`` for ``-1`` or when it is not).

    A claimed answer is checked, not searched: ``level`` must lie in ``-1 .. top``,
    its test must pass (for ``-1``: nothing to test) and the test one level up must
    fail (unless ``level`` is the top). The passing levels are ``0 .. A`` (the
    module's text), so exactly one level passes both checks: ``A``. One or two tests,
    where a search takes two to nine; a level read from a store
    (:mod:`dpaudit.audit.stats.memo`) is used only once it passes."""
    top = exact.LEVELS.size - 1 if below is None else below
    if not -1 <= level <= top:
        return False, None
    test = _tester(n0, n1, method, alpha, outside, boundary, guess)
    g = None
    if level >= 0:
        ok, g = test(level)
        if not ok:
            return False, None
    if level < top and test(level + 1)[0]:
        return False, None
    return True, g


def _bisect(
    test: Test, lo: int, g_lo: NDArray[np.int64] | None, hi: int
) -> tuple[int, NDArray[np.int64]] | None:
    """The answer between ``lo`` (passes, with its ``g_lo``; -1: none) and ``hi``
    (fails), by bisection."""
    while hi - lo > 1:
        mid = (lo + hi) // 2
        ok, g = test(mid)
        if ok:
            lo, g_lo = mid, g
        else:
            hi = mid
    return None if lo < 0 or g_lo is None else (lo, g_lo)


def _from_guess(
    test: Test, start: int, top: int
) -> tuple[int, NDArray[np.int64]] | None:
    """The largest passing level of ``0 .. top``, searched from ``start``: up from a
    pass (``start + 1``, ``+ 3``, ``+ 7``, ...) to the first failure, or down from a
    failure to the first pass, then a bisection between the two."""
    ok, g = test(start)
    step = 1
    if ok:
        lo, g_lo, hi = start, g, top + 1
        while lo < top:
            up = min(lo + step, top)
            ok, g = test(up)
            if not ok:
                hi = up
                break
            lo, g_lo, step = up, g, 2 * step
        return _bisect(test, lo, g_lo, hi)
    hi = start
    while hi > 0:
        down = max(hi - step, 0)
        ok, g = test(down)
        if ok:
            return _bisect(test, down, g, hi)
        hi, step = down, 2 * step
    return None
