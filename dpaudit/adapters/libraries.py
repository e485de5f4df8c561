"""The adapted libraries, each declared once (docs/adapters.md, docs/design.md).

A :class:`Library` says everything dpaudit needs to know about one library outside
its adapter classes: its environment's recipe (the pins file in
``dpaudit/adapters/envs/`` and the packages installed before it), the import check
(the module whose presence says that an interpreter has the library, and the Python
that proves a new environment imports it), the package and version the adapters'
messages and claims name, and its adapters (generator name -> class in
``dpaudit.adapters.NAME``). What each adapter does (its options, how it fits, how it
reads the library's claim, how it records a transcript) is its class's, on the
template :class:`dpaudit.adapters._template.LibraryAdapter`.

Every table of libraries is derived from :data:`LIBRARIES`: the generator names of
``dpaudit.adapters.FOREIGN_ADAPTERS``, the recipes of ``dpaudit env``
(:data:`dpaudit.adapters.envs.RECIPES`), the interpreters the adapter tests look for,
and the adapter table of docs/adapters.md (a test keeps it equal).

This module imports only the standard library: ``dpaudit env``, the registry and the
library's own interpreter all read it.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["LIBRARIES", "Library"]

_CPU_TORCH_INDEX = "https://download.pytorch.org/whl/cpu"


@dataclass(frozen=True)
class Library:
    """One adapted library: its recipe, its import check and its adapters."""

    name: str
    """The recipe's name (``dpaudit env NAME``) and the adapters' module
    (``dpaudit.adapters.NAME``)."""
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
    """Its adapters: (generator name, class in ``dpaudit.adapters.NAME``)."""
    extra: str | None = None
    """dpaudit's optional extra that installs it into dpaudit's environment."""
    first: tuple[str, ...] = ()
    """Packages installed before the pins, alone and without dependencies (a CPU
    torch from its own index)."""
    first_index: str | None = None
    """An extra index for ``first`` (PyTorch's CPU wheels)."""
    notes: str = ""
    """What the recipe pins, in a few words (``dpaudit env --list``)."""

    @property
    def library(self) -> str:
        """``smartnoise-synth 1.0.8``: the distribution and its pinned version."""
        return f"{self.distribution} {self.version}"

    @property
    def pins(self) -> str:
        """The pins file's name in ``dpaudit/adapters/envs/``."""
        return f"{self.name}.txt"

    @property
    def variable(self) -> str:
        """The environment variable that may name an interpreter which has it (the
        adapter tests read it)."""
        return f"DPAUDIT_{self.name.upper()}_PYTHON"

    def plugins(self) -> dict[str, str]:
        """Generator name -> ``module:Class`` of each of its adapters."""
        return {
            generator: f"dpaudit.adapters.{self.name}:{cls}"
            for generator, cls in self.adapters
        }


LIBRARIES: dict[str, Library] = {
    "smartnoise": Library(
        name="smartnoise",
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
        first_index=_CPU_TORCH_INDEX,
        notes="torch 2.13.0 CPU build from PyTorch's CPU index, then smartnoise-synth",
    ),
    "synthcity": Library(
        name="synthcity",
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
    ),
    "dpmm": Library(
        name="dpmm",
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
    ),
    "opendp": Library(
        name="opendp",
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
    ),
}
"""Every adapted library, in the order ``--generator`` lists their adapters."""
