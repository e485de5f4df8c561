"""Fingerprint: exact-match of the released dataset against the releases of each world.

Under fixed public randomness (docs/soundness.md) everything but the privacy noise is
held equal in every round and both worlds. A mechanism on which the privacy noise does
not reach the release (no noise on some path, or noise too small to move a decoded
value) then releases the same dataset in every round of one world: a deterministic
function of the training data. If the target changes that function at all, the two
worlds release two different datasets and an exact comparison tells them apart,
however small the difference.

The feature of a released dataset is its fingerprint: a 48-bit BLAKE2b hash of its
rows (numeric values in domain order, rounded to ``decimals`` decimals so that
floating-point noise of the order of 1e-12 does not split one release in two, rows
sorted so that the order in which a generator emits them does not matter), stored as
an exactly representable float. :meth:`FingerprintAttack.fit` counts how often each
fingerprint occurs in each world among the training rounds; the score of a release is
the smoothed posterior of membership of its fingerprint,

    score = p1 / (p1 + p0),  p_b = (count_b + 1/2) / (rounds_b + 1),

for a fingerprint seen in training, and exactly 1/2 for one never seen. The release
seen most often with the target scores near 1, the one seen most often without it
near 0, and a new release 1/2 (as under independent randomness, where every release is
new and the attack is a constant guess: AUC 0.5).
It is a function of the released table only.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any, Self

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from dpaudit.attacks.base import (
    check_features,
    check_synthetic,
    check_target,
    numeric_values,
)
from dpaudit.data import Domain
from dpaudit.errors import InvalidParameterError, NotFittedError
from dpaudit.rng import Rngs
from dpaudit.validation import require

#: Bytes of the BLAKE2b digest kept: 48 bits, exactly representable in a float64.
DIGEST_BYTES = 6


def fingerprint(values: NDArray[np.float64], *, decimals: int = 6) -> float:
    """The fingerprint of one ``[n, d]`` table of numbers (row order ignored).

    >>> a = np.array([[0.0, 1.0], [1.0, 0.0]])
    >>> fingerprint(a) == fingerprint(a[::-1])
    True
    >>> fingerprint(a) == fingerprint(a + 1e-3)
    False
    """
    rounded = np.round(np.asarray(values, dtype=np.float64), decimals) + 0.0  # -0 -> 0
    rows = rounded[np.lexsort(rounded.T[::-1])] if rounded.size else rounded
    digest = hashlib.blake2b(
        np.ascontiguousarray(rows).tobytes()
        + np.asarray(rounded.shape, dtype=np.int64).tobytes(),
        digest_size=DIGEST_BYTES,
    ).digest()
    return float(int.from_bytes(digest, "big"))


class FingerprintAttack:
    """Exact-match attack: how often each world released this very dataset.

    Args:
        domain: the public domain.
        target: the target record (one row); validated for a uniform signature, the
            fingerprint does not use it.
        rng: accepted for a uniform signature; the attack draws nothing.
        decimals: decimals kept before hashing (0 to 15).
        name: registry name (default ``fingerprint``).
    """

    trains_classifier: bool = True

    def __init__(
        self,
        *,
        domain: Domain,
        target: pd.DataFrame | Mapping[str, Any],
        rng: Rngs | None = None,
        decimals: int = 6,
        name: str = "fingerprint",
    ) -> None:
        require(
            isinstance(decimals, int | np.integer)
            and not isinstance(decimals, bool)
            and 0 <= decimals <= 15,
            "decimals",
            "an integer between 0 and 15",
            decimals,
        )
        self.name = name
        self.domain = domain
        self.target = check_target(target, domain)
        self.decimals = int(decimals)
        self.counts_: dict[float, tuple[int, int]] | None = None
        self.rounds_: tuple[int, int] = (0, 0)

    @property
    def n_features(self) -> int:
        return 1

    @property
    def feature_names(self) -> list[str]:
        return ["fingerprint"]

    def featurize(self, synthetic: Sequence[pd.DataFrame]) -> NDArray[np.float64]:
        """``[R, 1]``: the fingerprint of each released dataset.

        Raises:
            DataError: a dataset is empty, lacks a domain column or holds a category
                outside the domain.
        """
        frames = check_synthetic(synthetic, self.domain)
        out = np.empty((len(frames), 1), dtype=np.float64)
        for i, frame in enumerate(frames):
            out[i, 0] = fingerprint(
                numeric_values(frame, self.domain), decimals=self.decimals
            )
        return out

    def fit(self, features: NDArray[Any], labels: NDArray[Any]) -> Self:
        """Counts each fingerprint's training rounds in each world.

        Raises:
            InvalidParameterError: shapes disagree or labels are not 0/1.
        """
        x = check_features(features, n_features=1)[:, 0]
        y = np.asarray(labels)
        if y.ndim != 1 or len(y) != len(x):
            raise InvalidParameterError(
                f"`labels` must be a vector with one bit per feature row ({len(x)}). "
                f"Got shape {y.shape}."
            )
        if not np.all(np.isin(y, (0, 1))):
            raise InvalidParameterError(
                f"`labels` must be membership bits (0 or 1). Got {np.unique(y)[:5]!r}."
            )
        counts: dict[float, list[int]] = {}
        for value, bit in zip(x.tolist(), y.astype(np.int64).tolist()):
            counts.setdefault(value, [0, 0])[bit] += 1
        self.counts_ = {k: (v[0], v[1]) for k, v in counts.items()}
        members = int(y.astype(np.int64).sum())
        self.rounds_ = (len(y) - members, members)
        return self

    def score(self, features: NDArray[Any]) -> NDArray[np.float64]:
        """The smoothed posterior of membership of each release's fingerprint.

        Raises:
            NotFittedError: before :meth:`fit`.
        """
        if self.counts_ is None:
            raise NotFittedError(
                f"attack {self.name!r} must be fitted before `score`; call `fit` first."
            )
        x = check_features(features, n_features=1)[:, 0]
        n0, n1 = self.rounds_
        out = np.empty(len(x), dtype=np.float64)
        for i, value in enumerate(x.tolist()):
            c0, c1 = self.counts_.get(value, (0, 0))
            if c0 == c1 == 0:
                out[i] = 0.5
                continue
            p0 = (c0 + 0.5) / (n0 + 1)
            p1 = (c1 + 0.5) / (n1 + 1)
            out[i] = p1 / (p0 + p1)
        return out

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"
