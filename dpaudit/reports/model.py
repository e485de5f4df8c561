"""Loading audit directories into :class:`~dpaudit.audit.result.model.AuditResult`.

An audit writes a directory holding ``result.json`` (defined by
:mod:`dpaudit.audit.result.model`; its JSON Schema is ``templates/result.schema.json``) and,
optionally, ``utility.json`` and a ``trace/`` folder (``records_seen.csv``,
``losses.csv``, ``epsilon.csv``, ``trace.json``). This module reads them, checks the
document against the schema once, and builds the frozen result with
:meth:`AuditResult.from_json`; the renderers trust what they are given and compute
nothing new.
"""

from __future__ import annotations

import csv
import dataclasses
import json
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any

from dpaudit.audit import RESULT_FILE, AuditResult
from dpaudit.audit.result import (
    READABLE_SCHEMA_VERSIONS,
    AttackResult,
    Counts,
    Estimator,
    Power,
    Rounds,
    Trace,
    Verdict,
    freeze,
    thaw,
)
from dpaudit.errors import InvalidParameterError
from dpaudit.reports.schema import validate

__all__ = [
    "RESULT_FILE",
    "TRACE_FILES",
    "AttackResult",
    "AuditResult",
    "Counts",
    "Estimator",
    "Power",
    "Rounds",
    "Trace",
    "Unfinished",
    "Verdict",
    "attach",
    "attach_directory",
    "audit_name",
    "find_result_dirs",
    "find_unfinished",
    "freeze",
    "load_result",
    "load_results",
    "path_from",
    "result_from_mapping",
    "thaw",
]

STORE_FILE = "audit.sqlite"
UTILITY_FILE = "utility.json"
TRACE_DIR = "trace"
#: trace file -> the columns it must have.
TRACE_FILES: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "records_seen.csv": ("model", "teacher", "records_seen"),
        "losses.csv": ("iteration", "teacher", "loss_own", "loss_other"),
        "epsilon.csv": ("iteration", "epsilon", "epsilon_data_independent"),
    }
)


def relative_path(path: Path, base: Path | None) -> str:
    """``path`` relative to ``base``; as given when there is no base or no relative
    path (another drive)."""
    if base is None:
        return str(path)
    try:
        return os.path.relpath(path, base)
    except ValueError:
        return str(path)


def path_from(result: AuditResult, base: Path | None) -> str:
    """The result's audit directory, relative to ``base`` where it can be."""
    directory = result.directory
    return "" if directory is None else relative_path(directory, base)


def audit_name(result: AuditResult, base: Path | None) -> str:
    """The name that tells an audit apart in a comparison: its directory relative to
    ``base`` (``dpaudit check`` names each audit's directory after the audit), else
    the directory's own name, else the result's label."""
    directory = result.directory
    if directory is None:
        return result.label
    if base is not None:
        return relative_path(directory, base)
    return directory.name or str(directory)


def _check_version(doc: Any, source: str) -> None:
    if not isinstance(doc, Mapping):
        raise InvalidParameterError(
            f"{source} must hold a JSON object. Got {type(doc).__name__}."
        )
    version = doc.get("schema_version")
    if version is None:
        raise InvalidParameterError(
            f"{source} has no `schema_version`: it is not a dpaudit result."
        )
    if isinstance(version, bool) or not isinstance(version, int):
        raise InvalidParameterError(
            f"`schema_version` in {source} must be an integer. Got {version!r}."
        )
    if version not in READABLE_SCHEMA_VERSIONS:
        readable = ", ".join(map(str, READABLE_SCHEMA_VERSIONS))
        raise InvalidParameterError(
            f"`schema_version` in {source} must be one of {readable} (the versions "
            f"this dpaudit reads). Got {version}. Use the dpaudit version that wrote it."
        )


def result_from_mapping(
    doc: Mapping[str, Any],
    *,
    source: Path | str,
    trace: Trace | None = None,
    utility: Mapping[str, Any] | None = None,
) -> AuditResult:
    """Validates a parsed ``result.json`` against the schema and builds the result.

    Args:
        doc: The parsed document.
        source: Where it came from (named in errors; kept as ``AuditResult.source``).
        trace: Training traces to attach.
        utility: Utility results to use when ``doc`` has none.

    Returns:
        The :class:`AuditResult`.

    Raises:
        InvalidParameterError: Naming ``source``, on an unknown ``schema_version`` or
            a document that breaks the schema.
    """
    name = str(source)
    _check_version(doc, name)
    validate(doc, source=name)
    result = AuditResult.from_json(doc, source=source)
    return attach(result, trace=trace, utility=utility)


def attach(
    result: AuditResult,
    *,
    trace: Trace | None = None,
    utility: Mapping[str, Any] | None = None,
) -> AuditResult:
    """``result`` with training traces and a utility result added (those it lacks)."""
    changes: dict[str, Any] = {}
    if trace is not None and result.trace is None:
        changes["trace"] = trace
    if utility is not None and result.utility is None:
        changes["utility"] = freeze(utility)
    return dataclasses.replace(result, **changes) if changes else result


def _read_json(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise InvalidParameterError(
            f"cannot read {path}: {err.strerror or err}."
        ) from err
    except UnicodeDecodeError as err:
        raise InvalidParameterError(
            f"{path} is not a dpaudit result: it is not UTF-8 text ({err.reason}); "
            "point `dpaudit report` at an audit's folder."
        ) from err
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise InvalidParameterError(f"{path} is not valid JSON: {err}.") from err


def _number(text: str) -> int | float | str:
    if text == "":
        return (
            math.nan
        )  # a value the trace did not record (e.g. no data-independent epsilon)
    try:
        return int(text)
    except ValueError:
        pass
    try:
        value = float(text)
    except ValueError:
        return text
    return value


def _read_csv(path: Path, columns: Sequence[str]) -> tuple[Mapping[str, Any], ...]:
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            reader = csv.DictReader(handle)
            missing = [c for c in columns if c not in (reader.fieldnames or ())]
            if missing:
                raise InvalidParameterError(
                    f"{path} must have columns {', '.join(columns)}. "
                    f"Missing: {', '.join(missing)}."
                )
            rows = []
            for line, row in enumerate(reader, start=2):
                values = {c: _number((row.get(c) or "").strip()) for c in columns}
                for c in columns:
                    if c != "model" and isinstance(values[c], str):
                        raise InvalidParameterError(
                            f"{path}, line {line}: `{c}` must be a number. "
                            f"Got {values[c]!r}."
                        )
                rows.append(MappingProxyType(values))
    except OSError as err:
        raise InvalidParameterError(
            f"cannot read {path}: {err.strerror or err}."
        ) from err
    except (csv.Error, UnicodeDecodeError) as err:
        raise InvalidParameterError(f"{path} is not a valid CSV file: {err}.") from err
    return tuple(rows)


def load_trace(directory: Path) -> Trace | None:
    """Reads ``directory/trace/``; ``None`` when it does not exist.

    Raises:
        InvalidParameterError: Naming the file, when a trace file is malformed.
    """
    folder = Path(directory) / TRACE_DIR
    if not folder.is_dir():
        return None
    tables: dict[str, tuple[Mapping[str, Any], ...] | None] = {}
    for filename, columns in TRACE_FILES.items():
        path = folder / filename
        tables[filename] = _read_csv(path, columns) if path.is_file() else None
    details_path = folder / "trace.json"
    details = None
    if details_path.is_file():
        doc = _read_json(details_path)
        if not isinstance(doc, Mapping):
            raise InvalidParameterError(
                f"{details_path} must hold a JSON object. Got {type(doc).__name__}."
            )
        details = freeze(doc)
    trace = Trace(
        records_seen=tables["records_seen.csv"],
        losses=tables["losses.csv"],
        epsilon=tables["epsilon.csv"],
        details=details,
    )
    return None if trace.empty else trace


def load_result(path: Path | str) -> AuditResult:
    """Loads one audit directory (or its ``result.json``).

    Args:
        path: The audit directory, or the path of a ``result.json``.

    Returns:
        The validated, frozen :class:`AuditResult` with its traces and utility.

    Raises:
        InvalidParameterError: Naming the file, when it is missing, not JSON, of an
            unknown ``schema_version`` or not conforming to the schema.
    """
    path = Path(path)
    if path.is_dir():
        directory, file = path, path / RESULT_FILE
    else:
        directory, file = path.parent, path
    if not file.is_file():
        raise InvalidParameterError(
            f"{file} does not exist: `DIR` must be an audit directory (holding "
            f"{RESULT_FILE}) or a parent of audit directories."
        )
    doc = _read_json(file)
    return attach_directory(result_from_mapping(doc, source=file), directory)


def attach_directory(result: AuditResult, directory: Path | str) -> AuditResult:
    """``result`` with the traces and utility result found in its audit directory.

    Raises:
        InvalidParameterError: Naming the file, when a trace or ``utility.json`` is
            malformed.
    """
    directory = Path(directory)
    utility = None
    utility_path = directory / UTILITY_FILE
    if utility_path.is_file():
        utility = _read_json(utility_path)
        if not isinstance(utility, Mapping):
            raise InvalidParameterError(
                f"{utility_path} must hold a JSON object. Got {type(utility).__name__}."
            )
    return attach(result, trace=load_trace(directory), utility=utility)


def find_result_dirs(parent: Path | str) -> list[Path]:
    """Audit directories at or below ``parent`` (those holding ``result.json``), sorted.

    Raises:
        InvalidParameterError: If ``parent`` is not a directory or holds no audit.
    """
    parent = Path(parent)
    if not parent.is_dir():
        raise InvalidParameterError(f"`DIR` must be a directory. Got {str(parent)!r}.")
    if (parent / RESULT_FILE).is_file():
        return [parent]
    found = sorted(p.parent for p in parent.rglob(RESULT_FILE) if p.is_file())
    if not found:
        raise InvalidParameterError(
            f"{parent} holds no {RESULT_FILE}: `DIR` must be an audit directory or a "
            "parent of audit directories."
        )
    return found


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Unfinished:
    """An audit of a comparison that has no result: it failed, or was interrupted.

    Attributes:
        path: its directory (relative to the comparison's parent where possible).
        status: ``ERROR`` (the run failed) or ``INTERRUPTED`` (a store but no
            ``result.json``: stopped before the analysis).
        reason: one line saying what happened.
    """

    path: str
    status: str
    reason: str


def find_unfinished(parent: Path | str) -> list[Unfinished]:
    """Audit directories below ``parent`` holding a store (``audit.sqlite``) but no
    ``result.json``: audits that were interrupted or failed, which a comparison
    lists as such instead of leaving them out."""
    parent = Path(parent)
    if not parent.is_dir() or (parent / RESULT_FILE).is_file():
        return []
    return [
        Unfinished(
            path=relative_path(p.parent, parent),
            status="INTERRUPTED",
            reason=(
                "the audit has a store but no result.json: it was interrupted or "
                "failed before its analysis (continue it with --resume)"
            ),
        )
        for p in sorted(parent.rglob(STORE_FILE))
        if p.is_file()
        and not (p.parent / RESULT_FILE).is_file()
        # Hidden folders are no audits (a forced run's staging folder, inside one).
        and not any(part.startswith(".") for part in p.relative_to(parent).parts[:-1])
    ]


def load_results(path: Path | str) -> tuple[AuditResult, ...]:
    """Loads an audit directory (one result) or a parent of several (a comparison).

    Raises:
        InvalidParameterError: As :func:`load_result` and :func:`find_result_dirs`.
    """
    path = Path(path)
    if path.is_file():
        return (load_result(path),)
    return tuple(load_result(d) for d in find_result_dirs(path))


def finite(value: float | None) -> bool:
    """Whether ``value`` is a finite number (not ``None``, NaN or infinite)."""
    return value is not None and math.isfinite(value)
