"""Adapters for dpmm 0.1.9's synthesizers (MST, AIM, PrivBayes; docs/adapters.md).

dpmm ("end-to-end differential privacy") wraps each model in a pipeline
(``dpmm.pipelines.MSTPipeline``, ``AIMPipeline``, ``PrivBayesPipeline``): a
``TableBinner`` that encodes the table (categories, DP bins of numeric columns) and
the marginal model. Install it in its own environment and pass ``--python``:

    dpaudit env dpmm
    dpaudit audit --generator dpmm-mst --python ~/.cache/dpaudit/envs/dpmm/bin/python \\
        --dataset worst-case --dataset-rows 2000

This module imports only the standard library, numpy and pandas; dpmm is imported when
a model is fitted.

Options (``--option KEY=VALUE``):

- ``preprocessing``: ``public`` (default) encodes the table from the public domain
  alone and hands dpmm the encoded table and its domain (the pipeline's documented
  ``disable_processing=True``): each discrete column's codes are the positions of its
  public ``categories``; each numeric column is binned by dpmm's own binner
  (``dpmm.processing.BINNER_DICT``, priv-tree with ``proc_epsilon`` split across the
  numeric columns, as ``TableBinner`` does) within its public ``lower`` and
  ``upper``. ``library`` passes the raw table and no domain: dpmm's ``TableBinner``
  then takes each column's categories from the records (and warns).
- ``binner``: ``adapter`` (default) as above; ``dpmm`` hands the raw table and the
  public domain to dpmm's own ``TableBinner`` instead (``preprocessing=public`` only),
  dpmm's documented use. dpmm's binner drops a column with one value in the records
  and releases that value (docs/findings.md 5); on a table whose every column has one
  value it raises ``ValueError: No objects to concatenate``, so the two-world game's
  worst case can only be audited with the default.
- ``proc_epsilon``: the budget of dpmm's DP binning of numeric columns (its default
  0.1; ``null`` for uniform bins over the public bounds).
- ``n_bins``: bins per numeric column, or ``auto`` (dpmm's default). dpmm's ``auto`` is
  ``ceil(2 N^(1/3))`` of the number of records ``N`` (times a sigmoid of the budget
  for priv-tree; ``processing/utils.py``, ``optimal_n_bins``), a count no noise
  protects (docs/findings.md 7); with ``preprocessing=public`` and ``proc_epsilon``
  ``null`` the adapter therefore uses 20 (dpmm's ``UniformBinner`` default) unless
  given a number.
- anything else goes to the model (``gen_kwargs``), e.g. ``degree=2`` (PrivBayes).

Claim: ``epsilon`` is the model's budget plus what the binning spent (dpmm charges its
binning separately, ``spent_epsilon``); the model's ``rho`` (zCDP, the library's
``cdp_rho``) where it has one. Seeding: dpmm draws its selections and sampling from a
``numpy.random.RandomState`` it is given (``fit`` one from ``seed``, ``generate`` one
from ``public_seed``, else ``seed``), but its Gaussian and Laplace noise from OpenDP
(``dpmm/models/base/utils.py``), which no seed fixes: the same seeds do not give the
same release.

What dpmm 0.1.9's ``TableBinner`` does with a column that has one value in the records
(``processing/table_binner.py``, ``static_columns``): it drops it from the model and
releases that value in every row, whatever the domain says. docs/findings.md.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from dpaudit.adapters._common import (
    AdapterInputError,
    category_values,
    columns_of,
    import_library,
)
from dpaudit.adapters._template import LibraryAdapter
from dpaudit.adapters._transcript import Transcript, check_measure_only
from dpaudit.adapters.dpmm import LIBRARY
from dpaudit.adapters.dpmm._measure import record_aim, record_mechanism

__all__ = ["DpmmAIM", "DpmmMST", "DpmmPrivBayes"]

BINNERS = ("adapter", "dpmm")
UNIFORM_BINS = 20  # dpmm's UniformBinner default: a public bin count


def _state(seed: int) -> Any:
    word = np.random.SeedSequence([int(seed), 4]).generate_state(1, dtype=np.uint32)[0]
    return np.random.RandomState(int(word))


@dataclass(frozen=True, kw_only=True)
class _PublicCodec:
    """The table encoded from the public domain (``preprocessing=public``).

    A discrete column's code is the position of its value among the public
    ``categories``; a numeric column is binned by dpmm's own binner within its public
    ``lower`` and ``upper`` (priv-tree with ``proc_epsilon`` split across the numeric
    columns, as dpmm's ``TableBinner`` does; uniform bins when it is ``None``). Unlike
    ``TableBinner``, nothing is read from the records to decide which columns to model:
    a column whose records all hold one value is modelled like any other.

    Attributes:
        categories: each discrete column's public categories, in code order.
        binners: each numeric column's fitted dpmm binner.
        sizes: each column's number of codes (the model's domain).
        spent_epsilon: what the binners spent (0 without numeric columns).
    """

    categories: dict[str, list[Any]]
    binners: dict[str, Any]
    sizes: dict[str, int]
    spent_epsilon: float

    @classmethod
    def fit(
        cls,
        table: pd.DataFrame,
        *,
        domain: dict[str, Any],
        proc_epsilon: float | None,
        rnd: Any,
        n_bins: int | str = "auto",
    ) -> _PublicCodec:
        """Takes the categories from ``domain`` and fits the numeric columns' binners
        on ``table`` (the only read of the records, and a DP one unless
        ``proc_epsilon`` is ``None``)."""
        categories: dict[str, list[Any]] = {}
        numeric: list[dict[str, Any]] = []
        for col in columns_of(domain):
            if table[col["name"]].isna().any():
                raise AdapterInputError(
                    f"column {col['name']!r} has missing values: dpmm's models take "
                    "none with preprocessing=public (library preprocessing imputes "
                    "them from the records)."
                )
            cats = category_values(col)
            if cats is None:
                numeric.append(col)
            else:
                categories[col["name"]] = list(cats)
        binners: dict[str, Any] = {}
        if numeric:
            found = import_library(
                "dpmm.processing", package=LIBRARY.package
            ).BINNER_DICT
            kind = "uniform" if proc_epsilon is None else "priv-tree"
            share = None if proc_epsilon is None else float(proc_epsilon) / len(numeric)
            if kind == "uniform" and n_bins == "auto":
                # dpmm's "auto" counts the records; uniform bins must not.
                n_bins = UNIFORM_BINS
            for col in numeric:
                binner = found[kind](
                    n_bins=n_bins,
                    epsilon=share,
                    lower=float(col["lower"]),
                    upper=float(col["upper"]),
                    rnd=rnd,
                )
                binner.fit(table[col["name"]].to_numpy())
                binners[col["name"]] = binner
        sizes = {name: len(cats) for name, cats in categories.items()}
        sizes.update({name: int(b.bin_domain) for name, b in binners.items()})
        spent = float(sum(float(b.spent_epsilon or 0.0) for b in binners.values()))
        return cls(
            categories=categories, binners=binners, sizes=sizes, spent_epsilon=spent
        )

    def encode(self, table: pd.DataFrame) -> pd.DataFrame:
        """The codes of ``table`` (one integer column per column of the domain)."""
        out: dict[str, np.ndarray] = {}
        for name, cats in self.categories.items():
            codes = np.asarray(pd.Index(cats).get_indexer(table[name]))
            if (codes < 0).any():
                raise AdapterInputError(
                    f"column {name!r} holds a value outside its public categories "
                    f"{cats!r}: fix the data or the domain."
                )
            out[name] = codes.astype(np.int64)
        for name, binner in self.binners.items():
            out[name] = np.asarray(
                binner.transform(table[name].to_numpy()), dtype=np.int64
            )
        return pd.DataFrame(out, index=table.index)

    def decode(self, codes: pd.DataFrame) -> pd.DataFrame:
        """The values of released ``codes`` (the inverse of :meth:`encode`, a numeric
        code to a value of its bin as dpmm's binner draws it)."""
        out: dict[str, Any] = {}
        for name, cats in self.categories.items():
            out[name] = np.asarray(cats, dtype=object)[
                codes[name].to_numpy(dtype=np.int64)
            ]
        for name, binner in self.binners.items():
            out[name] = binner.inverse_transform(codes[name].to_numpy(dtype=np.int64))
        return pd.DataFrame(out, index=codes.index)


class _Dpmm(LibraryAdapter):
    """One dpmm pipeline on the adapters' template."""

    library = LIBRARY
    pipeline: ClassVar[str]  # the class name in dpmm.pipelines
    # What its transcript records, and whether `measure_only` can stop its fit.
    records: ClassVar[str | None] = "Gaussian marginals"
    stops: ClassVar[bool] = True
    # Whether the model's ``rho`` is its whole zCDP budget (the claim's profile).
    zcdp: ClassVar[bool] = True

    def __init__(
        self,
        *,
        epsilon: float,
        delta: float = 1e-5,
        preprocessing: str = "public",
        proc_epsilon: float | None = 0.1,
        binner: str = "adapter",
        n_bins: int | str = "auto",
        measure_only: bool = False,
        **options: Any,
    ) -> None:
        self.measure_only = check_measure_only(measure_only, self)
        super().__init__(
            epsilon=epsilon, delta=delta, preprocessing=preprocessing, **options
        )
        if proc_epsilon is not None and not (
            isinstance(proc_epsilon, (int, float)) and proc_epsilon > 0
        ):
            raise AdapterInputError(
                f"`proc_epsilon` must be a number > 0 or null. Got {proc_epsilon!r}."
            )
        if not (
            n_bins == "auto"
            or (isinstance(n_bins, int) and not isinstance(n_bins, bool) and n_bins > 0)
        ):
            raise AdapterInputError(
                f"`n_bins` must be an integer > 0 or 'auto'. Got {n_bins!r}."
            )
        if binner not in BINNERS:
            raise AdapterInputError(
                f"`binner` must be one of {', '.join(BINNERS)}. Got {binner!r}."
            )
        if binner == "dpmm" and self.preprocessing != "public":
            raise AdapterInputError(
                "`binner=dpmm` hands dpmm's TableBinner the public domain: it needs "
                "preprocessing=public (library preprocessing always uses dpmm's)."
            )
        self.binner = binner
        self.n_bins = n_bins
        self.proc_epsilon = proc_epsilon

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

    @property
    def _own(self) -> bool:
        """Whether the adapter encodes the table from the public domain itself."""
        return self.preprocessing == "public" and self.binner == "adapter"

    # -- the template's steps --------------------------------------------------------

    def _check_delta(self, delta: Any) -> float:
        if not (isinstance(delta, (int, float)) and 0 < delta < 1):
            raise AdapterInputError(
                f"dpmm's models convert zCDP to (epsilon, delta) and need `delta` in "
                f"(0, 1). Got {delta!r}; pass --delta."
            )
        return float(delta)

    def _import(self) -> Any:
        return import_library("dpmm.pipelines", package=self.library.package)

    def _table(self, data: pd.DataFrame) -> pd.DataFrame:
        table = data.reset_index(drop=True).copy()
        if not self._own:
            for col in columns_of(self.domain_):
                if category_values(col) is not None:
                    # dpmm treats numeric dtypes as numbers to bin: discrete columns
                    # are categories.
                    table[col["name"]] = table[col["name"]].astype("category")
        return table

    def _build(self, library: Any, table: Any, seed: int) -> Any:
        cls = getattr(library, self.pipeline)
        try:
            return cls(
                epsilon=self.epsilon,
                delta=self.delta,
                proc_epsilon=self.proc_epsilon,
                n_bins=self.n_bins,
                n_jobs=1,
                gen_kwargs=self.options,
                disable_processing=self._own,
            )
        except TypeError as err:
            raise AdapterInputError(
                f"dpmm's {self.pipeline} does not take these options "
                f"({' '.join(str(err).split())}). Got --option {sorted(self.options)}."
            ) from err

    def _train(self, model: Any, table: Any, seed: int) -> Any:
        state = _state(seed)
        self.spent_ = 0.0
        if self._own:
            self.codec_ = _PublicCodec.fit(
                table,
                domain=self.domain_,
                proc_epsilon=self.proc_epsilon,
                rnd=state,
                n_bins=self.n_bins,
            )
            self.spent_ = self.codec_.spent_epsilon
            names = [c["name"] for c in columns_of(self.domain_)]
            self.transcript_ = Transcript(
                names, [self.codec_.categories.get(n) for n in names]
            )
            with self._record(model.gen.generator):
                model.fit(
                    self.codec_.encode(table),
                    domain=self.codec_.sizes,
                    random_state=state,
                )
            return model
        given = self._domain(self.domain_) if self.preprocessing == "public" else None
        model.fit(table, domain=given, random_state=state)
        proc = getattr(model, "proc", None)
        if proc is not None:
            for value in (getattr(proc, "spent_epsilon", None) or {}).values():
                self.spent_ += float(value or 0.0)
        return model

    def _claim(self, model: Any) -> dict[str, Any]:
        spent = self.spent_
        proc = getattr(model, "proc", None)
        gen = model.gen
        claim: dict[str, Any] = {
            "epsilon": self.epsilon + spent,
            "delta": self.delta,
            "accountant": "dpmm zCDP (cdp_rho), converted to (epsilon, delta); "
            "binning composed",
            "preprocessor_epsilon": spent,
            "binner": "adapter (public domain)" if self._own else "dpmm TableBinner",
            "static_columns": sorted(
                str(c) for c in (getattr(proc, "static_columns", None) or {})
            ),
        }
        # MST and AIM keep their zCDP budget on the mechanism (``gen.generator``).
        rho = getattr(gen, "rho", getattr(getattr(gen, "generator", None), "rho", None))
        if isinstance(rho, (int, float)):
            claim["rho"] = float(rho)
            if self.zcdp:
                # The claim's profile: the model's rho, and the binning (pure
                # `spent`-DP, so spent^2 / 2-zCDP) composed in.
                claim["zcdp_rho"] = float(rho) + spent * spent / 2.0
        claim["unseeded_noise"] = "OpenDP Gaussian measurements"
        return claim

    def _record(self, mech: Any) -> AbstractContextManager[None]:
        """The recorder of the mechanism's measurements (:mod:`._measure`)."""
        return record_mechanism(
            mech, lambda: self._transcript(), stop=self.measure_only
        )

    def _draw(self, n: int, seed: int) -> Any:
        return self.model_.generate(n_records=n, random_state=_state(seed))

    def _decode(self, out: Any) -> pd.DataFrame:
        names = [c["name"] for c in columns_of(self.domain_)]
        codec = getattr(self, "codec_", None)
        if codec is not None:
            out = codec.decode(pd.DataFrame(out))
        out = pd.DataFrame(out)[names]
        for name in names:
            if isinstance(out[name].dtype, pd.CategoricalDtype):
                out[name] = out[name].astype(object)
        return out


class DpmmMST(_Dpmm):
    """dpmm's MST (``MSTPipeline``): Gaussian measurements of 1- and selected
    2-way marginals, zCDP."""

    pipeline = "MSTPipeline"
    omits = (
        "the exponential-mechanism selection of the tree's edges (rho / 3; "
        "dpmm/models/mst.py:145, 155-225)"
    )


class DpmmAIM(_Dpmm):
    """dpmm's AIM (``AIMPipeline``): adaptive marginal selection, zCDP."""

    pipeline = "AIMPipeline"
    stops = False
    omits = (
        "the exponential-mechanism selection of each round's marginal (a tenth of "
        "each round's rho; dpmm/models/aim.py:389-430, 532-534)"
    )

    def _record(self, mech: Any) -> AbstractContextManager[None]:
        return record_aim(mech, lambda: self._transcript())


class DpmmPrivBayes(_Dpmm):
    """dpmm's PrivBayes (``PrivBayesPipeline``): a DP Bayesian network."""

    pipeline = "PrivBayesPipeline"
    omits = (
        "the network structure, selected by the exponential mechanism with half the "
        "budget (dpmm/models/priv_bayes.py:228-261)"
    )
    # Its ``rho`` is ``cdp_rho(epsilon / 2, delta)``, the Gaussian measurements' share
    # only (the structure is selected with the other half): no zCDP profile.
    zcdp = False
