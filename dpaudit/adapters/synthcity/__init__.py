"""synthcity: the library's declaration (docs/design.md, "Adding a library").

This folder is the whole library: this declaration, its adapters (``adapter.py``),
the recorders its worker runs (``_measure.py``, ``_pate.py``) and its environment's pins
(``pins.txt``). It imports only :mod:`dpaudit.adapters.libraries` (the standard library):
``dpaudit env``, the registry and the library's own interpreter all read it.
"""

from __future__ import annotations

from dpaudit.adapters.libraries import Library

LIBRARY = Library(
    name="synthcity",
    listed=2,
    distribution="synthcity",
    version="0.2.12",
    package="synthcity==0.2.12",
    module="synthcity",
    check="import synthcity.plugins, opacus.optimizers, torch",
    adapters=(
        ("synthcity-pategan", "SynthcityPATEGAN"),
        ("synthcity-dpgan", "SynthcityDPGAN"),
        ("synthcity-privbayes", "SynthcityPrivBayes"),
        ("synthcity-aim", "SynthcityAIM"),
    ),
    notes="torch 2.2.2 (PyPI has only its CUDA build), opacus 1.4.1",
)
