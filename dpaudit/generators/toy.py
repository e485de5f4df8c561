"""Toy generators with exactly known privacy, for calibration and tests.

* ``randomized-response``: releases rows whose count of target copies encodes the
  target's membership through randomized response at ``epsilon``: with probability
  ``e^eps / (1 + e^eps)`` it tells the truth. It is exactly ``epsilon``-DP (delta 0)
  in the membership bit, so an audit of it must never report eps_emp > epsilon beyond
  the estimator's stated failure probability, and for large epsilon it must reach the
  attainable maximum.
* ``copy``: releases (a resample of) its training data: no privacy at all.

Both take the public stream of contract 1 (docs/design.md): ``randomized-response``
flips its coin from the privacy stream only, so its guarantee holds for every fixed
public stream (``supports_public_randomness``); ``copy`` draws its release from the
public stream and has no guarantee to keep.
The registry (:mod:`dpaudit.generators.registry`) names them.
"""

from __future__ import annotations

import math
from typing import Any, Self

import pandas as pd

from dpaudit.data import Domain
from dpaudit.errors import NotFittedError
from dpaudit.generators.base import PrivacyClaim
from dpaudit.generators.zoo import default_target
from dpaudit.rng import Rngs, public_and_privacy
from dpaudit.validation import check_scalar, require


class RandomizedResponseGenerator:
    """Releases the target's membership through randomized response.

    ``fit`` looks whether ``target`` (a record given at construction, by default the
    worst case's all-ones row; a categorical column without 1 its last category) is
    in the data, flips that bit with probability ``1 / (1 + e^epsilon)`` and
    remembers it. ``sample`` releases ``n`` copies of the
    first training row when the (noisy) bit is 0, or ``n`` copies of the target when
    it is 1. Membership of the target is then released exactly through randomized
    response, an ``epsilon``-DP mechanism on the bit.
    """

    supports_public_randomness = True

    def __init__(
        self,
        *,
        epsilon: float,
        delta: float = 0.0,
        target: dict[str, Any] | None = None,
    ) -> None:
        self.epsilon = float(check_scalar(epsilon, "epsilon", min_val=0))
        self.delta = float(delta)
        require(
            target is None or isinstance(target, dict),
            "target",
            "a record (a mapping column -> value)",
            target,
        )
        self.target = target

    def fit(
        self,
        data: pd.DataFrame,
        *,
        domain: Domain,
        rng: Rngs,
        public_rng: Rngs | None = None,
    ) -> Self:
        """Flips the membership bit with the privacy stream (the only draw)."""
        _, privacy = public_and_privacy(rng, public_rng)
        target = self.target or default_target(domain.to_json())
        missing = [n for n in domain.names if n not in target]
        require(
            not missing,
            "target",
            f"a record with every column of the domain (missing {missing})",
            target,
        )
        row = pd.Series(target)[domain.names]
        member = bool((data[domain.names] == row.to_numpy()).all(axis=1).any())
        # e^eps / (1 + e^eps), written so that a huge epsilon cannot overflow.
        truth = privacy.numpy.random() < 1.0 / (1.0 + math.exp(-self.epsilon))
        self.bit_ = member if truth else not member
        self.columns_ = domain.names
        self.dtypes_ = data.dtypes
        self.row0_ = data.iloc[0].to_dict()
        self.target_ = target
        self.claim_ = PrivacyClaim(
            epsilon=self.epsilon, delta=0.0, accountant="randomized response (exact)"
        )
        return self

    def sample(
        self, n: int, *, rng: Rngs, public_rng: Rngs | None = None
    ) -> pd.DataFrame:
        """``n`` copies of the target (bit 1) or of the first training row (bit 0)."""
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
        self.epsilon = float(check_scalar(epsilon, "epsilon", min_val=0))
        self.delta = float(delta)

    def fit(
        self,
        data: pd.DataFrame,
        *,
        domain: Domain,
        rng: Rngs,
        public_rng: Rngs | None = None,
    ) -> Self:
        """Keeps the training data."""
        self.data_ = data.reset_index(drop=True).copy()
        self.claim_ = PrivacyClaim(
            epsilon=self.epsilon,
            delta=self.delta,
            accountant="none (claims epsilon, copies its data)",
        )
        return self

    def sample(
        self, n: int, *, rng: Rngs, public_rng: Rngs | None = None
    ) -> pd.DataFrame:
        """``n`` rows resampled from the training data (each row once first)."""
        if not hasattr(self, "data_"):
            raise NotFittedError("call `fit` first.")
        public, _ = public_and_privacy(rng, public_rng)
        idx = public.numpy.integers(0, len(self.data_), size=n)
        # Distinct training rows first (all of them when n allows): a pure copy.
        m = min(n, len(self.data_))
        idx[:m] = public.numpy.permutation(len(self.data_))[:m]
        return self.data_.iloc[idx].reset_index(drop=True)

    @property
    def privacy_claim_(self) -> PrivacyClaim:
        if not hasattr(self, "claim_"):
            raise NotFittedError("call `fit` first.")
        return self.claim_
