"""Measurement transcripts: the noisy answers a library measured, as dpaudit's
``privacy_transcript`` records (docs/adapters.md, "White-box transcripts").

A record is ``{"columns": [name, ...], "cells": [[value, ...], ...], "noisy":
[float, ...], "noise": {"gaussian": sigma}}`` (or ``{"laplace": b}``): ``noisy[i]``
is the number of training records whose values on ``columns`` equal ``cells[i]``,
plus noise of the stated kind and scale. Where one noisy answer counts the records
in a set of cells (MST's merged rare values, MWEM's range queries), the record
also carries ``"sets"``: one entry per noisy answer, each a list of distinct indices
into ``cells``; ``noisy[i]`` then counts the records whose values on ``columns``
equal any of the cells ``cells[j]``, ``j`` in ``sets[i]`` (docs/plugins.md, "The
measurement transcript").

Values are the public domain's (the values dpaudit passed in), never a library's
internal codes. The recorders here read what a library computed (its noisy vector and
the scale it drew the noise with); they draw nothing and change nothing the library
computes. Standard library, numpy and pandas only (the module runs in the library's
own interpreter).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from dpaudit.adapters._common import AdapterInputError, columns_of

Record = dict[str, Any]


class MeasurementsDone(Exception):
    """Raised inside a library's fit once its last measurement is recorded, when the
    adapter was asked to stop there (``measure_only``): what follows is
    post-processing that a transcript audit does not read."""


def check_measure_only(value: Any, adapter: Any) -> bool:
    """The ``measure_only`` option of ``adapter`` (whose class says what its
    transcript ``records``, None for none, and whether its fit ``stops`` after the
    last measurement), checked: true only where the fit can stop."""
    if not isinstance(value, bool):
        raise AdapterInputError(f"`measure_only` must be true or false. Got {value!r}.")
    if value and not adapter.stops:
        why = (
            "it records no measurement transcript."
            if adapter.records is None
            else "its measurements interleave with the estimation its selections "
            "need, so no fit can stop after them (docs/adapters.md, 'White-box "
            "transcripts')."
        )
        raise AdapterInputError(
            f"{type(adapter).__name__} does not take `measure_only=true`: {why}"
        )
    return value


def refuse_stopped(adapter: Any) -> None:
    """Refuses to sample from ``adapter`` when its fit stopped after its
    measurements (``measure_only``): there is no model."""
    if getattr(adapter, "stopped_", False):
        raise AdapterInputError(
            f"{type(adapter).__name__} was fitted with `measure_only=true`: the fit "
            "stopped after its measurements and has no model to sample. Drop the "
            "option for a table release."
        )


def transcript_claim(
    transcript: Transcript | None, *, stopped: bool, omits: str
) -> dict[str, Any]:
    """What a fit's transcript covers, for its claim: the record count, the
    measurements left out (on binned columns), whether the fit stopped after its
    measurements (``measure_only``) and the private steps it ``omits``
    (``transcript_omits``, docs/plugins.md); nothing where the adapter records none."""
    if transcript is None:
        return {}
    return {
        "transcript_omits": omits,
        "transcript_records": len(transcript.records),
        "transcript_left_out": transcript.left_out,
        "measure_only": stopped,
    }


@contextmanager
def patched(target: Any, **replacements: Any) -> Iterator[None]:
    """Sets attributes of ``target`` (a library's object or module) for the block and
    puts back what was there after: an instance's wrapped method (a class attribute)
    is deleted from the instance again, a module's name restored."""
    own = vars(target)
    before = {name: own[name] for name in replacements if name in own}
    for name, value in replacements.items():
        setattr(target, name, value)
    try:
        yield
    finally:
        for name in replacements:
            if name in before:
                setattr(target, name, before[name])
            else:
                delattr(target, name)


def json_value(value: Any) -> Any:
    """``value`` as a JSON-native Python value (numpy scalars unwrapped)."""
    if isinstance(value, np.generic):
        return value.item()
    return value


def public_value(value: Any, public: Sequence[Any] | None) -> Any:
    """The public domain's value equal to ``value`` (numbers compared by value, so
    the library's ``1.0`` is the domain's ``1``); ``value`` itself, JSON-native, where
    the domain has no such value (a value a library read from the records).

    >>> public_value(np.float64(1.0), [0, 1])
    1
    >>> public_value("z", None)
    'z'
    """
    for candidate in public or ():
        if value == candidate and type(value) is type(candidate):
            return candidate
    for candidate in public or ():
        try:
            if value == candidate or float(value) == float(candidate):
                return candidate
        except (TypeError, ValueError):
            continue
    return json_value(value)


def domain_values(domain: dict[str, Any]) -> dict[str, list[Any] | None]:
    """Each column's public values (binary, categorical, small integer), None for a
    column the domain leaves continuous."""
    values: dict[str, list[Any] | None] = {}
    for col in columns_of(domain):
        kind = col["kind"]
        if kind == "binary":
            values[col["name"]] = [0, 1]
        elif kind == "categorical":
            values[col["name"]] = list(col["categories"])
        elif kind == "integer" and col.get("lower") is not None:
            lo, hi = math.ceil(float(col["lower"])), math.floor(float(col["upper"]))
            values[col["name"]] = list(range(lo, hi + 1))
        else:
            values[col["name"]] = None
    return values


class Transcript:
    """The records of one fit, built from measurements over a library's codes.

    ``names[j]`` is the public name of the library's column ``j``; ``codes[j]`` maps
    its code ``k`` to the public value it stands for (None: the column is binned or
    continuous, and a measurement touching it is left out, counted in
    :attr:`left_out`: the record states equality of values, a bin is an interval).
    """

    def __init__(self, names: Sequence[str], codes: Sequence[Sequence[Any] | None]):
        if len(names) != len(codes):
            raise ValueError(
                f"{len(names)} names for {len(codes)} code tables: they must match."
            )
        self.names = list(names)
        self.codes = [None if c is None else list(c) for c in codes]
        self.records: list[Record] = []
        self.left_out = 0

    def add_marginal(
        self,
        columns: Sequence[int],
        noisy: Any,
        noise: dict[str, float],
        groups: Sequence[Sequence[Sequence[int]]] | None = None,
    ) -> None:
        """A noisy marginal on the library's ``columns``: ``noisy`` in C order over
        the columns' axes (the first column varies slowest). ``groups[j][a]``: the
        library codes that axis position ``a`` of column ``j`` counts (default: one
        code per position, ``a`` itself, for the column's full set of codes)."""
        if any(self.codes[c] is None for c in columns):
            self.left_out += 1  # a binned or continuous column: no equality cells
            return
        if groups is None:
            groups = [[[k] for k in range(self._size(c))] for c in columns]
        answers = [
            [tuple(cell) for cell in itertools.product(*combo)]
            for combo in itertools.product(*groups)
        ]
        self.add_answers(columns, answers, noisy, noise)

    def add_answers(
        self,
        columns: Sequence[int],
        answers: Sequence[Sequence[Sequence[int]]],
        noisy: Any,
        noise: dict[str, float],
    ) -> None:
        """Noisy answers on the library's ``columns``: ``answers[i]`` lists the code
        tuples (one code per column) whose records ``noisy[i]`` counts."""
        values = np.asarray(noisy, dtype=float).ravel()
        if values.size != len(answers):
            raise ValueError(
                f"{values.size} noisy values for {len(answers)} answers: they must "
                "match (a library measured something this recorder misread)."
            )
        tables = [self.codes[c] for c in columns]
        if any(t is None for t in tables):
            self.left_out += 1
            return
        cells = [
            [[tables[j][code] for j, code in enumerate(cell)] for cell in answer]  # type: ignore[index]
            for answer in answers
        ]
        # A library's null code (OpenDP's null key, a nullable label encoder's None)
        # counts the records outside the public domain: none, in either world. An
        # answer that counts only such cells is dropped (it tells nothing about the
        # records); a cell of them inside a set is dropped from the set.
        kept = []
        for i, answer in enumerate(cells):
            present = [cell for cell in answer if None not in cell]
            if present:
                kept.append(i)
                cells[i] = present
        if not kept:
            return
        cells = [cells[i] for i in kept]
        values = values[kept]
        record: Record = {"columns": [self.names[c] for c in columns]}
        if all(len(answer) == 1 for answer in cells):
            record["cells"] = [answer[0] for answer in cells]
        else:  # every distinct cell once; each answer names its cells' indices
            index: dict[str, int] = {}
            unique: list[list[Any]] = []
            sets: list[list[int]] = []
            for answer in cells:
                sets.append([])
                for cell in answer:
                    key = repr(cell)
                    if key not in index:
                        index[key] = len(unique)
                        unique.append(cell)
                    sets[-1].append(index[key])
            record["cells"], record["sets"] = unique, sets
        record["noisy"] = [float(v) for v in values]
        record["noise"] = {kind: float(scale) for kind, scale in noise.items()}
        self.records.append(record)

    @classmethod
    def of_transformer(
        cls, transformers: Sequence[Any], domain: dict[str, Any]
    ) -> Transcript:
        """An empty transcript over a smartnoise ``TableTransformer``'s columns
        (:func:`transformer_codes`)."""
        names = [c["name"] for c in columns_of(domain)]
        return cls(names, transformer_codes(transformers, domain))

    def _size(self, column: int) -> int:
        table = self.codes[column]
        return 0 if table is None else len(table)


def transformer_codes(
    transformers: Sequence[Any], domain: dict[str, Any]
) -> list[list[Any] | None]:
    """Per library column, code -> public value, from a fitted smartnoise
    ``TableTransformer``'s column transformers in the cube style: a
    ``LabelTransformer``'s ``categories`` are the values its codes stand for (sorted;
    a trailing None where it is nullable); any other (``BinTransformer``) is None."""
    public = domain_values(domain)
    names = [c["name"] for c in columns_of(domain)]
    codes: list[list[Any] | None] = []
    for name, t in zip(names, transformers, strict=True):
        categories = getattr(t, "categories", None)
        if type(t).__name__ != "LabelTransformer" or categories is None:
            codes.append(None)
            continue
        if isinstance(categories, dict):  # unsorted (mixed types): code -> value
            categories = [categories[k] for k in range(len(categories))]
        codes.append([public_value(v, public[name]) for v in list(categories)])
    return codes
