"""Canaries for the one-run game: records a release can reveal one by one.

The one-run game (:mod:`dpaudit.audit.games.one_run`) trains on a fixed base table plus
``m`` canaries, each included with probability 1/2, and guesses from one release
which canaries were included. The guesses can only be as good as the release lets
the canaries be told apart, so the canaries are designed per dataset:

``worst-case-continuous`` (kind ``point``)
    The base is ``N - 1`` records at the origin of [0, 1]^3; the canaries are
    distinct far points: a grid in the corner [0.5, 1]^3 (every canary at distance
    >= 0.5 * sqrt(3) from the base and as far from the others as the grid allows).
    A release that reproduces a canary, or puts mass near it, shows that canary and
    no other.
``worst-case`` (kind ``category``)
    The base is ``N - 1`` records (0, 0, 0) of the binary worst case; each canary is
    (1, 1, 1) with its own value of an added categorical column ``canary`` (the base
    records have the value ``base``). The public domain lists every canary's value,
    so a generator that reads categories from the domain learns nothing from the
    set; a library that learns each column's set of values from the private data
    (smartnoise with ``preprocessing=library``) can only release the values of the
    canaries that were included, and shows each of them separately.
``worst-case-unique`` (kind ``category``; ``--game one-run`` only)
    The same four columns, every one categorical over ``base`` and the canaries'
    values: the base is ``N - 1`` records ``base`` in every column, canary ``j`` holds
    its own value ``c_j`` in EVERY column. Each canary then owns a cell of every
    marginal (one-way or k-way: the cell of its own value in each of the marginal's
    columns), so a marginal mechanism's answers about a canary are all its own and
    its own cells carry the whole per-record sensitivity; on ``worst-case`` only the
    ``canary`` column's cell is its own and the binary columns' cells are shared by
    every canary (a binary column has two values: it cannot hold one per canary, so
    this design has none). The price: a k-way marginal has ``(m + 1)^k`` cells.

The canaries are public (the auditor chose them): only which of them were included
is secret. Nothing here draws a random number.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from dpaudit.data import Domain, worst_case_dataset, worst_case_domain
from dpaudit.data.domain import Column
from dpaudit.datasets.names import ONE_RUN_NAMES, WORST_CASE_NAMES
from dpaudit.errors import InvalidParameterError
from dpaudit.validation import check_scalar

__all__ = [
    "BASE_VALUE",
    "CANARY_COLUMN",
    "DESIGN_NAMES",
    "CanaryDesign",
    "CanaryKind",
    "canary_design",
]

CanaryKind = Literal["point", "category"]
#: The categorical column of the ``category`` canaries, and the base records' value.
CANARY_COLUMN = "canary"
BASE_VALUE = "base"
#: The datasets the one-run game designs canaries for.
DESIGN_NAMES = (*WORST_CASE_NAMES, *ONE_RUN_NAMES)


@dataclass(frozen=True, kw_only=True)
class CanaryDesign:
    """The base table, the canaries and the public domain of a one-run game.

    Attributes:
        dataset: the dataset the design is for.
        kind: ``point`` (distinct far points) or ``category`` (a value each).
        domain: the public domain (of the base and the canaries).
        base: the records every fit trains on.
        canaries: one row per canary, typed as ``domain`` casts it.
    """

    dataset: str
    kind: CanaryKind
    domain: Domain
    base: pd.DataFrame
    canaries: pd.DataFrame

    def training_table(self, included: np.ndarray) -> pd.DataFrame:
        """The base followed by the canaries whose entry of ``included`` is true
        (in canary order)."""
        chosen = self.canaries.iloc[np.flatnonzero(included)]
        return pd.concat([self.base, chosen], ignore_index=True)


def canary_value(index: int, width: int) -> str:
    """The categorical value of canary ``index`` (``c0007`` for width 4)."""
    return f"c{index:0{width}d}"


def _grid_points(m: int, dims: int) -> np.ndarray:
    """``m`` distinct points of a grid in [0.5, 1]^dims, spread over the corner."""
    per_axis = max(2, math.ceil(m ** (1.0 / dims)))
    axis = np.linspace(0.5, 1.0, per_axis)
    mesh = np.stack(np.meshgrid(*([axis] * dims), indexing="ij"), axis=-1)
    grid = mesh.reshape(-1, dims)
    # Evenly spaced picks over the grid when it has more points than canaries.
    pick = np.linspace(0, len(grid) - 1, m).round().astype(np.int64)
    return np.asarray(grid[pick], dtype=np.float64)


def canary_design(dataset: str, *, canaries: int, base_rows: int = 4) -> CanaryDesign:
    """The one-run game's design for ``dataset`` (:data:`DESIGN_NAMES`).

    Args:
        dataset: ``worst-case``, ``worst-case-continuous`` or ``worst-case-unique``.
        canaries: how many canaries (>= 2).
        base_rows: records of the base table (``--dataset-rows N`` gives ``N - 1``).

    Raises:
        InvalidParameterError: another dataset, or a bad count.

    >>> design = canary_design("worst-case", canaries=3)
    >>> list(design.canaries["canary"]), design.domain[CANARY_COLUMN].categories
    (['c0', 'c1', 'c2'], ('base', 'c0', 'c1', 'c2'))
    >>> float(canary_design("worst-case-continuous", canaries=8).canaries.min().min())
    0.5
    >>> u = canary_design("worst-case-unique", canaries=2)
    >>> u.canaries.values.tolist(), u.domain["a"].categories
    ([['c0', 'c0', 'c0', 'c0'], ['c1', 'c1', 'c1', 'c1']], ('base', 'c0', 'c1'))
    """
    check_scalar(canaries, "canaries", kind=int, min_val=2)
    check_scalar(base_rows, "base_rows", kind=int, min_val=1)
    if dataset not in DESIGN_NAMES:
        raise InvalidParameterError(
            f"`--game one-run` designs its canaries per dataset and runs on "
            f"{', '.join(DESIGN_NAMES[:-1])} or {DESIGN_NAMES[-1]}. Got {dataset!r}."
        )
    if dataset in ONE_RUN_NAMES:
        return _unique_design(dataset, canaries=canaries, base_rows=base_rows)
    continuous = dataset == WORST_CASE_NAMES[1]
    base = worst_case_dataset(n_rows=base_rows, continuous=continuous).train
    if continuous:
        domain = worst_case_domain(continuous=True)
        points = _grid_points(canaries, len(domain.names))
        table = pd.DataFrame(points, columns=domain.names)
        return CanaryDesign(
            dataset=dataset,
            kind="point",
            domain=domain,
            base=domain.cast(base),
            canaries=domain.cast(table),
        )
    width = len(str(canaries - 1))
    values = tuple(canary_value(i, width) for i in range(canaries))
    binary = worst_case_domain()
    domain = Domain(
        (
            *(binary[name] for name in binary.names),
            Column(
                name=CANARY_COLUMN,
                kind="categorical",
                categories=(BASE_VALUE, *values),
            ),
        )
    )
    base = base.assign(**{CANARY_COLUMN: BASE_VALUE})
    table = pd.DataFrame(dict.fromkeys(binary.names, 1), index=range(canaries))
    table[CANARY_COLUMN] = list(values)
    return CanaryDesign(
        dataset=dataset,
        kind="category",
        domain=domain,
        base=domain.cast(base),
        canaries=domain.cast(table),
    )


def _unique_design(dataset: str, *, canaries: int, base_rows: int) -> CanaryDesign:
    """``worst-case-unique``: the worst case's columns and ``canary``, every one
    categorical over ``base`` and the canaries' values; the base ``base`` in every
    column, canary ``j`` its own value in every column (public, fixed before the
    bits: nothing here reads them)."""
    width = len(str(canaries - 1))
    values = tuple(canary_value(i, width) for i in range(canaries))
    names = (*worst_case_domain().names, CANARY_COLUMN)
    domain = Domain(
        tuple(
            Column(name=name, kind="categorical", categories=(BASE_VALUE, *values))
            for name in names
        )
    )
    base = pd.DataFrame(dict.fromkeys(names, BASE_VALUE), index=range(base_rows))
    table = pd.DataFrame({name: list(values) for name in names})
    return CanaryDesign(
        dataset=dataset,
        kind="category",
        domain=domain,
        base=domain.cast(base),
        canaries=domain.cast(table),
    )
