"""The adapted libraries: each one folder, found by :func:`discover` (docs/design.md).

A library is the folder ``dpaudit/adapters/NAME/``: its declaration (``__init__.py``,
whose ``LIBRARY`` is a :class:`Library`), its adapter classes (``adapter.py``), the
recorders its worker runs (``_*.py``) and its environment's pins (``pins.txt``).

A :class:`Library` says everything dpaudit needs to know about one library outside
its adapter classes: its environment's recipe (its pins and the packages installed
before them), the import check
(the module whose presence says that an interpreter has the library, and the Python
that proves a new environment imports it), the package and version the adapters'
messages and claims name, and its adapters (generator name -> class in
``dpaudit.adapters.NAME``). What each adapter does (its options, how it fits, how it
reads the library's claim, how it records a transcript) is its class's, on the
template :class:`dpaudit.adapters._template.LibraryAdapter`.

Every table of libraries is derived from the folders :func:`discover` finds
(:data:`dpaudit.adapters.LIBRARIES`): the generator names of
``dpaudit.adapters.FOREIGN_ADAPTERS``, the recipes of ``dpaudit env``
(:data:`dpaudit.adapters.envs.RECIPES`), the interpreters the adapter tests look for,
and the adapter table of docs/adapters.md (a test keeps it equal).

This module imports only the standard library: ``dpaudit env``, the registry and the
library's own interpreter all read it.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

__all__ = ["CPU_TORCH_INDEX", "PINS", "Library", "discover"]

PACKAGE = "dpaudit.adapters"
"""The package whose sub-packages are the libraries."""
ADAPTER = "adapter"
"""The module of a library's folder that holds its adapter classes."""
PINS = "pins.txt"
"""The file of a library's folder that pins its environment."""
CPU_TORCH_INDEX = "https://download.pytorch.org/whl/cpu"
"""PyTorch's index of CPU wheels (a library's ``first_index``)."""


@dataclass(frozen=True)
class Library:
    """One adapted library: its recipe, its import check and its adapters."""

    name: str
    """The recipe's name (``dpaudit env NAME``) and the library's folder
    (``dpaudit/adapters/NAME/``)."""
    distribution: str
    """The distribution whose installed version the claims name (``library``)."""
    version: str
    """The version the pins install and the adapters were written for."""
    package: str
    """What a user installs, as the missing-library message names it."""
    module: str
    """The import check: the module whose presence says an interpreter has the
    library (the adapter tests look for it)."""
    check: str
    """Python run in a new environment to prove the library imports."""
    adapters: tuple[tuple[str, str], ...]
    """Its adapters: (generator name, class in ``dpaudit.adapters.NAME.adapter``)."""
    extra: str | None = None
    """dpaudit's optional extra that installs it into dpaudit's environment."""
    first: tuple[str, ...] = ()
    """Packages installed before the pins, alone and without dependencies (a CPU
    torch from its own index)."""
    first_index: str | None = None
    """An extra index for ``first`` (PyTorch's CPU wheels)."""
    notes: str = ""
    """What the recipe pins, in a few words (``dpaudit env --list``)."""
    listed: int = 100
    """Where its adapters stand in listings (lower first, then by name)."""

    @property
    def library(self) -> str:
        """``smartnoise-synth 1.0.8``: the distribution and its pinned version."""
        return f"{self.distribution} {self.version}"

    @property
    def folder(self) -> Path:
        """Its folder, ``dpaudit/adapters/NAME/``."""
        declaration = importlib.import_module(f"{PACKAGE}.{self.name}")
        return Path(str(declaration.__file__)).resolve().parent

    @property
    def pins(self) -> Path:
        """Its pins file, ``dpaudit/adapters/NAME/pins.txt``."""
        return self.folder / PINS

    @property
    def variable(self) -> str:
        """The environment variable that may name an interpreter which has it (the
        adapter tests read it)."""
        return f"DPAUDIT_{self.name.upper()}_PYTHON"

    def plugins(self) -> dict[str, str]:
        """Generator name -> ``module:Class`` of each of its adapters."""
        return {
            generator: f"{PACKAGE}.{self.name}.{ADAPTER}:{cls}"
            for generator, cls in self.adapters
        }


def discover(path: Iterable[str] | None = None) -> dict[str, Library]:
    """Every library folder: name -> its declaration, in listing order.

    A folder of ``path`` (default: the folders of :data:`PACKAGE`) is a library when
    its ``__init__.py`` defines ``LIBRARY``, a :class:`Library` named as the folder;
    other sub-packages are passed over. Only the declarations are imported (the
    standard library), never an adapter module.

    Raises:
        ValueError: a folder's ``LIBRARY`` names another folder.
    """
    where = list(path if path is not None else sys.modules[PACKAGE].__path__)
    found: list[Library] = []
    for info in pkgutil.iter_modules(where):
        if not info.ispkg or info.name.startswith("_"):
            continue
        library = getattr(
            importlib.import_module(f"{PACKAGE}.{info.name}"), "LIBRARY", None
        )
        if not isinstance(library, Library):
            continue
        if library.name != info.name:
            raise ValueError(
                f"dpaudit/adapters/{info.name}/__init__.py declares the library "
                f"{library.name!r}: name it {info.name!r}, as its folder"
            )
        found.append(library)
    found.sort(key=lambda library: (library.listed, library.name))
    return {library.name: library for library in found}
