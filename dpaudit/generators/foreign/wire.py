"""The foreign worker's wire format: JSON headers and raw array bytes, never pickle.

A message is an 8-byte little-endian length, a UTF-8 JSON header and the binary blobs
the header lists (``"blobs": [lengths]``). A table crosses as one blob per numeric
column (its raw bytes and NumPy dtype) and JSON values for any other column, so
nothing on either side ever unpickles. This module imports only the standard library,
NumPy and pandas: the worker runs it under interpreters without dpaudit's other
dependencies.
"""

from __future__ import annotations

import contextlib
import json
import math
import struct
from typing import Any, BinaryIO

import numpy as np
import pandas as pd

LENGTH = struct.Struct("<Q")
NUMERIC_KINDS = "biuf"


def pack(header: dict[str, Any], blobs: list[bytes] | tuple[bytes, ...] = ()) -> bytes:
    """One message: length, JSON header (with the blobs' lengths) and the blobs."""
    text = json.dumps(
        {**header, "blobs": [len(b) for b in blobs]}, default=str
    ).encode()
    return b"".join([LENGTH.pack(len(text)), text, *blobs])


def write_message(
    stream: BinaryIO,
    header: dict[str, Any],
    blobs: list[bytes] | tuple[bytes, ...] = (),
) -> None:
    """Writes one message to ``stream`` and flushes it."""
    stream.write(pack(header, blobs))
    stream.flush()


def _read_exactly(stream: BinaryIO, n: int) -> bytes:
    parts, left = [], n
    while left:
        chunk = stream.read(left)
        if not chunk:
            raise EOFError("the other side closed the pipe")
        parts.append(chunk)
        left -= len(chunk)
    return b"".join(parts)


def read_message(stream: BinaryIO) -> tuple[dict[str, Any], list[bytes]]:
    """One message from ``stream`` (blocking): ``(header, blobs)``.

    Raises:
        EOFError: the stream ended.
    """
    (length,) = LENGTH.unpack(_read_exactly(stream, LENGTH.size))
    header = json.loads(_read_exactly(stream, length))
    blobs = [_read_exactly(stream, int(n)) for n in header.get("blobs", [])]
    return header, blobs


class MessageBuffer:
    """Assembles messages from bytes read in pieces (the parent reads with a
    timeout, so it cannot block in :func:`read_message`)."""

    def __init__(self) -> None:
        self.data = bytearray()

    def feed(self, chunk: bytes) -> None:
        self.data.extend(chunk)

    def message(self) -> tuple[dict[str, Any], list[bytes]] | None:
        """The first complete message (removed from the buffer), or None."""
        if len(self.data) < LENGTH.size:
            return None
        (length,) = LENGTH.unpack_from(self.data)
        start = LENGTH.size + length
        if len(self.data) < start:
            return None
        header = json.loads(bytes(self.data[LENGTH.size : start]))
        sizes = [int(n) for n in header.get("blobs", [])]
        if len(self.data) < start + sum(sizes):
            return None
        blobs, at = [], start
        for size in sizes:
            blobs.append(bytes(self.data[at : at + size]))
            at += size
        del self.data[:at]
        return header, blobs


def _name(value: Any) -> Any:
    return (
        value
        if isinstance(value, str | int | float | bool) or value is None
        else str(value)
    )


def _plain(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, np.generic):
        return _plain(value.item())
    return value


def encode_frame(
    frame: pd.DataFrame, *, first_blob: int = 0
) -> tuple[dict[str, Any], list[bytes]]:
    """``frame`` as a JSON-able description and its blobs (numbered from
    ``first_blob`` within the message)."""
    columns: list[dict[str, Any]] = []
    blobs: list[bytes] = []
    for i in range(frame.shape[1]):
        series = frame.iloc[:, i]
        entry: dict[str, Any] = {
            "name": _name(frame.columns[i]),
            "dtype": str(series.dtype),
        }
        values = series.to_numpy()
        if values.dtype.kind in NUMERIC_KINDS:
            entry["numpy"] = values.dtype.str
            entry["blob"] = first_blob + len(blobs)
            blobs.append(np.ascontiguousarray(values).tobytes())
        else:
            entry["values"] = [_plain(v) for v in series.tolist()]
        columns.append(entry)
    return {"rows": int(frame.shape[0]), "columns": columns}, blobs


def decode_frame(spec: dict[str, Any], blobs: list[bytes]) -> pd.DataFrame:
    """The table :func:`encode_frame` described (a fresh, writable copy)."""
    data: dict[int, Any] = {}
    for i, column in enumerate(spec["columns"]):
        if "numpy" in column:
            data[i] = np.frombuffer(
                blobs[column["blob"]], dtype=np.dtype(column["numpy"])
            ).copy()
        else:
            series = pd.Series(column["values"], dtype=object)
            if column["dtype"] in ("category", "string", "str"):
                with contextlib.suppress(TypeError, ValueError):
                    series = series.astype(column["dtype"])
            data[i] = series
    frame = pd.DataFrame(data, index=pd.RangeIndex(int(spec["rows"])))
    frame.columns = [c["name"] for c in spec["columns"]]
    return frame
