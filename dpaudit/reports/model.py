"""Audit results as frozen dataclasses, loaded from audit directories.

An audit writes a directory holding ``result.json`` (the schema is
``templates/result.schema.json``) and, optionally, ``utility.json`` and a ``trace/``
folder (``records_seen.csv``, ``losses.csv``, ``epsilon.csv``, ``trace.json``). This
module reads them, checks them against the schema once, and freezes them; the
renderers trust what they are given and compute nothing new.
"""

from __future__ import annotations

import csv
import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

from dpaudit.errors import InvalidParameterError
from dpaudit.reports.schema import SCHEMA_VERSION, validate

__all__ = [
    "RESULT_FILE",
    "TRACE_FILES",
    "AttackResult",
    "AuditResult",
    "Counts",
    "Estimator",
    "Rounds",
    "Trace",
    "Verdict",
    "find_result_dirs",
    "freeze",
    "load_result",
    "load_results",
    "result_from_mapping",
    "thaw",
]

Verdict = Literal["CONSISTENT", "VIOLATION", "INCONCLUSIVE"]

RESULT_FILE = "result.json"
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


def freeze(value: Any) -> Any:
    """A read-only deep copy of parsed JSON: dicts become mapping proxies, lists tuples."""
    if isinstance(value, Mapping):
        return MappingProxyType({str(k): freeze(v) for k, v in value.items()})
    if isinstance(value, list | tuple):
        return tuple(freeze(v) for v in value)
    return value


def thaw(value: Any) -> Any:
    """The inverse of :func:`freeze`: plain dicts and lists, ready for ``json.dumps``."""
    if isinstance(value, Mapping):
        return {k: thaw(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [thaw(v) for v in value]
    return value


def _float_or_none(value: Any) -> float | None:
    return None if value is None else float(value)


@dataclass(frozen=True, kw_only=True, slots=True)
class Counts:
    """Confusion matrix of an attack on the test rounds (member = positive)."""

    tp: int
    fp: int
    tn: int
    fn: int

    @property
    def n_members(self) -> int:
        return self.tp + self.fn

    @property
    def n_non_members(self) -> int:
        return self.tn + self.fp

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> Counts:
        return cls(tp=data["tp"], fp=data["fp"], tn=data["tn"], fn=data["fn"])


@dataclass(frozen=True, kw_only=True, slots=True)
class Estimator:
    """How eps_emp was computed.

    Attributes:
        method: ``clopper_pearson`` (or another rate-bound method).
        alpha: total probability that eps_emp overshoots the true epsilon.
        confidence: ``1 - alpha``, as recorded by the audit.
        correction: ``none`` or ``bonferroni`` (several attacks, the maximum reported).
        n_attacks: number of attacks the correction covers.
        test_non_members: test rounds without the target (``None`` if not recorded).
        test_members: test rounds with the target (``None`` if not recorded).
    """

    method: str
    alpha: float
    confidence: float
    correction: str
    n_attacks: int
    test_non_members: int | None = None
    test_members: int | None = None

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> Estimator:
        alpha = float(data["alpha"])
        n0, n1 = data.get("test_non_members"), data.get("test_members")
        return cls(
            method=str(data["method"]),
            alpha=alpha,
            confidence=float(data.get("confidence", 1.0 - alpha)),
            correction=str(data.get("correction", "none")),
            n_attacks=int(data.get("n_attacks", 1)),
            test_non_members=None if n0 is None else int(n0),
            test_members=None if n1 is None else int(n1),
        )


@dataclass(frozen=True, kw_only=True, slots=True)
class Rounds:
    """Rounds of the distinguishing game.

    Attributes:
        total: rounds in all (both worlds).
        train, validation, test: rounds of each split (both worlds).
        per_world: rounds per world (with / without the target), when recorded.
    """

    total: int
    train: int
    validation: int
    test: int
    per_world: int | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class AttackResult:
    """One attack's outcome on the test rounds.

    Attributes:
        name: the attack's name.
        eps_emp: the lower bound on epsilon (``None`` when none was produced).
        eps_max_attainable: the largest eps_emp this test size can show.
        auc: ROC AUC on the test rounds.
        counts: the confusion matrix at the chosen threshold.
        threshold: the decision threshold, chosen on validation rounds.
        direction: +1 (high score means member) or -1.
        alpha: the alpha this attack's bound used (after any correction).
        roc_fpr: false-positive rates of the ROC curve (test rounds).
        roc_tpr: true-positive rates of the ROC curve.
        scores_member: attack scores of the test rounds with the target.
        scores_non_member: attack scores of the test rounds without it.
    """

    name: str
    eps_emp: float | None
    eps_max_attainable: float | None
    auc: float | None
    counts: Counts
    threshold: float | None
    direction: int | None
    alpha: float | None
    roc_fpr: tuple[float, ...]
    roc_tpr: tuple[float, ...]
    scores_member: tuple[float, ...]
    scores_non_member: tuple[float, ...]

    @classmethod
    def from_mapping(cls, name: str, data: Mapping[str, Any]) -> AttackResult:
        roc = data.get("roc") or {}
        scores = data.get("scores") or {}
        direction = data.get("direction")
        return cls(
            name=name,
            eps_emp=_float_or_none(data.get("eps_emp")),
            eps_max_attainable=_float_or_none(data.get("eps_max_attainable")),
            auc=_float_or_none(data.get("auc")),
            counts=Counts.from_mapping(data["counts"]),
            threshold=_float_or_none(data.get("threshold")),
            direction=None if direction is None else int(direction),
            alpha=_float_or_none(data.get("alpha")),
            roc_fpr=tuple(float(x) for x in roc.get("fpr", ())),
            roc_tpr=tuple(float(x) for x in roc.get("tpr", ())),
            scores_member=tuple(float(x) for x in scores.get("member", ())),
            scores_non_member=tuple(float(x) for x in scores.get("non_member", ())),
        )


@dataclass(frozen=True, kw_only=True, slots=True)
class Trace:
    """Training traces of one model (the audit study's Figures 2 to 4).

    Each table is a tuple of rows (column -> number or string), or ``None`` when its
    file is absent.

    Attributes:
        records_seen: rows ``model, teacher, records_seen``.
        losses: rows ``iteration, teacher, loss_own, loss_other``.
        epsilon: rows ``iteration, epsilon, epsilon_data_independent``.
        details: the content of ``trace.json``, if any.
    """

    records_seen: tuple[Mapping[str, Any], ...] | None = None
    losses: tuple[Mapping[str, Any], ...] | None = None
    epsilon: tuple[Mapping[str, Any], ...] | None = None
    details: Mapping[str, Any] | None = None

    @property
    def empty(self) -> bool:
        return all(
            x is None
            for x in (self.records_seen, self.losses, self.epsilon, self.details)
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


@dataclass(frozen=True, kw_only=True, slots=True)
class AuditResult:
    """One audit, as its ``result.json`` (validated) plus optional traces.

    Attributes:
        source: the audit directory (or the file the result came from).
        raw: the whole validated document, frozen (extra keys kept).
        trace: the training traces, when ``trace/`` exists.

    The other attributes are the top-level keys of ``result.json`` of the same name
    (see the schema).
    """

    source: Path
    schema_version: int
    version: str
    verdict: Verdict
    eps_emp: float | None
    eps_claimed: float
    eps_reference: float | None
    eps_max_attainable: float | None
    auc: float | None
    counts: Counts
    attack: str
    estimator: Estimator
    delta: float
    attacks: Mapping[str, AttackResult]
    generator: str
    variant: str | None
    bugs: tuple[str, ...]
    dataset: str
    target: Mapping[str, Any]
    claim: Mapping[str, Any]
    config: Mapping[str, Any]
    seed: int
    rounds: Rounds
    timing: Mapping[str, Any]
    utility: Mapping[str, Any] | None
    raw: Mapping[str, Any]
    trace: Trace | None = None

    @property
    def directory(self) -> Path:
        """The audit directory (``source``, or the folder of a ``result.json``)."""
        return self.source.parent if self.source.suffix == ".json" else self.source

    def path_from(self, base: Path | None) -> str:
        """:attr:`directory`, relative to ``base`` where it can be."""
        return relative_path(self.directory, base)

    @property
    def label(self) -> str:
        """``generator / variant (+ bugs)``: a short name for tables and charts."""
        text = self.generator
        if self.variant:
            text += f" / {self.variant}"
        if self.bugs:
            text += " + " + ", ".join(self.bugs)
        return text


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
    if version != SCHEMA_VERSION:
        raise InvalidParameterError(
            f"{source} has `schema_version` {version}; this dpaudit reads schema_version "
            f"{SCHEMA_VERSION}. Use the dpaudit version that wrote it."
        )


def result_from_mapping(
    doc: Mapping[str, Any],
    *,
    source: Path | str,
    trace: Trace | None = None,
    utility: Mapping[str, Any] | None = None,
) -> AuditResult:
    """Validates a parsed ``result.json`` and freezes it.

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
    frozen = freeze(doc)
    attacks = {
        key: AttackResult.from_mapping(key, value)
        for key, value in frozen["attacks"].items()
    }
    if doc.get("utility") is None and utility is not None:
        frozen = MappingProxyType({**frozen, "utility": freeze(utility)})
    rounds = frozen["rounds"]
    return AuditResult(
        source=Path(source),
        schema_version=int(frozen["schema_version"]),
        version=str(frozen["version"]),
        verdict=frozen["verdict"],
        eps_emp=_float_or_none(frozen["eps_emp"]),
        eps_claimed=float(frozen["eps_claimed"]),
        eps_reference=_float_or_none(frozen.get("eps_reference")),
        eps_max_attainable=_float_or_none(frozen.get("eps_max_attainable")),
        auc=_float_or_none(frozen.get("auc")),
        counts=Counts.from_mapping(frozen["counts"]),
        attack=str(frozen["attack"]),
        estimator=Estimator.from_mapping(frozen["estimator"]),
        delta=float(frozen["delta"]),
        attacks=MappingProxyType(attacks),
        generator=str(frozen["generator"]),
        variant=frozen.get("variant"),
        bugs=tuple(frozen.get("bugs") or ()),
        dataset=str(frozen["dataset"]),
        target=frozen.get("target") or MappingProxyType({}),
        claim=frozen.get("claim") or MappingProxyType({}),
        config=frozen["config"],
        seed=int(frozen["seed"]),
        rounds=Rounds(
            total=rounds["total"],
            train=rounds["train"],
            validation=rounds["validation"],
            test=rounds["test"],
            per_world=rounds.get("per_world"),
        ),
        timing=frozen.get("timing") or MappingProxyType({}),
        utility=frozen.get("utility"),
        raw=frozen,
        trace=trace,
    )


def _read_json(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise InvalidParameterError(
            f"cannot read {path}: {err.strerror or err}."
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
    utility = None
    utility_path = directory / UTILITY_FILE
    if utility_path.is_file():
        utility = _read_json(utility_path)
        if not isinstance(utility, Mapping):
            raise InvalidParameterError(
                f"{utility_path} must hold a JSON object. Got {type(utility).__name__}."
            )
    return result_from_mapping(
        doc, source=file, trace=load_trace(directory), utility=utility
    )


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
