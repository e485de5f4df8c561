"""The audit's configuration: the key table (every setting declared once),
:class:`AuditConfig`, the stable names, serialisation and the reproduce line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dpaudit.lazy import lazy_exports

if TYPE_CHECKING:
    from dpaudit.audit.config.constraints import (
        GROUPS,
        Choices,
        Interval,
        Key,
        Requires,
    )
    from dpaudit.audit.config.keys import (
        AUDIT_CONSTRAINTS,
        AUDIT_KEYS,
        DEFAULT_OUT,
        FLAG_ONLY,
        KEYS_BY_TOML_NAME,
        RUN_SETTINGS,
        key_of,
    )
    from dpaudit.audit.config.model import (
        AuditConfig,
        check_generator_options,
        reading_recorded,
    )
    from dpaudit.audit.config.names import (
        BACKENDS,
        GAMES,
        RANDOMNESS_MODES,
        RELEASES,
        RESULT_FILE,
        TEACHERS,
        Verdict,
    )
    from dpaudit.audit.config.reproduce import (
        audit_command,
        versions_text,
    )
    from dpaudit.audit.config.requirements import check_requirements
    from dpaudit.audit.config.serial import (
        nan_to_null,
        to_json,
    )

_EXPORTS: dict[str, tuple[str, ...]] = {
    "dpaudit.audit.config.model": (
        "AuditConfig",
        "check_generator_options",
        "reading_recorded",
    ),
    "dpaudit.audit.config.keys": (
        "AUDIT_CONSTRAINTS",
        "AUDIT_KEYS",
        "DEFAULT_OUT",
        "FLAG_ONLY",
        "KEYS_BY_TOML_NAME",
        "RUN_SETTINGS",
        "key_of",
    ),
    "dpaudit.audit.config.requirements": ("check_requirements",),
    "dpaudit.audit.config.names": (
        "RANDOMNESS_MODES",
        "RESULT_FILE",
        "GAMES",
        "RELEASES",
        "TEACHERS",
        "BACKENDS",
        "Verdict",
    ),
    "dpaudit.audit.config.reproduce": (
        "audit_command",
        "versions_text",
    ),
    "dpaudit.audit.config.serial": (
        "nan_to_null",
        "to_json",
    ),
    "dpaudit.audit.config.constraints": (
        "GROUPS",
        "Choices",
        "Interval",
        "Key",
        "Requires",
    ),
}

__all__ = [
    "AUDIT_CONSTRAINTS",
    "AUDIT_KEYS",
    "BACKENDS",
    "DEFAULT_OUT",
    "FLAG_ONLY",
    "GAMES",
    "GROUPS",
    "KEYS_BY_TOML_NAME",
    "RANDOMNESS_MODES",
    "RELEASES",
    "RESULT_FILE",
    "RUN_SETTINGS",
    "TEACHERS",
    "AuditConfig",
    "Choices",
    "Interval",
    "Key",
    "Requires",
    "Verdict",
    "audit_command",
    "check_generator_options",
    "check_requirements",
    "key_of",
    "nan_to_null",
    "reading_recorded",
    "to_json",
    "versions_text",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
