"""How to reproduce an audit: the ``dpaudit audit`` command line of a recorded
:class:`~dpaudit.audit.config.model.AuditConfig`, and the versions it ran with.

Every report prints both, so a user can paste them into an upstream bug report. The
command names every setting that differs from the default (the output folder is
left out: ``--out`` is where the user wants it); parsing it gives the same
configuration (tests/audit/test_reproduce.py checks the round trip with the real
parser). Flags follow ``dpaudit audit``'s one rule (a key ``name`` is the flag
``--name`` with dashes) except the three keys named in :data:`FLAGS`.
"""

from __future__ import annotations

import dataclasses
import json
import shlex
from collections.abc import Mapping
from typing import Any

from dpaudit.audit.config.model import AuditConfig

__all__ = ["FLAGS", "audit_command", "versions_text"]

FLAGS: Mapping[str, str] = {
    "bugs": "--bug",
    "generator_options": "--option",
    "attack_options": "--attack-option",
}
"""The configuration fields whose flag is not ``--`` + the field's name."""


def _option_value(value: Any) -> str:
    """``KEY=VALUE``'s value as ``parse_option`` reads it back: text that is not
    JSON stays bare, anything else is written as JSON."""
    if isinstance(value, str):
        try:
            json.loads(value)
        except (json.JSONDecodeError, RecursionError):
            return value
    return json.dumps(value)


def _flag(name: str) -> str:
    return FLAGS.get(name, "--" + name.replace("_", "-"))


def audit_command(config: AuditConfig) -> str:
    """The ``dpaudit audit`` command line that runs ``config`` again (without
    ``--out``), quoted for a POSIX shell.

    >>> audit_command(AuditConfig(generator="smartnoise-mwem", rounds=300,
    ...     generator_options={"preprocessing": "public"}, dataset="worst-case",
    ...     dataset_rows=2000, python="/venvs/sn/bin/python"))
    'dpaudit audit --generator smartnoise-mwem --dataset worst-case --rounds 300 --option preprocessing=public --dataset-rows 2000 --python /venvs/sn/bin/python'
    """
    default = AuditConfig.__new__(AuditConfig)
    words = ["dpaudit", "audit"]
    for f in dataclasses.fields(AuditConfig):
        value = getattr(config, f.name)
        if f.default is not dataclasses.MISSING:
            base: Any = f.default
        elif f.default_factory is not dataclasses.MISSING:
            base = f.default_factory()
        else:  # pragma: no cover - every field has a default
            base = getattr(default, f.name, None)
        if value == base or value is None:
            continue
        flag = _flag(f.name)
        if isinstance(value, bool):
            if value:
                words.append(flag)
            continue
        if f.name == "bugs":
            for bug in value:
                words += [flag, str(bug)]
        elif isinstance(value, Mapping) and f.name in FLAGS:
            for key, item in value.items():
                words += [flag, f"{key}={_option_value(item)}"]
        elif f.name == "split":
            if value != config.default_split:  # the attacks' default: not written
                words += [flag, ",".join(repr(float(x)) for x in value)]
        elif isinstance(value, Mapping):
            words += [flag, json.dumps(dict(value), sort_keys=True)]
        elif isinstance(value, float):
            words += [flag, repr(value)]
        else:
            words += [flag, str(value)]
    return " ".join(shlex.quote(w) for w in words)


def versions_text(
    *, dpaudit: str | None, python: str | None, library: str | None
) -> str:
    """``dpaudit 0.9.0, Python 3.11.7, smartnoise-synth 1.0.8`` (what is known).

    >>> versions_text(dpaudit="0.9.0", python="3.11.7", library="smartnoise-synth 1.0.8")
    'dpaudit 0.9.0, Python 3.11.7, smartnoise-synth 1.0.8'
    >>> versions_text(dpaudit="0.9.0", python=None, library=None)
    'dpaudit 0.9.0'
    """
    parts = [f"dpaudit {dpaudit or 'unknown'}"]
    if python:
        parts.append(f"Python {python}")
    if library:
        parts.append(str(library))
    return ", ".join(parts)
