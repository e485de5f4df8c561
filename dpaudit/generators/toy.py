"""Toy generators with exactly known privacy, for calibration and tests.

* ``randomized-response``: releases rows whose count of target copies encodes the
  target's membership through randomized response at ``epsilon``: with probability
  ``e^eps / (1 + e^eps)`` it tells the truth. It is exactly ``epsilon``-DP (delta 0)
  in the membership bit, so an audit of it must never report eps_emp > epsilon beyond
  the estimator's stated failure probability, and for large epsilon it must reach the
  attainable maximum.
* ``copy``: releases (a resample of) its training data: no privacy at all.
"""

from __future__ import annotations

import math
from typing import Any, Self

import pandas as pd

from dpaudit.data import Domain
from dpaudit.errors import InvalidParameterError, NotFittedError
from dpaudit.generators.base import PrivacyClaim, register_generator
from dpaudit.rng import Rngs


class RandomizedResponseGenerator:
    """Releases the target's membership through randomized response.

    ``fit`` looks whether ``target`` (a record given at construction, by default the
    worst case's all-ones row) is in the data, flips that bit with probability
    ``1 / (1 + e^epsilon)`` and remembers it. ``sample`` releases ``n`` copies of the
    first training row when the (noisy) bit is 0, or ``n`` copies of the target when
    it is 1. Membership of the target is then released exactly through randomized
    response, an ``epsilon``-DP mechanism on the bit.
    """

    def __init__(self, *, epsilon: float, delta: float = 0.0,
                 target: dict[str, Any] | None = None) -> None:
        if not (epsilon >= 0 and math.isfinite(epsilon)):
            raise InvalidParameterError(f"`epsilon` must be >= 0. Got {epsilon!r}.")
        self.epsilon = float(epsilon)
        self.delta = float(delta)
        self.target = target

    def fit(self, data: pd.DataFrame, *, domain: Domain, rng: Rngs) -> Self:
        target = self.target or dict.fromkeys(domain.names, 1)
        row = pd.Series(target)[domain.names]
        member = bool((data[domain.names] == row.to_numpy()).all(axis=1).any())
        truth = rng.numpy.random() < math.exp(self.epsilon) / (1.0 + math.exp(self.epsilon))
        self.bit_ = member if truth else not member
        self.columns_ = domain.names
        self.dtypes_ = data.dtypes
        self.row0_ = data.iloc[0].to_dict()
        self.target_ = target
        self.claim_ = PrivacyClaim(epsilon=self.epsilon, delta=0.0,
                                   accountant="randomized response (exact)")
        return self

    def sample(self, n: int, *, rng: Rngs) -> pd.DataFrame:
        if not hasattr(self, "bit_"):
            raise NotFittedError("call `fit` first.")
        row = self.target_ if self.bit_ else self.row0_
        return pd.DataFrame([row] * n, columns=self.columns_).astype(self.dtypes_)

    @property
    def privacy_claim_(self) -> PrivacyClaim:
        if not hasattr(self, "claim_"):
            raise NotFittedError("call `fit` first.")
        return self.claim_


class CopyGenerator:
    """Releases a resample (with replacement) of its training data: no privacy."""

    def __init__(self, *, epsilon: float, delta: float = 0.0) -> None:
        self.epsilon = float(epsilon)
        self.delta = float(delta)

    def fit(self, data: pd.DataFrame, *, domain: Domain, rng: Rngs) -> Self:
        self.data_ = data.reset_index(drop=True).copy()
        self.claim_ = PrivacyClaim(epsilon=self.epsilon, delta=self.delta,
                                   accountant="none (claims epsilon, copies its data)")
        return self

    def sample(self, n: int, *, rng: Rngs) -> pd.DataFrame:
        if not hasattr(self, "data_"):
            raise NotFittedError("call `fit` first.")
        idx = rng.numpy.integers(0, len(self.data_), size=n)
        # Distinct training rows first (all of them when n allows): a pure copy.
        m = min(n, len(self.data_))
        idx[:m] = rng.numpy.permutation(len(self.data_))[:m]
        return self.data_.iloc[idx].reset_index(drop=True)

    @property
    def privacy_claim_(self) -> PrivacyClaim:
        if not hasattr(self, "claim_"):
            raise NotFittedError("call `fit` first.")
        return self.claim_


register_generator("randomized-response", RandomizedResponseGenerator,
                   description="toy: target membership by randomized response (exact epsilon)")
register_generator("copy", CopyGenerator,
                   description="toy: releases its training data (no privacy)")
