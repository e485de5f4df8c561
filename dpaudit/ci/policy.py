"""The policy file of ``dpaudit check`` (privacy regression tests for CI).

A policy (TOML) lists audits; :func:`dpaudit.ci.run.run_check` runs them (see there for
the exit codes) and :mod:`dpaudit.ci.summary` writes the JUnit XML and the Markdown
summary. This module parses and validates the policy.

The policy's ``alpha`` is the family-wise false-alarm level: the probability that the
check reports any VIOLATION although every generator keeps its claim. It is split
evenly over the audits (Bonferroni), and each audit gets ``alpha / n_audits`` as its
``alpha``: the total probability that its eps_emp overshoots (each error rate is then
bounded at half that, see :func:`dpaudit.audit.stats.estimators.eps_lower_bound`, and the
runner splits it again over several attacks). The default ``alpha = 0.05`` makes a
one-audit policy identical to ``dpaudit audit``'s default and to the audit study
(upper ends of the two-sided 95% Clopper-Pearson intervals of both rates: eps_emp at
most 4.68 with 400 + 400 test rounds).

Policy format::

    alpha = 0.05            # optional: family-wise false-alarm level, in (0, 0.5)
    preset = "quick"        # optional: fewer rounds, for CI (see PRESETS)

    [defaults]              # optional: keys applied to every audit
    epsilon = 1.0
    delta = 1e-5

    [[audit]]               # one table per audit: any dpaudit audit key
    name = "pategan-synthcity"   # optional: names the test case and the directory
    generator = "pategan"        # or a plug-in "mypkg.module:MyGenerator"
    variant = "synthcity"
    attack = "querybased"

``target`` may be a TOML table (a record, column -> value): it is passed as the audit
key ``target_record``. ``alpha`` may not appear in ``[defaults]`` or ``[[audit]]``: the
split is the policy's.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from types import MappingProxyType
from typing import Any

from dpaudit.audit import AuditConfig
from dpaudit.audit.config import AUDIT_CONSTRAINTS
from dpaudit.errors import InvalidParameterError, did_you_mean
from dpaudit.generators.names import PATE_GAN
from dpaudit.io import read_input
from dpaudit.validation import check_choice, check_scalar

__all__ = [
    "CHECK_DEFAULTS",
    "DEFAULT_ALPHA",
    "POLICY_AUDIT_KEYS",
    "PRESETS",
    "Policy",
    "PolicyAudit",
    "Preset",
    "load_policy",
    "parse_policy",
]

#: Default family-wise false-alarm level of a policy.
DEFAULT_ALPHA = 0.05

#: Audit keys ``dpaudit check`` sets under the preset, ``[defaults]`` and each
#: ``[[audit]]`` (any of them may set them otherwise): sequential looks, so that a
#: VIOLATION stops the audit at the first look that proves it (docs/ci.md).
CHECK_DEFAULTS: Mapping[str, Any] = MappingProxyType({"sequential": True})

_TOP_KEYS = frozenset({"alpha", "preset", "defaults", "audit"})
#: The keys an ``[[audit]]`` table or ``[defaults]`` may hold, generated from the one
#: definition of an audit's keys (the fields of
#: :class:`~dpaudit.audit.config.model.AuditConfig`): every audit key but ``alpha`` (the
#: policy's, split over the audits), plus the policy's own ``name``.
POLICY_AUDIT_KEYS: tuple[str, ...] = tuple(
    sorted(({f.name for f in fields(AuditConfig)} - {"alpha"}) | {"name"})
)
#: An audit's name names its directory: letters, digits, ``.``, ``_``, ``-``, starting
#: with a letter or digit (never ``..``, a path separator, a control character or a
#: trailing newline, which ``$`` would accept), at most :data:`_NAME_MAX` characters.
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_NAME_MAX = 100


@dataclass(frozen=True, kw_only=True, slots=True)
class Preset:
    """A named set of audit settings for a purpose (e.g. fast CI runs).

    Attributes:
        name: the preset's name (``preset = "<name>"`` in a policy).
        settings: audit keys applied under every audit's own keys.
        generator_options: per built-in generator, options merged under the audit's
            ``generator_options`` (only for that generator, so a plug-in never
            receives options it does not know).
        description: what the preset trades away.
    """

    name: str
    settings: Mapping[str, Any]
    generator_options: Mapping[str, Mapping[str, Any]] = field(
        default_factory=lambda: MappingProxyType({})
    )
    description: str = ""


#: The presets a policy may name.
PRESETS: Mapping[str, Preset] = MappingProxyType(
    {
        "quick": Preset(
            name="quick",
            settings=MappingProxyType({"rounds": 500}),
            generator_options=MappingProxyType(
                {PATE_GAN: MappingProxyType({"max_iterations": 50})}
            ),
            description=(
                "500 rounds per world (200 train, 100 validation, 200 test) instead of "
                "1,000, and PATE-GAN capped at 50 training iterations: a worst-case "
                "audit finishes in minutes on 2 CPU cores. The price is power: with "
                "200 + 200 test rounds the largest eps_emp any attack can show is about "
                "4.02 at alpha 0.05 with one attack, 3.76 with the default three "
                "(alpha split over them; 4.69 and 4.44 with the study's 400 + 400), "
                "so claims near or above it cannot be refuted (such an audit is "
                "INCONCLUSIVE). Real attacks show less: a per-column Laplace "
                "histogram with a quarter of its epsilon-1 noise (a 4x overclaim) "
                "was caught in 19 of 20 seeds at this size, 16 of 20 at 400 rounds "
                "per world and 11 of 20 at 200 (docs/ci.md)."
            ),
        )
    }
)


@dataclass(frozen=True, kw_only=True, slots=True)
class PolicyAudit:
    """One audit of a policy.

    Attributes:
        name: a unique name (test-case name and sub-directory).
        settings: the audit keys to run, with preset, defaults and the audit's
            Bonferroni-split ``alpha`` applied.
    """

    name: str
    settings: Mapping[str, Any]


@dataclass(frozen=True, kw_only=True, slots=True)
class Policy:
    """A parsed policy.

    Attributes:
        alpha: the family-wise false-alarm level over all audits.
        preset: the preset's name, or ``None``.
        audits: the audits, in file order.
        source: where the policy came from (named in messages).
    """

    alpha: float
    preset: str | None
    audits: tuple[PolicyAudit, ...]
    source: str = "policy"

    @property
    def audit_alpha(self) -> float:
        """The ``alpha`` of each audit: ``alpha / len(audits)`` (Bonferroni)."""
        return self.alpha / len(self.audits)


def _fail(source: str, message: str) -> InvalidParameterError:
    return InvalidParameterError(f"{source}: {message}")


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-.") or "audit"


def _check_alpha(value: Any, source: str) -> float:
    try:
        check_scalar(value, "alpha", min_val=0.0, max_val=0.5, closed="neither")
    except InvalidParameterError as err:
        raise _fail(source, str(err)) from err
    return float(value)


def _merge_options(
    preset: Preset | None, generator: Any, options: Any, source: str
) -> dict[str, Any] | None:
    if options is not None and not isinstance(options, Mapping):
        raise _fail(source, f"`generator_options` must be a table. Got {options!r}.")
    merged: dict[str, Any] = {}
    if preset is not None and isinstance(generator, str):
        merged.update(preset.generator_options.get(generator, {}))
    merged.update(options or {})
    return merged or None


def _check_values(table: Mapping[str, Any], where: str) -> None:
    """Checks each value of ``[defaults]`` that has a simple constraint (rounds,
    epsilon, backend, ...: :data:`~dpaudit.audit.config.keys.AUDIT_CONSTRAINTS`) when
    the policy is read: a bad default is refused even where every audit sets its own
    (each audit's merged settings are checked before any audit runs, by
    :func:`dpaudit.ci.run.run_check`)."""
    for key, value in table.items():
        constraint = AUDIT_CONSTRAINTS.get(key)
        if constraint is None:
            continue
        try:
            constraint.check(value, key)
        except InvalidParameterError as err:
            raise _fail(where, str(err)) from err


def parse_policy(mapping: Mapping[str, Any], *, source: str = "policy") -> Policy:
    """Validates a policy given as a mapping (the parsed TOML).

    Args:
        mapping: The policy's top-level table.
        source: Its name in error messages (usually the file path).

    Returns:
        The :class:`Policy`, with each audit's settings merged and its ``alpha`` set.

    Raises:
        InvalidParameterError: Naming ``source``, on an unknown top-level key or
            preset, a bad ``alpha``, no audits, an audit without ``generator``, an
            ``alpha`` inside an audit, or a duplicate or malformed name.
    """
    unknown = sorted(set(mapping) - _TOP_KEYS)
    if unknown:
        raise _fail(
            source,
            f"unknown top-level key(s) {unknown}; allowed: {sorted(_TOP_KEYS)} "
            "(audit settings go in [[audit]] tables or [defaults]).",
        )
    alpha = _check_alpha(mapping.get("alpha", DEFAULT_ALPHA), source)
    preset_name = mapping.get("preset")
    preset = None
    if preset_name is not None:
        try:
            check_choice(preset_name, "preset", tuple(PRESETS))
        except InvalidParameterError as err:
            raise _fail(source, str(err)) from err
        preset = PRESETS[preset_name]
    defaults = mapping.get("defaults", {})
    if not isinstance(defaults, Mapping):
        raise _fail(source, f"`defaults` must be a table. Got {defaults!r}.")
    bad_defaults = sorted(set(defaults) - set(POLICY_AUDIT_KEYS) - {"alpha"})
    if bad_defaults or "name" in defaults:
        raise _fail(
            f"{source}, [defaults]",
            f"unknown key(s) {bad_defaults or ['name']}"
            f"{did_you_mean(bad_defaults[0], POLICY_AUDIT_KEYS) if bad_defaults else ''}"
            f"; valid keys: {', '.join(k for k in POLICY_AUDIT_KEYS if k != 'name')} "
            "(`name` belongs to one [[audit]]).",
        )
    _check_values(defaults, f"{source}, [defaults]")
    tables = mapping.get("audit")
    if isinstance(tables, Mapping):
        tables = [tables]
    if not isinstance(tables, list) or not tables:
        raise _fail(
            source, "a policy needs at least one [[audit]] table (with a `generator`)."
        )
    n = len(tables)
    audit_alpha = alpha / n
    audits: list[PolicyAudit] = []
    names: set[str] = set()
    for i, table in enumerate(tables, start=1):
        where = f"{source}, [[audit]] #{i}"
        if not isinstance(table, Mapping):
            raise _fail(where, f"must be a table. Got {table!r}.")
        if "alpha" in table or "alpha" in defaults:
            raise _fail(
                where,
                "`alpha` is set once, at the top of the policy, and split over the "
                f"audits (Bonferroni: {alpha:g} / {n} = {audit_alpha:g} each); remove "
                "it from [defaults] and [[audit]].",
            )
        unknown_keys = sorted(set(table) - set(POLICY_AUDIT_KEYS))
        if unknown_keys:
            raise _fail(
                where,
                f"unknown key(s) {unknown_keys}"
                f"{did_you_mean(unknown_keys[0], POLICY_AUDIT_KEYS)}; valid keys: "
                f"{', '.join(POLICY_AUDIT_KEYS)}.",
            )
        # dpaudit check looks sequentially unless told not to (docs/ci.md,
        # "Sequential looks"): a regression fails at the first look that proves it.
        settings: dict[str, Any] = dict(CHECK_DEFAULTS)
        settings.update(preset.settings if preset else {})
        settings.update(defaults)
        settings.update(table)
        name = settings.pop("name", None)
        generator = settings.get("generator")
        if not isinstance(generator, str) or not generator:
            raise _fail(
                where,
                "`generator` must be set: pategan, gpate or a plug-in "
                f"'module.path:ClassName'. Got {generator!r}.",
            )
        if isinstance(settings.get("target"), Mapping):
            if "target_record" in settings:
                raise _fail(
                    where, "set `target` (a record) or `target_record`, not both."
                )
            settings["target_record"] = dict(settings.pop("target"))
        options = _merge_options(
            preset, generator, settings.get("generator_options"), where
        )
        if options is not None:
            settings["generator_options"] = options
        settings["alpha"] = audit_alpha
        if name is None:
            parts = [
                generator,
                settings.get("variant") or "",
                settings.get("attack") or "",
            ]
            name = (f"{i:02d}-" + _slug("-".join(p for p in parts if p)))[:_NAME_MAX]
        if (
            not isinstance(name, str)
            or len(name) > _NAME_MAX
            or not _NAME.fullmatch(name)
        ):
            raise _fail(
                where,
                "`name` must be letters, digits, '.', '_' or '-', starting with a "
                f"letter or digit, at most {_NAME_MAX} characters (it names a "
                f"directory). Got {name!r}.",
            )
        if name in names:
            raise _fail(where, f"`name` {name!r} is used twice; names must be unique.")
        names.add(name)
        audits.append(PolicyAudit(name=name, settings=MappingProxyType(settings)))
    return Policy(
        alpha=alpha,
        preset=preset.name if preset else None,
        audits=tuple(audits),
        source=source,
    )


def load_policy(path: Path | str) -> Policy:
    """Reads and validates a policy file (TOML).

    Raises:
        InvalidParameterError: Naming the file, when it cannot be read, is not TOML,
            or is not a valid policy.
    """
    path = Path(path)
    try:
        mapping = tomllib.loads(read_input(path, what="`--policy`").decode("utf-8"))
    except FileNotFoundError as err:
        raise InvalidParameterError(
            f"`--policy` must be an existing TOML file. Got {str(path)!r}."
        ) from err
    except OSError as err:
        raise InvalidParameterError(
            f"cannot read {path}: {err.strerror or err}."
        ) from err
    except tomllib.TOMLDecodeError as err:
        raise InvalidParameterError(f"{path} is not valid TOML: {err}.") from err
    except UnicodeDecodeError as err:
        raise InvalidParameterError(
            f"`--policy` must be a UTF-8 TOML file; {path} is not text ({err.reason})."
        ) from err
    return parse_policy(mapping, source=str(path))
