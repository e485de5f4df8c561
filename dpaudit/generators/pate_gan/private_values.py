"""The ``private_categories`` defect: value sets learned from the private data.

smartnoise-synth 1.0.8, given categorical or ordinal column hints, encodes each such
column with a ``LabelTransformer`` chained to a ``OneHotEncoder`` (``snsynth/transform/
type_map.py``), both fitted on the private data: the one-hot block has one output per
value the data hold, and the release decodes by argmax over those outputs only
(``label.py``, ``onehot.py``). A value that only the target holds is released only
when the target is in the data. synthcity's encoder of discrete columns does the same.

dpaudit keeps one encoded layout per model batch (the public domain's), so the defect
is reproduced where it acts, on the release: a categorical column decodes by argmax
over the categories present in the private data, a binary column with one value in the
data always releases that value (the real code's one-hot block of width one), and an
integer column releases the present value nearest to the decoded one. The support of
the release is then exactly the real code's. Training is unchanged (the real code's
generator has no output for an absent value; dpaudit's has one the release ignores).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from dpaudit.data import Domain

ValueSets = dict[str, NDArray[np.generic]]


def value_sets(domain: Domain, data: pd.DataFrame) -> ValueSets:
    """The sorted distinct values of every binary, categorical and integer column of
    ``data`` (the private table).

    >>> from dpaudit.data import worst_case_dataset, worst_case_domain
    >>> sets = value_sets(worst_case_domain(), worst_case_dataset(n_rows=4).train)
    >>> {name: values.tolist() for name, values in sets.items()}
    {'a': [0.0], 'b': [0.0], 'c': [0.0]}
    """
    out: ValueSets = {}
    for col in domain.columns:
        if col.kind == "categorical":
            present = set(pd.unique(data[col.name]).tolist())
            assert col.categories is not None
            out[col.name] = np.asarray(
                [c for c in col.categories if c in present], dtype=object
            )
        elif col.kind in ("binary", "integer"):
            values = pd.to_numeric(data[col.name]).to_numpy(dtype=float)
            out[col.name] = np.unique(np.rint(values))
    return out


def restrict_encoded(
    encoded: NDArray[np.floating],
    domain: Domain,
    sets: Mapping[str, NDArray[np.generic]],
) -> NDArray[np.float64]:
    """The generator's outputs (``[n, encoded_dim]``, the model's [0, 1] space) with
    every column restricted to its private value set, before decoding.

    A categorical block's absent categories can never win the argmax; a binary column
    with one value holds that value; an integer column is moved to the nearest present
    value (in the encoded space).
    """
    out = np.array(encoded, dtype=np.float64)
    for col, sl in zip(domain.columns, domain.slices()):
        values = sets.get(col.name)
        if values is None:
            continue
        if col.kind == "categorical":
            assert col.categories is not None
            present = np.isin(np.asarray(col.categories, dtype=object), values)
            block = out[:, sl]
            block[:, ~present] = -np.inf
            out[:, sl] = block
        elif col.kind == "binary":
            if len(values) == 1:
                out[:, sl.start] = float(values[0])
        elif col.kind == "integer":
            assert col.lower is not None and col.upper is not None
            span = col.upper - col.lower
            allowed = (
                (values.astype(float) - col.lower) / span
                if span > 0
                else np.zeros(len(values))
            )
            out[:, sl.start] = nearest(np.clip(out[:, sl.start], 0.0, 1.0), allowed)
    return out


def snap_integers(
    frame: pd.DataFrame, domain: Domain, sets: Mapping[str, NDArray[np.generic]]
) -> pd.DataFrame:
    """``frame`` (decoded) with each integer column moved to its nearest present value
    (a guard against rounding after :func:`restrict_encoded`)."""
    for col in domain.columns:
        values = sets.get(col.name)
        if col.kind == "integer" and values is not None and len(values):
            snapped = nearest(
                frame[col.name].to_numpy(dtype=float), values.astype(float)
            )
            frame[col.name] = snapped.astype(np.int64)
    return frame


def nearest(
    x: NDArray[np.floating], allowed: NDArray[np.floating]
) -> NDArray[np.float64]:
    """Each ``x`` moved to the nearest value of the sorted ``allowed`` (ties: the lower).

    >>> nearest(np.array([0.1, 0.5, 0.9]), np.array([0.0, 1.0])).tolist()
    [0.0, 0.0, 1.0]
    """
    a = np.asarray(allowed, dtype=np.float64)
    xs = np.asarray(x, dtype=np.float64)
    hi = np.clip(np.searchsorted(a, xs), 0, len(a) - 1)
    lo = np.clip(hi - 1, 0, len(a) - 1)
    pick = np.where(np.abs(xs - a[lo]) <= np.abs(a[hi] - xs), lo, hi)
    return np.asarray(a[pick], dtype=np.float64)
