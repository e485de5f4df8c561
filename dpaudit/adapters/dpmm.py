"""Adapters for dpmm 0.1.9's synthesizers (MST, AIM, PrivBayes; docs/adapters.md).

dpmm ("end-to-end differential privacy") wraps each model in a pipeline
(``dpmm.pipelines.MSTPipeline``, ``AIMPipeline``, ``PrivBayesPipeline``): a
``TableBinner`` that encodes the table (categories, DP bins of numeric columns) and
the marginal model. Install it in its own environment and pass ``--python``:

    python -m venv /work/venvs/dpmm && /work/venvs/dpmm/bin/pip install dpmm
    dpaudit audit --generator dpmm-mst --python /work/venvs/dpmm/bin/python \\
        --dataset worst-case --dataset-rows 2000

This module imports only the standard library, numpy and pandas; dpmm is imported when
a model is fitted.

Options (``--option KEY=VALUE``):

- ``preprocessing``: ``public`` (default) passes the public domain to ``fit`` (each
  discrete column's ``categories``, each numeric column's ``lower`` and ``upper``),
  dpmm's documented way to avoid its "PrivacyLeakage" warning; ``library`` passes no
  domain: dpmm then takes each column's categories from the records (and warns).
- ``proc_epsilon``: the budget of dpmm's DP binning of numeric columns (its default
  0.1; ``null`` for uniform bins over the public bounds).
- anything else goes to the model (``gen_kwargs``), e.g. ``degree=2`` (PrivBayes).

Claim: ``epsilon`` is the model's budget plus what the binner spent (dpmm charges its
binning separately, ``TableBinner.spent_epsilon``); the model's ``rho`` (zCDP, the
library's ``cdp_rho``) where it has one. Seeding: dpmm draws from a
``numpy.random.RandomState`` it is given: ``fit`` gets one from ``seed``, ``generate``
one from ``public_seed`` (else ``seed``): the same seeds give the same release.

What dpmm 0.1.9 does with a column that has one value in the records
(``processing/table_binner.py``, ``static_columns``): it drops it from the model and
releases that value in every row, whatever the domain says. docs/findings.md.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from dpaudit.adapters._common import (
    AdapterInputError,
    cast_release,
    category_values,
    check_preprocessing,
    columns_of,
    import_library,
    installed,
    quiet,
    seed_globals,
)

__all__ = ["DpmmAIM", "DpmmMST", "DpmmPrivBayes"]

PACKAGE = "dpmm"


def _state(seed: int) -> Any:
    word = np.random.SeedSequence([int(seed), 4]).generate_state(1, dtype=np.uint32)[0]
    return np.random.RandomState(int(word))


class _Dpmm:
    """One dpmm pipeline behind the plug-in protocol."""

    pipeline: ClassVar[str]  # the class name in dpmm.pipelines

    def __init__(
        self,
        *,
        epsilon: float,
        delta: float = 1e-5,
        preprocessing: str = "public",
        proc_epsilon: float | None = 0.1,
        **options: Any,
    ) -> None:
        if not (
            isinstance(epsilon, (int, float)) and math.isfinite(epsilon) and epsilon > 0
        ):
            raise AdapterInputError(
                f"`epsilon` must be a finite number > 0. Got {epsilon!r}."
            )
        if not (isinstance(delta, (int, float)) and 0 < delta < 1):
            raise AdapterInputError(
                f"dpmm's models convert zCDP to (epsilon, delta) and need `delta` in "
                f"(0, 1). Got {delta!r}; pass --delta."
            )
        if proc_epsilon is not None and not (
            isinstance(proc_epsilon, (int, float)) and proc_epsilon > 0
        ):
            raise AdapterInputError(
                f"`proc_epsilon` must be a number > 0 or null. Got {proc_epsilon!r}."
            )
        self.epsilon, self.delta = float(epsilon), float(delta)
        self.preprocessing = check_preprocessing(preprocessing)
        self.proc_epsilon = proc_epsilon
        self.options = dict(options)

    def _domain(self, domain: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for col in columns_of(domain):
            cats = category_values(col)
            if cats is not None:
                out[col["name"]] = {"categories": list(cats)}
            else:
                out[col["name"]] = {
                    "lower": float(col["lower"]),
                    "upper": float(col["upper"]),
                }
        return out

    def fit(
        self,
        data: pd.DataFrame,
        *,
        domain: dict[str, Any],
        seed: int,
        public_seed: int | None = None,
    ) -> _Dpmm:
        """Fits the pipeline on ``data``; sets ``privacy_claim``."""
        pipelines = import_library("dpmm.pipelines", package=PACKAGE)
        self.domain_ = domain
        seed_globals(seed)
        table = data.reset_index(drop=True).copy()
        for col in columns_of(domain):
            if category_values(col) is not None:
                # dpmm treats numeric dtypes as numbers to bin: discrete columns
                # are categories.
                table[col["name"]] = table[col["name"]].astype("category")
        cls = getattr(pipelines, self.pipeline)
        try:
            model = cls(
                epsilon=self.epsilon,
                delta=self.delta,
                proc_epsilon=self.proc_epsilon,
                n_jobs=1,
                gen_kwargs=self.options,
            )
        except TypeError as err:
            raise AdapterInputError(
                f"dpmm's {self.pipeline} does not take these options "
                f"({' '.join(str(err).split())}). Got --option {sorted(self.options)}."
            ) from err
        given = self._domain(domain) if self.preprocessing == "public" else None
        with quiet():
            model.fit(table, domain=given, random_state=_state(seed))
        self.model_ = model
        spent = 0.0
        proc = getattr(model, "proc", None)
        if proc is not None:
            for value in (getattr(proc, "spent_epsilon", None) or {}).values():
                spent += float(value or 0.0)
        gen = model.gen
        self.privacy_claim = {
            "epsilon": self.epsilon + spent,
            "delta": self.delta,
            "accountant": "dpmm zCDP (cdp_rho), converted to (epsilon, delta); "
            "binning composed",
            "library": installed("dpmm"),
            "nominal_epsilon": self.epsilon,
            "preprocessor_epsilon": spent,
            "preprocessing": self.preprocessing,
            "static_columns": sorted(
                str(c) for c in (getattr(proc, "static_columns", None) or {})
            ),
        }
        rho = getattr(gen, "rho", None)
        if isinstance(rho, (int, float)):
            self.privacy_claim["rho"] = float(rho)
        return self

    def sample(
        self, n: int, *, seed: int, public_seed: int | None = None
    ) -> pd.DataFrame:
        """``n`` rows from the fitted pipeline (post-processing: from
        ``public_seed`` when given)."""
        if not hasattr(self, "model_"):
            raise RuntimeError("call `fit` first.")
        chosen = seed if public_seed is None else public_seed
        seed_globals(chosen)
        with quiet():
            out = self.model_.generate(n_records=int(n), random_state=_state(chosen))
        names = [c["name"] for c in columns_of(self.domain_)]
        out = pd.DataFrame(out)[names]
        for name in names:
            if isinstance(out[name].dtype, pd.CategoricalDtype):
                out[name] = out[name].astype(object)
        return cast_release(out, self.domain_)


class DpmmMST(_Dpmm):
    """dpmm's MST (``MSTPipeline``): Gaussian measurements of 1- and selected
    2-way marginals, zCDP."""

    pipeline = "MSTPipeline"


class DpmmAIM(_Dpmm):
    """dpmm's AIM (``AIMPipeline``): adaptive marginal selection, zCDP."""

    pipeline = "AIMPipeline"


class DpmmPrivBayes(_Dpmm):
    """dpmm's PrivBayes (``PrivBayesPipeline``): a DP Bayesian network."""

    pipeline = "PrivBayesPipeline"
