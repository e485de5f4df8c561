"""The bug catalogue: every defect a named flag, every reviewed implementation a variant.

Ganev, Annamalai and De Cristofaro (2024, "The Elusive Pursuit of Replicating
PATE-GAN") reviewed six public PATE-GAN implementations. dpaudit reproduces each defect
as a boolean field of the reference implementation's config, declared once with
:func:`~dpaudit.generators.catalogue.bug_field` (one visible ``if`` branch in the
trainer or in the data encoding), and each implementation as a :class:`Variant`: a set
of flags plus that implementation's architecture and defaults. A variant is data, not
a fork of the code. This module lists the catalogue, derived from the configs
(docs/bugs.md); the registry itself lives in :mod:`dpaudit.generators.flags`, below
the generators.
"""

from __future__ import annotations

from collections.abc import Iterable

from dpaudit.errors import InvalidParameterError
from dpaudit.generators import g_pate, pate_gan
from dpaudit.generators.catalogue import BugKind
from dpaudit.generators.flags import (
    BugFlag,
    Variant,
    build_config,
    flags_of,
    get_variant,
    register_variant,
    variants,
)

__all__ = [
    "BugFlag",
    "BugKind",
    "Variant",
    "bugs",
    "build_config",
    "check_flags",
    "get_variant",
    "register_variant",
    "variants",
]

_GENERATORS = {"pategan": pate_gan.PateGanConfig, "gpate": g_pate.GPateConfig}


def bugs(generator: str | None = None) -> list[BugFlag]:
    """The catalogue, optionally for one generator, in declaration order."""
    names = list(_GENERATORS) if generator is None else [generator]
    return [flag for name in names for flag in flags_of(name, _GENERATORS.get(name))]


def check_flags(names: Iterable[str], *, generator: str) -> None:
    """Raises :class:`InvalidParameterError` naming any flag unknown for ``generator``."""
    known = {b.name for b in bugs(generator)}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise InvalidParameterError(
            f"unknown bug flag(s) {unknown} for generator {generator!r}; "
            "`dpaudit list bugs` lists them."
        )
