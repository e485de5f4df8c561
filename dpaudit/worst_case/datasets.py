"""Worst-case neighbouring datasets.

The audit study's worst case: four records (0, 0, 0) and the target (1, 1, 1), with a
binary public domain. A generator trained with the target must be indistinguishable
from one trained without it; any difference the attack sees is membership leaking.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from dpaudit.data import Column, Dataset, Domain
from dpaudit.errors import InvalidParameterError

WORST_CASE_COLUMNS = ("a", "b", "c")


def worst_case_domain(n_columns: int = 3) -> Domain:
    """The public domain of the worst case: ``n_columns`` binary columns."""
    names = WORST_CASE_COLUMNS if n_columns == 3 else tuple(f"x{i}" for i in range(n_columns))
    return Domain(tuple(Column(name=n, kind="binary") for n in names))


def worst_case_dataset(*, n_rows: int = 4, n_columns: int = 3) -> Dataset:
    """The study's worst case: ``n_rows`` records of zeros (the dataset D, without the
    target); the target, all ones, is :func:`worst_case_target`."""
    if n_rows < 1:
        raise InvalidParameterError(f"`n_rows` must be >= 1. Got {n_rows}.")
    domain = worst_case_domain(n_columns)
    train = pd.DataFrame(np.zeros((n_rows, n_columns), dtype=np.int64), columns=domain.names)
    return Dataset(
        name="worst-case",
        train=train,
        domain=domain,
        citation="Worst case of Ganev, Annamalai and De Cristofaro (2024).",
    )


def worst_case_target(domain: Domain) -> pd.DataFrame:
    """The worst case's target record: ones in every column (one row)."""
    return pd.DataFrame([dict.fromkeys(domain.names, 1)]).astype(np.int64)


def neighbouring_pair(
    data: pd.DataFrame, target: pd.DataFrame | Mapping[str, Any], *, domain: Domain
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(D, D ∪ {target}) with ``target`` validated against the public domain.

    An out-of-domain target is refused (:class:`dpaudit.errors.DataError`) unless the
    user widens the domain.
    """
    row = target if isinstance(target, pd.DataFrame) else pd.DataFrame([dict(target)])
    if len(row) != 1:
        raise InvalidParameterError(f"`target` must be one record. Got {len(row)} rows.")
    domain.validate(row, name="target record")
    row = domain.cast(row)
    base = domain.cast(data)
    return base, pd.concat([base, row], ignore_index=True)
