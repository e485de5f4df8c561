"""``dpaudit list WHAT``: the generators, datasets, variants, bug flags or attacks."""

from __future__ import annotations

import argparse

from dpaudit.attacks.names import (
    ATTACK_NAMES,
    DEFAULT_REAL,
    DEFAULT_WORST_CASE,
    DEFAULT_WORST_CASE_CONTINUOUS,
)
from dpaudit.commands import EXIT_OK
from dpaudit.datasets.names import DATASET_NAMES, DEFAULT_DATASET, ONE_RUN_NAMES
from dpaudit.generators.entry_points import ENTRY_POINT_GROUP
from dpaudit.generators.registry import registered_generators

WHAT = ("generators", "datasets", "variants", "bugs", "attacks")


def run(args: argparse.Namespace) -> int:
    """Prints the list ``args.what`` names, one entry a line."""
    if args.what == "generators":
        for name, desc in registered_generators().items():
            print(f"{name:22s} {desc}")
        print(
            f"{'module:Class':22s} a plug-in (see docs/plugins.md); entry points in "
            f"group {ENTRY_POINT_GROUP}"
        )
    elif args.what == "datasets":
        for name in DATASET_NAMES:
            note = {DEFAULT_DATASET: "  (default)"}.get(name, "")
            print(name + ("  (--game one-run only)" if name in ONE_RUN_NAMES else note))
    elif args.what == "attacks":
        sets = {
            "worst-case-continuous": DEFAULT_WORST_CASE_CONTINUOUS,
            "worst-case": DEFAULT_WORST_CASE,
            "real data": DEFAULT_REAL,
        }
        for name in ATTACK_NAMES:
            where = [kind for kind, names in sets.items() if name in names]
            print(f"{name}  (default on {', '.join(where)})" if where else name)
        print("all  (every attack)")
        print("default  (the dataset's default set, marked above)")
    elif args.what == "variants":
        from dpaudit.generators.bugs import variants

        for variant in variants().values():
            print(f"{variant.name:11s} {variant.rationale}")
            print(f"{'':11s} flags: {', '.join(sorted(variant.flags))}")
    else:
        from dpaudit.generators.bugs import bugs

        for flag in bugs():
            table = "Table 1" if flag.in_table1 else "further"
            print(
                f"{flag.generator}:{flag.name:28s} [{flag.kind}, {table}] in "
                f"{', '.join(flag.implementations)}"
            )
            print(f"    {flag.description}")
    return EXIT_OK
