"""Reading a user's CSV table: every malformed file is one :class:`DataError` that
names the file and the fix (never a parser's traceback)."""

from __future__ import annotations

import csv
import os
from pathlib import Path

import pandas as pd

from dpaudit.errors import DataError


def read_csv_table(path: str | os.PathLike[str], *, name: str = "CSV") -> pd.DataFrame:
    """Reads a CSV table (``?`` is a missing value) and refuses what is not one.

    Raises:
        DataError: ``path`` is missing, a directory, not UTF-8 text, not parseable,
            has a duplicated or empty column name, or has no rows; the message names
            the file and the fix.
    """
    p = Path(path)
    where = f"{name} {str(p)!r}"
    if not p.exists():
        raise DataError(f"{where} does not exist.")
    if p.is_dir():
        raise DataError(f"{where} is a directory; pass a CSV file.")
    if p.is_char_device() or p.is_block_device() or p.is_socket():
        # /dev/zero, /dev/urandom: endless, never read into memory.
        raise DataError(f"{where} is a device, not a file; pass a CSV file.")
    try:
        with p.open(encoding="utf-8", newline="") as fh:
            header = next(csv.reader(fh), None)
        if header is None:
            raise DataError(
                f"{where} is empty; it needs a header row and at least one data row."
            )
        names = [h.strip() for h in header]
        dupes = sorted({h for h in names if names.count(h) > 1})
        if dupes:
            raise DataError(
                f"{where} has the duplicated column name(s) {dupes}; give "
                "every column a unique name."
            )
        if "" in names:
            raise DataError(
                f"{where} has an empty column name (column "
                f"{names.index('') + 1}); name every column."
            )
        table = pd.read_csv(p, na_values=["?"], encoding="utf-8")
    except UnicodeDecodeError as err:
        raise DataError(
            f"{where} is not UTF-8 text (a binary file, or another "
            f"encoding: {err.reason} at byte {err.start}); save it as "
            "UTF-8 CSV."
        ) from err
    except (pd.errors.ParserError, csv.Error) as err:
        text = " ".join(str(err).split())
        raise DataError(f"{where} is not a well-formed CSV ({text}).") from err
    except pd.errors.EmptyDataError as err:
        raise DataError(
            f"{where} is empty; it needs a header row and at least one data row."
        ) from err
    if table.empty:
        raise DataError(
            f"{where} has a header but no data rows; at least one is needed."
        )
    return table
