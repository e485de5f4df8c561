"""``dpaudit domain infer DATA.csv``: print a draft domain for a person to review."""

from __future__ import annotations

import argparse
import json
import sys
import warnings

from dpaudit.commands import EXIT_OK
from dpaudit.data import infer_domain
from dpaudit.datasets.files import read_csv_table
from dpaudit.errors import DpauditWarning


def run(args: argparse.Namespace) -> int:
    """Prints the draft domain JSON of ``args.data`` (bounds NOT private: a warning
    on stderr says so).

    Raises:
        DataError: the file is missing, a directory, not UTF-8, not a CSV table, has
            a duplicated column name or no rows.
    """
    table = read_csv_table(args.data, name="`data`")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DpauditWarning)
        domain = infer_domain(table)
    read = [
        f"{c['name']} ({'categories' if 'categories' in c else 'lower, upper'})"
        for c in domain.to_json()["columns"]
        if "categories" in c or "lower" in c
    ]
    if read:
        # One line: bounds read from the records leak the records that set them
        # (docs/plugins.md, "The domain"); a public domain states them from outside.
        print(
            "dpaudit: these bounds were read from the records and are NOT private "
            f"(each is set by the records at its edge): {', '.join(read)}; replace "
            "each with a public value (a codebook, a documented range, a category "
            "list known without the data) in the JSON before auditing with --domain.",
            file=sys.stderr,
        )
    print(json.dumps(domain.to_json(), indent=2))
    return EXIT_OK
