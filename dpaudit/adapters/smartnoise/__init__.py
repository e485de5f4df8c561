"""smartnoise: the library's declaration (docs/design.md, "Adding a library").

This folder is the whole library: this declaration, its adapters (``adapter.py``),
the recorders its worker runs (``_measure.py``, ``_pate.py``) and its environment's pins
(``pins.txt``). It imports only :mod:`dpaudit.adapters.libraries` (the standard library):
``dpaudit env``, the registry and the library's own interpreter all read it.
"""

from __future__ import annotations

from dpaudit.adapters.libraries import CPU_TORCH_INDEX, Library

LIBRARY = Library(
    name="smartnoise",
    listed=1,
    distribution="smartnoise-synth",
    version="1.0.8",
    package="smartnoise-synth==1.0.8",
    extra="smartnoise",
    module="snsynth",
    check="import snsynth, torch, opacus",
    adapters=(
        ("smartnoise-pategan", "SmartnoisePATEGAN"),
        ("smartnoise-mst", "SmartnoiseMST"),
        ("smartnoise-aim", "SmartnoiseAIM"),
        ("smartnoise-mwem", "SmartnoiseMWEM"),
        ("smartnoise-dpctgan", "SmartnoiseDPCTGAN"),
        ("smartnoise-patectgan", "SmartnoisePATECTGAN"),
        ("smartnoise-dpgan", "SmartnoiseDPGAN"),
        ("smartnoise-pacsynth", "SmartnoisePACSynth"),
    ),
    first=("torch==2.13.0+cpu",),
    first_index=CPU_TORCH_INDEX,
    notes="torch 2.13.0 CPU build from PyTorch's CPU index, then smartnoise-synth",
)
