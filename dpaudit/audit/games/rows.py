"""What a round releases and how the generator is set up for it, from the
configuration alone: the one formula the setup and the memory plan share (no
release, game or store is imported here, so the memory plan can read it without
building anything)."""

from __future__ import annotations

from typing import Any

from dpaudit.audit.config.model import AuditConfig
from dpaudit.generators.registry import GeneratorSpec, audit_options

__all__ = ["audit_generator_options", "release_rows"]


def audit_generator_options(
    config: AuditConfig, spec: GeneratorSpec, *, n_rows: int, worst_case: bool
) -> dict[str, Any]:
    """The generator options an audit uses, for ``|D| = n_rows`` (``spec``: the
    generator's registry entry, as the audit resolved it).

    The generator registry holds each generator's audit defaults
    (:func:`dpaudit.generators.registry.audit_options`): device, variant and bug
    flags; teachers from ``|D|`` (fixed for both worlds: a k that changed with the
    target's presence would itself leak membership); the study's lambda and iteration
    caps (100 on the worst case, 1,000 on real data); small-table noise calibration.
    Options the user set win.
    """
    return audit_options(
        spec,
        config.generator_options,
        n_rows=n_rows,
        worst_case=worst_case,
        epsilon=config.epsilon,
        delta=config.delta,
        device=config.device,
        variant=config.variant,
        bugs=config.bugs,
    )


def release_rows(config: AuditConfig, *, n_rows: int, worst_case: bool) -> int:
    """Rows released per round: the configured number, else 100 on the worst case
    and ``|D|`` otherwise (equal in both worlds)."""
    return config.synthetic_rows or (100 if worst_case else n_rows)
