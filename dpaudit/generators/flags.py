"""Bug flags and variants: the registry below the generators.

A generator's config declares its defects (:mod:`dpaudit.generators.catalogue`); a
*variant* is a reviewed implementation written as configuration of the reference (a
set of flags plus that implementation's architecture and defaults). This module holds
the variant registry and builds configs from variant names, flags and options. It
imports no generator: generators register their variants here (each checked against
the config class it configures), the registry's spec table
(:mod:`dpaudit.generators.registry`) names each generator's config class, and
:mod:`dpaudit.generators.bugs` (above the generators) lists the catalogue from it.

A variant's flags are written once, in the catalogue: each flag's
``implementations`` names the reviewed implementations that have it, and
:func:`implementation_flags` reads a variant's set from there (less the flags a
variant leaves out on purpose, each with its reason).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from dpaudit.errors import InvalidParameterError, did_you_mean
from dpaudit.generators.catalogue import BugKind, declared_bugs

_NONE: Mapping[str, str] = MappingProxyType({})


@dataclass(frozen=True, kw_only=True, slots=True)
class BugFlag:
    """One defect.

    Attributes:
        name: the flag's name (also the config field that switches it on).
        generator: the generator whose config has the flag (``pategan``, ``gpate``).
        description: what the code does.
        consequence: the privacy (or utility) consequence.
        implementations: the reviewed implementations that have it.
        kind: ``privacy`` (a privacy violation counted in the study's Table 1),
            ``other`` (another bug in Table 1) or ``further`` (found in the same code,
            not in Table 1).
        unbounded_reason: why no finite epsilon holds with this flag, or None.
    """

    name: str
    generator: str
    description: str
    consequence: str
    implementations: tuple[str, ...]
    kind: BugKind
    unbounded_reason: str | None = None

    @property
    def in_table1(self) -> bool:
        return self.kind in ("privacy", "other")


@dataclass(frozen=True, kw_only=True, slots=True)
class Variant:
    """A reviewed implementation, as configuration of the reference.

    Attributes:
        name: the implementation's name.
        generator: the reference generator it configures.
        flags: the bug flags switched on.
        overrides: architecture and hyperparameters (config field -> value).
        rationale: one line on where the variant comes from.
    """

    name: str
    generator: str
    flags: frozenset[str]
    overrides: Mapping[str, Any] = field(default_factory=dict)
    rationale: str = ""

    def config_overrides(self) -> dict[str, Any]:
        """Config field -> value: the architecture plus ``True`` for every flag."""
        out = dict(self.overrides)
        out.update(dict.fromkeys(sorted(self.flags), True))
        return out


_VARIANTS: dict[str, Variant] = {}


def flags_of(generator: str, config_cls: type[Any]) -> list[BugFlag]:
    """``generator``'s flags: the ``bug_field`` declarations of its config class."""
    declared = declared_bugs(config_cls)
    return [
        BugFlag(
            name=name,
            generator=generator,
            description=doc.description,
            consequence=doc.consequence,
            implementations=doc.implementations,
            kind=doc.kind,
            unbounded_reason=doc.unbounded_reason,
        )
        for name, doc in declared.items()
    ]


def implementation_flags(
    config_cls: type[Any], implementation: str, *, omit: Mapping[str, str] = _NONE
) -> frozenset[str]:
    """The flags of ``config_cls`` whose ``implementations`` name ``implementation``,
    less ``omit`` (flag -> why the variant leaves it out).

    Raises:
        InvalidParameterError: ``omit`` names a flag the implementation does not have,
            or the implementation has no flag (a misspelt name).
    """
    declared = declared_bugs(config_cls)
    have = frozenset(
        n for n, d in declared.items() if implementation in d.implementations
    )
    if not have:
        raise InvalidParameterError(
            f"no flag of {config_cls.__name__} names the implementation "
            f"{implementation!r} in its `implementations`."
        )
    stray = sorted(set(omit) - have)
    if stray:
        raise InvalidParameterError(
            f"`omit` must name flags of {implementation!r}. Got {stray}."
        )
    return have - frozenset(omit)


def register_variant(variant: Variant, *, config_cls: type[Any]) -> Variant:
    """Adds ``variant`` (a variant of ``config_cls``) to the registry.

    Raises:
        InvalidParameterError: A duplicate name, or a flag ``config_cls`` does not
            declare.
    """
    if variant.name in _VARIANTS:
        raise InvalidParameterError(f"variant {variant.name!r} is already registered.")
    check_flags(variant.flags, generator=variant.generator, config_cls=config_cls)
    _VARIANTS[variant.name] = variant
    return variant


def variants() -> Mapping[str, Variant]:
    """The registered variants, by name."""
    return MappingProxyType(_VARIANTS)


def get_variant(name: str) -> Variant:
    """The variant ``name``. Raises :class:`InvalidParameterError` when unknown."""
    try:
        return _VARIANTS[name]
    except KeyError:
        raise InvalidParameterError(
            f"`--variant` must be one of {', '.join(_VARIANTS)}. Got {name!r}"
            f"{did_you_mean(name, _VARIANTS)}."
        ) from None


def check_flags(names: Iterable[str], *, generator: str, config_cls: type[Any]) -> None:
    """Raises :class:`InvalidParameterError` naming any flag ``generator``'s config
    class ``config_cls`` does not declare."""
    known = {b.name for b in flags_of(generator, config_cls)}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise InvalidParameterError(
            f"unknown bug flag(s) {unknown} for generator {generator!r}"
            f"{did_you_mean(unknown[0], known)}; `dpaudit list bugs` lists them."
        )


def build_config(
    config_cls: type[Any],
    *,
    generator: str,
    label: str,
    epsilon: float,
    delta: float,
    variant: str | None = None,
    bugs: Iterable[str] | str = (),
    **options: Any,
) -> Any:
    """A generator config from a variant name, extra bug flags and plain options
    (CLI, TOML): the variant's overrides, then the flags, then the options (those
    set to None keep their default), then the budget.

    Raises:
        InvalidParameterError: for an unknown option or flag, or a variant of
            another generator.
    """
    known = set(config_cls.__dataclass_fields__)
    overrides: dict[str, Any] = {}
    if variant:
        chosen = get_variant(variant)
        if chosen.generator != generator:
            raise InvalidParameterError(
                f"`variant` {variant!r} configures {chosen.generator!r}, not {generator!r}."
            )
        overrides.update(chosen.config_overrides())
        if "variant" in known:
            overrides["variant"] = variant
    flags = [bugs] if isinstance(bugs, str) else list(bugs)
    check_flags(flags, generator=generator, config_cls=config_cls)
    overrides.update(dict.fromkeys(flags, True))
    unknown = sorted(set(options) - known)
    if unknown:
        raise InvalidParameterError(
            f"unknown {label} option(s) {unknown}{did_you_mean(unknown[0], known)}; "
            f"valid options: {sorted(known)}."
        )
    overrides.update({k: v for k, v in options.items() if v is not None})
    overrides.update(epsilon=epsilon, delta=delta)
    return config_cls(**overrides)
