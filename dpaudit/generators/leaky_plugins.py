"""Plug-ins with a known leak, written against the plain-types plug-in contract
(docs/plugins.md) like :mod:`dpaudit.generators.toy_plugins`: they import nothing from
dpaudit and are audited through the plug-in adapter.

* :class:`SubsampleCopy` releases a random subsample of its training rows (each kept
  with probability ``keep``, 0.6 by default) and claims ``epsilon``. A record appears
  in the release with probability ``keep`` when it was trained on, never otherwise:
  no finite epsilon holds. The one-run game's guesses from the release
  (``guess_rule`` ``threshold``) see it from one fit.
* :class:`LaplaceHistogram` releases each column's histogram with Laplace noise (one
  count per category of a categorical or binary column, ``bins`` equal bins of a
  numeric column's public range) and samples each column independently from its
  noisy histogram. With ``noise = 1`` the noise's scale is ``columns / epsilon`` per
  count, and the release is ``epsilon``-DP (add/remove one record changes one count of
  each column's histogram by one: basic composition over the columns); ``noise = s``
  scales it by ``s``, so the true epsilon is ``epsilon / s`` (``noise = 0.25``: four
  times the claim).

Use them as ``--generator dpaudit.generators.leaky_plugins:SubsampleCopy``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd


def _rng(seed: int, stream: int) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(stream,)))


class SubsampleCopy:
    """Releases a random subsample of its training rows (each kept with probability
    ``keep``), repeated to fill the rows asked for, while claiming ``epsilon``."""

    def __init__(
        self, *, epsilon: float, delta: float = 0.0, keep: float = 0.6
    ) -> None:
        if not 0.0 < float(keep) <= 1.0:
            raise ValueError(f"keep must be in (0, 1]. Got {keep!r}.")
        self.epsilon = float(epsilon)
        self.delta = float(delta)
        self.keep = float(keep)

    def fit(
        self,
        data: pd.DataFrame,
        *,
        domain: dict[str, Any],
        seed: int,
        public_seed: int | None = None,
    ) -> SubsampleCopy:
        kept = _rng(seed, 0).random(len(data)) < self.keep
        self.data_ = data.reset_index(drop=True).iloc[np.flatnonzero(kept)]
        self.privacy_claim = {
            "epsilon": self.epsilon,
            "delta": self.delta,
            "accountant": "none (claims epsilon, copies a subsample of its data)",
        }
        return self

    def sample(
        self, n: int, *, seed: int, public_seed: int | None = None
    ) -> pd.DataFrame:
        rng = _rng(seed, 1)
        if len(self.data_) == 0:
            return self.data_.reset_index(drop=True)
        order = rng.permutation(len(self.data_))
        idx = np.resize(order, n)  # every kept row once, then again, to n rows
        return self.data_.iloc[idx].reset_index(drop=True)


class LaplaceHistogram:
    """Per-column Laplace histograms, sampled column by column.

    Args:
        epsilon: the claimed epsilon (delta 0).
        bins: equal bins of a numeric column's public range.
        noise: the noise's scale relative to what ``epsilon`` needs (1: correct;
            0.25: the true epsilon is four times the claim).
    """

    def __init__(
        self,
        *,
        epsilon: float,
        delta: float = 0.0,
        bins: int = 10,
        noise: float = 1.0,
    ) -> None:
        if int(bins) < 1 or not float(noise) > 0:
            raise ValueError(f"bins must be >= 1 and noise > 0. Got {bins}, {noise}.")
        self.epsilon = float(epsilon)
        self.delta = float(delta)
        self.bins = int(bins)
        self.noise = float(noise)

    def _cells(self, col: dict[str, Any]) -> list[Any]:
        if col["kind"] in ("binary", "categorical"):
            return list(col.get("categories") or [0, 1])
        return list(range(self.bins))

    def _cell_of(self, col: dict[str, Any], values: pd.Series) -> np.ndarray:
        if col["kind"] in ("binary", "categorical"):
            cells = self._cells(col)
            index = {str(c): i for i, c in enumerate(cells)}
            return np.array([index.get(str(v), -1) for v in values], dtype=np.int64)
        lower, upper = float(col["lower"]), float(col["upper"])
        x = (pd.to_numeric(values).to_numpy(np.float64) - lower) / (upper - lower)
        return np.asarray(np.clip((x * self.bins).astype(np.int64), 0, self.bins - 1))

    def fit(
        self,
        data: pd.DataFrame,
        *,
        domain: dict[str, Any],
        seed: int,
        public_seed: int | None = None,
    ) -> LaplaceHistogram:
        rng = _rng(seed, 0)
        columns = domain["columns"]
        scale = self.noise * len(columns) / self.epsilon
        self.columns_ = columns
        self.histograms_: list[np.ndarray] = []
        for col in columns:
            cells = self._cell_of(col, data[col["name"]])
            counts = np.bincount(cells[cells >= 0], minlength=len(self._cells(col)))
            noisy = counts + rng.laplace(0.0, scale, size=counts.size)
            self.histograms_.append(np.maximum(noisy, 0.0))
        self.privacy_claim = {
            "epsilon": self.epsilon,
            "delta": 0.0,
            "accountant": "Laplace per column, basic composition over the columns",
        }
        return self

    def sample(
        self, n: int, *, seed: int, public_seed: int | None = None
    ) -> pd.DataFrame:
        rng = _rng(seed, 1)
        out: dict[str, Any] = {}
        for col, hist in zip(self.columns_, self.histograms_, strict=True):
            total = float(hist.sum())
            p = hist / total if total > 0 else np.full(hist.size, 1.0 / hist.size)
            cells = rng.choice(hist.size, size=n, p=p)
            if col["kind"] in ("binary", "categorical"):
                labels = self._cells(col)
                out[col["name"]] = [labels[c] for c in cells]
            else:
                lower, upper = float(col["lower"]), float(col["upper"])
                width = (upper - lower) / self.bins
                values = lower + (cells + rng.random(n)) * width
                if col["kind"] == "integer":
                    values = np.clip(np.round(values), lower, upper).astype(np.int64)
                out[col["name"]] = values
        return pd.DataFrame(out)
