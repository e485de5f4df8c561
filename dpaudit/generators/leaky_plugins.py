"""A plug-in with a known leak, written against the plain-types plug-in contract
(docs/plugins.md) like :mod:`dpaudit.generators.toy_plugins`: it imports nothing from
dpaudit and is audited through the plug-in adapter.

* :class:`SubsampleCopy` releases a random subsample of its training rows (each kept
  with probability ``keep``, 0.6 by default) and claims ``epsilon``. A record appears
  in the release with probability ``keep`` when it was trained on, never otherwise:
  no finite epsilon holds. The one-run game's guesses from the release
  (``guess_rule`` ``threshold``) see it from one fit.

(The per-column Laplace histogram with too little noise that docs/onerun.md
measures is examples/laplace_marginals.py, ``--option noise_factor=0.25``.)

Use it as ``--generator dpaudit.generators.leaky_plugins:SubsampleCopy``.
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
