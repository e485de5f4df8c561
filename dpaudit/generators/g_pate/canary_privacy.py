"""The exact privacy of G-PATE's transcript under canary teachers.

Under canary teachers (:mod:`.transcript`) every query of the world without the
target has clean counts ``[k, 0, ..., 0]`` and every query of the world with it
``[k - 1, 0, ..., 0, 1]`` (one teacher holds the target, the game's case). Given the
counts, answers are independent: a query is unanswered (``U``), or answered with
bin 0, with bin ``bins - 1``, or with one of the ``bins - 2`` middle bins, each
with the probabilities of :func:`.transcript.log_answer_probability`. The
accountant stops on the number of answered queries only (the data-independent
ledger; :class:`.accounting.Spending`), so the transcript's law in world ``W`` is
that of the stopped sequence: with ``Q`` queries run, ``A`` of them answered and
``n0, nl`` answers of bin 0 and bin ``bins - 1``, the privacy loss of a transcript
is

    L = (Q - A) l_U + A l_A + n0 l_0 + nl l_l + (A - n0 - nl) l_m,

(``l_o = log P_with(o) / P_without(o)``; the middle bins share ``l_m`` by symmetry),
and a stopping time decided by the answered bits has the same set of paths in both
worlds. This module computes the law of ``(Q, A)`` at the stop in both worlds
exactly (a recursion over iterations on the number answered), then

    delta(eps) = sum over (Q, A, n0) of  P'(Q, A) B'(n0 | A) S'(nl > m*)
                                      - e^eps P(Q, A) B(n0 | A) S(nl > m*),

the hockey-stick divergence of the two transcript laws, with ``m*`` the smallest
``nl`` for which ``L > eps`` and binomial laws ``B`` of ``n0`` and ``S`` of ``nl``
given ``n0`` (exact); and the other direction (the law without the target over the
law with it: the event ``L < -eps``, the worlds' roles swapped), since
(epsilon, delta)-DP under adding or removing a record bounds both.
:func:`canary_epsilon` is the larger direction's epsilon. Mass below
:data:`NEGLIGIBLE` in ``(Q, A)`` or beyond :data:`SPAN` standard deviations of ``n0``
is dropped, and its total probability in the direction's first world is added to
delta (an upper bound; the dropped mass is reported: below ``1e-15`` in the audited
configurations).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
from numpy.typing import NDArray
from scipy import stats
from scipy.optimize import brentq

from dpaudit.errors import InvalidParameterError
from dpaudit.generators.g_pate.accounting import Spending
from dpaudit.generators.g_pate.config import GPateConfig
from dpaudit.generators.g_pate.transcript import log_answer_probability

#: (Q, A) cells of smaller probability (in both worlds) are dropped.
NEGLIGIBLE = 1e-16
#: n0 is kept within this many standard deviations of its mean (both worlds).
SPAN = 9.0


@dataclass(frozen=True, kw_only=True, slots=True)
class CanaryLaw:
    """The canary transcript's law in both worlds, as the flat list of its
    ``(Q, A, n0)`` cells (``nl`` is summed in closed form by :func:`canary_delta`).

    Attributes:
        with_target: ``[4]`` probabilities of ``U``, bin 0, bin ``bins - 1`` and one
            given middle bin, counts ``[k - 1, 0, ..., 1]``.
        without: the same with counts ``[k, 0, ..., 0]``.
        weight_with: ``[C]`` ``P'(Q, A) B'(n0 | A)`` of each cell.
        weight_without: ``[C]`` ``P(Q, A) B(n0 | A)``.
        base: ``[C]`` the privacy loss of the cell with ``nl = 0``.
        slope: the privacy loss of one more ``nl`` (``l_l - l_m``).
        rest: ``[C]`` ``A - n0``, the trials of ``nl``.
        p_last_with, p_last_without: the probability that an answer not in bin 0
            is in bin ``bins - 1``, in each world.
        dropped: the probability (with the target) of the cells dropped.
        stops: the distinct ``Q`` at which the transcript stops (with mass).
        dropped_without: the probability (without the target) of the cells
            dropped.
    """

    with_target: NDArray[np.float64]
    without: NDArray[np.float64]
    weight_with: NDArray[np.float64]
    weight_without: NDArray[np.float64]
    base: NDArray[np.float64]
    slope: float
    rest: NDArray[np.int64]
    p_last_with: float
    p_last_without: float
    dropped: float
    stops: tuple[int, ...]
    dropped_without: float = 0.0


def outcome_probabilities(
    config: GPateConfig, *, holders_with: int = 1, holders_without: int = 0
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``(with_target, without)``: each ``[4]``, the probabilities of ``U``, bin 0,
    bin ``bins - 1`` and one middle bin (0 when ``bins == 2``), with ``h`` of the
    ``k`` teachers holding the target (counts ``[k - h, 0, ..., h]``; the game's
    worlds: ``h = 1`` and ``h = 0``).

    >>> w, wo = outcome_probabilities(GPateConfig(epsilon=1.0, delta=1e-5,
    ...     num_teachers=2, bins=3, sigma1=1.0, sigma2=1.0))
    >>> round(float(w[0] + w[1] + w[2] + w[3]), 12), round(float(wo.sum()), 12)
    (1.0, 1.0)
    """
    k, bins = config.num_teachers, config.bins
    out = []
    for holders in (holders_with, holders_without):
        if not 0 <= holders <= k:
            raise InvalidParameterError(
                f"`holders` must be in 0..{k} (the teachers). Got {holders}."
            )
        counts = np.zeros(bins)
        counts[0], counts[bins - 1] = k - holders, holders
        rows = torch.from_numpy(np.tile(counts, (4, 1)))
        ans = torch.tensor([False, True, True, True], device="cpu")
        mid = 1 if bins > 2 else 0
        win = torch.tensor([-1, 0, bins - 1, mid], device="cpu")
        lp = log_answer_probability(
            rows,
            ans,
            win,
            threshold=config.threshold_count,
            sigma1=config.sigma1,
            sigma2=config.sigma2,
        ).numpy()
        p = np.exp(lp)
        if bins == 2:
            p[3] = 0.0
        out.append(p)
    return out[0], out[1]


def _admitted(config: GPateConfig, t: int) -> int:
    """The most answered queries after ``t`` iterations with which iteration ``t``
    is admitted (-1: none): the accountant's worst-case charge grows with the
    answered count, so admission is a threshold on it."""
    spend = Spending(config, 1)
    per = spend.per_iteration
    q = t * per

    def ok(a: int) -> bool:
        worst = spend._eps(np.array([q + per]), np.array([a + per]))
        return bool(worst[0] <= config.epsilon)

    if not ok(0):
        return -1
    if ok(q):
        return q
    lo, hi = 0, q  # ok(lo), not ok(hi)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if ok(mid) else (lo, mid)
    return lo


def canary_law(
    config: GPateConfig, *, holders_with: int = 1, holders_without: int = 0
) -> CanaryLaw:
    """The exact law of the canary transcript in both worlds (data-independent
    accountant only; ``holders``: as in :func:`outcome_probabilities`): the
    stopped law of ``(Q, A)`` by a recursion over iterations
    on the number answered, then the binomial law of ``n0`` given ``A``.

    Raises:
        InvalidParameterError: under ``unsanitised_data_dependent`` (its stopping
            reads the counts, not only the answers).
    """
    if config.unsanitised_data_dependent:
        raise InvalidParameterError(
            "`config`: the exact canary privacy needs the data-independent stopping "
            "rule; unsanitised_data_dependent stops on the counts."
        )
    w, wo = outcome_probabilities(
        config, holders_with=holders_with, holders_without=holders_without
    )
    if holders_with == holders_without:
        raise InvalidParameterError(
            "`holders_with` and `holders_without` must differ (equal counts: the "
            "transcript has the same law in both worlds, delta = 0)."
        )
    per = config.batch_size * config.projection_dim
    laws = [
        stats.binom.pmf(np.arange(per + 1), per, float(1.0 - p[0])) for p in (w, wo)
    ]
    # f[i][a - lo]: probability (world i) of being active with a answered.
    lo, f = 0, [np.ones(1), np.ones(1)]
    cells_q, cells_a, mass_w, mass_wo = [], [], [], []
    dropped = np.zeros(2)  # with, without the target
    for t in range(config.max_iterations + 1):
        # The cap stops every path.
        cap = _admitted(config, t) if t < config.max_iterations else -1
        a = lo + np.arange(f[0].size)
        stop = a > cap
        keep = stop & ((f[0] > NEGLIGIBLE) | (f[1] > NEGLIGIBLE))
        dropped += [float(fi[stop & ~keep].sum()) for fi in f]
        cells_q.append(np.full(int(keep.sum()), t * per, dtype=np.int64))
        cells_a.append(a[keep])
        mass_w.append(f[0][keep])
        mass_wo.append(f[1][keep])
        go = ~stop
        if not go.any():
            break
        f = [np.convolve(np.where(go, fi, 0.0), law) for fi, law in zip(f, laws)]
        # Trim the window to the mass that matters (dropped mass is counted).
        live = np.flatnonzero((f[0] > NEGLIGIBLE * 1e-3) | (f[1] > NEGLIGIBLE * 1e-3))
        first, last = int(live[0]), int(live[-1]) + 1
        dropped += [float(fi[:first].sum() + fi[last:].sum()) for fi in f]
        f = [fi[first:last] for fi in f]
        lo += first
    queries = np.concatenate(cells_q)
    answered = np.concatenate(cells_a)
    m_w, m_wo = np.concatenate(mass_w), np.concatenate(mass_wo)
    # Privacy losses of one query's outcomes; the bin laws given answered.
    lu, la = math.log(w[0] / wo[0]), math.log((1 - w[0]) / (1 - wo[0]))
    r_w, r_wo = w[1:] / (1 - w[0]), wo[1:] / (1 - wo[0])
    l0, ll = math.log(r_w[0] / r_wo[0]), math.log(r_w[1] / r_wo[1])
    lm = math.log(r_w[2] / r_wo[2]) if config.bins > 2 else 0.0
    # n0 given A, within SPAN standard deviations in either world.
    lows, highs = [], []
    for r in (r_w[0], r_wo[0]):
        mean, sd = answered * r, np.sqrt(answered * r * (1 - r))
        lows.append(np.maximum(0, np.floor(mean - SPAN * sd - 1)))
        highs.append(np.minimum(answered, np.ceil(mean + SPAN * sd + 1)))
    low = np.minimum(*lows).astype(np.int64)
    size = (np.maximum(*highs).astype(np.int64) - low + 1).astype(np.int64)
    cell = np.repeat(np.arange(queries.size), size)
    n0 = low[cell] + (np.arange(cell.size) - np.repeat(np.cumsum(size) - size, size))
    a_c, q_c = answered[cell], queries[cell]
    b_w = stats.binom.pmf(n0, a_c, r_w[0])
    b_wo = stats.binom.pmf(n0, a_c, r_wo[0])
    for i, (m_i, b_i) in enumerate(((m_w, b_w), (m_wo, b_wo))):
        kept = np.bincount(cell, weights=b_i, minlength=queries.size)
        dropped[i] += float((m_i * np.clip(1.0 - kept, 0.0, None)).sum())
    return CanaryLaw(
        with_target=w,
        without=wo,
        weight_with=m_w[cell] * b_w,
        weight_without=m_wo[cell] * b_wo,
        base=(q_c - a_c) * lu + a_c * la + n0 * l0 + (a_c - n0) * lm,
        slope=ll - lm,
        rest=a_c - n0,
        p_last_with=float(r_w[1] / (1 - r_w[0])),
        p_last_without=float(r_wo[1] / (1 - r_wo[0])),
        dropped=float(dropped[0]),
        stops=tuple(sorted({int(q) for q in queries})),
        dropped_without=float(dropped[1]),
    )


def canary_delta(law: CanaryLaw, epsilon: float, *, reverse: bool = False) -> float:
    """``delta(epsilon)`` of the canary transcript: the hockey-stick divergence of
    its law with the target from its law without (``reverse``: of the law without
    from the law with, the event ``L < -epsilon``), exact up to the dropped mass
    (added: an upper bound)."""
    c = law.slope
    # The event: L > eps (forward) or L < -eps (reverse), L = base + c * nl.
    bound = -epsilon if reverse else epsilon
    upper = (c > 0) != reverse  # the event is nl above a count (else below one)
    if c == 0:
        s_w = s_wo = ((law.base < bound) if reverse else (law.base > bound)).astype(
            np.float64
        )
    elif upper:
        m = np.floor((bound - law.base) / c)  # the event iff nl > m
        s_w = stats.binom.sf(m, law.rest, law.p_last_with)
        s_wo = stats.binom.sf(m, law.rest, law.p_last_without)
    else:
        m = np.ceil((bound - law.base) / c) - 1  # the event iff nl <= m
        s_w = stats.binom.cdf(m, law.rest, law.p_last_with)
        s_wo = stats.binom.cdf(m, law.rest, law.p_last_without)
    first, second = (
        float((law.weight_with * s_w).sum()),
        float((law.weight_without * s_wo).sum()),
    )
    if reverse:
        return max(0.0, second - math.exp(epsilon) * first) + law.dropped_without
    return max(0.0, first - math.exp(epsilon) * second) + law.dropped


def canary_epsilon(law: CanaryLaw, delta: float) -> float:
    """The smallest epsilon >= 0 with :func:`canary_delta` ``<= delta`` in both
    directions (to 1e-6): the larger direction's epsilon."""
    if not 0 < delta < 1:
        raise InvalidParameterError(f"`delta` must be in (0, 1). Got {delta!r}.")

    def excess(e: float) -> float:
        both = (canary_delta(law, e), canary_delta(law, e, reverse=True))
        return max(both) - delta

    if excess(0.0) <= 0:
        return 0.0
    hi = 1.0
    while excess(hi) > 0:
        hi *= 2.0
    return float(brentq(excess, 0.0, hi, xtol=1e-7, rtol=1e-9))
