"""The audit's result: one typed, frozen object and its one JSON form.

:class:`AuditResult` (with one :class:`AttackResult` per attack) is what
:func:`dpaudit.audit.runner.run_audit` returns and what reports, the CLI and
``dpaudit check`` consume. :meth:`AuditResult.to_json` and :meth:`AuditResult.from_json`
are the only definition of ``result.json``; the JSON Schema shipped with the reports
(``dpaudit/reports/templates/result.schema.json``) is tested against these dataclasses
(each field's JSON key is its name, or the ``json`` entry of its metadata; ``None``
there marks a field that is not written).

Schema versions and migration: 1 is the original ``result.json``; 2
(:data:`SCHEMA_VERSION`) adds ``randomness``, ``power`` (``eps_max_attainable``,
``rounds_needed``, ``saturated``, ``tightness``), ``approximate`` and
``verdict_reason``, and calls INCONCLUSIVE an audit whose attainable maximum does not
exceed the claim (docs/soundness.md). A version-1 document is read with those keys
``None`` and its verdict kept as written (a reader recomputes nothing: a version-1
CONSISTENT may be one that version 2 calls INCONCLUSIVE). :meth:`AuditResult.to_json`
always writes version 2.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

from dpaudit.errors import InvalidParameterError
from dpaudit.validation import check_choice, require

__all__ = ["READABLE_SCHEMA_VERSIONS", "SCHEMA_VERSION", "AttackResult", "AuditResult",
           "Counts", "Estimator", "Power", "Randomness", "Rounds", "Trace", "Verdict",
           "freeze", "json_keys", "thaw"]

#: The ``schema_version`` this dpaudit writes.
SCHEMA_VERSION = 2
#: The versions :meth:`AuditResult.from_json` reads (see the module docstring).
READABLE_SCHEMA_VERSIONS: tuple[int, ...] = (1, 2)

Randomness = Literal["fixed_public", "independent"]
RANDOMNESS_MODES: tuple[str, ...] = ("fixed_public", "independent")

_SKIP: Mapping[str, Any] = MappingProxyType({"json": None})


class Verdict(enum.StrEnum):
    """The outcome of an audit (a ``str``: ``Verdict.VIOLATION == "VIOLATION"``).

    VIOLATION iff eps_emp > the claimed epsilon; else INCONCLUSIVE when there is no
    estimate or the attainable maximum does not exceed the claim (the audit could not
    have refuted it); else CONSISTENT (docs/soundness.md).
    """

    CONSISTENT = "CONSISTENT"
    VIOLATION = "VIOLATION"
    INCONCLUSIVE = "INCONCLUSIVE"


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


def json_keys(cls: type) -> frozenset[str]:
    """The JSON keys a result dataclass writes (for the schema-consistency test)."""
    keys = (f.metadata.get("json", f.name) for f in fields(cls))
    return frozenset(k for k in keys if k is not None)


def _opt_float(value: Any, name: str) -> float | None:
    if value is None:
        return None
    require(isinstance(value, int | float) and not isinstance(value, bool), name,
            "a number or null", value)
    return float(value)


def _float(value: Any, name: str) -> float:
    out = _opt_float(value, name)
    require(out is not None, name, "a number", value)
    return float(value)


def _int(value: Any, name: str) -> int:
    require(isinstance(value, int) and not isinstance(value, bool), name,
            "an integer", value)
    return int(value)


def _opt_int(value: Any, name: str) -> int | None:
    return None if value is None else _int(value, name)


def _opt_bool(value: Any, name: str) -> bool | None:
    if value is None:
        return None
    require(isinstance(value, bool), name, "true, false or null", value)
    return bool(value)


def _mapping(value: Any, name: str) -> Mapping[str, Any]:
    require(isinstance(value, Mapping), name, "a JSON object", value)
    return value  # type: ignore[no-any-return]


def _finite_or_none(value: float | None) -> float | None:
    """JSON has no NaN or infinity: such a value is written as null."""
    return value if value is None or math.isfinite(value) else None


@dataclass(frozen=True, kw_only=True, slots=True)
class Counts:
    """Confusion matrix of an attack on the test rounds (member = positive)."""

    tp: int
    fp: int
    tn: int
    fn: int

    @property
    def n_members(self) -> int:
        """Test rounds with the target."""
        return self.tp + self.fn

    @property
    def n_non_members(self) -> int:
        """Test rounds without the target."""
        return self.tn + self.fp

    @classmethod
    def from_json(cls, doc: Any, name: str = "counts") -> Counts:
        """Reads ``{"tp", "fp", "tn", "fn"}``."""
        data = _mapping(doc, name)
        return cls(**{k: _int(data.get(k), f"{name}.{k}") for k in ("tp", "fp", "tn", "fn")})

    def to_json(self) -> dict[str, int]:
        """``{"tp", "fp", "tn", "fn"}``."""
        return {"tp": self.tp, "fp": self.fp, "tn": self.tn, "fn": self.fn}


@dataclass(frozen=True, kw_only=True, slots=True)
class Estimator:
    """How eps_emp was computed.

    Two levels, both named wherever a report states one: the **overall** level
    holds for the reported (largest) bound, the **per-attack** level for each
    attack's own bound. With one attack they are equal; with ``n`` attacks and the
    Bonferroni correction each attack's bound is taken at ``overall_alpha / n``.

    Attributes:
        method: ``clopper_pearson`` or ``jeffreys``.
        alpha: per-attack probability that an attack's eps_emp overshoots the true
            epsilon (after the correction).
        confidence: ``1 - alpha``: the per-attack confidence.
        correction: ``none`` or ``bonferroni`` (several attacks, the maximum reported).
        n_attacks: number of attacks the correction covers.
        test_non_members: test rounds without the target (``None`` if not recorded).
        test_members: test rounds with the target (``None`` if not recorded).
        overall_alpha: probability that the reported maximum overshoots (the audit's
            ``alpha``); read as ``alpha * n_attacks`` under Bonferroni when absent.
        overall_confidence: ``1 - overall_alpha``.
    """

    method: str
    alpha: float
    confidence: float
    correction: str = "none"
    n_attacks: int = 1
    test_non_members: int | None = None
    test_members: int | None = None
    overall_alpha: float | None = None
    overall_confidence: float | None = None

    def __post_init__(self) -> None:
        if self.overall_alpha is None:
            split = self.n_attacks if self.correction == "bonferroni" else 1
            object.__setattr__(self, "overall_alpha", self.alpha * split)
        if self.overall_confidence is None:
            assert self.overall_alpha is not None
            object.__setattr__(self, "overall_confidence", 1.0 - self.overall_alpha)

    @property
    def several(self) -> bool:
        """Whether the per-attack level differs from the overall one."""
        return self.correction == "bonferroni" and self.n_attacks > 1

    @classmethod
    def from_json(cls, doc: Any) -> Estimator:
        """Reads the ``estimator`` object (``confidence`` defaults to ``1 - alpha``;
        the overall level to the per-attack one times the Bonferroni split)."""
        data = _mapping(doc, "estimator")
        alpha = _float(data.get("alpha"), "estimator.alpha")
        return cls(
            method=str(data.get("method")),
            alpha=alpha,
            confidence=_float(data.get("confidence", 1.0 - alpha), "estimator.confidence"),
            correction=str(data.get("correction", "none")),
            n_attacks=_int(data.get("n_attacks", 1), "estimator.n_attacks"),
            test_non_members=_opt_int(data.get("test_non_members"),
                                      "estimator.test_non_members"),
            test_members=_opt_int(data.get("test_members"), "estimator.test_members"),
            overall_alpha=_opt_float(data.get("overall_alpha"), "estimator.overall_alpha"),
            overall_confidence=_opt_float(data.get("overall_confidence"),
                                          "estimator.overall_confidence"),
        )

    def to_json(self) -> dict[str, Any]:
        """The ``estimator`` object."""
        return {"method": self.method, "alpha": self.alpha, "confidence": self.confidence,
                "correction": self.correction, "n_attacks": self.n_attacks,
                "test_non_members": self.test_non_members,
                "test_members": self.test_members,
                "overall_alpha": self.overall_alpha,
                "overall_confidence": self.overall_confidence}


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

    @classmethod
    def from_json(cls, doc: Any) -> Rounds:
        """Reads the ``rounds`` object."""
        data = _mapping(doc, "rounds")
        return cls(total=_int(data.get("total"), "rounds.total"),
                   train=_int(data.get("train"), "rounds.train"),
                   validation=_int(data.get("validation"), "rounds.validation"),
                   test=_int(data.get("test"), "rounds.test"),
                   per_world=_opt_int(data.get("per_world"), "rounds.per_world"))

    def to_json(self) -> dict[str, Any]:
        """The ``rounds`` object."""
        return {"total": self.total, "per_world": self.per_world, "train": self.train,
                "validation": self.validation, "test": self.test}


@dataclass(frozen=True, kw_only=True, slots=True)
class Power:
    """How strong the audit was (``power`` in ``result.json``, schema version 2).

    Attributes:
        eps_max_attainable: the largest eps_emp this test size and level can show
            (an attack with no errors): no claim at or above it can be refuted.
        rounds_needed: rounds per world for the attainable maximum to exceed the
            claim (``None`` when it already does, or when not computed).
        saturated: eps_emp equals the attainable maximum: more rounds would show more.
        tightness: eps_emp / the reference (or claimed) epsilon, when that is finite.
        constant_release: every round of both worlds gave the same features for
            every attack: the target changed nothing that was released, so no attack
            and no number of rounds could separate the worlds (absent: ``False``).
    """

    eps_max_attainable: float | None
    rounds_needed: int | None = None
    saturated: bool = False
    tightness: float | None = None
    constant_release: bool = False

    @classmethod
    def from_json(cls, doc: Any) -> Power:
        """Reads the ``power`` object."""
        data = _mapping(doc, "power")
        return cls(
            eps_max_attainable=_opt_float(data.get("eps_max_attainable"),
                                          "power.eps_max_attainable"),
            rounds_needed=_opt_int(data.get("rounds_needed"), "power.rounds_needed"),
            saturated=bool(_opt_bool(data.get("saturated"), "power.saturated")),
            tightness=_opt_float(data.get("tightness"), "power.tightness"),
            constant_release=bool(_opt_bool(data.get("constant_release"),
                                            "power.constant_release")),
        )

    def to_json(self) -> dict[str, Any]:
        """The ``power`` object."""
        return {"eps_max_attainable": _finite_or_none(self.eps_max_attainable),
                "rounds_needed": self.rounds_needed, "saturated": self.saturated,
                "tightness": _finite_or_none(self.tightness),
                "constant_release": self.constant_release}


@dataclass(frozen=True, kw_only=True, slots=True)
class AttackResult:
    """One attack's outcome on the test rounds (an entry of ``attacks``).

    Attributes:
        name: the attack's name (the entry's key, not written inside it).
        eps_emp: the lower bound on epsilon (``None`` when none was produced).
        eps_max_attainable: the largest eps_emp this test size can show.
        auc: ROC AUC on the test rounds.
        counts: the confusion matrix at the chosen threshold.
        threshold: the decision threshold, chosen on validation rounds.
        direction: +1 (high score means member) or -1.
        alpha: the alpha this attack's bound used (after any correction).
        roc_fpr, roc_tpr: the ROC curve on the test rounds (``roc``).
        scores_member, scores_non_member: test scores with / without the target
            (``scores``).
    """

    name: str = field(metadata=_SKIP)
    eps_emp: float | None
    eps_max_attainable: float | None = None
    auc: float | None = None
    counts: Counts
    threshold: float | None = None
    direction: int | None = None
    alpha: float | None = None
    roc_fpr: tuple[float, ...] = field(default=(), metadata={"json": "roc"})
    roc_tpr: tuple[float, ...] = field(default=(), metadata={"json": "roc"})
    scores_member: tuple[float, ...] = field(default=(), metadata={"json": "scores"})
    scores_non_member: tuple[float, ...] = field(default=(), metadata={"json": "scores"})

    @classmethod
    def from_json(cls, name: str, doc: Any) -> AttackResult:
        """Reads one entry of ``attacks``."""
        where = f"attacks.{name}"
        data = _mapping(doc, where)
        roc = data.get("roc") or {}
        scores = data.get("scores") or {}
        return cls(
            name=name,
            eps_emp=_opt_float(data.get("eps_emp"), f"{where}.eps_emp"),
            eps_max_attainable=_opt_float(data.get("eps_max_attainable"),
                                          f"{where}.eps_max_attainable"),
            auc=_opt_float(data.get("auc"), f"{where}.auc"),
            counts=Counts.from_json(data.get("counts"), f"{where}.counts"),
            threshold=_opt_float(data.get("threshold"), f"{where}.threshold"),
            direction=_opt_int(data.get("direction"), f"{where}.direction"),
            alpha=_opt_float(data.get("alpha"), f"{where}.alpha"),
            roc_fpr=tuple(float(x) for x in roc.get("fpr", ())),
            roc_tpr=tuple(float(x) for x in roc.get("tpr", ())),
            scores_member=tuple(float(x) for x in scores.get("member", ())),
            scores_non_member=tuple(float(x) for x in scores.get("non_member", ())),
        )

    def to_json(self) -> dict[str, Any]:
        """The entry of ``attacks`` (without the name, which is its key)."""
        return {
            "eps_emp": _finite_or_none(self.eps_emp),
            "eps_max_attainable": _finite_or_none(self.eps_max_attainable),
            "auc": _finite_or_none(self.auc),
            "counts": self.counts.to_json(),
            "threshold": _finite_or_none(self.threshold),
            "direction": self.direction,
            "alpha": self.alpha,
            "roc": {"fpr": list(self.roc_fpr), "tpr": list(self.roc_tpr)},
            "scores": {"member": list(self.scores_member),
                       "non_member": list(self.scores_non_member)},
        }


@dataclass(frozen=True, kw_only=True, slots=True)
class Trace:
    """Training traces of one model, read from an audit directory's ``trace/``.

    Each table is a tuple of rows (column -> number or string), or ``None`` when its
    file is absent. Not part of ``result.json``.

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
        """Whether no trace file was found."""
        return all(x is None for x in (self.records_seen, self.losses, self.epsilon,
                                       self.details))


_EMPTY: Mapping[str, Any] = MappingProxyType({})


def _empty() -> Mapping[str, Any]:
    return _EMPTY
_REQUIRED = ("version", "verdict", "eps_emp", "eps_claimed", "counts", "attack",
             "estimator", "delta", "attacks", "generator", "dataset", "config", "seed",
             "rounds")


@dataclass(frozen=True, kw_only=True, slots=True)
class AuditResult:
    """One audit: the content of ``result.json``, typed and frozen.

    The attributes are the keys of ``result.json`` of the same name (see the module
    docstring and ``result.schema.json``), plus:

    Attributes:
        schema_version: the version of the document this was read from (a new result
            has :data:`SCHEMA_VERSION`; :meth:`to_json` always writes that).
        power: how strong the audit was (``None`` in a version-1 document).
        randomness: ``fixed_public`` or ``independent`` (``None``: not recorded).
        approximate: the verdict used the Jeffreys interval, not an exact one.
        verdict_reason: one sentence saying why this verdict.
        extra: keys of the document this class does not know (kept and written back).
        source: where the result was read from (not written).
        trace: training traces from the audit directory (not written).
        utility: the utility benchmark (``utility.json``), when run.
    """

    schema_version: int = SCHEMA_VERSION
    version: str
    verdict: Verdict
    verdict_reason: str | None = None
    eps_emp: float | None
    eps_claimed: float
    eps_reference: float | None = None
    eps_max_attainable: float | None = None
    power: Power | None = None
    approximate: bool | None = None
    randomness: Randomness | None = None
    auc: float | None = None
    counts: Counts
    attack: str
    estimator: Estimator
    delta: float
    delta_requested: float | None = None
    attacks: Mapping[str, AttackResult]
    generator: str
    variant: str | None = None
    bugs: tuple[str, ...] = ()
    bugs_added: tuple[str, ...] | None = None
    dataset: str
    target: Mapping[str, Any] = field(default_factory=_empty)
    target_index: int | None = None
    target_selection: tuple[Mapping[str, Any], ...] | None = None
    public_selection: tuple[Mapping[str, Any], ...] | None = None
    synthetic_rows: int | None = None
    claim: Mapping[str, Any] = field(default_factory=_empty)
    config: Mapping[str, Any]
    generator_options: Mapping[str, Any] | None = None
    seed: int
    rounds: Rounds
    timing: Mapping[str, Any] = field(default_factory=_empty)
    utility: Mapping[str, Any] | None = None
    extra: Mapping[str, Any] = field(default_factory=_empty, metadata=_SKIP)
    source: Path | None = field(default=None, metadata=_SKIP)
    trace: Trace | None = field(default=None, metadata=_SKIP)

    # ------------------------------------------------------------ views
    @property
    def directory(self) -> Path | None:
        """The audit directory (``source``, or the folder of a ``result.json``)."""
        if self.source is None:
            return None
        return self.source.parent if self.source.suffix == ".json" else self.source

    @property
    def label(self) -> str:
        """``generator / variant (+ bugs)``: a short name for tables and charts."""
        text = self.generator
        if self.variant:
            text += f" / {self.variant}"
        if self.bugs:
            text += " + " + ", ".join(self.bugs)
        return text

    @property
    def raw(self) -> Mapping[str, Any]:
        """The whole document (:meth:`to_json`), frozen."""
        return freeze(self.to_json())  # type: ignore[no-any-return]

    # ------------------------------------------------------------- JSON
    def to_json(self) -> dict[str, Any]:
        """The ``result.json`` document (plain JSON types; non-finite numbers as null).

        Returns:
            A new dict, ready for ``json.dumps(..., allow_nan=False)``.
        """
        doc: dict[str, Any] = thaw(self.extra)
        doc.update({
            "schema_version": SCHEMA_VERSION, "version": self.version,
            "verdict": self.verdict.value,
            "verdict_reason": self.verdict_reason,
            "eps_emp": _finite_or_none(self.eps_emp),
            "eps_claimed": self.eps_claimed,
            "eps_reference": _finite_or_none(self.eps_reference),
            "eps_max_attainable": _finite_or_none(self.eps_max_attainable),
            "power": None if self.power is None else self.power.to_json(),
            "approximate": self.approximate, "randomness": self.randomness,
            "auc": _finite_or_none(self.auc),
            "counts": self.counts.to_json(),
            "attack": self.attack, "estimator": self.estimator.to_json(),
            "delta": self.delta, "delta_requested": self.delta_requested,
            "attacks": {k: a.to_json() for k, a in self.attacks.items()},
            "generator": self.generator, "variant": self.variant,
            "bugs": list(self.bugs),
            "bugs_added": None if self.bugs_added is None else list(self.bugs_added),
            "dataset": self.dataset,
            "target": thaw(self.target),
            "target_index": self.target_index,
            "target_selection": thaw(self.target_selection),
            "public_selection": thaw(self.public_selection),
            "synthetic_rows": self.synthetic_rows,
            "claim": thaw(self.claim),
            "config": thaw(self.config),
            "generator_options": thaw(self.generator_options),
            "seed": self.seed, "rounds": self.rounds.to_json(),
            "timing": thaw(self.timing), "utility": thaw(self.utility),
        })
        return _nan_to_null(doc)  # type: ignore[no-any-return]

    @classmethod
    def from_json(cls, doc: Any, *, source: Path | str | None = None) -> AuditResult:
        """Reads a parsed ``result.json`` (schema version 1 or 2).

        Args:
            doc: The parsed document.
            source: Where it came from (named in errors; kept as :attr:`source`).

        Returns:
            The frozen :class:`AuditResult`. Keys of version 2 missing from a
            version-1 document are ``None``; unknown keys are kept in :attr:`extra`.

        Raises:
            InvalidParameterError: Naming ``source``, when ``doc`` is not a result of
                a readable schema version or a key has the wrong type.
        """
        where = "result" if source is None else str(source)
        try:
            return cls._from_json(doc, source)
        except InvalidParameterError as err:
            raise InvalidParameterError(f"{where}: {err}") from err

    @classmethod
    def _from_json(cls, doc: Any, source: Path | str | None) -> AuditResult:
        data = _mapping(doc, "result.json")
        version = data.get("schema_version")
        require(version is not None, "schema_version",
                "present (a dpaudit result has one)", version)
        check_choice(_int(version, "schema_version"), "schema_version",
                     READABLE_SCHEMA_VERSIONS)
        missing = [k for k in _REQUIRED if k not in data]
        require(not missing, "result.json", "a document with every required key "
                f"(missing: {', '.join(missing)})", sorted(data)[:8])
        verdict = check_choice(data["verdict"], "verdict", [v.value for v in Verdict])
        randomness = data.get("randomness")
        if randomness is not None:
            check_choice(randomness, "randomness", RANDOMNESS_MODES)
        power = data.get("power")
        attacks = _mapping(data["attacks"], "attacks")
        known = json_keys(cls) | {"schema_version"}
        return cls(
            schema_version=_int(version, "schema_version"),
            version=str(data["version"]),
            verdict=Verdict(verdict),
            verdict_reason=None if data.get("verdict_reason") is None
            else str(data["verdict_reason"]),
            eps_emp=_opt_float(data["eps_emp"], "eps_emp"),
            eps_claimed=_float(data["eps_claimed"], "eps_claimed"),
            eps_reference=_opt_float(data.get("eps_reference"), "eps_reference"),
            eps_max_attainable=_opt_float(data.get("eps_max_attainable"),
                                          "eps_max_attainable"),
            power=None if power is None else Power.from_json(power),
            approximate=_opt_bool(data.get("approximate"), "approximate"),
            randomness=randomness,
            auc=_opt_float(data.get("auc"), "auc"),
            counts=Counts.from_json(data["counts"]),
            attack=str(data["attack"]),
            estimator=Estimator.from_json(data["estimator"]),
            delta=_float(data["delta"], "delta"),
            delta_requested=_opt_float(data.get("delta_requested"), "delta_requested"),
            attacks=MappingProxyType({str(k): AttackResult.from_json(str(k), v)
                                      for k, v in attacks.items()}),
            generator=str(data["generator"]),
            variant=None if data.get("variant") is None else str(data["variant"]),
            bugs=tuple(str(b) for b in data.get("bugs") or ()),
            bugs_added=None if data.get("bugs_added") is None
            else tuple(str(b) for b in data["bugs_added"]),
            dataset=str(data["dataset"]),
            target=freeze(_mapping(data.get("target") or {}, "target")),
            target_index=_opt_int(data.get("target_index"), "target_index"),
            target_selection=freeze(data.get("target_selection")),
            public_selection=freeze(data.get("public_selection")),
            synthetic_rows=_opt_int(data.get("synthetic_rows"), "synthetic_rows"),
            claim=freeze(_mapping(data.get("claim") or {}, "claim")),
            config=freeze(_mapping(data["config"], "config")),
            generator_options=freeze(data.get("generator_options")),
            seed=_int(data["seed"], "seed"),
            rounds=Rounds.from_json(data["rounds"]),
            timing=freeze(_mapping(data.get("timing") or {}, "timing")),
            utility=freeze(data.get("utility")),
            extra=freeze({k: v for k, v in data.items() if k not in known}),
            source=None if source is None else Path(source),
        )


def _nan_to_null(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _nan_to_null(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_nan_to_null(v) for v in value]
    return value
