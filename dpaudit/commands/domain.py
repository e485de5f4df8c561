"""``dpaudit domain infer DATA.csv``: print a draft domain for a person to review."""

from __future__ import annotations

import argparse
import json
import sys
import warnings

import pandas as pd

from dpaudit.commands import EXIT_OK
from dpaudit.data import infer_domain
from dpaudit.errors import DpauditWarning, InvalidParameterError


def run(args: argparse.Namespace) -> int:
    """Prints the draft domain JSON of ``args.data`` (bounds NOT private: a warning
    on stderr says so).

    Raises:
        InvalidParameterError: the file does not exist.
    """
    try:
        table = pd.read_csv(args.data, na_values=["?"])
    except FileNotFoundError as err:
        raise InvalidParameterError(
            f"`data` must be an existing CSV file. Got {args.data!r}.") from err
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DpauditWarning)
        domain = infer_domain(table)
    print("dpaudit: these bounds were read from the data and are NOT private; review "
          "them and replace them with public bounds before auditing.", file=sys.stderr)
    print(json.dumps(domain.to_json(), indent=2))
    return EXIT_OK
