"""Recipes for the libraries' own environments, and where ``dpaudit env`` puts them.

Each adapted library pins versions that cannot share dpaudit's environment (synthcity:
torch < 2.3 and numpy < 2; dpmm: numpy 1.26, pandas 2.1, opendp 0.12), so each gets a
virtual environment of its own, built by ``dpaudit env NAME`` from the pins files next
to this module (every package pinned: pip installs exactly these, without searching
for versions). An audit then runs the adapter under that environment's interpreter
(``--python``, printed by ``dpaudit env --list``).

Where an environment lives, unless ``--out`` says otherwise:
``$DPAUDIT_ENV_HOME/NAME`` when ``DPAUDIT_ENV_HOME`` is set, else
``~/.cache/dpaudit/envs/NAME``. Tests, benchmarks (``benchmarks/harness.py``) and docs
find a library's interpreter there (:func:`env_python`).

This module imports only the standard library.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

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
    pins: str
    """The pins file's name in this folder."""
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


_CPU_TORCH_INDEX = "https://download.pytorch.org/whl/cpu"

RECIPES: dict[str, Recipe] = {
    "smartnoise": Recipe(
        name="smartnoise",
        library="smartnoise-synth 1.0.8",
        pins="smartnoise.txt",
        check="import snsynth, torch, opacus",
        adapters="smartnoise-*",
        first=("torch==2.13.0+cpu",),
        first_index=_CPU_TORCH_INDEX,
        notes="torch 2.13.0 CPU build from PyTorch's CPU index, then smartnoise-synth",
    ),
    "synthcity": Recipe(
        name="synthcity",
        library="synthcity 0.2.12",
        pins="synthcity.txt",
        check="import synthcity.plugins, opacus.optimizers, torch",
        adapters="synthcity-*",
        notes="torch 2.2.2 (PyPI has only its CUDA build), opacus 1.4.1",
    ),
    "dpmm": Recipe(
        name="dpmm",
        library="dpmm 0.1.9",
        pins="dpmm.txt",
        check="import dpmm.pipelines",
        adapters="dpmm-*",
        notes="numpy 1.26.4, pandas 2.1.0, opendp 0.12.1",
    ),
    "opendp": Recipe(
        name="opendp",
        library="opendp 0.16.0",
        pins="opendp.txt",
        check="import opendp.prelude, opendp.extras.mbi, mbi, polars",
        adapters="opendp-*",
        notes="opendp with its mbi extra (mbi 1.1.0, jax)",
    ),
}


def pins_path(recipe: Recipe) -> Path:
    """The pins file shipped with dpaudit for ``recipe``."""
    return Path(__file__).resolve().parent / recipe.pins


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
