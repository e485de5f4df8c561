"""Adapters for OpenDP 0.16's synthesizers, MST and AIM (docs/adapters.md).

OpenDP ships them in ``opendp.extras.mbi`` (on the ``mbi`` package, Private-PGM):
``make_contingency_table(..., algorithm=MST() | AIM())`` is a measurement that
releases a ``ContingencyTable`` (noisy marginals and a Markov random field fitted to
them), whose ``synthesize(rows)`` draws a table. Build its environment and audit:

    dpaudit env opendp
    dpaudit audit --generator opendp-mst \\
        --python ~/.cache/dpaudit/envs/opendp/bin/python --dataset worst-case

This module imports only the standard library, numpy and pandas; OpenDP (and polars,
which it uses) are imported when a model is fitted. These are every synthesizer
OpenDP 0.16 ships (``opendp.extras.mbi.Fixed`` and ``Sequential`` measure a workload
the user names, not a synthesizer's choice, and have no adapter).

Options (``--option KEY=VALUE``):

- ``preprocessing``: ``public`` (default) passes OpenDP every column's values from
  the public domain: ``keys`` (each discrete column's categories) and ``cuts`` (each
  numeric column's public range cut into ``bins`` equal bins). With every column
  known OpenDP releases under pure zCDP (``rho``) and the one-way marginals are
  ordinary noisy counts. ``library`` passes neither: OpenDP discovers each column's
  values from the records (its stable key discovery: noisy one-way counts with a
  threshold below which a value is folded into a null cell), which needs approximate
  zCDP (``rho`` and a ``delta``); a numeric column is then a set of values like a
  categorical one. The adapter gives key discovery half of ``delta``.
- ``bins``: bins per numeric column with ``preprocessing=public`` (default 10).
- any other option is a field of OpenDP's algorithm (``MST``: ``measure_split``,
  ``num_selections``, ``oneway``, ``oneway_split``; ``AIM``: also ``queries``,
  ``max_size``, ``rounds``), e.g. ``--option rounds=5``.

Budget and claim: the budget ``(epsilon, delta)`` becomes the largest ``rho`` whose
conversion by OpenDP (``make_zCDP_to_approxDP``, the optimal conversion) is at most
``epsilon`` at ``delta`` (``delta / 2`` with ``library``, the other half going to key
discovery). The claim is OpenDP's own: the measurement's ``map`` of one added or
removed record (``rho``, or ``(rho, delta)`` with ``library``) and its
``make_fix_delta(make_zCDP_to_approxDP(...), delta)`` at the budget's ``delta``.
With ``public`` the claim's profile is the measurement's ``zcdp_rho``.

Seeding: OpenDP draws every noise and every selection (MST's and AIM's noisy max)
from its own cryptographic generator, which nothing seeds: ``fit`` cannot be
reproduced (mbi's estimation itself is deterministic). ``sample`` is: mbi's
``synthetic_data`` (randomized rounding) and OpenDP's drawing of a value inside a
numeric bin use numpy's global generator, which the adapter seeds from
``public_seed`` (else ``seed``); sampling is post-processing.
"""

from __future__ import annotations

import math
from dataclasses import fields
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from dpaudit.adapters._common import (
    AdapterInputError,
    category_values,
    columns_of,
    import_library,
    seed_numpy,
)
from dpaudit.adapters._template import LibraryAdapter
from dpaudit.adapters.opendp import LIBRARY
from dpaudit.adapters.opendp._measure import table_transcript

__all__ = ["OpenDPAIM", "OpenDPMST"]

PACKAGE = LIBRARY.package
DEFAULT_BINS = 10


def _prelude() -> Any:
    dp = import_library("opendp.prelude", package=PACKAGE)
    import_library("opendp.extras.mbi", package=PACKAGE)
    dp.enable_features("contrib")
    return dp


def rho_for(dp: Any, epsilon: float, delta: float) -> float:
    """The largest ``rho`` whose conversion by OpenDP (``make_zCDP_to_approxDP``) is at
    most ``epsilon`` at ``delta``: found on OpenDP's Gaussian mechanism, whose zCDP
    loss at sensitivity 1 is ``1 / (2 scale^2)``."""

    def converted(rho: float) -> float:
        gauss = dp.m.make_gaussian(
            dp.atom_domain(T=float, nan=False),
            dp.absolute_distance(T=float),
            scale=math.sqrt(1.0 / (2.0 * rho)),
        )
        fixed = dp.c.make_fix_delta(dp.c.make_zCDP_to_approxDP(gauss), delta)
        try:
            return float(fixed.map(1.0)[0])
        except dp.OpenDPException:  # a rho too large to convert
            return math.inf

    found = dp.binary_search(lambda rho: converted(rho) <= epsilon, bounds=(1e-10, 1e3))
    return float(found)


class _OpenDP(LibraryAdapter):
    """One OpenDP ``opendp.extras.mbi`` algorithm on the adapters' template."""

    library = LIBRARY
    algorithm: ClassVar[str]  # the class name in opendp.extras.mbi

    def __init__(
        self,
        *,
        epsilon: float,
        delta: float = 1e-5,
        preprocessing: str = "public",
        bins: int = DEFAULT_BINS,
        **options: Any,
    ) -> None:
        super().__init__(
            epsilon=epsilon, delta=delta, preprocessing=preprocessing, **options
        )
        if not (isinstance(bins, int) and not isinstance(bins, bool) and bins >= 2):
            raise AdapterInputError(f"`bins` must be an integer >= 2. Got {bins!r}.")
        self.bins = bins

    def _algorithm(self, mbi: Any) -> Any:
        cls = getattr(mbi, self.algorithm)
        known = {f.name for f in fields(cls)} - {"estimator"}
        unknown = sorted(set(self.options) - known)
        if unknown:
            raise AdapterInputError(
                f"OpenDP's {self.algorithm} has no option {unknown[0]!r}; its options "
                f"are {', '.join(sorted(known))} (and the adapter's preprocessing, "
                "bins)."
            )
        try:
            return cls(**self.options)
        except (TypeError, ValueError) as err:
            raise AdapterInputError(
                f"OpenDP's {self.algorithm} refused the options {self.options!r}: "
                f"{' '.join(str(err).split())}"
            ) from err

    def _frame(
        self, dp: Any, data: pd.DataFrame
    ) -> tuple[Any, Any, dict[str, list[Any]], dict[str, list[Any]]]:
        """The records as polars, their OpenDP domain, and the keys and cuts."""
        pl = import_library("polars", package=PACKAGE)
        series: list[Any] = []
        values: dict[str, Any] = {}
        keys: dict[str, list[Any]] = {}
        cuts: dict[str, list[Any]] = {}
        public = self.preprocessing == "public"
        for col in columns_of(self.domain_):
            name, kind = col["name"], col["kind"]
            column = data[name]
            if column.isna().any():
                raise AdapterInputError(
                    f"column {name!r} has missing values: the OpenDP adapters take "
                    "none (drop or impute them first)."
                )
            cats = category_values(col)
            if kind == "categorical":
                # OpenDP keys a string column; the release is mapped back.
                values[name] = column.map(str).to_numpy(dtype=object)
                series.append(dp.series_domain(name, dp.atom_domain(T="String")))
                if public:
                    keys[name] = [str(c) for c in col["categories"]]
            elif kind == "continuous":
                values[name] = column.to_numpy(dtype=float)
                series.append(
                    dp.series_domain(name, dp.atom_domain(T="f64", nan=False))
                )
                if public:
                    edges = np.linspace(
                        float(col["lower"]), float(col["upper"]), self.bins + 1
                    )
                    cuts[name] = [float(x) for x in edges[1:-1]]
            else:  # binary, integer
                values[name] = column.to_numpy(dtype=np.int64)
                series.append(dp.series_domain(name, dp.atom_domain(T="i64")))
                if public and cats is not None:
                    keys[name] = [int(c) for c in cats]
                elif public:
                    edges = np.unique(
                        np.rint(
                            np.linspace(
                                float(col["lower"]), float(col["upper"]), self.bins + 1
                            )
                        ).astype(np.int64)
                    )
                    cuts[name] = [int(x) for x in edges[1:-1]]
        frame = pl.DataFrame(values).lazy()
        return frame, dp.lazyframe_domain(series), keys, cuts

    # -- the template's steps --------------------------------------------------------

    def _check_delta(self, delta: Any) -> float:
        if not (isinstance(delta, (int, float)) and 0 < delta < 1):
            raise AdapterInputError(
                f"OpenDP's {self.algorithm} is zCDP, converted to (epsilon, delta): "
                f"`delta` must be in (0, 1). Got {delta!r}; pass --delta."
            )
        return float(delta)

    def _import(self) -> Any:
        dp = _prelude()
        return dp, import_library("opendp.extras.mbi", package=PACKAGE)

    def _seed_fit(self, seed: int, public_seed: int | None) -> None:
        # Nothing in OpenDP's fit draws from these; seeded for what else might.
        seed_numpy(seed)

    def _build(self, library: Any, table: Any, seed: int) -> Any:
        """OpenDP's algorithm (``MST()``, ``AIM()``) with the options."""
        self.dp_, self.mbi_ = library
        return self._algorithm(self.mbi_)

    def _train(self, model: Any, table: Any, seed: int) -> Any:
        """OpenDP's contingency-table measurement made and applied to the records:
        the fitted model is the released ``ContingencyTable``."""
        dp = self.dp_
        frame, input_domain, keys, cuts = self._frame(dp, table)
        metric = dp.frame_distance(dp.symmetric_distance())
        self.d_in_ = [dp.polars.Bound(per_group=1)]  # one record added or removed
        zcdp = dp.zero_concentrated_divergence()
        d_out: float | tuple[float, float]
        if self.preprocessing == "public":
            rho = rho_for(dp, self.epsilon, self.delta)
            measure, d_out = zcdp, rho
        else:
            rho = rho_for(dp, self.epsilon, self.delta / 2.0)
            measure, d_out = dp.approximate(zcdp), (rho, self.delta / 2.0)
        measurement, self.scale_, self.threshold_ = self.mbi_.make_contingency_table(
            input_domain,
            metric,
            measure,
            self.d_in_,
            d_out,
            keys=keys or None,
            cuts=cuts or None,
            algorithm=model,
        )
        self.measurement_ = measurement
        return measurement(frame)

    def _claim(self, model: Any) -> dict[str, Any]:
        dp, measurement, d_in = self.dp_, self.measurement_, self.d_in_
        loss = measurement.map(d_in)
        converted = dp.c.make_fix_delta(
            dp.c.make_zCDP_to_approxDP(measurement), self.delta
        ).map(d_in)
        claim: dict[str, Any] = {
            "epsilon": float(converted[0]),
            "delta": float(converted[1]),
            "accountant": f"OpenDP {self.algorithm} measurement: zCDP mapped to "
            "(epsilon, delta) by make_zCDP_to_approxDP",
            "unseeded_noise": "OpenDP's noise and noisy-max selections (its CSPRNG)",
        }
        if isinstance(loss, tuple):
            claim["rho"] = float(loss[0])
            claim["rho_delta"] = float(loss[1])
        else:
            claim["rho"] = float(loss)
            # The claim's profile: pure zCDP.
            claim["zcdp_rho"] = float(loss)
        if self.scale_ is not None:
            claim["oneway_scale"] = float(self.scale_)
        if self.threshold_ is not None:
            claim["oneway_threshold"] = int(self.threshold_)
        claim["cliques"] = [list(map(str, clique)) for clique in model.model.cliques]
        if self.preprocessing == "public":
            # The measurements the table keeps, in the public keys' values.
            self.transcript_ = table_transcript(model, self.domain_)
        return claim

    def _seed_sample(self, seed: int) -> None:
        seed_numpy(seed)

    def _draw(self, n: int, seed: int) -> Any:
        return self.model_.synthesize(n).to_pandas()

    def _decode(self, out: Any) -> pd.DataFrame:
        columns = columns_of(self.domain_)
        for col in columns:
            if col["kind"] == "categorical":
                back = {str(c): c for c in col["categories"]}
                out[col["name"]] = [
                    None if v is None else back.get(v, v) for v in out[col["name"]]
                ]
        return out[[c["name"] for c in columns]]


class OpenDPMST(_OpenDP):
    """OpenDP's MST (``opendp.extras.mbi.MST``): one-way marginals, then a maximum
    spanning tree of 2-way marginals chosen by noisy max, Gaussian noise, zCDP."""

    algorithm = "MST"
    omits = (
        "the tree's edges, selected by noisy max (opendp/extras/mbi/_mst/"
        "__init__.py:162-172, 208-270)"
    )


class OpenDPAIM(_OpenDP):
    """OpenDP's AIM (``opendp.extras.mbi.AIM``): adaptive marginal selection by noisy
    max, Gaussian noise, zCDP."""

    algorithm = "AIM"
    omits = (
        "each round's marginal, selected by noisy max (opendp/extras/mbi/_aim/"
        "__init__.py:262-281, 331-)"
    )
