"""The audit's one look into the generator registry (:func:`lookup`), and the hand-over
of an earlier one (:func:`looked_up`): ``dpaudit audit`` checks the generator's name
before torch is imported, and the audit of that configuration takes the entry it
found instead of looking again. Only the registry is imported here (no torch)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dpaudit.generators import registry

if TYPE_CHECKING:
    from dpaudit.audit.config.model import AuditConfig
    from dpaudit.generators.registry import GeneratorSpec

__all__ = ["looked_up", "lookup"]

# id(config) -> (config, its entry): the config held, so its id is not reused while
# it waits; taken by the config's first lookup.
_HANDED: dict[int, tuple[AuditConfig, GeneratorSpec]] = {}
_MOST_HANDED = 16  # the ones never taken (an audit refused before it ran): dropped


def lookup(config: AuditConfig) -> GeneratorSpec:
    """The registry entry of ``config``'s generator: the audit's one lookup (the one
    :func:`looked_up` handed over for this very configuration, if any).

    Raises:
        PluginError: an unknown generator name.
    """
    handed = _HANDED.pop(id(config), None)
    if handed is not None and handed[0] is config:
        return handed[1]
    return registry.get_spec(config.generator)


def looked_up(config: AuditConfig, spec: GeneratorSpec) -> None:
    """Hands ``spec``, looked up already for ``config.generator``, to the first
    :func:`lookup` of ``config``."""
    if len(_HANDED) >= _MOST_HANDED:
        _HANDED.clear()
    _HANDED[id(config)] = (config, spec)
