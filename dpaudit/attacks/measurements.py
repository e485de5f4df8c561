"""The exact likelihood-ratio attack on a measurement transcript (white box, fits
nothing).

Under ``--release transcript`` a plug-in or adapter that states its measurements
(``privacy_transcript``, docs/plugins.md) releases, per round, a list of noisy counts:
record ``m``'s answer ``i`` is the number of training records whose values on
``m.columns`` fall in the answer's cells, plus noise of the stated kind and scale.
The adversary holds both worlds ``D`` and ``D' = D ∪ {target}``, so it knows each
answer's exact count in both (``c'_i`` and ``c_i``), and scores a round by

    sum_i log p(noisy_i | c'_i) - log p(noisy_i | c_i)

under the stated noise (Gaussian: ``((y - c)^2 - (y - c')^2) / (2 sigma^2)``;
Laplace: ``(|y - c| - |y - c'|) / b``): the Neyman-Pearson statistic of the stated
mechanism (Neyman and Pearson 1933). It trains nothing; the audit picks its threshold
on validation rounds as for any threshold attack. A mechanism that adds the noise it
states is scored at its exact privacy; one that adds less moves the noisy answers
further from the other world's counts than the stated noise allows, and is caught.

Each round's features also carry the exact privacy of its measurements, computed
from the count changes ``c'_i - c_i`` and the stated noise alone: the Gaussian
answers' ``mu^2 = sum (c'_i - c_i)^2 / sigma^2`` (they compose to one Gaussian
mechanism of that mu), and epsilon at the audit's delta of every answer composed
through dp-accounting's privacy-loss distributions (Gaussian and Laplace, the
Laplace answer's sensitivity its count change).
"""

from __future__ import annotations

import functools
import math
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from dpaudit.attacks.likelihood_ratio import LikelihoodRatioAttack
from dpaudit.generators.foreign.transcript import Measurement

#: The attack's name in results and reports.
MEASUREMENT_RATIO = "measurement-ratio"
#: The feature columns of a round (column 0 is the score).
FEATURES = (
    "log_likelihood_ratio",
    "gaussian_mu_squared",
    "eps_exact",
    "records",
    "gaussian_answers",
    "laplace_answers",
    "answers_changed",
)
#: Ratios (count change / scale) equal to this many digits are one Laplace
#: mechanism in the composition (float noise in the division alone).
_DIGITS = 12


def _log_ratio(
    noise: str, scale: float, y: NDArray[Any], c0: NDArray[Any], c1: NDArray[Any]
) -> float:
    """``sum log p(y | c1) - log p(y | c0)`` under the stated noise."""
    if noise == "gaussian":
        return float(np.sum(((y - c0) ** 2 - (y - c1) ** 2) / (2.0 * scale**2)))
    return float(np.sum((np.abs(y - c0) - np.abs(y - c1)) / scale))


#: The most points of the privacy-loss grid :func:`exact_epsilon` builds: a
#: composition whose loss spreads wider than ``1e-4 x`` this is discretised more
#: coarsely (still pessimistically), so a million noisy counts cost seconds.
_GRID_POINTS = 1_000_000


def _gaussian_epsilon(mu: float, delta: float) -> float:
    """Epsilon at ``delta`` of a ``mu``-Gaussian mechanism alone: dp-accounting's
    analytic ``delta(eps)`` (no discretisation) inverted by bisection to 1e-9
    relative (the smallest eps found with ``delta(eps) <= delta``, rounded up)."""
    from dp_accounting.pld.privacy_loss_mechanism import GaussianPrivacyLoss

    loss = GaussianPrivacyLoss(1.0, sensitivity=mu)
    lo, hi = 0.0, 1.0
    if loss.get_delta_for_epsilon(0.0) <= delta:
        return 0.0
    while loss.get_delta_for_epsilon(hi) > delta:
        lo, hi = hi, 2.0 * hi
    while hi - lo > 1e-9 * hi:
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if loss.get_delta_for_epsilon(mid) <= delta else (mid, hi)
    return hi


@functools.lru_cache(maxsize=1024)
def exact_epsilon(
    mu: float, laplace: tuple[tuple[float, int], ...], delta: float
) -> float:
    """Epsilon at ``delta`` of a ``mu``-Gaussian mechanism composed with ``count``
    Laplace mechanisms of ratio ``sensitivity / b`` per ``(ratio, count)``. The
    Gaussian alone: its analytic ``delta(eps)`` inverted (exact to 1e-9). With Laplace
    answers: dp-accounting's privacy-loss distributions, discretised pessimistically
    at 1e-4 (at most that above the exact value per composed mechanism), or more
    coarsely where the composed loss spreads over more than :data:`_GRID_POINTS`
    such steps (the interval then grows with the loss's spread: still an upper
    bound, and seconds, not hours, for a million noisy counts); 0 for nothing.

    >>> round(exact_epsilon(0.0, ((0.5, 1),), 1e-5), 3)
    0.5
    >>> round(exact_epsilon(1.0, (), 1e-5), 3)
    4.377
    """
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    if not laplace:
        return _gaussian_epsilon(mu, delta) if mu > 0 else 0.0
    # The loss's spread: the Gaussian's (mean mu^2/2, sd mu) and every Laplace
    # answer's (at most its ratio either way), summed as widths of a few sd.
    spread = mu * mu / 2.0 + 20.0 * mu
    spread += 20.0 * math.sqrt(sum(r * r * k for r, k in laplace))
    spread += min(sum(r * k for r, k in laplace), spread)
    interval = max(1e-4, spread / _GRID_POINTS)
    dists = []
    if mu > 0:
        dists.append(
            pld_lib.from_gaussian_mechanism(
                1.0, sensitivity=mu, value_discretization_interval=interval
            )
        )
    for ratio, count in laplace:
        one = pld_lib.from_laplace_mechanism(
            1.0, sensitivity=ratio, value_discretization_interval=interval
        )
        dists.append(one.self_compose(count) if count > 1 else one)
    total = functools.reduce(lambda a, b: a.compose(b), dists)
    return max(0.0, float(total.get_epsilon_for_delta(delta)))


def _objects(values: list[Any]) -> NDArray[Any]:
    """``values`` as a one-dimensional object array (Python values kept)."""
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


class MeasurementAttack(LikelihoodRatioAttack):
    """The exact likelihood-ratio test of a measurement transcript. It shares the
    replay attack's ``fit`` (nothing to learn), ``score`` (column 0) and refusal of
    synthetic tables; nothing is replayed: the counts are exact.

    Args:
        without: ``D``.
        with_target: ``D ∪ {target}``.
        delta: the delta of each round's exact epsilon.
        name: the attack's name (default ``measurement-ratio``).
    """

    trains_classifier: bool = False
    fits: bool = False
    """Learns nothing from training rounds (the statistic is exact)."""

    def __init__(
        self,
        *,
        without: pd.DataFrame,
        with_target: pd.DataFrame,
        delta: float,
        name: str = MEASUREMENT_RATIO,
    ) -> None:
        self.name = name
        self.worlds = (without, with_target)
        self.delta = float(delta)
        self._columns: dict[tuple[str, ...], list[NDArray[Any]]] = {}
        self.fitted_ = False

    @property
    def n_features(self) -> int:
        return len(FEATURES)

    @property
    def feature_names(self) -> list[str]:
        return list(FEATURES)

    def _world_columns(self, columns: tuple[str, ...]) -> list[NDArray[Any]]:
        """Per column of ``columns``: the values of ``D``'s records, then ``D'``'s
        (cached; numbers as NumPy numbers, anything else as Python objects)."""
        if columns not in self._columns:
            out = []
            for c in columns:
                parts = [table[c] for table in self.worlds]
                values = [p.to_numpy() for p in parts]
                if any(v.dtype.kind not in "iuf" for v in values):
                    values = [_objects(p.tolist()) for p in parts]
                out.append(np.concatenate(values))
            self._columns[columns] = out
        return self._columns[columns]

    def exact_counts(
        self, record: Measurement
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Each answer's exact count in ``D`` and in ``D'``: the records of each
        world and the cells coded together by value (``pandas.factorize``, which
        matches values as a dict does: 1 and 1.0 alike), then counted by code."""
        worlds = self._world_columns(record.columns)
        n0 = len(self.worlds[0])
        n = len(worlds[0])
        key: NDArray[np.int64] | None = None
        for values, cells in zip(worlds, record.cell_columns(), strict=True):
            if values.dtype.kind in "iuf" and cells.dtype.kind in "iuf":
                both = np.concatenate([values, cells])
            else:
                both = np.concatenate([values.astype(object), cells.astype(object)])
            codes, uniques = pd.factorize(both)
            if key is None:
                key = codes.astype(np.int64)
            else:
                key = pd.factorize(key * (len(uniques) + 1) + codes + 1)[0]
        assert key is not None
        size = int(key.max(initial=-1)) + 1
        cell_key = key[n:]
        out = []
        for part in (key[:n0], key[n0:n]):
            cell = np.bincount(part, minlength=size)[cell_key].astype(np.float64)
            if record.sets is None:
                out.append(cell)
            else:
                out.append(np.array([cell[list(s)].sum() for s in record.sets]))
        return out[0], out[1]

    def round_features(self, records: Sequence[Measurement]) -> list[float]:
        """One round's features (:data:`FEATURES`)."""
        llr, mu2, changed = 0.0, 0.0, 0
        answers = {"gaussian": 0, "laplace": 0}
        laplace: Counter[float] = Counter()
        for record in records:
            c0, c1 = self.exact_counts(record)
            y = np.asarray(record.noisy, dtype=np.float64)
            llr += _log_ratio(record.noise, record.scale, y, c0, c1)
            change = np.abs(c1 - c0)
            answers[record.noise] += int(change.size)
            changed += int(np.count_nonzero(change))
            if record.noise == "gaussian":
                mu2 += float(np.sum((change / record.scale) ** 2))
            else:
                for d in change[change > 0]:
                    laplace[round(float(d) / record.scale, _DIGITS)] += 1
        eps = exact_epsilon(
            round(math.sqrt(mu2), _DIGITS), tuple(sorted(laplace.items())), self.delta
        )
        return [
            llr,
            mu2,
            eps,
            float(len(records)),
            float(answers["gaussian"]),
            float(answers["laplace"]),
            float(changed),
        ]

    def featurize_transcripts(
        self, transcripts: Sequence[Sequence[Measurement]]
    ) -> NDArray[np.float64]:
        """``[R, 7]``: each round's features (:data:`FEATURES`)."""
        rows = [self.round_features(t) for t in transcripts]
        return np.array(rows, dtype=np.float64).reshape(len(rows), self.n_features)
