"""The bug catalogue: every defect a named flag, every reviewed implementation a variant.

Ganev, Annamalai and De Cristofaro (2024, "The Elusive Pursuit of Replicating
PATE-GAN") reviewed six public PATE-GAN implementations. dpaudit reproduces each defect
as a boolean field of the reference implementation's config, declared once with
:func:`~dpaudit.generators.catalogue.bug_field` (one visible ``if`` branch in the
trainer or in the data encoding), and each implementation as a :class:`Variant`: a set
of flags plus that implementation's architecture and defaults. A variant is data, not
a fork of the code. This module lists the catalogue, derived from the config classes
the registry's spec table names (:mod:`dpaudit.generators.registry`, docs/bugs.md);
the variant registry itself lives in :mod:`dpaudit.generators.flags`, below the
generators.
"""

from __future__ import annotations

from collections.abc import Mapping

from dpaudit.generators import flags
from dpaudit.generators.catalogue import BugKind
from dpaudit.generators.flags import (
    BugFlag,
    Variant,
    build_config,
    check_flags,
    flags_of,
    register_variant,
)
from dpaudit.generators.registry import builtin_generators

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


def _config_classes() -> dict[str, type]:
    """Generator -> config class, from the registry's spec table (loading each class
    registers that generator's variants)."""
    out: dict[str, type] = {}
    for name, spec in builtin_generators().items():
        cls = spec.load_config_class()
        if cls is not None:
            out[name] = cls
    return out


def bugs(generator: str | None = None) -> list[BugFlag]:
    """The catalogue, optionally for one generator, in declaration order."""
    classes = _config_classes()
    names = list(classes) if generator is None else [generator]
    return [
        flag
        for name in names
        if name in classes
        for flag in flags_of(name, classes[name])
    ]


def variants() -> Mapping[str, Variant]:
    """Every built-in generator's registered variants, by name."""
    _config_classes()
    return flags.variants()


def get_variant(name: str) -> Variant:
    """The variant ``name``. Raises :class:`InvalidParameterError` when unknown."""
    _config_classes()
    return flags.get_variant(name)
