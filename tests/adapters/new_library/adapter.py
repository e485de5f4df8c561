"""fakelib's adapter: rows drawn uniformly from the public domain (a test fixture).

It reads no record, so it is 0-DP and the claimed epsilon holds; it exists to show
that a library folder is all dpaudit needs to list, build and check an adapter.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
from dpaudit.adapters.fakelib import LIBRARY  # this folder, once copied

from dpaudit.adapters._common import AdapterInputError, category_values, columns_of
from dpaudit.adapters._template import LibraryAdapter

__all__ = ["FakeUniform"]


class FakeUniform(LibraryAdapter):
    """Every column drawn uniformly from its public values (or bounds)."""

    library = LIBRARY

    def __init__(
        self,
        *,
        epsilon: float,
        delta: float = 0.0,
        preprocessing: str = "public",
        **options: Any,
    ) -> None:
        super().__init__(
            epsilon=epsilon, delta=delta, preprocessing=preprocessing, **options
        )

    def _build(self, library: Any, table: Any, seed: int) -> Any:
        if self.options:
            raise AdapterInputError(
                f"fakelib-uniform takes no options. Got {sorted(self.options)}."
            )
        return library

    def _train(self, model: Any, table: Any, seed: int) -> Any:
        return model  # nothing is learned from the records

    def _claim(self, model: Any) -> dict[str, Any]:
        return {"epsilon": self.epsilon, "delta": 0.0, "accountant": "reads no record"}

    def _draw(self, n: int, seed: int) -> pd.DataFrame:
        rng = self.model_.random.default_rng(seed)
        out: dict[str, Any] = {}
        for col in columns_of(self.domain_):
            values = category_values(col)
            if values is None:
                out[col["name"]] = rng.uniform(col["lower"], col["upper"], size=n)
            else:
                out[col["name"]] = [
                    values[i] for i in rng.integers(len(values), size=n)
                ]
        return pd.DataFrame(out)
