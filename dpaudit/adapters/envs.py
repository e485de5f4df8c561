"""Recipes for the libraries' own environments, and where ``dpaudit env`` puts them.

Each adapted library pins versions that cannot share dpaudit's environment (synthcity:
torch < 2.3 and numpy < 2; dpmm: numpy 1.26, pandas 2.1, opendp 0.12), so each gets a
virtual environment of its own, built by ``dpaudit env NAME`` from the pins file in
the library's folder, ``dpaudit/adapters/NAME/pins.txt`` (every package pinned: pip
installs exactly these, without searching for versions). An audit then runs the adapter under that environment's interpreter
(``--python``, printed by ``dpaudit env --list``).

Where an environment lives, unless ``--out`` says otherwise:
``$DPAUDIT_ENV_HOME/NAME`` when ``DPAUDIT_ENV_HOME`` is set, else
``~/.cache/dpaudit/envs/NAME``. Tests, benchmarks (``benchmarks/harness.py``) and docs
find a library's interpreter there (:func:`env_python`).

Each recipe is derived from its library's declaration (:data:`dpaudit.adapters.LIBRARIES`,
the library folders found). This module imports only the standard library.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from dpaudit.adapters import LIBRARIES

__all__ = [
    "RECIPES",
    "Recipe",
    "default_env_dir",
    "env_home",
    "env_python",
    "pins_path",
]

ENV_HOME_VARIABLE = "DPAUDIT_ENV_HOME"
MARKER = "dpaudit-env.json"
"""The file ``dpaudit env`` writes in every environment it builds."""


@dataclass(frozen=True)
class Recipe:
    """One library's environment: its pins file and the steps around it."""

    name: str
    library: str
    """The library and version the pins install, e.g. ``synthcity 0.2.12``."""
    pins: Path
    """Its pins file, ``dpaudit/adapters/NAME/pins.txt``."""
    check: str
    """Python run in the new environment to prove the library imports."""
    adapters: str
    """The generator names it serves (``--generator``)."""
    first: tuple[str, ...] = ()
    """Packages installed before the pins, alone and without dependencies (a CPU
    torch from its own index)."""
    first_index: str | None = None
    """An extra index for ``first`` (PyTorch's CPU wheels)."""
    notes: str = ""


RECIPES: dict[str, Recipe] = {
    library.name: Recipe(
        name=library.name,
        library=library.library,
        pins=library.pins,
        check=library.check,
        adapters=f"{library.name}-*",
        first=library.first,
        first_index=library.first_index,
        notes=library.notes,
    )
    for library in LIBRARIES.values()
}
"""Each library's recipe, from its declaration (:data:`dpaudit.adapters.LIBRARIES`)."""


def pins_path(recipe: Recipe) -> Path:
    """The pins file shipped with dpaudit for ``recipe``."""
    return recipe.pins


def env_home() -> Path:
    """The folder that holds ``dpaudit env``'s environments by default."""
    named = os.environ.get(ENV_HOME_VARIABLE)
    if named:
        return Path(named).expanduser()
    return Path.home() / ".cache" / "dpaudit" / "envs"


def default_env_dir(name: str) -> Path:
    """Where ``dpaudit env NAME`` builds ``NAME``'s environment without ``--out``."""
    return env_home() / name


def env_python(name: str, directory: Path | None = None) -> Path:
    """The interpreter of ``NAME``'s environment (it may not exist yet)."""
    return (directory or default_env_dir(name)) / "bin" / "python"
