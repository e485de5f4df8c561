"""smartnoise-synth 1.0.8 inside a fit: the public transformer, and the recorders of
MST's, AIM's and MWEM's measurements (docs/adapters.md, "White-box transcripts"; line
numbers are the library's).

Each recorder wraps the library's own measurement step for one fit and restores it
after: it reads the noisy vector and the noise scale the library computed, and returns
what the library's function returned, so the fit computes exactly what it computes
without it. Standard library, numpy and pandas only.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from dpaudit.adapters._common import category_values, columns_of, public_frame
from dpaudit.adapters._transcript import MeasurementsDone, Transcript, patched

TranscriptFactory = Callable[[], Transcript]
"""The fit's transcript (made on the first call, once the library's transformer is
fitted; the same one after)."""


@functools.cache
def cdp_rho(epsilon: float, delta: float) -> float:
    """``snsynth.utils.cdp_rho(epsilon, delta)``, the library's own conversion (an
    OpenDP binary search, deterministic: a fifth of a second per call), computed once
    per budget in a worker."""
    utils: Any = importlib.import_module("snsynth.utils")
    return float(utils.cdp_rho(epsilon, delta))


@contextmanager
def known_rho(module: str) -> Iterator[None]:
    """The library's ``module`` (MST's, AIM's) calls :func:`cdp_rho` for the fit: the
    value it computes, memoized (the same float; only its repetition is saved)."""
    target: Any = importlib.import_module(module)
    real = target.cdp_rho

    def memo(epsilon: Any, delta: Any, *args: Any, **kw: Any) -> Any:
        if args or kw:
            return real(epsilon, delta, *args, **kw)
        return cdp_rho(epsilon, delta)

    with patched(target, cdp_rho=memo):
        yield


def _column_index(name: str) -> int:
    """The library's column ``colJ`` (mst.py:88, aim.py:110) as ``J``."""
    if not name.startswith("col") or not name[3:].isdigit():
        raise ValueError(f"smartnoise named a column {name!r}; expected 'colJ'.")
    return int(name[3:])


def _groups(support: Any) -> list[list[int]]:
    """The original codes behind each code of MST's compressed column
    (``transform_data``, mst.py:220-239): the kept codes in order, then one code for
    all the others when any is dropped."""
    support = np.asarray(support, dtype=bool)
    kept = [[int(k)] for k in np.flatnonzero(support)]
    rest = [int(k) for k in np.flatnonzero(~support)]
    return kept + ([rest] if rest else [])


@contextmanager
def record_mst(
    model: Any, new_transcript: TranscriptFactory, *, stop: bool
) -> Iterator[None]:
    """MST (snsynth/mst/mst.py): records both calls of ``measure`` (mst.py:132-141:
    ``x + gaussian_noise(sigma/wgt)``, ``LinearMeasurement(y, proj, sigma/wgt)``): the
    one-way marginals on the full domain (mst.py:116) and the selected two-way ones on
    the compressed domain (mst.py:123), whose merged codes become ``sets``. ``stop``:
    raises :class:`MeasurementsDone` after the second call, before the 5,000-iteration
    estimation (mst.py:126)."""
    measure, transform = model.measure, model.transform_data
    supports: dict[str, Any] = {}

    def compressed(data: Any, support: dict[str, Any]) -> Any:
        supports.update(support)  # the mapping compress_domain applies (mst.py:182)
        return transform(data, support)

    def measured(data: Any, cliques: Any, sigma: Any, weights: Any = None) -> Any:
        out = measure(data, cliques, sigma, weights)
        for m in out:
            names = [str(c) for c in m.clique]
            groups = [_groups(supports[n]) for n in names] if supports else None
            new_transcript().add_marginal(
                [_column_index(n) for n in names],
                np.asarray(m.noisy_measurement, dtype=float),
                {"gaussian": float(m.stddev)},
                groups,
            )
        if stop and supports:  # the second call (after compress_domain)
            raise MeasurementsDone
        return out

    with patched(model, measure=measured, transform_data=compressed):
        yield


@contextmanager
def record_aim(model: Any, new_transcript: TranscriptFactory) -> Iterator[None]:
    """AIM (snsynth/aim/aim.py): records every ``LinearMeasurement(y, cl, sigma)``
    the fit builds, the one-way ones (aim.py:176-179) and each selected marginal's
    (aim.py:202-205), ``y = x + gaussian_noise(sigma, n)``: the module's name
    ``LinearMeasurement`` is wrapped for the fit (AIM builds no other)."""
    module: Any = importlib.import_module("snsynth.aim.aim")
    real = module.LinearMeasurement

    def measurement(y: Any, clique: Any, stddev: Any, *args: Any, **kw: Any) -> Any:
        new_transcript().add_marginal(
            [_column_index(str(n)) for n in clique],
            np.asarray(y, dtype=float),
            {"gaussian": float(stddev)},
        )
        return real(y, clique, stddev, *args, **kw)

    with patched(module, LinearMeasurement=measurement):
        yield


@contextmanager
def record_mwem(model: Any, new_transcript: TranscriptFactory) -> Iterator[None]:
    """MWEM (snsynth/mwem.py): each iteration selects a query (a cuboid of disjoint
    marginal queries, or a range) with ``_exponential_mechanism`` (mwem.py:503) and
    measures each of its queries as ``query.evaluate(hist) + self._laplace(1/eps)``
    (mwem.py:506-514). Both methods are wrapped: a measured query's answer is the sum
    of its histogram cells (``Query.mask``), the histogram's axis ``i`` being the
    split's column with code ``min + i`` (the data's own range, mwem.py:541-581)."""
    select, laplace = model._exponential_mechanism, model._laplace
    pending: list[Any] = []
    state: dict[str, Any] = {}

    def selected(hist: Any, synth: Any, queries: Any, eps: Any, *rest: Any) -> Any:
        qi = select(hist, synth, queries, eps, *rest)
        pending[:] = list(queries[qi].queries)
        state["hist"] = hist
        return qi

    def noise(scale: Any) -> Any:
        value = laplace(scale)
        transcript = new_transcript()
        query, hist = pending.pop(0), state["hist"]
        # The library's own sum, in its order (mwem.py:509, 512).
        noisy = query.evaluate(hist) + value
        columns, cells = _mwem_cells(model, transcript, query, hist)
        transcript.add_answers(columns, [cells], [noisy], {"laplace": float(scale)})
        return value

    with patched(model, _exponential_mechanism=selected, _laplace=noise):
        yield


def _mwem_cells(
    model: Any, transcript: Transcript, query: Any, hist: Any
) -> tuple[list[int], list[tuple[int, ...]]]:
    """The library columns and code tuples whose records a measured MWEM query
    counts. An axis the query covers whole, where the data's range of codes is every
    public code, is left out of the cells (every record is in it, whatever the data);
    any other axis is kept with its explicit codes."""
    split = next(h.split for h in model.histograms if h.data is hist)
    columns = [int(c) for c in split]
    lows = [int(model.mins_maxes[str(c)][0]) for c in split]
    highs = [int(model.mins_maxes[str(c)][1]) for c in split]
    mask = np.asarray(query.mask(hist)) > 0
    dropped = tuple(
        i
        for i, c in enumerate(columns)
        if lows[i] == 0
        and highs[i] + 1 == len(transcript.codes[c] or ())
        and bool(np.all(mask == mask.any(axis=i, keepdims=True)))
    )
    if len(dropped) == len(columns):  # a record names at least one column
        dropped = dropped[1:]
    reduced = mask.any(axis=dropped) if dropped else mask
    kept = [i for i in range(len(columns)) if i not in dropped]
    cells = [
        tuple(int(idx[j]) + lows[i] for j, i in enumerate(kept))
        for idx in np.argwhere(reduced)
    ]
    return [columns[i] for i in kept], cells


def public_transformer(
    snsynth: Any, domain: dict[str, Any], *, style: str, bins: int, nullable: bool
) -> Any:
    """smartnoise's own ``TableTransformer`` built from the public domain and fitted
    on a table of the domain's values (``preprocessing=public``): label encoders for
    discrete columns (one-hot after them in the ``gan`` style), bins (``cube``) or
    min-max scaling (``gan``) within the public bounds for continuous ones."""
    columns = columns_of(domain)
    transform = snsynth.transform
    transformers = []
    for col in columns:
        cats = category_values(col)
        if cats is not None:
            label = transform.LabelTransformer(nullable=nullable)
            transformers.append(
                label
                if style == "cube"
                else transform.ChainTransformer([label, transform.OneHotEncoder()])
            )
        elif style == "cube":
            transformers.append(
                transform.BinTransformer(
                    bins=bins,
                    lower=col["lower"],
                    upper=col["upper"],
                    nullable=False,
                )
            )
        else:
            transformers.append(
                transform.MinMaxTransformer(
                    lower=col["lower"], upper=col["upper"], nullable=False
                )
            )
    table = transform.TableTransformer(transformers)
    # Fitted on the domain's own values: the encoders are a function of the public
    # domain, and the library uses a fitted transformer as it is.
    table.fit(public_frame(domain))
    return table


def preprocessor_spent(model: Any) -> float:
    """The epsilon the library's transformer spent inferring bounds from the records
    (its odometer; 0 for a transformer fitted on the public domain)."""
    odometer = getattr(getattr(model, "_transformer", None), "odometer", None)
    if odometer is None:
        return 0.0
    return float(odometer.spent[0])
