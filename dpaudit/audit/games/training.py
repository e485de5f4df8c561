"""Training and releasing a group of rounds: the mechanics both games and the
target and public-seed selections share (no release kind, no game here).

:func:`train_and_release` trains and samples a list of rounds (one model per round,
each from its own streams). The release of a batch is one table (:class:`Release`),
sampled in one generator pass where the generator offers ``sample_many`` and decoded
once; per-model tables are views made for the attacks. What a round releases to the
attacks (the synthetic table, a transcript) is a release kind's
(:mod:`dpaudit.audit.games.releases`).

Randomness (docs/soundness.md): with ``public`` streams (the ``fixed_public`` mode,
for generators declaring ``supports_public_randomness``) every model gets the SAME
public streams (one for fit, one for sample) and its round's own privacy streams;
without, each round's streams feed every draw (the ``independent`` game).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from dpaudit.audit.games.streams import Streams
from dpaudit.audit.games.traits import generator_traits
from dpaudit.data import Domain
from dpaudit.errors import InvalidParameterError
from dpaudit.generators.base import Generator
from dpaudit.rng import Rngs

__all__ = [
    "PublicStreams",
    "Release",
    "compact_claim",
    "release",
    "sample_all",
    "train_and_release",
]

PublicStreams = tuple[Rngs, Rngs]


def compact_claim(claim: Mapping[str, Any]) -> dict[str, Any]:
    """A round's claim without its per-iteration trace (kept small in the store)."""
    out = {k: v for k, v in claim.items() if k != "trace"}
    trace = claim.get("trace", {})
    out["trace"] = {
        k: trace[k]
        for k in ("records_seen", "records_unused", "reference_note", "delta_used")
        if k in trace
    }
    # A PATE-GAN ledger is a short histogram; a data-dependent G-PATE ledger can be
    # long and is left out of the store.
    if "ledger" in trace and len(json.dumps(trace["ledger"])) < 20_000:
        out["trace"]["ledger"] = trace["ledger"]
    return out


@dataclass(frozen=True, slots=True)
class Release:
    """The releases of ``models`` models of one batch as one table.

    ``table`` holds ``models * rows`` rows: model ``m``'s release is rows ``m * rows``
    to ``(m + 1) * rows - 1``. Per-model frames (:meth:`frames`) are views made only
    at the boundary with code that takes one table per model (the attacks).
    """

    table: pd.DataFrame
    models: int
    rows: int

    def frames(self) -> list[pd.DataFrame]:
        """One table per model (index ``0 .. rows - 1``), sharing ``table``'s data."""
        index = pd.RangeIndex(self.rows)
        out = []
        for m in range(self.models):
            frame = self.table.iloc[m * self.rows : (m + 1) * self.rows]
            frame.index = index
            out.append(frame)
        return out


def sample_all(
    models: Sequence[Any],
    rows: int,
    rngs: Sequence[Rngs],
    *,
    public: Rngs | None,
    name: str = "generator",
) -> Release:
    """The releases of ``models`` (``rows`` rows each, model ``m`` from ``rngs[m]``
    and the shared public stream ``public``) as one :class:`Release`.

    Models whose class offers ``sample_many(models, n, *, rngs, public_rngs)`` (the
    built-ins) are sampled in one generator pass and decoded once; others (plug-ins)
    by one ``sample`` call each. Both give each model what its own ``sample`` gives.

    Raises:
        InvalidParameterError: a model released another number of rows.
    """
    kind = type(models[0]) if models else None
    sample_many = getattr(kind, "sample_many", None)
    publics = None if public is None else [public] * len(models)
    if sample_many is not None and all(type(m) is kind for m in models):
        table = sample_many(list(models), rows, rngs=list(rngs), public_rngs=publics)
        if len(table) != rows * len(models):
            raise InvalidParameterError(
                f"generator {name!r} released {len(table)} rows for {len(models)} "
                f"models; {rows} each were asked for (the release size must be fixed)."
            )
        return Release(
            table=table.reset_index(drop=True), models=len(models), rows=rows
        )
    extra: dict[str, Any] = {} if public is None else {"public_rng": public}
    frames = []
    for model, g in zip(models, rngs):
        frame = model.sample(rows, rng=g, **extra)
        if len(frame) != rows:
            raise InvalidParameterError(
                f"generator {name!r} released {len(frame)} rows; {rows} were asked "
                "for (the release size must be fixed)."
            )
        frames.append(frame)
    table = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    return Release(table=table, models=len(frames), rows=rows)


def train_and_release(
    make_generator: Callable[[], Generator],
    datasets: Sequence[pd.DataFrame],
    round_rngs: Sequence[Rngs],
    *,
    domain: Domain,
    rows: int,
    public: PublicStreams | None,
    name: str = "generator",
) -> tuple[list[Any], Release]:
    """Trains one model per dataset and releases ``rows`` rows from each.

    Args:
        make_generator: a fresh, unfitted generator.
        datasets: each model's training data.
        round_rngs: each model's round stream (split into fit and sample streams by
            :meth:`Streams.fit_and_sample`); in ``fixed_public`` mode these are the
            privacy streams.
        domain: the public domain.
        rows: rows released per model (must be fixed).
        public: ``(fit, sample)`` public streams shared by every model, or ``None``.
        name: the generator's name, for messages.

    Returns:
        ``(models, release)``, in the order of ``datasets``.

    Raises:
        InvalidParameterError: a model released another number of rows.
    """
    split = [Streams.fit_and_sample(r) for r in round_rngs]
    fit_rngs = [f for f, _ in split]
    sample_rngs = [s for _, s in split]
    generator: Any = make_generator()
    many_public: dict[str, Any] = {}
    if public is not None:
        many_public = {"public_rngs": [public[0]] * len(datasets)}
    if not generator_traits(generator).batched:
        return _fit_and_sample_each(
            make_generator,
            datasets,
            fit_rngs,
            sample_rngs,
            domain=domain,
            rows=rows,
            public=public,
            name=name,
        )
    models = generator.fit_many(datasets, domain=domain, rngs=fit_rngs, **many_public)
    released = sample_all(
        models,
        rows,
        sample_rngs,
        public=None if public is None else public[1],
        name=name,
    )
    return list(models), released


def _fit_and_sample_each(
    make_generator: Callable[[], Generator],
    datasets: Sequence[pd.DataFrame],
    fit_rngs: Sequence[Rngs],
    sample_rngs: Sequence[Rngs],
    *,
    domain: Domain,
    rows: int,
    public: PublicStreams | None,
    name: str,
) -> tuple[list[Any], Release]:
    """One model at a time (generators without ``fit_many``: plug-ins in their
    foreign workers): fit, release, then let the worker free the model (``forget``),
    so a worker holds one fitted model, not a batch of them. Each model draws only
    from its own streams, so the releases equal :func:`sample_all`'s."""
    fit_public = {} if public is None else {"public_rng": public[0]}
    sample_public = {} if public is None else {"public_rng": public[1]}
    models: list[Any] = []
    frames = []
    for data, fit_rng, sample_rng in zip(datasets, fit_rngs, sample_rngs):
        model = make_generator().fit(data, domain=domain, rng=fit_rng, **fit_public)
        frame = model.sample(rows, rng=sample_rng, **sample_public)
        if len(frame) != rows:
            raise InvalidParameterError(
                f"generator {name!r} released {len(frame)} rows; {rows} were asked "
                "for (the release size must be fixed)."
            )
        forget = getattr(model, "forget", None)
        if callable(forget):
            forget()
        models.append(model)
        frames.append(frame)
    table = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    return models, Release(table=table, models=len(frames), rows=rows)


def release(
    make_generator: Callable[[], Generator],
    datasets: Sequence[pd.DataFrame],
    round_rngs: Sequence[Rngs],
    *,
    domain: Domain,
    rows: int,
    public: PublicStreams | None,
    name: str = "generator",
) -> tuple[list[Any], list[pd.DataFrame]]:
    """:func:`train_and_release` with one released table per model:
    ``(models, releases)``, in the order of ``datasets``."""
    models, released = train_and_release(
        make_generator,
        datasets,
        round_rngs,
        domain=domain,
        rows=rows,
        public=public,
        name=name,
    )
    return models, released.frames()
