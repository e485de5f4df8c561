"""Tables' public :class:`Domain`: column kinds, bounds and categories; validating,
casting, encoding to the model space and decoding back.

A :class:`Domain` describes every column publicly: its kind (continuous, integer,
binary, categorical) and its bounds or categories. Generators receive the domain from
the audit configuration and never read bounds from the private data (docs/soundness.md, rule
2); :func:`infer_domain` exists only to write a draft for a person to review.

Encoding maps a table to ``[0, 1]^p`` (numeric columns scaled by their public bounds,
binary columns as 0/1, categorical columns one-hot) and decoding maps model outputs
back (integers rounded, values clipped to the bounds, one-hot blocks by argmax).
Validation refuses, never alters: a value outside the domain (a fraction in an integer
column included) is an error naming the column and the fix.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from dpaudit.errors import DataError, InvalidParameterError
from dpaudit.io import read_input
from dpaudit.validation import is_text, require

ColumnKind = Literal["continuous", "integer", "binary", "categorical"]
KINDS: tuple[ColumnKind, ...] = ("continuous", "integer", "binary", "categorical")
MAX_EXACT_INTEGER = 2**53
"""The largest magnitude of an ``integer`` column's bounds: every integer up to it is
exact in the float64 encoding (and fits the int64 columns the domain casts to)."""


def _as_float(value: object) -> float:
    """``value`` as a float, NaN where it is no number a float can hold."""
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        return float("nan")


@dataclass(frozen=True, kw_only=True, slots=True)
class Column:
    """One column of a public domain.

    Args:
        name: the column name in the table.
        kind: ``continuous``, ``integer``, ``binary`` (values 0 and 1) or
            ``categorical``.
        lower, upper: public bounds of a continuous or integer column.
        categories: the public categories of a categorical column (numbers or
            strings), in a fixed order.
    """

    name: str
    kind: ColumnKind
    lower: float | None = None
    upper: float | None = None
    categories: tuple[Any, ...] | None = None

    def __post_init__(self) -> None:
        require(
            isinstance(self.name, str) and bool(self.name),
            "name",
            "a non-empty string (a column's name)",
            self.name,
        )
        # Control characters are kept (the reports escape them; a name never names
        # a file); text that cannot be written as UTF-8 is refused here, at input,
        # not when a finished audit is reported.
        require(
            is_text(self.name),
            "name",
            "valid Unicode text (no lone surrogate such as a JSON \\ud800 escape); "
            "rename the column",
            self.name,
        )
        require(
            self.kind in KINDS,
            f"{self.name}.kind",
            "one of " + ", ".join(KINDS),
            self.kind,
        )
        numeric = self.kind in ("continuous", "integer")
        require(
            numeric or (self.lower is None and self.upper is None),
            f"{self.name}.lower/upper",
            f"unset for a {self.kind} column (only continuous and integer columns "
            "have bounds); remove them or change the kind",
            (self.lower, self.upper),
        )
        require(
            self.kind == "categorical" or self.categories is None,
            f"{self.name}.categories",
            f"unset for a {self.kind} column (only categorical columns have "
            "categories); remove them or declare the column categorical",
            self.categories,
        )
        if numeric:
            require(
                self.lower is not None and self.upper is not None,
                f"{self.name}.lower/upper",
                f"given (a {self.kind} column needs public `lower` and `upper` bounds)",
                (self.lower, self.upper),
            )
            assert self.lower is not None and self.upper is not None
            require(
                bool(np.isfinite(self.lower) and np.isfinite(self.upper)),
                f"{self.name}.lower/upper",
                "finite bounds",
                (self.lower, self.upper),
            )
            require(
                self.lower <= self.upper,
                f"{self.name}.lower",
                "<= `upper`",
                (self.lower, self.upper),
            )
            # The encoding scales by upper - lower: a range that overflows a float
            # would train, then break every attack.
            require(
                bool(np.isfinite(float(self.upper) - float(self.lower))),
                f"{self.name}.lower/upper",
                "bounds whose range upper - lower is a "
                "finite float (at most about 1.8e308)",
                (self.lower, self.upper),
            )
            require(
                self.kind != "integer"
                or max(abs(self.lower), abs(self.upper)) <= MAX_EXACT_INTEGER,
                f"{self.name}.lower/upper",
                "within +-2**53 for an integer column (larger integers are not "
                "exact as floats); declare the column continuous",
                (self.lower, self.upper),
            )
        require(
            self.kind != "categorical" or bool(self.categories),
            f"{self.name}.categories",
            "a non-empty list (a categorical column)",
            self.categories,
        )
        if self.kind == "categorical":
            assert self.categories is not None
            _check_categories(self.name, self.categories)

    @property
    def width(self) -> int:
        """Number of encoded coordinates of this column."""
        if self.kind == "categorical":
            assert self.categories is not None
            return len(self.categories)
        return 1

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "kind": self.kind}
        if self.kind in ("continuous", "integer"):
            out["lower"] = _plain(self.lower)
            out["upper"] = _plain(self.upper)
        if self.kind == "categorical":
            assert self.categories is not None
            out["categories"] = [_plain(c) for c in self.categories]
        return out


def _check_categories(name: str, categories: tuple[Any, ...]) -> None:
    """Refuses categories that a CSV could not tell apart or a report could not
    write: duplicates (``0`` and ``0.0`` too), equal text (``0`` and ``"0"``: the
    same cell in a CSV), NaN or infinite numbers, text that is not valid Unicode."""
    for value in categories:
        require(
            not isinstance(value, float) or bool(np.isfinite(value)),
            f"{name}.categories",
            "finite numbers or strings (NaN is a missing value, not a category)",
            value,
        )
        require(
            not isinstance(value, str) or is_text(value),
            f"{name}.categories",
            "valid Unicode text (no lone surrogate such as a JSON \\ud800 escape)",
            value,
        )
    texts: set[str] = set()
    values: set[Any] = set()  # hashing: 0 and 0.0 are one value
    for value in categories:
        text = str(_plain(value))
        if text in texts or value in values:
            require(
                False,
                f"{name}.categories",
                "distinct values (in a CSV, 0, 0.0 and '0' are the same cell); "
                "remove the duplicate",
                value,
            )
        texts.add(text)
        values.add(value)


def _bound(value: Any, name: str) -> float | None:
    """A domain bound as a float: a JSON number (not a string, list or boolean)."""
    ok = value is None or (
        isinstance(value, (int, float)) and not isinstance(value, bool)
    )
    require(ok, name, "a number", value)
    if isinstance(value, int):
        # JSON integers are unbounded; beyond a float's range they are no bound.
        require(
            abs(value) < 2**1024,
            name,
            "a number within the float range (about 1.8e308)",
            f"an integer of {len(str(abs(value)))} digits",
        )
    return None if value is None else float(value)


def _plain(value: Any) -> Any:
    """A JSON-friendly Python scalar (ints stay ints)."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


@dataclass(frozen=True, slots=True)
class Domain:
    """The public description of a table: one :class:`Column` per column, in order."""

    columns: tuple[Column, ...]
    _index: Mapping[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        require(bool(self.columns), "columns", "at least one column", self.columns)
        names = [c.name for c in self.columns]
        dupes = sorted({n for n in names if names.count(n) > 1})
        require(not dupes, "columns", "unique column names (duplicated names)", dupes)
        object.__setattr__(self, "_index", {n: i for i, n in enumerate(names)})

    # ------------------------------------------------------------------ access
    @property
    def names(self) -> list[str]:
        return [c.name for c in self.columns]

    def __len__(self) -> int:
        return len(self.columns)

    def __getitem__(self, name: str) -> Column:
        return self.columns[self._index[name]]

    @property
    def encoded_dim(self) -> int:
        """Width of the encoded space (one-hot categoricals count their categories)."""
        return sum(c.width for c in self.columns)

    def slices(self) -> list[slice]:
        """The encoded coordinates of each column, in column order."""
        out, start = [], 0
        for col in self.columns:
            out.append(slice(start, start + col.width))
            start += col.width
        return out

    # -------------------------------------------------------------------- JSON
    def to_json(self) -> dict[str, Any]:
        return {"columns": [c.to_json() for c in self.columns]}

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> Domain:
        if not isinstance(obj, Mapping) or not isinstance(obj.get("columns"), list):
            raise InvalidParameterError(
                'a domain must be a JSON object {"columns": [...]}; each column has '
                '"name", "kind" and "lower"/"upper" or "categories".'
            )
        extra = sorted(set(obj) - {"columns"})
        require(
            not extra,
            "domain",
            'a JSON object with the one key "columns" (unknown keys would be '
            "ignored; remove them)",
            extra,
        )
        cols = []
        for i, raw in enumerate(obj["columns"]):
            require(isinstance(raw, Mapping), f"columns[{i}]", "an object", raw)
            unknown = sorted(
                set(raw) - {"name", "kind", "lower", "upper", "categories"}
            )
            require(
                not unknown,
                f"columns[{i}]",
                "an object of name, kind, lower, upper and categories (unknown keys)",
                unknown,
            )
            label = (
                raw.get("name") if isinstance(raw.get("name"), str) else f"columns[{i}]"
            )
            cats = raw.get("categories")
            require(
                cats is None
                or (
                    isinstance(cats, list)
                    and all(
                        isinstance(c, (str, int, float)) and not isinstance(c, bool)
                        for c in cats
                    )
                ),
                f"{label}.categories",
                "a list of numbers or strings",
                cats,
            )
            cols.append(
                Column(
                    name=raw.get("name"),
                    kind=raw.get("kind"),
                    lower=_bound(raw.get("lower"), f"{label}.lower"),
                    upper=_bound(raw.get("upper"), f"{label}.upper"),
                    categories=None if cats is None else tuple(cats),
                )
            )
        return cls(tuple(cols))

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Domain:
        """Reads a domain JSON file."""
        p = Path(path)
        try:
            obj = json.loads(read_input(p, what="domain file").decode("utf-8"))
        except FileNotFoundError as err:
            raise InvalidParameterError(
                f"domain file {str(p)!r} does not exist."
            ) from err
        except (
            IsADirectoryError,
            NotADirectoryError,
            UnicodeDecodeError,
            json.JSONDecodeError,
            RecursionError,
        ) as err:
            what = {
                IsADirectoryError: "a directory",
                NotADirectoryError: "under a file, not a folder",
                UnicodeDecodeError: "not UTF-8 text",
                RecursionError: "nested too deeply to be a domain",
            }.get(type(err), f"not valid JSON ({err})")
            raise InvalidParameterError(
                f"domain file {str(p)!r} is {what}; pass a domain JSON file."
            ) from err
        try:
            return cls.from_json(obj)
        except InvalidParameterError as err:
            raise InvalidParameterError(f"domain file {str(p)!r}: {err}") from err

    def save(self, path: str | os.PathLike[str]) -> None:
        Path(path).write_text(json.dumps(self.to_json(), indent=2) + "\n")

    # -------------------------------------------------------------- validation
    def validate(
        self, data: pd.DataFrame, *, name: str = "data", min_rows: int = 1
    ) -> None:
        """Checks that ``data`` fits the domain; raises :class:`DataError` naming the
        first problem and its fix."""
        if not isinstance(data, pd.DataFrame):
            raise DataError(
                f"`{name}` must be a pandas DataFrame. Got {type(data).__name__}."
            )
        missing = [c for c in self.names if c not in data.columns]
        extra = [c for c in data.columns if c not in self._index]
        if missing or extra:
            fix = (
                "Use the domain's column names"
                if "target" in name
                else "Fix the CSV header or the domain file"
            )
            raise DataError(
                f"`{name}` columns do not match the domain: missing {missing}, "
                f"unexpected {extra}. {fix} (domain columns: {self.names})."
            )
        if len(data) < min_rows:
            raise DataError(
                f"`{name}` has {len(data)} rows; at least {min_rows} are needed "
                "(one per teacher). Use fewer teachers or more data."
            )
        for col in self.columns:
            series = data[col.name]
            if col.kind == "categorical":
                if series.isna().any():
                    raise DataError(
                        f"column {col.name!r} has missing values in row "
                        f"{int(np.flatnonzero(series.isna().to_numpy())[0])}; fill or drop them."
                    )
                assert col.categories is not None
                allowed = set(col.categories)
                bad = ~series.isin(list(allowed))
                if bad.any():
                    value = _plain(series[bad].iloc[0])
                    raise DataError(
                        f"column {col.name!r} has value {value!r}, not among the domain's "
                        f"categories {list(col.categories)}. Add it to the domain or fix the data."
                    )
                continue
            if not pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(
                series
            ):
                if pd.api.types.is_bool_dtype(series):
                    continue
                try:
                    coerced = pd.to_numeric(series, errors="coerce")
                except OverflowError:
                    # an integer beyond a float (a plug-in's release, an object
                    # column): pandas raises even with errors="coerce"
                    coerced = pd.Series(
                        [_as_float(v) for v in series], index=series.index
                    )
                bad = coerced.isna() & series.notna()
                if bad.any():
                    value = series[bad].iloc[0]
                    raise DataError(
                        f"column {col.name!r} is {col.kind} but has the non-numeric value "
                        f"{value!r:.80}. Clean the column or declare it categorical."
                    )
                series = coerced
            values = series.to_numpy(dtype=float)
            nan = np.isnan(values)
            if nan.any():
                raise DataError(
                    f"column {col.name!r} has missing values (NaN) in row "
                    f"{int(np.flatnonzero(nan)[0])}; fill or drop them before the audit."
                )
            if col.kind == "binary":
                bad = ~np.isin(values, (0.0, 1.0))
                if bad.any():
                    raise DataError(
                        f"column {col.name!r} is binary but has the value "
                        f"{float(values[bad][0])!r}; binary columns hold 0 and 1 only."
                    )
                continue
            if col.kind == "integer":
                fraction = values != np.round(values)
                if fraction.any():
                    row = int(np.flatnonzero(fraction)[0])
                    raise DataError(
                        f"column {col.name!r} is integer but has the non-integer value "
                        f"{float(values[row])!r} in row {row}; dpaudit audits the data "
                        "as given and does not round it. Round the column yourself or "
                        "declare it continuous in the domain."
                    )
            assert col.lower is not None and col.upper is not None
            low, high = values < col.lower, values > col.upper
            if low.any() or high.any():
                value = float(values[low | high][0])
                fix = (
                    "The generator must release values within the public bounds: "
                    "clamp or resample in its `sample`"
                    if name == "release"
                    else "Widen the public bounds in the domain file or remove the "
                    "record"
                )
                raise DataError(
                    f"column {col.name!r} has the value {value!r} outside the domain's "
                    f"bounds [{_plain(col.lower)}, {_plain(col.upper)}]. {fix}."
                )

    # ------------------------------------------------------------ transforms
    def with_data_bounds(self, data: pd.DataFrame) -> Domain:
        """The domain with bounds and categories read from ``data``.

        This is the ``data_bounds`` defect (docs/bugs.md): a record that sets a column's
        extreme leaks through the released range. Binary columns become integer
        columns bounded by the data's min and max. Categorical columns keep their
        public categories (so every model keeps one encoded layout).
        """
        cols = []
        for col in self.columns:
            series = data[col.name]
            if col.kind == "categorical":
                cols.append(col)
            else:
                values = pd.to_numeric(series).to_numpy(dtype=float)
                kind: ColumnKind = "integer" if col.kind == "binary" else col.kind
                cols.append(
                    Column(
                        name=col.name,
                        kind=kind,
                        lower=float(values.min()),
                        upper=float(values.max()),
                    )
                )
        return Domain(tuple(cols))

    def encode(self, data: pd.DataFrame) -> NDArray[np.float32]:
        """Maps ``data`` to ``[0, 1]^encoded_dim`` using the public bounds only."""
        n = len(data)
        out = np.zeros((n, self.encoded_dim), dtype=np.float32)
        for col, sl in zip(self.columns, self.slices()):
            series = data[col.name]
            if col.kind == "categorical":
                assert col.categories is not None
                codes = pd.Categorical(series, categories=list(col.categories)).codes
                codes = codes.astype(np.int64)  # int8 codes overflow past 127
                if (codes < 0).any():
                    raise DataError(
                        f"column {col.name!r} has a value outside the domain's categories."
                    )
                out[np.arange(n), sl.start + codes] = 1.0
                continue
            values = pd.to_numeric(series).to_numpy(dtype=float)
            if col.kind == "binary":
                out[:, sl.start] = values
                continue
            assert col.lower is not None and col.upper is not None
            span = col.upper - col.lower
            scaled = (values - col.lower) / span if span > 0 else np.zeros(n)
            out[:, sl.start] = np.clip(scaled, 0.0, 1.0)
        return out

    def decode(
        self,
        encoded: NDArray[np.floating[Any]],
        *,
        integer_rounding: Literal["round", "floor"] = "round",
    ) -> pd.DataFrame:
        """Maps model outputs in ``[0, 1]^encoded_dim`` back to a table.

        Values are clipped to the public bounds, integers rounded (``floor`` is the
        ``integer_floor`` defect), binary columns thresholded at 0.5, and one-hot
        blocks decoded by argmax.
        """
        encoded = np.asarray(encoded, dtype=np.float64)
        require(
            encoded.ndim == 2 and encoded.shape[1] == self.encoded_dim,
            "encoded",
            f"of shape (n, {self.encoded_dim})",
            encoded.shape,
        )
        columns: dict[str, Any] = {}
        for col, sl in zip(self.columns, self.slices()):
            block = encoded[:, sl]
            if col.kind == "categorical":
                assert col.categories is not None
                cats = np.asarray(col.categories, dtype=object)
                values = cats[np.argmax(block, axis=1)]
                columns[col.name] = pd.Series(values).infer_objects().to_numpy()
                continue
            x = np.clip(block[:, 0], 0.0, 1.0)
            if col.kind == "binary":
                columns[col.name] = (x >= 0.5).astype(np.int64)
                continue
            assert col.lower is not None and col.upper is not None
            values = col.lower + x * (col.upper - col.lower)
            if col.kind == "integer":
                values = (
                    np.floor(values) if integer_rounding == "floor" else np.rint(values)
                )
                columns[col.name] = np.clip(values, col.lower, col.upper).astype(
                    np.int64
                )
            else:
                columns[col.name] = np.clip(values, col.lower, col.upper)
        return pd.DataFrame(columns, columns=self.names)

    def cast(self, data: pd.DataFrame) -> pd.DataFrame:
        """``data`` with the dtypes the domain implies (int64 for integer and binary
        columns, float64 for continuous ones), columns in domain order."""
        out = {}
        for col in self.columns:
            series = data[col.name]
            if col.kind in ("integer", "binary"):
                out[col.name] = pd.to_numeric(series).round().astype(np.int64)
            elif col.kind == "continuous":
                out[col.name] = pd.to_numeric(series).astype(np.float64)
            else:
                out[col.name] = series
        return pd.DataFrame(out, columns=self.names)
