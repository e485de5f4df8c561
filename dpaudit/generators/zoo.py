"""A known-epsilon zoo: count mechanisms whose privacy is known exactly, as plug-ins.

Written against the plain-types plug-in contract (docs/plugins.md): the module imports
nothing from dpaudit and is audited through the plug-in adapter, as a user's own
generator would be (docs/zoo.md).

Each mechanism answers one query, the number ``c`` of rows of the data equal to the
target (default: ones in every column, the worst case's target;
:func:`default_target`), of sensitivity 1 under add/remove neighbours, and releases
its noisy answer ``y``:

* :class:`ExactRandomizedResponse`: the bit ``c >= 1`` through randomized response,
  kept with probability ``e^eps / (1 + e^eps)``: exactly ``eps``-DP on the bit
  (the bit changes only when the target itself is added or removed);
* :class:`ExactLaplace`: ``y = c + Lap(1 / eps)``: exactly ``eps``-DP (Dwork et al.
  2006), tight on the worst case (``c = 0`` against ``c = 1``);
* :class:`ExactGaussian`: ``y = c + N(0, sigma^2)`` with ``sigma = 1 / mu`` and ``mu``
  the analytic Gaussian mechanism's calibration to ``(eps, delta)`` (Balle and Wang
  2018, Thm 8: ``delta = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)``), so it is
  exactly ``(eps, delta)``-DP and exactly ``mu``-GDP (Dong, Roth, Su 2022).

The noise is calibrated to ``true_epsilon`` (default: the claimed ``epsilon``); the
claim states ``epsilon`` and the exact profile of the same mechanism calibrated to
``epsilon`` (``profile="full"``, the default): ``rdp`` for all three (randomized
response: the Bernoulli Renyi divergence; Laplace: Mironov 2017, Prop. 6; Gaussian:
``a mu^2 / 2``), and ``gdp_mu`` for the Gaussian. ``profile="rdp"`` states the RDP curve
alone, ``profile="none"`` the ``(epsilon, delta)`` point alone. A claim with
``true_epsilon = epsilon`` is true; ``true_epsilon = 4 * epsilon`` a 4x overclaim.

The release: ``n`` filler rows drawn uniformly from the public domain (public stream,
never equal to the target) of which the first ``k`` are replaced by the target. For
randomized response ``k`` is the noisy bit; for Laplace and Gaussian
``k = clip(round(n/2 + (y - 1/2) n / (2 W s)), 0, n)``, ``s`` the noise scale
(``1/eps`` or ``sigma``) and ``W = 6``: the noisy answer in steps of ``12 s / n``, over
``1/2 +- 6 s``. ``k`` is a post-processing of ``y`` with public constants, so the
guarantee is untouched, and an attack that counts the target's copies (``querybased``)
or reads the columns' means (``moments``) sees ``y`` itself. Both ``fit`` and
``sample`` accept ``public_seed``: the privacy stream (``seed``) feeds the noise only,
so the guarantee holds for every fixed public seed, and with the fillers fixed the
release is a function of ``y`` alone.

Use them as ``--generator dpaudit.generators.zoo:ExactGaussian --option
true_epsilon=4 --epsilon 1 --delta 1e-5`` (a 4x overclaim).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Self

import numpy as np
import pandas as pd

#: The Renyi orders every zoo claim states its curve at: ``1 + 10^u`` for ``u`` from
#: -1.5 to 3 in steps of 0.1 (orders 1.03 to 1,001; 46 orders).
ZOO_ORDERS: tuple[float, ...] = tuple(1.0 + 10.0 ** (u / 10.0) for u in range(-15, 31))
#: The copies cover ``1/2 +- W`` noise scales of the noisy answer.
WIDTH = 6.0
PROFILES = ("full", "rdp", "none")


def _phi(x: float) -> float:
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def gdp_delta(epsilon: float, mu: float) -> float:
    """``delta(eps)`` of ``mu``-GDP: ``Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)``
    (Dong, Roth, Su 2022, Cor. 2.13; Balle and Wang 2018, Thm 8).

    >>> round(gdp_delta(4.0, 0.924930897666937) * 1e5, 6)
    1.0
    """
    tail = _phi(-epsilon / mu - mu / 2.0)
    second = 0.0 if tail == 0.0 else math.exp(epsilon + math.log(tail))
    return max(_phi(-epsilon / mu + mu / 2.0) - second, 0.0)


def analytic_gaussian_mu(epsilon: float, delta: float) -> float:
    """The ``mu = 1 / sigma`` (sensitivity 1) at which the Gaussian mechanism is exactly
    ``(epsilon, delta)``-DP (Balle and Wang 2018): ``gdp_delta(epsilon, mu) = delta``,
    by bisection (``delta`` increases with ``mu``), to the last bits of a float.

    >>> round(analytic_gaussian_mu(4.0, 1e-5), 4), round(analytic_gaussian_mu(1.0, 1e-5), 4)
    (0.9249, 0.2681)
    """
    if not (0 < delta < 1 and epsilon >= 0 and math.isfinite(epsilon)):
        raise ValueError(
            f"the Gaussian needs epsilon >= 0 and delta in (0, 1). Got ({epsilon!r}, "
            f"{delta!r})."
        )
    lo, hi = 1e-9, 1e3
    for _ in range(200):
        mid = math.sqrt(lo * hi)
        if gdp_delta(epsilon, mid) > delta:
            hi = mid
        else:
            lo = mid
    return lo


def default_target(domain: dict[str, Any]) -> dict[str, Any]:
    """The target a zoo mechanism looks for unless given one: 1 in every column (the
    worst case's target), except a categorical column without the category 1, where
    it is the last category (the one-run game's ``canary`` column: a value of the
    public domain, never one the release could not hold).

    >>> default_target({"columns": [{"name": "a", "kind": "binary"},
    ...     {"name": "canary", "kind": "categorical", "categories": ["base", "c0"]}]})
    {'a': 1, 'canary': 'c0'}
    """
    out: dict[str, Any] = {}
    for col in domain["columns"]:
        categories = list(col.get("categories") or ())
        categorical = col["kind"] == "categorical" and 1 not in categories
        out[col["name"]] = categories[-1] if categorical and categories else 1
    return out


def _logaddexp(x: float, y: float) -> float:
    m = max(x, y)
    if m == -math.inf:
        return m
    return m + math.log(math.exp(x - m) + math.exp(y - m))


def rr_rdp(epsilon: float, order: float) -> float:
    """RDP at ``order`` of randomized response at ``epsilon``: the Renyi divergence
    of ``Bernoulli(p)`` from ``Bernoulli(1 - p)``, ``p = e^eps / (1 + e^eps)``
    (symmetric, so both directions)::

        log(p^a (1-p)^(1-a) + (1-p)^a p^(1-a)) / (a - 1)

    >>> rr_rdp(0.0, 2.0)
    0.0
    >>> round(rr_rdp(1.0, 1e6), 4)  # tends to epsilon
    1.0
    """
    log_p = -math.log1p(math.exp(-epsilon))
    log_q = -epsilon + log_p
    a = order
    total = _logaddexp(a * log_p + (1 - a) * log_q, a * log_q + (1 - a) * log_p)
    return max(total / (a - 1.0), 0.0)


def laplace_rdp(epsilon: float, order: float) -> float:
    """RDP at ``order`` of the Laplace mechanism ``Lap(1/eps)`` on a sensitivity-1
    query (Mironov 2017, Prop. 6)::

        log(a/(2a-1) e^((a-1) eps) + (a-1)/(2a-1) e^(-a eps)) / (a - 1)

    >>> round(laplace_rdp(1.0, 2.0), 6)
    0.619124
    """
    a = order
    total = _logaddexp(
        math.log(a / (2 * a - 1)) + (a - 1) * epsilon,
        math.log((a - 1) / (2 * a - 1)) - a * epsilon,
    )
    return max(total / (a - 1.0), 0.0)


def gaussian_rdp(mu: float, order: float) -> float:
    """RDP at ``order`` of the Gaussian mechanism ``N(0, 1/mu^2)`` on a sensitivity-1
    query: ``a mu^2 / 2`` (Mironov 2017, Prop. 7).

    >>> gaussian_rdp(1.0, 3.0)
    1.5
    """
    return order * mu * mu / 2.0


def _public_rng(seed: int, public_seed: int | None) -> np.random.Generator:
    """The filler rows' stream: ``public_seed``'s, or without one a fresh child of
    the privacy seed per call (never the noise's stream)."""
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


class _CountMechanism:
    """The shared plumbing: options, the count, the claim, the release."""

    mechanism = ""
    pure = True  # delta 0 in the claim

    def __init__(
        self,
        *,
        epsilon: float,
        delta: float = 0.0,
        true_epsilon: float | None = None,
        profile: str = "full",
        target: dict[str, Any] | None = None,
    ) -> None:
        for name, value in (("epsilon", epsilon), ("true_epsilon", true_epsilon)):
            if value is None and name == "true_epsilon":
                continue
            if not (
                isinstance(value, int | float)
                and not isinstance(value, bool)
                and math.isfinite(value)
                and value > 0
            ):
                raise ValueError(
                    f"`{name}` must be a finite number > 0. Got {value!r}."
                )
        if profile not in PROFILES:
            raise ValueError(f"`profile` must be one of {PROFILES}. Got {profile!r}.")
        if not (isinstance(delta, int | float) and not isinstance(delta, bool)) or not (
            0 <= delta < 1
        ):
            raise ValueError(f"`delta` must be a number in [0, 1). Got {delta!r}.")
        if not self.pure and not delta > 0:
            raise ValueError(
                f"{type(self).__name__} needs `delta` > 0 (pass --delta). Got {delta!r}."
            )
        self.epsilon = float(epsilon)
        self.delta = float(delta)
        self.true_epsilon = float(epsilon if true_epsilon is None else true_epsilon)
        self.profile = profile
        self.target = target

    # -- what each mechanism defines ------------------------------------------------

    def _noisy(self, count: int, rng: np.random.Generator) -> float:
        raise NotImplementedError

    def _scale(self) -> float:
        raise NotImplementedError

    def _rdp(self, order: float) -> float:
        raise NotImplementedError

    def _profile(self) -> dict[str, Any]:
        """The exact profile of the mechanism calibrated to the claimed epsilon."""
        if self.profile == "none":
            return {}
        return {
            "rdp": {
                "orders": list(ZOO_ORDERS),
                "epsilons": [self._rdp(a) for a in ZOO_ORDERS],
            }
        }

    def _copies(self, n: int) -> int:
        scale = self._scale()
        step = n / (2.0 * WIDTH * scale)
        k = round(n / 2.0 + (self.answer_ - 0.5) * step)
        return int(min(max(k, 0), n))

    # -- the protocol ---------------------------------------------------------------

    def fit(
        self,
        data: pd.DataFrame,
        *,
        domain: dict[str, Any],
        seed: int,
        public_seed: int | None = None,
    ) -> _CountMechanism:
        names = [c["name"] for c in domain["columns"]]
        target = self.target or default_target(domain)
        row = np.array([target[n] for n in names], dtype=object)
        matches = (data[names].to_numpy(dtype=object) == row).all(axis=1)
        count = int(matches.sum())
        # The privacy stream feeds the noise and nothing else.
        self.answer_ = self._noisy(count, np.random.default_rng(seed))
        self.domain_, self.target_ = domain, target
        self.dtypes_ = data.dtypes
        self.privacy_claim = {
            "epsilon": self.epsilon,
            "delta": 0.0 if self.pure else self.delta,
            "accountant": f"{self.mechanism} (exact)",
            "true_epsilon": self.true_epsilon,
            "profile_stated": self.profile,
            **self._profile(),
        }
        return self

    def sample(
        self, n: int, *, seed: int, public_seed: int | None = None
    ) -> pd.DataFrame:
        rng = _public_rng(seed, public_seed)
        frame = _random_rows(self.domain_, n, rng)
        names = list(self.target_)
        target = np.array([self.target_[c] for c in names], dtype=object)
        # Fillers never equal the target (redrawn), so the copies count exactly k.
        for _ in range(100):
            same = (frame[names].to_numpy(dtype=object) == target).all(axis=1)
            if not same.any():
                break
            fresh = _random_rows(self.domain_, int(same.sum()), rng)
            frame.loc[same, :] = fresh.to_numpy()
        k = self._copies(n)
        if k:
            for name, value in self.target_.items():
                frame.loc[: k - 1, name] = value
        return frame.astype(self.dtypes_)


class ExactRandomizedResponse(_CountMechanism):
    """Randomized response on the bit "the target is in the data": exactly
    ``true_epsilon``-DP; claims ``epsilon`` with the Bernoulli RDP curve at
    ``epsilon`` (module docstring)."""

    mechanism = "randomized response"

    def _noisy(self, count: int, rng: np.random.Generator) -> float:
        member = count >= 1
        keep = 1.0 / (1.0 + math.exp(-self.true_epsilon))
        return float(member if rng.random() < keep else not member)

    def _copies(self, n: int) -> int:
        return int(self.answer_ >= 0.5 and n > 0)

    def _scale(self) -> float:
        return 1.0

    def _rdp(self, order: float) -> float:
        return rr_rdp(self.epsilon, order)


class ExactLaplace(_CountMechanism):
    """The target's count plus ``Lap(1 / true_epsilon)``: exactly
    ``true_epsilon``-DP; claims ``epsilon`` with the Laplace RDP curve at ``epsilon``
    (module docstring)."""

    mechanism = "Laplace count"

    def _noisy(self, count: int, rng: np.random.Generator) -> float:
        return count + float(rng.laplace(0.0, 1.0 / self.true_epsilon))

    def _scale(self) -> float:
        return 1.0 / self.true_epsilon

    def _rdp(self, order: float) -> float:
        return laplace_rdp(self.epsilon, order)


class ExactGaussian(_CountMechanism):
    """The target's count plus ``N(0, sigma^2)``, ``sigma = 1 / mu`` calibrated by the
    analytic Gaussian mechanism to ``(true_epsilon, delta)``: exactly that and exactly
    ``mu``-GDP; claims ``(epsilon, delta)`` with ``gdp_mu`` and the RDP curve of the
    Gaussian calibrated to ``(epsilon, delta)`` (module docstring)."""

    mechanism = "Gaussian count"
    pure = False

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.true_mu = analytic_gaussian_mu(self.true_epsilon, self.delta)
        self.claimed_mu = analytic_gaussian_mu(self.epsilon, self.delta)

    def _noisy(self, count: int, rng: np.random.Generator) -> float:
        return count + float(rng.normal(0.0, 1.0 / self.true_mu))

    def _scale(self) -> float:
        return 1.0 / self.true_mu

    def _rdp(self, order: float) -> float:
        return gaussian_rdp(self.claimed_mu, order)

    def _profile(self) -> dict[str, Any]:
        out = super()._profile()
        if self.profile == "full":
            out["gdp_mu"] = self.claimed_mu
        out["true_mu"] = self.true_mu
        return out


class _Histogram:
    """Noisy counts of every category of one public column, stated as a measurement
    transcript (docs/plugins.md, "The measurement transcript"): the mixin of
    :class:`ExactLaplaceHistogram` and :class:`ExactGaussianHistogram`.

    ``column`` (an option; default the domain's last categorical column) is
    histogrammed over its public categories, each count plus the noise of the
    mechanism it is mixed into (``_noisy``, ``_scale``). Adding or removing one
    record changes one count by 1 (L1 and L2 sensitivity 1), so the release is
    exactly the per-count mechanism's privacy: exactly ``true_epsilon``-DP
    (Laplace), exactly ``(true_epsilon, delta)``-DP and ``true_mu``-GDP (Gaussian).
    ``privacy_transcript`` states every noisy count with the noise actually added.
    In the one-run game's ``worst-case`` design each canary's value is a count of
    its own: every canary sees exactly this mechanism. ``sample`` draws ``column``
    from the clipped noisy histogram and the other columns uniformly from the public
    domain (post-processing).
    """

    column: str | None
    true_epsilon: float
    noise_name = ""

    if TYPE_CHECKING:  # the mechanism's, from the class it is mixed into

        def _noisy(self, count: int, rng: np.random.Generator) -> float: ...

        def _scale(self) -> float: ...

    def _claim(self) -> dict[str, Any]:
        raise NotImplementedError

    def fit(
        self,
        data: pd.DataFrame,
        *,
        domain: dict[str, Any],
        seed: int,
        public_seed: int | None = None,
    ) -> Self:
        categorical = [c for c in domain["columns"] if c["kind"] == "categorical"]
        chosen = [c for c in categorical if c["name"] == self.column] or (
            categorical[-1:] if self.column is None else []
        )
        if not chosen:
            raise ValueError(
                f"`column` must name a categorical column of the domain. Got "
                f"{self.column!r}; categorical: {[c['name'] for c in categorical]}."
            )
        col = chosen[0]
        cells = list(col["categories"])
        counts = data[col["name"]].astype(object).value_counts()
        rng = np.random.default_rng(seed)  # the privacy noise, and nothing else
        noisy = [self._noisy(int(counts.get(c, 0)), rng) for c in cells]
        self.column_, self.cells_, self.noisy_ = col["name"], cells, noisy
        self.domain_, self.dtypes_ = domain, data.dtypes
        self.privacy_transcript = [
            {
                "columns": [col["name"]],
                "cells": [[c] for c in cells],
                "noisy": noisy,
                "noise": {self.noise_name: self._scale()},
            }
        ]
        self.privacy_claim = self._claim()
        return self

    def sample(
        self, n: int, *, seed: int, public_seed: int | None = None
    ) -> pd.DataFrame:
        rng = _public_rng(seed, public_seed)
        frame = _random_rows(self.domain_, n, rng)
        weights = np.clip(np.asarray(self.noisy_, dtype=np.float64), 0.0, None)
        total = float(weights.sum())
        p = weights / total if total > 0 else None
        picks = rng.choice(len(self.cells_), size=n, p=p)
        frame[self.column_] = [self.cells_[i] for i in picks]
        return frame.astype(self.dtypes_)


class ExactLaplaceHistogram(_Histogram, ExactLaplace):
    """Every category count of ``column`` plus ``Lap(1 / true_epsilon)``: exactly
    ``true_epsilon``-DP, stated as its transcript; claims what :class:`ExactLaplace`
    claims (:class:`_Histogram`)."""

    noise_name = "laplace"
    mechanism = "Laplace histogram"

    def __init__(self, *, column: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.column = column

    def _claim(self) -> dict[str, Any]:
        return {
            "epsilon": self.epsilon,
            "delta": 0.0,
            "accountant": f"{self.mechanism} (exact)",
            "true_epsilon": self.true_epsilon,
            "profile_stated": self.profile,
            **self._profile(),
        }


class ExactGaussianHistogram(_Histogram, ExactGaussian):
    """Every category count of ``column`` plus ``N(0, 1 / true_mu^2)``: exactly
    ``(true_epsilon, delta)``-DP and ``true_mu``-GDP, stated as its transcript;
    claims what :class:`ExactGaussian` claims (:class:`_Histogram`)."""

    noise_name = "gaussian"
    mechanism = "Gaussian histogram"

    def __init__(self, *, column: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.column = column

    def _claim(self) -> dict[str, Any]:
        return {
            "epsilon": self.epsilon,
            "delta": self.delta,
            "accountant": f"{self.mechanism} (exact)",
            "true_epsilon": self.true_epsilon,
            "profile_stated": self.profile,
            **self._profile(),
        }
