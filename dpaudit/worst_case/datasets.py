"""Worst-case neighbouring datasets.

The audit study's worst case: four records (0, 0, 0) and the target (1, 1, 1), with a
binary public domain (``worst-case``). A generator trained with the target must be
indistinguishable from one trained without it; any difference the attack sees is
membership leaking. ``worst-case-continuous`` is the same pair over a continuous public
domain, [0, 1] per column: the release is then real valued, and a shift that never
crosses the binary decode threshold 0.5 still reaches the attack (docs/soundness.md).
The dataset D itself is built in :mod:`dpaudit.data` (the data layer loads it by name,
and may not import this module); this module adds the target and the neighbouring pair.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from dpaudit.data import (
    WORST_CASE_COLUMNS,
    Domain,
    worst_case_dataset,
    worst_case_domain,
)
from dpaudit.datasets.names import WORST_CASE_NAMES
from dpaudit.validation import require

__all__ = [
    "WORST_CASE_COLUMNS",
    "WORST_CASE_NAMES",
    "neighbouring_pair",
    "worst_case_dataset",
    "worst_case_domain",
    "worst_case_target",
]


def worst_case_target(domain: Domain) -> pd.DataFrame:
    """The worst case's target record: ones in every column (one row), typed as
    ``domain`` casts it (integers on the binary domain, floats on the continuous one)."""
    return domain.cast(pd.DataFrame([dict.fromkeys(domain.names, 1)]).astype(np.int64))


def neighbouring_pair(
    data: pd.DataFrame, target: pd.DataFrame | Mapping[str, Any], *, domain: Domain
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(D, D ∪ {target}) with ``target`` validated against the public domain.

    An out-of-domain target is refused (:class:`dpaudit.errors.DataError`) unless the
    user widens the domain.
    """
    row = target if isinstance(target, pd.DataFrame) else pd.DataFrame([dict(target)])
    require(len(row) == 1, "target", "one record (a table of one row)", len(row))
    domain.validate(row, name="target record")
    row = domain.cast(row)
    base = domain.cast(data)
    return base, pd.concat([base, row], ignore_index=True)
