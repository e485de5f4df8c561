"""opendp: the library's declaration (docs/design.md, "Adding a library").

This folder is the whole library: this declaration, its adapters (``adapter.py``),
the recorders its worker runs (``_measure.py``) and its environment's pins
(``pins.txt``). It imports only :mod:`dpaudit.adapters.libraries` (the standard library):
``dpaudit env``, the registry and the library's own interpreter all read it.
"""

from __future__ import annotations

from dpaudit.adapters.libraries import Library

LIBRARY = Library(
    name="opendp",
    listed=4,
    distribution="opendp",
    version="0.16.0",
    package="opendp[mbi]==0.16.0",
    module="opendp.extras.mbi",
    check="import opendp.prelude, opendp.extras.mbi, mbi, polars",
    adapters=(
        ("opendp-mst", "OpenDPMST"),
        ("opendp-aim", "OpenDPAIM"),
    ),
    notes="opendp with its mbi extra (mbi 1.1.0, jax)",
)
