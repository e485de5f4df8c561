"""A plug-in's measurement transcript: read, checked, typed (docs/plugins.md, "The
measurement transcript").

A plug-in (or adapter) may set, after ``fit``, ``privacy_transcript``: a JSON list of
measurement records, each::

    {"columns": [name, ...], "cells": [[value, ...], ...],
     "noisy": [float, ...], "noise": {"gaussian": sigma}}     # or {"laplace": b}

``noisy[i]`` is the number of training records whose values on ``columns`` equal
``cells[i]`` plus noise of the stated kind and scale. The extension for an answer
that counts a set of cells (MWEM's range queries) is the optional key ``sets``: a
list with one entry per noisy answer, each a list of distinct indices into
``cells``; ``noisy[i]`` then counts the records whose values on ``columns`` equal
any of the cells ``cells[j]``, ``j`` in ``sets[i]``.

:func:`check_transcript` turns the plug-in's list into :class:`Measurement` records,
refusing a bad record with one line naming the record, the key and the fix
(:class:`~dpaudit.errors.PluginError`, exit 2). Values must be values of the public
domain (a category of the column, 0 or 1, an integer within the bounds): a cell
written in another encoding would count nothing in either world and hide every
measurement from the audit.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, overload

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from dpaudit.data import Domain
from dpaudit.errors import PluginError
from dpaudit.generators.foreign.columnar import ColumnarRecord

__all__ = [
    "EXACT",
    "NOISE_KINDS",
    "TRANSCRIPT_ATTRIBUTE",
    "Cells",
    "Measurement",
    "check_transcript",
    "transcript_bytes",
]

#: The plug-in attribute that holds the transcript after ``fit``.
TRANSCRIPT_ATTRIBUTE = "privacy_transcript"
#: The noise kinds a record may state (key of ``noise``; value: sigma, or b).
NOISE_KINDS = ("gaussian", "laplace")
_KEYS = frozenset({"columns", "cells", "noisy", "noise", "sets"})
#: Memory per cell of a transcript while it is read and checked, and per value of a
#: cell (:func:`transcript_bytes`).
ANSWER_BYTES = 256
VALUE_BYTES = 64
_DOC = 'see docs/plugins.md, "The measurement transcript"'
_REQUIRED = ("columns", "cells", "noisy", "noise")
#: The noise of a record that states none, or a scale of 0 (read only with
#: ``exact=True``): its answers are the exact counts, as stated.
EXACT = "exact"


class Cells(Sequence[tuple[Any, ...]]):
    """A record's cells held in columns (one array per column), read as a sequence
    of tuples of Python values, as the same cells stated in JSON would be.

    >>> cells = Cells((np.array([0, 1]), np.array(["x", "y"], dtype=object)))
    >>> list(cells), cells[1], len(cells)
    ([(0, 'x'), (1, 'y')], (1, 'y'), 2)
    """

    __slots__ = ("arrays",)

    def __init__(self, arrays: tuple[NDArray[Any], ...]) -> None:
        self.arrays = arrays

    def __len__(self) -> int:
        return len(self.arrays[0])

    @overload
    def __getitem__(self, i: int) -> tuple[Any, ...]: ...
    @overload
    def __getitem__(self, i: slice) -> tuple[tuple[Any, ...], ...]: ...
    def __getitem__(
        self, i: int | slice
    ) -> tuple[Any, ...] | tuple[tuple[Any, ...], ...]:
        if isinstance(i, slice):
            return tuple(Cells(tuple(a[i] for a in self.arrays)))
        return tuple(
            a[i].item() if isinstance(a[i], np.generic) else a[i] for a in self.arrays
        )

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        return zip(*(a.tolist() for a in self.arrays), strict=True)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence):
            return NotImplemented
        return tuple(self) == tuple(other)

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"Cells({tuple(self)!r:.200})"


@dataclass(frozen=True, slots=True)
class Measurement:
    """One measurement record, checked.

    Attributes:
        columns: the measured columns, in order.
        cells: the cells (one value per column each), as given (a
            :class:`Cells` when they crossed in columns).
        noisy: the noisy answers.
        noise: ``gaussian`` or ``laplace`` (``exact``: stated without noise, read
            only by the one-run game).
        scale: sigma (Gaussian) or b (Laplace), > 0 (0 for ``exact``).
        sets: per answer, the cells it counts (indices into ``cells``);
            ``None``: answer ``i`` counts cell ``i``.
    """

    columns: tuple[str, ...]
    cells: Sequence[tuple[Any, ...]]
    noisy: tuple[float, ...]
    noise: str
    scale: float
    sets: tuple[tuple[int, ...], ...] | None = None

    def answer_cells(self) -> tuple[tuple[int, ...], ...]:
        """Per noisy answer, the indices of the cells it counts."""
        if self.sets is not None:
            return self.sets
        return tuple((i,) for i in range(len(self.cells)))

    def cell_columns(self) -> tuple[NDArray[Any], ...]:
        """The cells as one array per column (object arrays for cells given as
        tuples)."""
        if isinstance(self.cells, Cells):
            return self.cells.arrays
        out = []
        for j in range(len(self.columns)):
            column = np.empty(len(self.cells), dtype=object)
            column[:] = [cell[j] for cell in self.cells]
            out.append(column)
        return tuple(out)


def _number(value: Any) -> bool:
    """An int or float (not a bool) that a float can hold (an integer of 400 digits
    is not: ``math.isfinite`` would overflow on it)."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return False
    try:
        float(value)
    except OverflowError:
        return False
    return True


def _value_problem(
    value: Any, column: Any, categories: frozenset[Any] | None = None
) -> str | None:
    """Why ``value`` is not a value of the public ``column``, or None
    (``categories``: the column's categories as a set, for many cells)."""
    kind = column.kind
    if kind == "categorical":
        known = column.categories if categories is None else categories
        if value in known and not isinstance(value, bool):
            return None
        return f"is not one of its categories {list(column.categories)[:10]}"
    if not _number(value) or not math.isfinite(float(value)):
        return "is not a finite number"
    if kind == "binary":
        return None if value in (0, 1) else "is not 0 or 1"
    if kind == "integer" and float(value) != int(value):
        return "is not an integer"
    if not column.lower <= value <= column.upper:
        return f"is outside its bounds [{column.lower}, {column.upper}]"
    return None


def _record(
    raw: Any,
    where: str,
    domain: Domain,
    *,
    exact: bool = False,
    sets_of: dict[str, frozenset[Any]] | None = None,
) -> Measurement:
    """One record, checked (:func:`check_transcript`); ``sets_of``: each
    categorical column's categories as a set (filled as met). A record that
    crossed in columns (:class:`ColumnarRecord`) is checked with NumPy, to the same
    refusals with the same lines."""
    columnar = raw if isinstance(raw, ColumnarRecord) else None
    if columnar is not None:
        raw = {**columnar.record, "cells": None, "noisy": None}
    if not isinstance(raw, dict):
        raise PluginError(
            f"{where} must be a dict with 'columns', 'cells', 'noisy' and 'noise'. "
            f"Got {type(raw).__name__}; {_DOC}."
        )
    required = ("columns", "cells", "noisy") if exact else _REQUIRED
    missing = [k for k in required if k not in raw]
    unknown = sorted(str(k) for k in raw if k not in _KEYS)
    if missing or unknown:
        what = f"lacks {missing}" if missing else f"has unknown key(s) {unknown}"
        raise PluginError(
            f"{where} {what}: a record has 'columns', 'cells', 'noisy', 'noise' "
            f"and optionally 'sets'; {_DOC}."
        )
    columns = raw["columns"]
    if (
        not isinstance(columns, list)
        or not columns
        or not all(isinstance(c, str) for c in columns)
        or len(set(columns)) != len(columns)
    ):
        raise PluginError(
            f"{where}['columns'] must be a non-empty list of distinct column names. "
            f"Got {columns!r:.80}."
        )
    absent = [c for c in columns if c not in domain.names]
    if absent:
        raise PluginError(
            f"{where}['columns'] names {absent}, not columns of the table "
            f"{domain.names}; name the measured columns as the table does."
        )
    sets_of = {} if sets_of is None else sets_of
    for name in columns:
        if domain[name].kind == "categorical" and name not in sets_of:
            sets_of[name] = frozenset(domain[name].categories or ())
    if columnar is not None:
        cells: Sequence[Any] = _columnar_cells(
            columnar, columns, where, domain, sets_of
        )
        return _rest(raw, where, exact, columns, cells, columnar.noisy)
    cells = raw["cells"]
    if not isinstance(cells, list) or not all(
        isinstance(c, list) and len(c) == len(columns) for c in cells
    ):
        raise PluginError(
            f"{where}['cells'] must be a list of cells, each a list of "
            f"{len(columns)} value(s) (one per column). Got {cells!r:.80}."
        )
    seen: dict[tuple[Any, ...], int] = {}
    for i, cell in enumerate(cells):
        for name, value in zip(columns, cell):
            problem = _value_problem(value, domain[name], sets_of.get(name))
            if problem is not None:
                raise PluginError(
                    f"{where}['cells'][{i}]: {value!r:.40} of column {name!r} "
                    f"{problem}; write cells in the values of the public domain."
                )
        # A cell twice in one record would be counted twice by an answer over a
        # set, and is one count measured twice otherwise: a record states each
        # cell once (a count measured again is a record of its own).
        key = tuple(cell)
        first = seen.setdefault(key, i)
        if first != i:
            raise PluginError(
                f"{where}['cells'][{i}] repeats ['cells'][{first}] "
                f"({cell!r:.40}); state each cell once per record (a count measured "
                "again is a record of its own)."
            )
    return _rest(raw, where, exact, columns, cells, raw["noisy"])


def _rest(
    raw: dict[str, Any],
    where: str,
    exact: bool,
    columns: list[str],
    cells: Sequence[Any],
    noisy: Any,
) -> Measurement:
    """A record's noise, sets and noisy answers checked, after its cells
    (:func:`_record`): the record."""
    noise = raw.get("noise")
    kind = next(iter(noise), None) if isinstance(noise, dict) else None
    scale: Any = noise.get(kind) if isinstance(noise, dict) else None
    if exact and (
        noise is None
        or (
            isinstance(noise, dict)
            and len(noise) == 1
            and kind in NOISE_KINDS
            and _number(scale)
            and float(scale) == 0
        )
    ):
        kind, scale = EXACT, 0.0
    elif (
        not isinstance(noise, dict)
        or len(noise) != 1
        or kind not in NOISE_KINDS
        or not _number(scale)
        or not math.isfinite(float(scale))
        or not float(scale) > 0
    ):
        raise PluginError(
            f"{where}['noise'] must be {{'gaussian': sigma}} or {{'laplace': b}} "
            f"with a finite scale > 0{' (or 0, or absent: exact answers)' if exact else ''}. "
            f"Got {noise!r:.80}."
        )
    sets = raw.get("sets")
    if sets is not None and (
        not isinstance(sets, list)
        or not all(
            isinstance(s, list)
            and s
            and all(
                isinstance(j, int) and not isinstance(j, bool) and 0 <= j < len(cells)
                for j in s
            )
            and len(set(s)) == len(s)
            for s in sets
        )
    ):
        raise PluginError(
            f"{where}['sets'] must be a list with one non-empty list of distinct "
            f"cell indices (0 to {len(cells) - 1}) per noisy answer. Got {sets!r:.80}."
        )
    answers = len(cells) if sets is None else len(sets)
    if isinstance(noisy, np.ndarray):
        # In columns: int64 or float64 (columnar.py); the 40 first shown (their
        # text is longer than the 80 characters a refusal shows).
        good = len(noisy) == answers and bool(np.isfinite(noisy).all())
        values = tuple(noisy.astype(np.float64).tolist()) if good else ()
        shown: Any = noisy[:40].tolist()
    else:
        good = (
            isinstance(noisy, list)
            and len(noisy) == answers
            and all(_number(v) and math.isfinite(float(v)) for v in noisy)
        )
        values = tuple(float(v) for v in noisy) if good else ()
        shown = noisy
    if not good:
        per = "cell" if sets is None else "entry of 'sets'"
        raise PluginError(
            f"{where}['noisy'] must be a list of {answers} finite number(s), one per "
            f"{per}. Got {shown!r:.80}."
        )
    return Measurement(
        columns=tuple(columns),
        cells=cells if isinstance(cells, Cells) else tuple(tuple(c) for c in cells),
        noisy=values,
        noise=str(kind),
        scale=float(scale),
        sets=None if sets is None else tuple(tuple(s) for s in sets),
    )


#: Numbers at most this large (in magnitude) compare exactly as floats: the
#: vectorised checks pass only such values and check the others one by one.
_EXACT_FLOAT = 2.0**53


def _first_bad(values: NDArray[Any], column: Any, categories: Any) -> int | None:
    """The first index whose value :func:`_value_problem` refuses, or None: NumPy
    passes the values it can prove fine, :func:`_value_problem` decides the rest
    one by one (in order, stopping at the first refused)."""
    kind = column.kind
    if values.dtype.kind == "O" or kind == "categorical":
        # Each distinct value once, in order of first appearance: the first refused
        # is the one that appears first.
        codes, uniques = pd.factorize(values)
        for k, value in enumerate(uniques.tolist()):
            if _value_problem(value, column, categories) is not None:
                return int(np.argmax(codes == k))
        return None
    fine = (values >= -_EXACT_FLOAT) & (values <= _EXACT_FLOAT)
    if kind == "binary":
        fine &= (values == 0) | (values == 1)
    else:
        if kind == "integer" and values.dtype.kind == "f":
            fine &= values == np.floor(values)
        fine &= (values >= column.lower) & (values <= column.upper)
    for i in np.flatnonzero(~fine).tolist():
        if _value_problem(values[i].item(), column, categories) is not None:
            return int(i)
    return None


def _first_repeat(arrays: Sequence[NDArray[Any]]) -> tuple[int, int] | None:
    """``(i, first)``: the first cell that repeats an earlier one, and that one."""
    key: NDArray[np.int64] | None = None
    for values in arrays:
        codes, uniques = pd.factorize(values)
        if key is None:
            key = codes.astype(np.int64)
        else:
            key = pd.factorize(key * (len(uniques) + 1) + codes + 1)[0]
    assert key is not None
    # Codes in order of first appearance: a cell repeats an earlier one exactly
    # when its code is not above every code before it.
    seen = np.maximum.accumulate(key)
    repeats = np.flatnonzero(key[1:] <= seen[:-1])
    if not len(repeats):
        return None
    i = int(repeats[0]) + 1
    return i, int(np.argmax(key == key[i]))


def _columnar_cells(
    record: ColumnarRecord,
    columns: list[str],
    where: str,
    domain: Domain,
    sets_of: dict[str, frozenset[Any]],
) -> Cells:
    """A record's cells that crossed in columns, checked as :func:`_record` checks
    a list (the first refused cell, by the same line)."""
    arrays = record.cells
    bad: tuple[int, int] | None = None  # (cell, column)
    for j, name in enumerate(columns):
        i = _first_bad(arrays[j], domain[name], sets_of.get(name))
        if i is not None and (bad is None or i < bad[0]):
            bad = (i, j)
    repeat = _first_repeat(arrays)
    if bad is not None and (repeat is None or bad[0] <= repeat[0]):
        i, j = bad
        value = Cells((arrays[j],))[i][0]
        problem = _value_problem(value, domain[columns[j]], sets_of.get(columns[j]))
        raise PluginError(
            f"{where}['cells'][{i}]: {value!r:.40} of column {columns[j]!r} "
            f"{problem}; write cells in the values of the public domain."
        )
    if repeat is not None:
        i, first = repeat
        cell = list(Cells(arrays)[i])
        raise PluginError(
            f"{where}['cells'][{i}] repeats ['cells'][{first}] "
            f"({cell!r:.40}); state each cell once per record (a count measured "
            "again is a record of its own)."
        )
    return Cells(arrays)


def transcript_bytes(raw: list[Any]) -> int:
    """The memory a transcript (a list, as read from JSON) takes while it is read,
    checked and held: :data:`ANSWER_BYTES` per cell and :data:`VALUE_BYTES` per value
    (measured with ``tracemalloc``: about 220 bytes a one-column cell, the JSON
    lists and the checked tuples together). Records of another shape count 0 (the
    checks refuse them)."""
    total = 0
    for record in raw:
        if isinstance(record, ColumnarRecord):
            width = len(record.cells)
            total += record.rows * (ANSWER_BYTES + VALUE_BYTES * width)
            continue
        cells = record.get("cells") if isinstance(record, dict) else None
        columns = record.get("columns") if isinstance(record, dict) else None
        if isinstance(cells, list):
            width = len(columns) if isinstance(columns, list) else 1
            total += len(cells) * (ANSWER_BYTES + VALUE_BYTES * width)
    return total


def check_transcript(
    raw: Any,
    name: str,
    *,
    domain: Domain,
    max_bytes: int | None = None,
    exact: bool = False,
) -> tuple[Measurement, ...] | None:
    """The plug-in's ``privacy_transcript`` as :class:`Measurement` records, checked
    (``None``: the plug-in states none).

    Args:
        raw: The transcript as read (plain JSON values).
        name: The generator's name (for messages).
        domain: The public domain the cells are values of.
        max_bytes: The memory the audit's plan allows one transcript
            (:func:`transcript_bytes`); a larger one is refused before any record
            is checked. ``None``: no limit.
        exact: A record whose noise is absent or of scale 0 is read as what it
            states, exact answers (noise :data:`EXACT`, scale 0), not refused: the
            one-run game reports them (docs/onerun.md, "White-box: the measurement
            transcript").

    Raises:
        PluginError: one line naming the record, the key and the fix.
    """
    if raw is None:
        return None
    where = f"generator {name!r} breaks the plug-in contract: `{TRANSCRIPT_ATTRIBUTE}`"
    if not isinstance(raw, list):
        raise PluginError(
            f"{where} must be a list of measurement records. Got "
            f"{type(raw).__name__}; {_DOC}."
        )
    if max_bytes is not None:
        need = transcript_bytes(raw)
        if need > max_bytes:
            cells = need // (ANSWER_BYTES + VALUE_BYTES)
            raise PluginError(
                f"generator {name!r} states a `{TRANSCRIPT_ATTRIBUTE}` of about "
                f"{need / 2**20:.0f} MiB (up to {cells} cells) a round, more than "
                f"the audit's memory plan allows ({max_bytes / 2**20:.0f} MiB a "
                "transcript); state fewer cells (merge repeated measurements, "
                "measure coarser marginals), or free memory (docs/scale.md)."
            )
    sets_of: dict[str, frozenset[Any]] = {}
    return tuple(
        _record(record, f"{where}[{i}]", domain, exact=exact, sets_of=sets_of)
        for i, record in enumerate(raw)
    )


def describe_columns(records: Sequence[Measurement]) -> list[str]:
    """The distinct measured column sets, as ``a x b`` texts, in first-seen order."""
    seen: dict[str, None] = {}
    for record in records:
        seen.setdefault(" x ".join(record.columns), None)
    return list(seen)
