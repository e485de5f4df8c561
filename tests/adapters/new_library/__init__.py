"""fakelib: the declaration of a library that is no real library (a test fixture).

tests/adapters/test_library_folder.py copies this folder into a copy of dpaudit, as
``dpaudit/adapters/fakelib/``, and nothing else: the registry, ``dpaudit env`` and
``dpaudit check-generator`` find it there (docs/design.md, "Adding a library"). Its
"library" is numpy, so its environment is any interpreter that has numpy.
"""

from __future__ import annotations

from dpaudit.adapters.libraries import Library

LIBRARY = Library(
    name="fakelib",
    distribution="numpy",
    version="0.0.0",
    package="numpy",
    module="numpy",
    check="import numpy",
    adapters=(("fakelib-uniform", "FakeUniform"),),
    notes="a test fixture: numpy alone",
)
