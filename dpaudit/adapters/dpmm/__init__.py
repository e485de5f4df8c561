"""dpmm: the library's declaration (docs/design.md, "Adding a library").

This folder is the whole library: this declaration, its adapters (``adapter.py``),
the recorders its worker runs (``_measure.py``) and its environment's pins
(``pins.txt``). It imports only :mod:`dpaudit.adapters.libraries` (the standard library):
``dpaudit env``, the registry and the library's own interpreter all read it.
"""

from __future__ import annotations

from dpaudit.adapters.libraries import Library

LIBRARY = Library(
    name="dpmm",
    listed=3,
    distribution="dpmm",
    version="0.1.9",
    package="dpmm",
    module="dpmm",
    check="import dpmm.pipelines",
    adapters=(
        ("dpmm-mst", "DpmmMST"),
        ("dpmm-aim", "DpmmAIM"),
        ("dpmm-privbayes", "DpmmPrivBayes"),
    ),
    notes="numpy 1.26.4, pandas 2.1.0, opendp 0.12.1",
)
