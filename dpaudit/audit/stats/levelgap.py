"""What the grid of levels leaves below alpha: the claim's own test at its grid
level, at a continuous level between that level and the next, and at the next
(docs/soundness.md, "A continuous level"; measured by
``benchmarks/continuous_level.py``). The audit never uses this module: its test is
the grid level's (:mod:`dpaudit.audit.stats.calibrated`), which :func:`level_gap`
recomputes exactly as the audit does.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpaudit.audit.stats import calibrated, exact, levels
from dpaudit.audit.stats.profile import ClaimedProfile

__all__ = ["LevelGap", "level_gap", "rejection_at"]

#: Bisection of the continuous level: in log(level), to this width.
LOG_WIDTH = 1e-10


def rejection_at(
    level: float, n: int, outside: Any, method: str = "clopper_pearson"
) -> NDArray[np.int64]:
    """``g`` of the test at a per-rate ``level`` (any float in (0, 1)) with ``n``
    test rounds per world: the corners computed as :func:`exact.corner` computes
    them at a grid level."""
    u = exact.upper_bounds_at(n, method, level)
    return np.asarray(exact.boundary_counts(u, u, outside), np.int64)


@dataclass(frozen=True, kw_only=True)
class LevelGap:
    """The claim's test at four levels: the grid's (the audit's), the continuous
    level (the largest between it and the next grid level whose test passes the
    audit's check), the next grid level, and the first failing level the
    bisection met above the continuous one. ``g_*``: the rejection sets ``{k1 <=
    g[k0]}``; ``size_*``: their size bounds on the claim's boundary (absolute)."""

    grid_level: float
    continuous_level: float
    next_level: float
    g_grid: NDArray[np.int64]
    g_continuous: NDArray[np.int64]
    g_next: NDArray[np.int64]
    g_above: NDArray[np.int64]
    size_grid: float
    size_continuous: float
    size_next: float
    size_above: float


def level_gap(
    claim: ClaimedProfile,
    n: int,
    alpha: float,
    method: str = "clopper_pearson",
    log_width: float = LOG_WIDTH,
) -> LevelGap:
    """The claim's test with ``n`` test rounds per world at ``alpha`` (one
    attack's share) on the grid and between grid levels (:class:`LevelGap`). The
    pass check is the audit's (:func:`levels.passes`: the size bound at most
    ``alpha`` less its rounding slack); the sets grow with the level, so the
    bisection in ``log(level)`` finds the end of the passing interval."""
    found = calibrated._claim_test(claim, n, n, alpha, method)
    assert found is not None  # LEVELS[0] = 1e-9 always passes
    grid, g_grid = int(found[0]), np.asarray(found[1], np.int64)
    outside = calibrated._claim_outside(claim)
    boundary = calibrated._claim_boundary(claim)

    lo = math.log(exact.LEVELS[grid])
    g_lo = g_grid
    if grid + 1 < exact.LEVELS.size:
        hi = math.log(exact.LEVELS[grid + 1])
        g_next = rejection_at(float(exact.LEVELS[grid + 1]), n, outside, method)
        g_hi = g_next
        while hi - lo > log_width:
            mid = 0.5 * (lo + hi)
            g = rejection_at(math.exp(mid), n, outside, method)
            if levels.passes(g, boundary, n, alpha):
                lo, g_lo = mid, g
            else:
                hi, g_hi = mid, g
    else:  # the top grid level (0.5): nothing above it
        g_next = g_hi = g_grid

    def size(g: NDArray[np.int64]) -> float:
        return float(exact.size(g, boundary, n))

    return LevelGap(
        grid_level=float(exact.LEVELS[grid]),
        continuous_level=math.exp(lo),
        next_level=float(exact.LEVELS[min(grid + 1, exact.LEVELS.size - 1)]),
        g_grid=g_grid,
        g_continuous=g_lo,
        g_next=g_next,
        g_above=g_hi,
        size_grid=size(g_grid),
        size_continuous=size(g_lo),
        size_next=size(g_next),
        size_above=size(g_hi),
    )
