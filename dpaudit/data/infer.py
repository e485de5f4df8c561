"""Drafting a :class:`~dpaudit.data.domain.Domain` from a table, for a person to
review (``dpaudit domain infer``): the bounds are read from the data, so they are not
private."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from dpaudit.data.domain import MAX_EXACT_INTEGER, Column, Domain
from dpaudit.errors import DpauditWarning


def infer_domain(data: pd.DataFrame, *, max_categories: int = 20) -> Domain:
    """Drafts a domain from ``data`` for a person to review.

    The bounds are read from the data, so they are *not* private: a record that sets a
    column's extreme leaks through them. Warns with :class:`DpauditWarning`.
    """
    warnings.warn(
        "bounds inferred from the data are not private: review them and replace them "
        "with public bounds before auditing.",
        DpauditWarning,
        stacklevel=2,
    )
    cols = []
    for name in data.columns:
        series = data[name]
        if series.isna().any():
            series = series.dropna()
        if pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(
            series
        ):
            values = series.to_numpy(dtype=float)
            uniq = np.unique(values)
            if set(uniq.tolist()) <= {0.0, 1.0}:
                cols.append(Column(name=str(name), kind="binary"))
            else:
                whole = np.all(values == np.round(values)) and bool(
                    np.abs(values).max() <= MAX_EXACT_INTEGER
                )
                cols.append(
                    Column(
                        name=str(name),
                        kind="integer" if whole else "continuous",
                        lower=float(values.min()),
                        upper=float(values.max()),
                    )
                )
        else:
            cats = sorted(set(series.tolist()), key=str)
            if len(cats) > max_categories:
                warnings.warn(
                    f"column {name!r} has {len(cats)} categories; consider dropping it.",
                    DpauditWarning,
                    stacklevel=2,
                )
            cols.append(
                Column(name=str(name), kind="categorical", categories=tuple(cats))
            )
    return Domain(tuple(cols))
