"""Toy plug-ins with exactly known privacy, written against the plain-types plug-in
contract (docs/plugins.md): they import nothing from dpaudit and are audited through
the plug-in adapter, as a user's own generator would be.

* :class:`PublicSeedRandomizedResponse` is exactly ``epsilon``-DP (delta 0) **for every
  fixed public seed**, and draws from both streams: the privacy stream (``seed``)
  feeds one randomized-response coin on the target's membership bit; the public
  stream (``public_seed``) feeds everything else (the filler rows of the release). It
  accepts ``public_seed`` and so declares that its guarantee holds conditionally on
  the public randomness, which is true: the release is a function of the noisy bit
  and the public draws alone. With fixed public randomness the filler rows are equal
  in every round, so an attack sees the noisy bit perfectly and the audit can reach
  ``epsilon`` itself; with independent randomness the fillers hide it.
* :class:`CopyData` releases a shuffle of its training rows and claims ``epsilon``:
  no privacy at all (the claim is false whatever the randomness).
* :class:`BusyUniform` spends a fixed amount of one core's work in ``fit`` (``work``
  rounds of SHA-256, about 0.5 s at the default 750,000) and releases rows drawn uniformly
  from the public domain: exactly 0-DP, so its claim of ``epsilon`` holds. A stand-in
  for a slow library's fit in ``benchmarks/dask_scaling.py``.
* :class:`NoisyMarginals` releases Gaussian noisy one-way marginals and states them
  as its measurement transcript (``privacy_transcript``); ``noise_scale=0.25`` adds
  a quarter of the noise it states (``--release transcript`` catches it).

Use them as ``--generator dpaudit.generators.toy_plugins:PublicSeedRandomizedResponse``.
"""

from __future__ import annotations

import hashlib
import math
from typing import Any

import numpy as np
import pandas as pd


def _public_rng(seed: int, public_seed: int | None) -> np.random.Generator:
    # Without a public seed every draw is fresh per call (the independent game): the
    # public stream is then a child of the privacy seed, never the same stream.
    if public_seed is None:
        return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(1,)))
    return np.random.default_rng(public_seed)


def _random_rows(
    domain: dict[str, Any], n: int, rng: np.random.Generator
) -> pd.DataFrame:
    """``n`` rows drawn uniformly from the public domain (data-independent)."""
    columns: dict[str, Any] = {}
    for col in domain["columns"]:
        kind = col["kind"]
        if kind == "binary":
            columns[col["name"]] = rng.integers(0, 2, size=n)
        elif kind == "categorical":
            cats = list(col["categories"])
            columns[col["name"]] = [cats[i] for i in rng.integers(0, len(cats), size=n)]
        elif kind == "integer":
            columns[col["name"]] = rng.integers(
                int(col["lower"]), int(col["upper"]) + 1, size=n
            )
        else:
            columns[col["name"]] = rng.uniform(
                float(col["lower"]), float(col["upper"]), size=n
            )
    return pd.DataFrame(columns)


class PublicSeedRandomizedResponse:
    """The target's membership through randomized response, in a public-noise release.

    ``fit`` checks whether ``target`` (default: ones in every column, the worst case's
    target) is a row of the data and keeps that bit with probability
    ``e^epsilon / (1 + e^epsilon)`` (privacy stream), else flips it. ``sample`` draws
    ``n`` filler rows uniformly from the public domain (public stream) and replaces the
    first with the target when the noisy bit is 1. For every fixed public seed the
    release is a post-processing of one randomized-response bit: exactly
    ``epsilon``-DP, and an optimal attack attains ``epsilon`` exactly.

    ``lucky = L > 1`` makes the public randomness matter (for tests of choosing it,
    ``--public-seed auto``): the coin looks at membership only for public seeds
    divisible by ``L`` (about one in ``L``); for the others the bit is a fair coin
    whatever the data (0-DP). Each fixed public seed is then ``epsilon``-DP or
    0-DP, so the guarantee still holds for every one. ``leak=True`` is the broken
    version: on the lucky seeds the bit is the membership itself (no privacy at all),
    while ``epsilon`` is still claimed.
    """

    def __init__(
        self,
        *,
        epsilon: float,
        delta: float = 0.0,
        target: dict[str, Any] | None = None,
        lucky: int = 1,
        leak: bool = False,
    ) -> None:
        if not (
            isinstance(epsilon, int | float) and epsilon >= 0 and math.isfinite(epsilon)
        ):
            raise ValueError(
                f"`epsilon` must be a finite number >= 0. Got {epsilon!r}."
            )
        if not (isinstance(lucky, int) and lucky >= 1):
            raise ValueError(f"`lucky` must be an integer >= 1. Got {lucky!r}.")
        self.epsilon = float(epsilon)
        self.delta = float(delta)
        self.target = target
        self.lucky = lucky
        self.leak = bool(leak)

    def fit(
        self,
        data: pd.DataFrame,
        *,
        domain: dict[str, Any],
        seed: int,
        public_seed: int | None = None,
    ) -> PublicSeedRandomizedResponse:
        names = [c["name"] for c in domain["columns"]]
        from dpaudit.generators.zoo import default_target  # standalone, as this

        target = self.target or default_target(domain)
        row = np.array([target[n] for n in names], dtype=object)
        member = bool((data[names].to_numpy(dtype=object) == row).all(axis=1).any())
        keep = math.exp(self.epsilon) / (1.0 + math.exp(self.epsilon))
        coin = np.random.default_rng(seed).random()
        lucky = (seed if public_seed is None else public_seed) % self.lucky == 0
        if not lucky:
            self.bit_ = bool(coin < 0.5)  # ignores the data
        elif self.leak:
            self.bit_ = member
        else:
            self.bit_ = member if coin < keep else not member
        self.domain_, self.target_, self.seed_ = domain, target, seed
        self.dtypes_ = data.dtypes
        self.privacy_claim = {
            "epsilon": self.epsilon,
            "delta": 0.0,
            "accountant": "randomized response (exact, any public seed)",
        }
        return self

    def sample(
        self, n: int, *, seed: int, public_seed: int | None = None
    ) -> pd.DataFrame:
        frame = _random_rows(self.domain_, n, _public_rng(seed, public_seed))
        if self.bit_ and n > 0:
            for name, value in self.target_.items():
                frame.loc[0, name] = value
        return frame.astype(self.dtypes_)


class CopyData:
    """Releases its training rows (shuffled, then resampled to ``n``): no privacy, while
    claiming ``epsilon``."""

    def __init__(self, *, epsilon: float, delta: float = 0.0) -> None:
        self.epsilon = float(epsilon)
        self.delta = float(delta)

    def fit(
        self,
        data: pd.DataFrame,
        *,
        domain: dict[str, Any],
        seed: int,
        public_seed: int | None = None,
    ) -> CopyData:
        self.data_ = data.reset_index(drop=True).copy()
        self.privacy_claim = {
            "epsilon": self.epsilon,
            "delta": self.delta,
            "accountant": "none (claims epsilon, copies its data)",
        }
        return self

    def sample(
        self, n: int, *, seed: int, public_seed: int | None = None
    ) -> pd.DataFrame:
        rng = _public_rng(seed, public_seed)
        idx = rng.integers(0, len(self.data_), size=n)
        # Every distinct training row first (all of them when n allows): a pure copy.
        m = min(n, len(self.data_))
        idx[:m] = rng.permutation(len(self.data_))[:m]
        return self.data_.iloc[idx].reset_index(drop=True)


class ConstantRelease:
    """Releases the same table whatever its data and seeds (random rows of the public
    domain from a fixed seed): exactly 0-DP. An audit of it can see nothing, and says
    that every round released the same thing."""

    def __init__(self, *, epsilon: float, delta: float = 0.0) -> None:
        self.epsilon = float(epsilon)
        self.delta = float(delta)

    def fit(
        self,
        data: pd.DataFrame,
        *,
        domain: dict[str, Any],
        seed: int,
        public_seed: int | None = None,
    ) -> ConstantRelease:
        self.domain_ = domain
        self.dtypes_ = data.dtypes
        self.privacy_claim = {
            "epsilon": self.epsilon,
            "delta": self.delta,
            "accountant": "none (releases a constant table: 0-DP)",
        }
        return self

    def sample(
        self, n: int, *, seed: int, public_seed: int | None = None
    ) -> pd.DataFrame:
        return _random_rows(self.domain_, n, np.random.default_rng(0)).astype(
            self.dtypes_
        )


class BusyUniform:
    """Burns ``work`` SHA-256 rounds of one core in ``fit`` (deterministic: the same
    work every call, about 0.5 s at the default 750,000 on one core of this project's
    machine), then releases rows drawn uniformly from the public domain.

    Privacy claim: ``epsilon`` with ``delta`` 0, which holds: the release does not
    depend on the data at all (0-DP). The work is a pure-Python hash chain, so it
    uses one core whatever the BLAS threads.
    """

    def __init__(self, *, epsilon: float, delta: float = 0.0, work: int = 750_000):
        self.epsilon = float(epsilon)
        self.delta = float(delta)
        self.work = int(work)

    def fit(
        self, data: pd.DataFrame, *, domain: dict[str, Any], seed: int
    ) -> BusyUniform:
        digest = seed.to_bytes(8, "little")
        for _ in range(self.work):
            digest = hashlib.sha256(digest).digest()
        self.digest_ = digest.hex()
        self.domain_ = domain
        self.privacy_claim = {
            "epsilon": self.epsilon,
            "delta": 0.0,
            "accountant": "data-independent release (0-DP)",
        }
        return self

    def sample(self, n: int, *, seed: int) -> pd.DataFrame:
        return _random_rows(self.domain_, n, np.random.default_rng(seed))


class NoisyMarginals:
    """Gaussian noisy one-way marginals (a histogram per column), stated as a
    measurement transcript (docs/plugins.md, "The measurement transcript").

    Every column must be binary, categorical or integer; the cells come from the
    public domain. Adding or removing one record changes one cell of each of the
    ``d`` histograms by 1 (L2 sensitivity ``sqrt(d)``), so Gaussian noise of
    ``sigma = sqrt(d) / mu`` on every cell is exactly ``mu``-GDP, with ``mu`` the
    analytic Gaussian's for ``(epsilon, delta)`` (Balle and Wang 2018): the claim
    states ``epsilon``, ``delta``, ``gdp_mu = mu`` and ``zcdp_rho = mu^2 / 2``, and
    ``privacy_transcript`` states every noisy cell with ``{"gaussian": sigma}``.

    ``noise_scale`` multiplies the noise actually added (default 1: what is
    stated); ``noise_scale=0.25`` adds a quarter of it while stating the full
    ``sigma``: the defect the transcript audit catches. ``sample`` draws each column
    independently from its clipped noisy histogram (post-processing, from
    ``public_seed`` when given).
    """

    def __init__(
        self, *, epsilon: float, delta: float = 1e-5, noise_scale: float = 1.0
    ) -> None:
        from dpaudit.generators.zoo import analytic_gaussian_mu

        if not (epsilon > 0 and 0 < delta < 1 and noise_scale > 0):
            raise ValueError(
                "NoisyMarginals needs epsilon > 0, delta in (0, 1) and noise_scale "
                f"> 0. Got ({epsilon!r}, {delta!r}, {noise_scale!r})."
            )
        self.epsilon, self.delta = float(epsilon), float(delta)
        self.noise_scale = float(noise_scale)
        self.mu = analytic_gaussian_mu(self.epsilon, self.delta)

    def fit(
        self,
        data: pd.DataFrame,
        *,
        domain: dict[str, Any],
        seed: int,
        public_seed: int | None = None,
    ) -> NoisyMarginals:
        columns = domain["columns"]
        sigma = math.sqrt(len(columns)) / self.mu
        rng = np.random.default_rng(seed)  # the privacy noise
        self.columns_ = [c["name"] for c in columns]
        self.dtypes_ = data.dtypes
        self.histograms_: list[tuple[list[Any], np.ndarray]] = []
        transcript = []
        for col in columns:
            if col["kind"] == "binary":
                cells: list[Any] = [0, 1]
            elif col["kind"] == "categorical":
                cells = list(col["categories"])
            elif col["kind"] == "integer":
                cells = list(range(int(col["lower"]), int(col["upper"]) + 1))
            else:
                raise ValueError(
                    f"column {col['name']!r} is continuous: NoisyMarginals takes "
                    "binary, categorical and integer columns."
                )
            counts = data[col["name"]].value_counts()
            exact = np.array([float(counts.get(c, 0)) for c in cells])
            noisy = exact + rng.normal(0.0, sigma * self.noise_scale, size=len(cells))
            self.histograms_.append((cells, noisy))
            transcript.append(
                {
                    "columns": [col["name"]],
                    "cells": [[c] for c in cells],
                    "noisy": noisy.tolist(),
                    "noise": {"gaussian": sigma},
                }
            )
        self.privacy_transcript = transcript
        self.privacy_claim = {
            "epsilon": self.epsilon,
            "delta": self.delta,
            "accountant": "analytic Gaussian (one-way marginals)",
            "gdp_mu": self.mu,
            "zcdp_rho": self.mu**2 / 2.0,
        }
        return self

    def sample(
        self, n: int, *, seed: int, public_seed: int | None = None
    ) -> pd.DataFrame:
        rng = _public_rng(seed, public_seed)
        out: dict[str, Any] = {}
        for name, (cells, noisy) in zip(self.columns_, self.histograms_):
            weights = np.clip(noisy, 0.0, None)
            total = weights.sum()
            p = weights / total if total > 0 else np.full(len(cells), 1 / len(cells))
            out[name] = [cells[i] for i in rng.choice(len(cells), size=n, p=p)]
        return pd.DataFrame(out).astype(self.dtypes_)
