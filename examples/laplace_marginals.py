"""A per-column Laplace histogram generator, as a dpaudit plug-in (docs/plugins.md).

``LaplaceMarginals`` releases rows drawn column by column from each column's noisy
histogram. Adding or removing one record moves one count of every column by 1, so the
histograms' L1 sensitivity is the number of columns ``d``: Laplace noise of scale
``d / epsilon`` per count makes the release epsilon-DP (Dwork et al. 2006), and
drawing rows from the noisy counts is post-processing. ``noise_factor`` scales that
noise: ``noise_factor = 0.25`` keeps the claim of epsilon while adding a quarter of the
noise it needs, so the release is exactly ``4 epsilon``-DP: a 4x overclaim, the
generator that docs/ci.md measures the ``quick`` preset against
(``examples/laplace_check.toml``).

It needs nothing from dpaudit. A continuous or integer column is cut into ``bins``
equal-width bins of its public bounds (never the data's), and a released value is
drawn uniformly within its bin.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd


class LaplaceMarginals:
    """Per-column Laplace histograms, claimed ``(epsilon, 0)``-DP.

    Args:
        epsilon: the budget; the claim.
        delta: ignored (the claim's delta is 0).
        noise_factor: multiplies the noise the claim needs (1: correct; 0.25: a
            quarter of it, truly ``4 epsilon``-DP).
        bins: equal-width bins of a continuous or integer column.
    """

    def __init__(
        self,
        *,
        epsilon: float,
        delta: float = 0.0,
        noise_factor: float = 1.0,
        bins: int = 10,
    ) -> None:
        if not epsilon > 0:
            raise ValueError(f"`epsilon` must be > 0. Got {epsilon!r}.")
        if not noise_factor > 0:
            raise ValueError(f"`noise_factor` must be > 0. Got {noise_factor!r}.")
        if not (isinstance(bins, int) and bins >= 1):
            raise ValueError(f"`bins` must be an integer >= 1. Got {bins!r}.")
        self.epsilon = float(epsilon)
        self.noise_factor = float(noise_factor)
        self.bins = bins

    def fit(
        self,
        data: pd.DataFrame,
        *,
        domain: dict[str, Any],
        seed: int,
        public_seed: int | None = None,
    ) -> LaplaceMarginals:
        self.columns_: list[str] = []
        self.values_: list[list[Any]] = []
        self.edges_: list[np.ndarray | None] = []
        self.integer_: list[bool] = []
        for col in domain["columns"]:
            edges = None
            if col["kind"] == "binary":
                values: list[Any] = [0, 1]
            elif col["kind"] == "categorical":
                values = list(col["categories"])
            else:  # continuous, integer: bins of the public bounds
                edges = np.linspace(col["lower"], col["upper"], self.bins + 1)
                values = list(range(self.bins))
            self.columns_.append(col["name"])
            self.values_.append(values)
            self.edges_.append(edges)
            self.integer_.append(col["kind"] == "integer")
        # The privacy noise: from `seed`, fresh in every round of an audit.
        rng = np.random.default_rng(seed)
        scale = self.noise_factor * len(self.columns_) / self.epsilon
        self.weights_: list[np.ndarray] = []
        for name, values, edges in zip(
            self.columns_, self.values_, self.edges_, strict=True
        ):
            if edges is None:
                counts = np.array([(data[name] == v).sum() for v in values], float)
            else:
                cells = np.clip(
                    np.searchsorted(edges, data[name].to_numpy(float), "right") - 1,
                    0,
                    self.bins - 1,
                )
                counts = np.bincount(cells, minlength=self.bins).astype(float)
            noisy = counts + rng.laplace(scale=scale, size=counts.size)
            self.weights_.append(np.clip(noisy, 0.0, None))
        self.privacy_claim = {
            "epsilon": self.epsilon,
            "delta": 0.0,
            "accountant": "per-column Laplace histograms (L1 sensitivity d)",
        }
        return self

    def sample(
        self, n: int, *, seed: int, public_seed: int | None = None
    ) -> pd.DataFrame:
        # Post-processing of the noisy counts: for every fixed seed a fixed function
        # of them, so the guarantee holds for every fixed `public_seed`.
        rng = np.random.default_rng(seed if public_seed is None else public_seed)
        out: dict[str, Any] = {}
        for i, (name, values, w) in enumerate(
            zip(self.columns_, self.values_, self.weights_, strict=True)
        ):
            total = w.sum()
            p = w / total if total > 0 else np.full(len(values), 1.0 / len(values))
            picks = rng.choice(len(values), size=n, p=p)
            edges = self.edges_[i]
            if edges is None:
                out[name] = [values[j] for j in picks]
            elif self.integer_[i]:
                low, high = np.ceil(edges[picks]), np.floor(edges[picks + 1])
                out[name] = rng.integers(low, np.maximum(low, high) + 1).astype(int)
            else:
                out[name] = rng.uniform(edges[picks], edges[picks + 1])
        return pd.DataFrame(out, columns=self.columns_)
