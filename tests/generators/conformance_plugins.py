"""Plug-ins that each break one rule of the contract, for `dpaudit check-generator`'s
tests (tests/generators/test_conformance.py); everything else about them is right.

Plain plug-ins (docs/plugins.md): they import nothing from dpaudit.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd


def uniform_rows(
    domain: dict[str, Any], n: int, rng: np.random.Generator
) -> pd.DataFrame:
    """``n`` rows drawn uniformly from the public domain."""
    out: dict[str, Any] = {}
    for col in domain["columns"]:
        if col["kind"] == "binary":
            out[col["name"]] = rng.integers(0, 2, size=n)
        elif col["kind"] == "categorical":
            cats = list(col["categories"])
            out[col["name"]] = [cats[i] for i in rng.integers(0, len(cats), size=n)]
        elif col["kind"] == "integer":
            out[col["name"]] = rng.integers(col["lower"], col["upper"] + 1, size=n)
        else:
            out[col["name"]] = rng.uniform(col["lower"], col["upper"], size=n)
    return pd.DataFrame(out)


class UniformRows:
    """Rows drawn uniformly from the public domain: 0-DP, keeps the contract."""

    def __init__(self, *, epsilon: float, delta: float = 0.0) -> None:
        self.epsilon, self.delta = float(epsilon), float(delta)

    def fit(self, data: pd.DataFrame, *, domain: dict[str, Any], seed: int) -> Any:
        self.domain_, self.data_ = domain, data
        self.privacy_claim = {
            "epsilon": self.epsilon,
            "delta": 0.0,
            "accountant": "data-independent (0-DP)",
        }
        return self

    def sample(self, n: int, *, seed: int) -> pd.DataFrame:
        return uniform_rows(self.domain_, n, np.random.default_rng(seed))


class IgnoresSeed(UniformRows):
    """Resamples its training rows with a fixed seed: the same release whatever the
    seed, a deterministic function of the data."""

    def sample(self, n: int, *, seed: int) -> pd.DataFrame:
        rng = np.random.default_rng(0)
        return self.data_.iloc[rng.integers(0, len(self.data_), size=n)].reset_index(
            drop=True
        )


class ChangesInput(UniformRows):
    """Overwrites the first value of the table it is given."""

    def fit(self, data: pd.DataFrame, *, domain: dict[str, Any], seed: int) -> Any:
        data.iloc[0, 0] = 1 - data.iloc[0, 0]
        return super().fit(data, domain=domain, seed=seed)


class WrongRows(UniformRows):
    """Returns one row more than asked for."""

    def sample(self, n: int, *, seed: int) -> pd.DataFrame:
        return super().sample(n + 1, seed=seed)


class OutOfDomain(UniformRows):
    """Releases the value 2 in the first column (binary on the worst case)."""

    def sample(self, n: int, *, seed: int) -> pd.DataFrame:
        out = super().sample(n, seed=seed)
        out.iloc[0, 0] = 2
        return out
