"""Scoring each canary from one release: the one-run game's attack.

A score is evidence that a canary was included: the higher, the more likely. The
attack sees the release and the public canaries, never the inclusion bits.

- ``point`` canaries (distinct far points): the distance from the canary to its
  closest released row, negated (columns scaled to [0, 1] by the public domain). A
  release that reproduces a canary scores it 0, the highest possible.
- ``category`` canaries (a categorical value each): how many released rows carry the
  canary's value. A library that learns category sets from the private data can only
  release the values of included canaries.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from dpaudit.worst_case.canaries import CANARY_COLUMN, CanaryDesign, CanaryKind

__all__ = ["SCORE_NAMES", "score_canaries"]

#: The score of each kind of canary, by the name the result records.
SCORE_NAMES: Mapping[CanaryKind, str] = {
    "point": "canary-distance",
    "category": "canary-presence",
}

_CHUNK = 4096  # release rows per distance block (bounds memory at canaries x 4096)


def _scaled(frame: pd.DataFrame, design: CanaryDesign) -> NDArray[np.float64]:
    columns = []
    for name in design.domain.names:
        col = design.domain[name]
        values = pd.to_numeric(frame[name], errors="coerce").to_numpy(np.float64)
        lower = 0.0 if col.lower is None else float(col.lower)
        upper = 1.0 if col.upper is None else float(col.upper)
        columns.append((values - lower) / ((upper - lower) or 1.0))
    return np.stack(columns, axis=1)


def score_canaries(release: pd.DataFrame, design: CanaryDesign) -> NDArray[np.float64]:
    """One score per canary of ``design`` from one released table.

    >>> from dpaudit.worst_case.canaries import canary_design
    >>> d = canary_design("worst-case", canaries=3)
    >>> score_canaries(d.training_table(np.array([1, 0, 1])), d).tolist()
    [1.0, 0.0, 1.0]
    >>> d = canary_design("worst-case-continuous", canaries=2)
    >>> score_canaries(d.training_table(np.array([0, 1])), d)[1]
    np.float64(-0.0)
    """
    m = len(design.canaries)
    if design.kind == "category":
        released = release[CANARY_COLUMN].astype(str).value_counts()
        values = design.canaries[CANARY_COLUMN].astype(str)
        return np.array([float(released.get(v, 0)) for v in values])
    if len(release) == 0:
        return np.full(m, np.nan)
    canaries = _scaled(design.canaries, design)
    rows = _scaled(release, design)
    rows = rows[~np.isnan(rows).any(axis=1)]
    if len(rows) == 0:
        return np.full(m, np.nan)
    best = np.full(m, np.inf)
    for start in range(0, len(rows), _CHUNK):
        block = rows[start : start + _CHUNK]
        d2 = ((canaries[:, None, :] - block[None, :, :]) ** 2).sum(axis=2)
        best = np.minimum(best, d2.min(axis=1))
    return np.asarray(-np.sqrt(best), dtype=np.float64)
