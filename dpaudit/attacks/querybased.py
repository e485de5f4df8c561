"""Query-based attack: target-matching counting queries + random forest.

Houssiau, Jordon, Cohen, Daniel, Elliott, Geddes, Mole, Rangel-Smith and Szpruch,
"TAPAS: a Toolbox for Adversarial Privacy Auditing of Synthetic Data", NeurIPS 2022
Workshop on Synthetic Data for Empowering ML Research (the "query-based" attack,
after Houssiau et al., "A Framework for Auditable Synthetic Data Generation", 2022).
A generator trained with the target tends to release more records that resemble it,
so the attack counts, in each released dataset, the records matching the target on
subsets of attributes, and trains a random forest on those counts. Every count is
divided by the dataset's size, so features are fractions of rows.

Two modes:

* **Exhaustive** (default when the domain has at most 3 columns, all binary or
  categorical, with at most :data:`EXHAUSTIVE_MAX_CELLS` cells in the full contingency
  table -- the worst case of the audit study is 3 binary columns). Every non-empty
  subset ``S`` of columns (by size, then in ``itertools.combinations`` order) and every
  value combination ``v`` of ``S`` (``itertools.product`` over the columns' values in
  domain order; binary values 0, 1) gives one feature: the fraction of rows with
  ``x_S = v``. For ``d`` binary columns that is ``3^d - 1`` features: the ``2 d``
  one-way marginals, every two-way marginal, ..., and the ``2^d`` cells of the full
  contingency table (``26`` features for 3 columns). The target-matching queries are
  among them; the other cells let the forest see where the missing mass went.
* **Random queries** (wider data). ``n_queries`` (default 100) queries, each a subset
  of columns whose size is drawn uniformly from ``orders`` (default 1, 2, 3; sizes above
  the number of columns are dropped) and whose columns are drawn uniformly without
  replacement; the feature is the fraction of rows matching the target on every
  column of the subset. Binary and categorical columns match on equality.
  Continuous and integer columns match, with ``match="tolerance"``, when
  ``|x - target| <= tolerance * (upper - lower)`` (public bounds; default 5%), or,
  with ``match="bins"``, when ``x`` falls in the same of ``bins`` (default 5)
  equal-width bins of the public bounds as the target.

Counting is vectorised: each condition (column matches, or column equals a value) is a
boolean ``[r, n, C]`` array over a stack of datasets, and every query is a column of a
``[C, Q]`` 0/1 matrix; a row satisfies query ``q`` when the number of its failed
conditions, ``(1 - I) @ M[:, q]``, is zero. No Python loop runs over rows, datasets
or queries.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from dpaudit.attacks.base import (
    ClassifierAttack,
    bin_index,
    check_target,
    featurize_stacked,
    numeric_values,
)
from dpaudit.attacks.classifiers import Model
from dpaudit.data import Domain
from dpaudit.errors import InvalidParameterError
from dpaudit.rng import Rngs
from dpaudit.validation import check_positive_int

#: Largest full contingency table for which ``exhaustive="auto"`` enumerates every cell.
EXHAUSTIVE_MAX_CELLS = 64
#: Largest number of columns for which ``exhaustive="auto"`` enumerates every cell.
EXHAUSTIVE_MAX_COLUMNS = 3

MatchRule = Literal["tolerance", "bins"]


def _discrete_values(domain: Domain) -> list[tuple[Any, ...]] | None:
    """Each column's values (domain order) if every column is binary/categorical."""
    out: list[tuple[Any, ...]] = []
    for col in domain.columns:
        if col.kind == "binary":
            out.append((0, 1))
        elif col.kind == "categorical":
            assert col.categories is not None
            out.append(tuple(col.categories))
        else:
            return None
    return out


def exhaustive_applies(domain: Domain) -> bool:
    """Whether ``exhaustive="auto"`` enumerates the full contingency table."""
    values = _discrete_values(domain)
    if values is None or len(domain) > EXHAUSTIVE_MAX_COLUMNS:
        return False
    return int(np.prod([len(v) for v in values])) <= EXHAUSTIVE_MAX_CELLS


class QueryBasedAttack(ClassifierAttack):
    """Query-based attack (Houssiau et al. 2022, TAPAS) with a random forest.

    The queries are fixed at construction (drawn from ``rng`` in random mode), then
    the forest's ``random_state`` is drawn, so the same seed gives the same attack.

    Args:
        domain: the public domain.
        target: the target record (one row in the domain's columns).
        rng: source of the random queries and of the forest's seed.
        n_queries: number of random queries (random mode).
        orders: allowed query sizes (random mode).
        match: ``tolerance`` or ``bins``, how continuous and integer columns match.
        tolerance: match radius as a fraction of the column's public range.
        bins: equal-width bins of the public range (``match="bins"``).
        exhaustive: ``"auto"`` (see the module docstring), ``True`` (requires binary or
            categorical columns) or ``False`` (random queries even on small domains).
        name: registry name (default ``querybased``).
        n_estimators, n_jobs: passed to the random forest.
        model: the classifier trained: "auto" (default), "forest" or "logistic"
            (:class:`dpaudit.attacks.base.ClassifierAttack`).

    Attributes:
        queries: one entry per feature. Exhaustive mode: a tuple of
            ``(column, value)`` pairs; random mode: a tuple of column names matched
            against the target.

    Raises:
        InvalidParameterError: a bad option or target.
    """

    def __init__(
        self,
        *,
        domain: Domain,
        target: pd.DataFrame | Mapping[str, Any],
        rng: Rngs,
        n_queries: int = 100,
        orders: Sequence[int] = (1, 2, 3),
        match: MatchRule = "tolerance",
        tolerance: float = 0.05,
        bins: int = 5,
        exhaustive: bool | Literal["auto"] = "auto",
        name: str = "querybased",
        n_estimators: int = 100,
        n_jobs: int | None = None,
        model: Model = "auto",
    ) -> None:
        self.domain = domain
        self.target = check_target(target, domain)
        self.n_queries = check_positive_int(n_queries, name="n_queries")
        self.bins = check_positive_int(bins, name="bins")
        if match not in ("tolerance", "bins"):
            raise InvalidParameterError(
                f"`match` must be 'tolerance' or 'bins'. Got {match!r}."
            )
        self.match: MatchRule = match
        if isinstance(tolerance, bool) or not isinstance(tolerance, int | float):
            raise InvalidParameterError(
                f"`tolerance` must be a number in [0, 1]. Got {tolerance!r}."
            )
        if not 0.0 <= float(tolerance) <= 1.0:
            raise InvalidParameterError(
                f"`tolerance` must be in [0, 1] (a fraction of the public range). "
                f"Got {tolerance!r}."
            )
        self.tolerance = float(tolerance)
        orders = tuple(check_positive_int(k, name="orders") for k in orders)
        usable = tuple(sorted({k for k in orders if k <= len(domain)}))
        if not usable:
            raise InvalidParameterError(
                f"`orders` must hold at least one query size between 1 and the number of "
                f"columns ({len(domain)}). Got {orders!r}."
            )
        self.orders = usable
        if exhaustive not in ("auto", True, False):
            raise InvalidParameterError(
                f"`exhaustive` must be 'auto', True or False. Got {exhaustive!r}."
            )
        discrete = _discrete_values(domain)
        if exhaustive is True and discrete is None:
            raise InvalidParameterError(
                "`exhaustive=True` needs binary or categorical columns only; the domain "
                "has continuous or integer columns. Use random queries."
            )
        self.exhaustive = (
            exhaustive_applies(domain) if exhaustive == "auto" else exhaustive
        )

        # Conditions (one boolean per row and condition) and the query matrix.
        names = domain.names
        self._cond_columns = np.zeros(0, dtype=np.intp)
        self._cond_codes = np.zeros(0, dtype=np.float64)
        if self.exhaustive:
            assert discrete is not None
            cond_columns: list[int] = []
            cond_codes: list[int] = []
            first: list[int] = []
            for j, vals in enumerate(discrete):
                first.append(len(cond_columns))
                cond_columns += [j] * len(vals)
                cond_codes += list(range(len(vals)))
            queries: list[tuple[Any, ...]] = []
            masks: list[list[int]] = []
            for size in range(1, len(domain) + 1):
                for subset in itertools.combinations(range(len(domain)), size):
                    for codes in itertools.product(
                        *(range(len(discrete[j])) for j in subset)
                    ):
                        queries.append(
                            tuple(
                                (names[j], discrete[j][c])
                                for j, c in zip(subset, codes)
                            )
                        )
                        masks.append([first[j] + c for j, c in zip(subset, codes)])
            self._cond_columns = np.asarray(cond_columns, dtype=np.intp)
            self._cond_codes = np.asarray(cond_codes, dtype=np.float64)
        else:
            queries, masks = [], []
            draws = rng.numpy
            for _ in range(self.n_queries):
                size = int(draws.choice(self.orders))
                chosen = np.sort(draws.choice(len(domain), size=size, replace=False))
                queries.append(tuple(names[j] for j in chosen))
                masks.append([int(j) for j in chosen])
        self.queries: tuple[tuple[Any, ...], ...] = tuple(queries)
        n_conditions = len(self._cond_columns) if self.exhaustive else len(domain)
        matrix = np.zeros((n_conditions, len(masks)), dtype=np.float32)
        for q, conds in enumerate(masks):
            matrix[conds, q] = 1.0
        self._query_matrix = matrix
        super().__init__(
            name=name, rng=rng, n_estimators=n_estimators, n_jobs=n_jobs, model=model
        )

        # Per-column matching rule against the target (random mode).
        target_values = numeric_values(self.target, domain)[0]
        kinds = [c.kind for c in domain.columns]
        numeric = np.array([k in ("continuous", "integer") for k in kinds])
        self._numeric = numeric
        self._lower = np.array(
            [c.lower if numeric[j] else 0.0 for j, c in enumerate(domain.columns)]
        )
        self._upper = np.array(
            [c.upper if numeric[j] else 1.0 for j, c in enumerate(domain.columns)]
        )
        span = self._upper - self._lower
        # A hair of slack keeps a value exactly at the tolerance inside despite rounding.
        self._radius = np.where(numeric, self.tolerance * span * (1 + 1e-9), 0.0)
        self._target_values = target_values
        self._target_bins = np.where(
            numeric, bin_index(target_values, self._lower, self._upper, self.bins), 0
        )

    @property
    def n_features(self) -> int:
        return len(self.queries)

    @property
    def feature_names(self) -> list[str]:
        """One readable name per feature, in :meth:`featurize`'s order."""
        if self.exhaustive:
            return [" & ".join(f"{c}={v}" for c, v in q) for q in self.queries]
        return [" & ".join(f"{c}~target" for c in q) for q in self.queries]

    def _conditions(self, values: NDArray[np.float64]) -> NDArray[np.bool_]:
        """``[r, n, C]``: which rows satisfy each condition."""
        binary = np.array([c.kind == "binary" for c in self.domain.columns])
        if binary.any():
            # A release outside {0, 1} (an implementation that returns its model
            # space) is read as an attacker would: values >= 0.5 count as 1.
            values = values.copy()
            values[..., binary] = values[..., binary] >= 0.5
        if self.exhaustive:
            hits: NDArray[np.bool_] = (
                values[:, :, self._cond_columns] == self._cond_codes
            )
            return hits
        exact = values == self._target_values
        if self.match == "tolerance":
            close = np.abs(values - self._target_values) <= self._radius
        else:
            close = (
                bin_index(values, self._lower, self._upper, self.bins)
                == self._target_bins
            )
        return np.asarray(np.where(self._numeric, close, exact), dtype=np.bool_)

    def _features(self, values: NDArray[np.float64]) -> NDArray[np.float64]:
        failed = (~self._conditions(values)).astype(np.float32)
        # Failed-condition counts are small integers, exact in float32.
        r, n, c = failed.shape
        # One 2-D product (a single BLAS call) rather than r stacked ones.
        misses = (failed.reshape(r * n, c) @ self._query_matrix).reshape(r, n, -1)
        return np.asarray((misses == 0).mean(axis=1, dtype=np.float64))

    def featurize(self, synthetic: Sequence[pd.DataFrame]) -> NDArray[np.float64]:
        """Fraction of each released dataset's rows answering each query.

        Args:
            synthetic: ``R`` released datasets.

        Returns:
            ``[R, n_features]`` float64 in ``[0, 1]``, in :attr:`queries` order.

        Raises:
            DataError: a dataset is empty, lacks a domain column or holds a category
                outside the domain.
        """
        n_conditions = self._query_matrix.shape[0]
        return featurize_stacked(
            synthetic,
            self.domain,
            n_features=self.n_features,
            width=2 * n_conditions + self.n_features,
            features=self._features,
        )
