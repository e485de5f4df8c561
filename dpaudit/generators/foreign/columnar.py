"""A measurement transcript in columns: how a plug-in's ``privacy_transcript`` moves
from the worker to the audit (docs/plugins.md, "The measurement transcript").

The plug-in states its transcript the documented way (lists or NumPy arrays of cells
and noisy answers). :func:`split` turns each well-shaped record's cells into one
array per column and its noisy answers into one array, sent as raw bytes beside a
JSON header (:mod:`wire`), never as a JSON list of a million cells; :func:`join`
rebuilds them on the audit's side as :class:`ColumnarRecord`, which
:func:`~dpaudit.generators.foreign.transcript.check_transcript` checks with NumPy.

A record is sent in columns only when that changes nothing the checks see: a dict
with the protocol's keys, ``columns`` a list of names, ``cells`` a list (or array)
of rows as wide as ``columns``, every column all integers, all floats or all strings,
every number finite and an integer within int64, and ``noisy`` all integers or all
finite floats. Any other record crosses as plain JSON, as before, and is refused (or
read) exactly as before. This module imports only NumPy, pandas and
:mod:`contract`: the worker runs it under interpreters without dpaudit's other
dependencies.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from dpaudit.generators.foreign.contract import plain_json

__all__ = ["ColumnarRecord", "join", "split"]

#: A record's keys (docs/plugins.md); a record with another key crosses as JSON.
KEYS = frozenset({"columns", "cells", "noisy", "noise", "sets"})
_ROWS = (list, tuple, np.ndarray)
_INTS = frozenset(
    {int, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32}
)
_FLOATS = frozenset({float, np.float16, np.float32, np.float64})
_STRINGS = frozenset({str, np.str_})


@dataclass(frozen=True, slots=True)
class ColumnarRecord:
    """One measurement record as :func:`join` rebuilt it.

    Attributes:
        record: the record's other keys, as plain JSON (``columns``, ``noise``,
            ``sets``: each only where the plug-in stated it).
        cells: one array per column of ``columns``, ``rows`` values each
            (int64 or float64, or object arrays of strings).
        noisy: the noisy answers (int64 or float64).
    """

    record: dict[str, Any]
    cells: tuple[np.ndarray, ...]
    noisy: np.ndarray

    @property
    def rows(self) -> int:
        """The number of cells."""
        return len(self.cells[0])


def _column(values: np.ndarray) -> tuple[np.ndarray, list[str] | None] | None:
    """One column of cells as ``(array, None)`` (numbers) or ``(codes, strings)``
    (strings, codes in order of first appearance); ``None``: it must cross as JSON."""
    if values.dtype.kind in "iu" and values.dtype != np.uint64:
        return values.astype(np.int64, copy=False), None
    if values.dtype.kind == "f":
        if not np.isfinite(values).all():
            return None
        return values.astype(np.float64, copy=False), None
    if values.dtype.kind == "U":
        codes, uniques = pd.factorize(values)
        return codes.astype(np.int64, copy=False), [str(u) for u in uniques]
    if values.dtype.kind != "O":
        return None
    kinds = set(map(type, values))
    if kinds <= _INTS:
        try:
            return np.array(values.tolist(), dtype=np.int64), None
        except (OverflowError, TypeError, ValueError):
            return None
    if kinds <= _FLOATS:
        return _column(np.array(values.tolist(), dtype=np.float64))
    if kinds <= _STRINGS:
        codes, uniques = pd.factorize(values)
        return codes.astype(np.int64, copy=False), [str(u) for u in uniques]
    return None


def _noisy(raw: Any) -> np.ndarray | None:
    """The noisy answers as an int64 or finite float64 array, or ``None``."""
    if isinstance(raw, np.ndarray):
        values = raw
    elif isinstance(raw, list | tuple):
        values = np.empty(len(raw), dtype=object)
        values[:] = raw
    else:
        return None
    if values.ndim != 1:
        return None
    if values.dtype.kind == "O":
        kinds = set(map(type, values))
        try:
            if kinds <= _INTS:
                values = np.array(values.tolist(), dtype=np.int64)
            elif kinds <= _FLOATS:
                values = np.array(values.tolist(), dtype=np.float64)
            else:
                return None
        except (OverflowError, TypeError, ValueError):
            return None
    if values.dtype.kind in "iu" and values.dtype != np.uint64:
        return values.astype(np.int64, copy=False)
    if values.dtype.kind == "f" and np.isfinite(values).all():
        return values.astype(np.float64, copy=False)
    return None


def _cells(raw: Any, width: int) -> np.ndarray | None:
    """The cells as a 2-D array ``[rows, width]``, or ``None``."""
    if isinstance(raw, np.ndarray):
        table = raw
    elif isinstance(raw, list | tuple) and raw:
        if not set(map(type, raw)) <= set(_ROWS):
            return None
        try:
            table = np.asarray(raw, dtype=object)
        except (TypeError, ValueError):
            return None
    else:
        return None
    if table.ndim != 2 or table.shape[0] == 0 or table.shape[1] != width:
        return None
    return table


def _record(raw: Any, arrays: list[np.ndarray]) -> dict[str, Any] | None:
    """A record's header, its arrays appended to ``arrays``; ``None``: it crosses as
    JSON."""
    if not isinstance(raw, dict) or not set(raw) <= KEYS:
        return None
    columns = raw.get("columns")
    if not isinstance(columns, list) or not columns or "cells" not in raw:
        return None
    table = _cells(raw["cells"], len(columns))
    noisy = _noisy(raw.get("noisy"))
    if table is None or noisy is None:
        return None
    specs: list[dict[str, Any]] = []
    blobs: list[np.ndarray] = []
    for j in range(table.shape[1]):
        found = _column(table[:, j])
        if found is None:
            return None
        values, strings = found
        spec: dict[str, Any] = {"blob": len(arrays) + len(blobs)}
        if strings is not None:
            spec["strings"] = strings
        specs.append(spec)
        blobs.append(values)
    specs_noisy = {"blob": len(arrays) + len(blobs), "numpy": noisy.dtype.str}
    for spec, values in zip(specs, blobs):
        spec["numpy"] = values.dtype.str
    arrays.extend([*blobs, noisy])
    other = {k: plain_json(v) for k, v in raw.items() if k not in ("cells", "noisy")}
    return {
        "record": other,
        "rows": int(table.shape[0]),
        "cells": specs,
        "noisy": specs_noisy,
    }


def split(value: Any) -> tuple[Any, list[np.ndarray]]:
    """A stated ``privacy_transcript`` as ``(header, arrays)``: the header is plain
    JSON (``{"json": value}`` for a transcript that is not a list, else
    ``{"records": [...]}``, each ``{"json": record}`` or a record in columns whose
    arrays are numbered in ``arrays``). The caller refuses a header that is not
    JSON (``json.dumps(allow_nan=False)``), as it refused such a transcript."""
    tolist = getattr(value, "tolist", None)
    if isinstance(value, np.ndarray) and callable(tolist):
        value = tolist()
    if not isinstance(value, list | tuple):
        return {"json": plain_json(value)}, []
    arrays: list[np.ndarray] = []
    records = []
    for raw in value:
        header = _record(raw, arrays)
        records.append({"json": plain_json(raw)} if header is None else header)
    return {"records": records}, arrays


def _array(spec: Any, arrays: list[Any], rows: int | None) -> np.ndarray:
    """The array ``spec`` names (a blob's bytes or an array), checked."""
    dtype = np.dtype(str(spec["numpy"]))
    if dtype.kind not in "iuf":
        raise ValueError(f"a transcript array of dtype {dtype}")
    blob = arrays[int(spec["blob"])]
    out = (
        blob.astype(dtype, copy=False)
        if isinstance(blob, np.ndarray)
        else np.frombuffer(blob, dtype=dtype)
    )
    if out.ndim != 1 or (rows is not None and len(out) != rows):
        raise ValueError("a transcript array of the wrong length")
    return out


def join(header: Any, arrays: list[Any]) -> Any:
    """The transcript :func:`split` described (``arrays``: its arrays, or the raw
    bytes of each): plain JSON values, with each record sent in columns a
    :class:`ColumnarRecord`.

    Raises:
        ValueError: the header does not describe such a transcript.
    """
    if not isinstance(header, dict) or "records" not in header:
        return header.get("json") if isinstance(header, dict) else None
    out: list[Any] = []
    for spec in header["records"]:
        if "json" in spec:
            out.append(spec["json"])
            continue
        rows = int(spec["rows"])
        cells = []
        for column in spec["cells"]:
            values = _array(column, arrays, rows)
            if "strings" in column:
                strings = np.empty(len(column["strings"]), dtype=object)
                strings[:] = [str(s) for s in column["strings"]]
                if values.dtype.kind not in "iu" or (
                    rows and not 0 <= values.min() <= values.max() < len(strings)
                ):
                    raise ValueError("a transcript column of codes out of range")
                values = strings[values]
            cells.append(values)
        noisy = _array(spec["noisy"], arrays, None)
        out.append(ColumnarRecord(dict(spec["record"]), tuple(cells), noisy))
    return out
