"""The eps and mu families of exact tests (eps_emp, mu_emp), computed once per key.

Pure functions and frozen dataclasses; the families are cached per process (they
depend only on the kind, the test sizes, the level, delta and the method; the mu
family not on delta). :mod:`dpaudit.audit.stats.calibrated` states the test.

*A family of exact tests.* For the (epsilon, delta) lines (the ``"eps"`` family) and
the GDP curves (``"mu"``) the values ``v_j = j * step`` cut ``[0, inf)`` into
intervals ``(v_{j-1}, v_j]`` (``v_0 = 0`` alone). Interval ``j`` is tested at the
per-rate level ``a_j``: the largest level, at most ``a_{j-1}``, whose down-set
``S_j = {statistic of the corner at a_j > v_{j-1}}`` has size at most ``alpha`` on the
region of ``v_j``, which contains the region of every value of the interval. A value
``v`` of interval ``j`` is rejected when the corner's statistic exceeds ``v``; since
the levels do not increase with ``j`` the rejected values form an interval
``[0, value)``, and ``value`` (eps_emp, mu_emp) is a lower confidence bound: if the
truth is ``v``, ``P(value > v) <= P(v rejected) <= alpha``.

*Computed once.* Interval ``j`` depends only on the key and on interval ``j - 1``'s
level, so a family cut at ``until`` is a prefix of the whole family: every cut of one
key is read off one growing list (:class:`_Growing`), and the mu family's key drops
delta (its statistic, regions and closed form do not use it).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpaudit.audit.stats import exact, levels, memo
from dpaudit.audit.stats.estimators import _eps_from_rates
from dpaudit.audit.stats.tradeoff import gdp_tradeoff, mu_lower_bound

__all__ = ["STEPS", "Family", "family", "family_table", "first_level"]

#: The width of the families' intervals.
STEPS: dict[str, float] = {"eps": 0.02, "mu": 0.02}


Statistic = Callable[[NDArray[np.float64], NDArray[np.float64]], NDArray[np.float64]]


def _statistic(kind: str, delta: float) -> Statistic:
    if kind == "eps":
        return lambda a, b: _eps_from_rates(a, b, delta)
    return lambda a, b: mu_lower_bound(a, b)


def _guess(kind: str, rule: float, delta: float) -> exact.Guess:
    """The FNR below which :func:`_statistic` exceeds ``rule`` (``rule >= 0``), in
    closed form: ``eps_lo > r`` iff ``b < max((1 - a - delta) e^-r,
    1 - delta - a e^r)``; ``mu_lower_bound > r`` iff ``b < Phi(-Phi^-1(a) - r)``."""
    if kind == "eps":
        e = math.exp(min(rule, 700.0))
        return lambda a: np.maximum((1.0 - a - delta) / e, 1.0 - delta - a * e)
    return lambda a: gdp_tradeoff(a, mu=rule)


def _boundary(kind: str, value: float, delta: float) -> exact.Boundary:
    if kind == "eps":
        return exact.lines_boundary(value, delta)
    return exact.gdp_boundary(value)


@dataclass(frozen=True, kw_only=True, slots=True)
class Family:
    """A family of exact tests (see the module's text) on ``n0`` + ``n1`` test rounds.

    Attributes:
        kind: ``"eps"`` (the lines at ``delta``) or ``"mu"`` (GDP; ``delta`` 0).
        values: ``v_j``, the right ends of the intervals tested.
        levels: ``a_j`` as indices into :data:`exact.LEVELS` (non-increasing).
        counts: ``g_j[k0]``, the largest FN count in ``S_j`` with ``k0`` FPs.
    """

    # Its key.
    kind: str
    n0: int
    n1: int
    method: str
    delta: float
    # Its intervals.
    values: NDArray[np.float64]
    levels: NDArray[np.int64]
    counts: NDArray[np.int64]

    def corner(self, j: int, fp: int, fn: int) -> tuple[float, float]:
        """The corner of ``fp``, ``fn`` errors at interval ``j``'s level."""
        level = int(self.levels[j])
        return (
            float(exact.corner(self.n0, self.method, level)[fp]),
            float(exact.corner(self.n1, self.method, level)[fn]),
        )

    def value(self, fp: int, fn: int) -> float:
        """eps_emp (mu_emp) of ``fp`` and ``fn`` test errors: the end of the rejected
        values ``[0, value)``; 0 when none is rejected."""
        if self.values.size == 0:
            return 0.0
        j = int(np.count_nonzero(self.counts[:, fp] >= fn)) - 1
        if j < 0:
            return 0.0
        a, b = self.corner(j, fp, fn)
        stat = float(_statistic(self.kind, self.delta)(np.asarray(a), np.asarray(b)))
        return min(stat, float(self.values[j]))

    def intervals(self) -> NDArray[np.int64]:
        """``j(fp, fn)`` of every count, shape ``(n0 + 1, n1 + 1)``: the number of
        intervals whose ``S_j`` holds the counts, less one (as :meth:`value` counts
        them), from each FP count's histogram of ``g_j[fp]`` (exact integers)."""
        n0, n1 = self.n0, self.n1
        # hist[fp, c + 1]: the intervals with g_j[fp] = c (c from -1 to n1).
        cell = np.arange(n0 + 1)[None, :] * (n1 + 2) + self.counts + 1
        hist = np.bincount(cell.ravel(), minlength=(n0 + 1) * (n1 + 2))
        hist = hist.reshape(n0 + 1, n1 + 2)
        # at_least[fp, m] = #{j: g_j[fp] + 1 >= m}; #{j: g_j[fp] >= fn} at m = fn + 1.
        at_least = np.cumsum(hist[:, ::-1], axis=1)[:, ::-1]
        return np.asarray(at_least[:, 1:] - 1, np.int64)

    def table(self) -> NDArray[np.float64]:
        """:meth:`value` of every ``(fp, fn)``, shape ``(n0 + 1, n1 + 1)``."""
        out = np.zeros((self.n0 + 1, self.n1 + 1))
        if self.values.size == 0:
            return out
        stat = _statistic(self.kind, self.delta)
        j = self.intervals()
        level_of = np.where(j >= 0, self.levels[np.maximum(j, 0)], -1)
        for level in np.unique(self.levels):
            u0 = exact.corner(self.n0, self.method, int(level))
            u1 = exact.corner(self.n1, self.method, int(level))
            rows, cols = np.nonzero(level_of == level)
            vals = np.minimum(stat(u0[rows], u1[cols]), self.values[j[rows, cols]])
            out[rows, cols] = vals
        return out

    def rejects(self, fp: int, fn: int, value: float) -> bool:
        """Whether these counts reject ``value`` (``self.value(fp, fn) > value``)."""
        return self.value(fp, fn) > value


class _Growing:
    """One key's family, its intervals computed in order as far as a caller asks
    (each depends only on the key and on the level of the one before)."""

    def __init__(
        self, kind: str, n0: int, n1: int, alpha: float, delta: float, method: str
    ) -> None:
        self.key = (kind, n0, n1, alpha, delta, method)
        self.values: list[float] = []
        self.levels: list[int] = []
        self.counts: list[NDArray[np.int64]] = []
        self.ended = False  # the first interval a perfect attack cannot reject
        self.end_level = -1  # that interval's level (-1: none valid)
        self._restore(memo.load("family", *self.key))

    def _restore(self, kept: dict[str, NDArray[Any]] | None) -> None:
        """Starts from the levels a store kept for this key (:mod:`.memo`), each
        checked before it is used: a level is taken only where it is the one the
        search finds (:func:`~dpaudit.audit.stats.levels.is_largest_level`: in
        range, its test passes, the one above fails or it is the previous
        interval's); the counts are the check's, never read. A checked level with an
        empty rejection set (or -1) ends the family, as the search's would. The
        first level that fails the check ends what is taken; the search computes the
        rest. So a kept file decides nothing: it only spares searches."""
        if kept is None or set(kept) != {"levels"}:
            return
        found = kept["levels"]
        if found.dtype != np.int64 or found.ndim != 1:
            return
        for level in found.tolist():
            j = len(self.levels)
            ok, g = levels.is_largest_level(
                level, **self._interval(j), below=self.levels[-1] if j else None
            )
            if not ok:
                break
            if g is None or g[0] < 0:
                self.ended, self.end_level = True, level
                break
            self.values.append(j * STEPS[self.key[0]])
            self.levels.append(level)
            self.counts.append(g)

    def _keep(self) -> None:
        """Keeps the levels (and, once ended, the level that ended the family)."""
        end = [self.end_level] if self.ended else []
        memo.save(
            "family", self.key, {"levels": np.asarray(self.levels + end, np.int64)}
        )

    def _interval(self, j: int) -> dict[str, Any]:
        """The arguments of interval ``j``'s level search (without ``below``)."""
        kind, n0, n1, alpha, delta, method = self.key
        step = STEPS[kind]
        stat = _statistic(kind, delta)
        rule = max(j - 1, 0) * step

        def outside(
            a: NDArray[np.float64], b: NDArray[np.float64]
        ) -> NDArray[np.bool_]:
            return np.asarray(stat(a, b) > rule)

        return {
            "n0": n0,
            "n1": n1,
            "method": method,
            "alpha": alpha,
            "outside": outside,
            "boundary": _boundary(kind, j * step, delta),
            "guess": _guess(kind, rule, delta),
        }

    def grow(self, until: float) -> int:
        """Computes intervals up to the first one past ``until`` (at least one);
        returns how many intervals the family cut at ``until`` has."""
        step = STEPS[self.key[0]]
        known = (len(self.values), self.ended)
        while not self.ended and (not self.values or self.values[-1] <= until):
            j = len(self.values)
            found = levels.largest_level(
                **self._interval(j), below=self.levels[-1] if self.levels else None
            )
            if found is None or found[1][0] < 0:
                self.ended = True
                self.end_level = -1 if found is None else found[0]
                break
            self.values.append(j * step)
            self.levels.append(found[0])
            self.counts.append(found[1])
        if (len(self.values), self.ended) != known:
            self._keep()
        # The intervals up to the first one past `until`.
        return min(len(self.values), sum(v <= until for v in self.values) + 1)


@functools.lru_cache(maxsize=32)
def _growing(
    kind: str, n0: int, n1: int, alpha: float, delta: float, method: str
) -> _Growing:
    return _Growing(kind, n0, n1, alpha, delta, method)


def _key_delta(kind: str, delta: float) -> float:
    """The delta a family's key holds: the mu family does not depend on it."""
    return float(delta) if kind == "eps" else 0.0


def family(
    kind: str,
    n0: int,
    n1: int,
    *,
    alpha: float,
    delta: float,
    method: str = "clopper_pearson",
    until: float = math.inf,
) -> Family:
    """The family of ``kind`` at these test sizes and this level, up to the first
    interval a perfect attack cannot reject (or past ``until``)."""
    return _family(kind, n0, n1, alpha, _key_delta(kind, delta), method, until)


@functools.lru_cache(maxsize=32)
def _family(
    kind: str, n0: int, n1: int, alpha: float, delta: float, method: str, until: float
) -> Family:
    grown = _growing(kind, n0, n1, alpha, delta, method)
    m = grown.grow(until)
    return Family(
        kind=kind,
        n0=n0,
        n1=n1,
        method=method,
        delta=delta,
        values=np.asarray(grown.values[:m], np.float64),
        levels=np.asarray(grown.levels[:m], np.int64),
        counts=np.asarray(grown.counts[:m], np.int64).reshape(m, n0 + 1),
    )


def first_level(
    kind: str, n0: int, n1: int, *, alpha: float, delta: float, method: str
) -> int | None:
    """The level of the family's first interval (``v_0 = 0``), ``None`` if the family
    is empty: computed as the family computes it, and kept for it."""
    grown = _growing(kind, n0, n1, alpha, _key_delta(kind, delta), method)
    return grown.levels[0] if grown.grow(-1.0) else None


def family_table(
    kind: str, n0: int, n1: int, *, alpha: float, delta: float
) -> NDArray[np.float64]:
    """:meth:`Family.table` of the Clopper-Pearson family (read-only), kept for the
    threshold choice and the ceilings that read it."""
    return _table(kind, n0, n1, float(alpha), _key_delta(kind, delta))


@functools.lru_cache(maxsize=4)
def _table(
    kind: str, n0: int, n1: int, alpha: float, delta: float
) -> NDArray[np.float64]:
    table = family(kind, n0, n1, alpha=alpha, delta=delta).table()
    table.setflags(write=False)
    return table
