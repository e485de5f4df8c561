"""The audit's result: one typed, frozen object and its one JSON form.

:class:`AuditResult` (with one :class:`AttackResult` per attack) is what
:func:`dpaudit.audit.run_audit` returns and what reports, the CLI and ``dpaudit check``
consume. :meth:`AuditResult.to_json` and :meth:`AuditResult.from_json` are the only
definition of ``result.json``, derived from the dataclasses' fields by
:mod:`dpaudit.audit.config.serial` (a field's JSON key is its name, or the ``json``
entry of its metadata; ``None`` there: not written); the JSON Schema shipped with the
reports (``dpaudit/reports/templates/result.schema.json``) is tested equal to these
dataclasses, record by record. The analysis (:func:`dpaudit.audit.games.two_world.
analysis.analyse`) constructs the result; ``from_json`` reads one back.

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

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

from dpaudit.audit.config.model import AuditConfig, reading_recorded
from dpaudit.audit.config.names import RESULT_FILE, Game, Randomness, Verdict
from dpaudit.audit.config.serial import (
    freeze,
    from_json,
    json_keys,
    nan_to_null,
    thaw,
    to_json,
)
from dpaudit.audit.result.looks import SequentialLook, SequentialLooks
from dpaudit.audit.result.measurements import MeasurementSummary
from dpaudit.audit.result.onerun import OneRunSummary
from dpaudit.audit.result.selection import CandidatePrivacy, PublicCandidate
from dpaudit.audit.stats.estimators import AttackCounts
from dpaudit.audit.storage.traces import Trace, TrainingFacts
from dpaudit.errors import InvalidParameterError
from dpaudit.validation import check_choice, require

__all__ = [
    "LOW_FPRS",
    "READABLE_SCHEMA_VERSIONS",
    "SCHEMA_VERSION",
    "AttackResult",
    "AuditResult",
    "AuditWarning",
    "CandidatePrivacy",
    "Claim",
    "ClassifierChoice",
    "Counts",
    "Estimator",
    "LowFprRate",
    "OneRunSummary",
    "Power",
    "PublicCandidate",
    "Randomness",
    "Rounds",
    "SequentialLook",
    "SequentialLooks",
    "TargetCandidate",
    "Timing",
    "Trace",
    "TrainingFacts",
    "Verdict",
    "freeze",
    "json_keys",
    "nan_to_null",
    "thaw",
]

#: The ``schema_version`` this dpaudit writes.
SCHEMA_VERSION = 2
#: The versions :meth:`AuditResult.from_json` reads (see the module docstring).
READABLE_SCHEMA_VERSIONS: tuple[int, ...] = (1, 2)


#: The false-positive rates at which membership inference is conventionally read
#: (LiRA and after): the analysis records TPR at 0.1% and 1% FPR per attack.
LOW_FPRS: tuple[float, ...] = (0.001, 0.01)

#: The confusion matrix of an attack on the test rounds: the one counts type
#: (:class:`dpaudit.audit.stats.estimators.AttackCounts`), under the result's name.
Counts = AttackCounts

_SKIP: Mapping[str, Any] = MappingProxyType({"json": None})
_KEY: Mapping[str, Any] = MappingProxyType({"key": True})
_EMPTY: Mapping[str, Any] = MappingProxyType({})
_OMIT: Mapping[str, Any] = MappingProxyType({"omit_if": None})


def _empty() -> Mapping[str, Any]:
    return _EMPTY


@dataclass(frozen=True, kw_only=True, slots=True)
class Estimator:
    """How eps_emp was computed.

    Two levels, both named wherever a report states one: the **overall** level holds
    for the reported (largest) bound, the **per-attack** level for each attack's own
    (``overall_alpha / n`` with ``n`` attacks under Bonferroni; equal for one).

    Attributes:
        method: ``clopper_pearson`` or ``jeffreys``.
        alpha: per-attack probability that an attack's eps_emp overshoots the true
            epsilon (after the correction).
        confidence: ``1 - alpha``: the per-attack confidence (absent: computed).
        correction: ``none`` or ``bonferroni`` (several attacks, the maximum reported).
        n_attacks: number of attacks the correction covers (the attacks kept).
        test_non_members, test_members: test rounds without, with the target
            (``None`` if not recorded).
        overall_alpha: probability that the reported maximum overshoots (the audit's
            ``alpha``); read as ``alpha * n_attacks`` under Bonferroni when absent.
        overall_confidence: ``1 - overall_alpha``.
    """

    method: str
    alpha: float
    confidence: float | None = None
    correction: Literal["none", "bonferroni"] = "none"
    n_attacks: int = 1
    test_non_members: int | None = None
    test_members: int | None = None
    overall_alpha: float | None = None
    overall_confidence: float | None = None

    def __post_init__(self) -> None:
        require(0.0 < self.alpha <= 1.0, "estimator.alpha", "in (0, 1]", self.alpha)
        if self.confidence is None:
            object.__setattr__(self, "confidence", 1.0 - self.alpha)
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


@dataclass(frozen=True, kw_only=True, slots=True)
class Rounds:
    """Rounds of the distinguishing game.

    Attributes:
        total: rounds in all (both worlds).
        per_world: rounds per world (with / without the target), when recorded.
        train, validation, test: rounds of each split (both worlds).
    """

    total: int
    per_world: int | None = None
    train: int
    validation: int
    test: int


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
        mu_max_attainable: the largest mu_emp this test size and level can show (a
            perfect attack): no mu-GDP claim at or above it can be refuted.
        profile_rounds_needed: rounds per world for a perfect attack to refute the
            claim's whole region (lines and stated profile; ``None`` without a
            profile or when no feasible number suffices).
        mu_reference: the mu the ceiling is computed for (the claimed ``gdp_mu``).
        mu_ceiling: the expected mu_emp of the best possible test (the
            Neyman-Pearson oracle with its threshold known in advance) of an exactly
            ``mu_reference``-GDP mechanism at this test size and level.
        mu_to_ceiling: mu_emp / mu_ceiling.
        eps_ceiling: the expected eps_emp of the same oracle test.
        ratio_max_attainable: the refutation ratio a perfect attack shows against
            the claim's whole region by the claim's own calibrated test (the test
            that decides a claim with a profile; ``None`` without a profile): the
            attainable maximum of that test, which refutes iff it exceeds 1.
    """

    eps_max_attainable: float | None
    rounds_needed: int | None = None
    saturated: bool = False
    tightness: float | None = None
    constant_release: bool = False
    mu_max_attainable: float | None = None
    profile_rounds_needed: int | None = None
    mu_reference: float | None = None
    mu_ceiling: float | None = None
    mu_to_ceiling: float | None = None
    eps_ceiling: float | None = None
    ratio_max_attainable: float | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class LowFprRate:
    """The TPR of an attack's test-round ROC at a low FPR (an entry of
    ``tpr_at_low_fpr``).

    Attributes:
        fpr: the target false-positive rate (one of :data:`LOW_FPRS`).
        tpr: the largest TPR at an FPR at most ``fpr``; ``None``: not resolvable.
        resolvable: one non-member test round (``fpr_resolution``) is at most
            ``fpr``; otherwise the test rounds cannot show a rate this small.
    """

    fpr: float
    tpr: float | None
    resolvable: bool


@dataclass(frozen=True, kw_only=True, slots=True)
class ClassifierChoice:
    """The model a classifier attack trained, ``forest`` or ``logistic``, and the
    out-of-sample AUCs on the training rounds it was chosen by (``None``: not
    computed): :mod:`dpaudit.attacks.classifiers`."""

    model: str
    forest_auc: float | None = None
    logistic_auc: float | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class AttackResult:
    """One attack's outcome on the test rounds (an entry of ``attacks``).

    Attributes:
        name: the attack's name (the entry's key, not written inside it).
        eps_emp: the lower bound on epsilon (``None`` when none was produced).
        eps_max_attainable: the largest eps_emp this test size can show.
        auc: ROC AUC on the test rounds.
        validation_auc: ROC AUC on the validation rounds (breaks ties for the
            headline; ``None`` when not recorded).
        constant_scores: the attack gave one score on every validation and test
            round.
        counts: the confusion matrix at the chosen threshold.
        threshold: the decision threshold, chosen on validation rounds.
        direction: +1 (high score means member) or -1.
        alpha: the alpha this attack's bound used (after any correction).
        roc_fpr, roc_tpr: the ROC curve on the test rounds (``roc``).
        fpr_resolution: the smallest non-zero FPR the test rounds can show,
            ``1 / test_non_members`` (``None`` when not recorded).
        tpr_at_low_fpr: TPR at FPR 0.1% and 1% on the test rounds (empty: none).
        scores_member, scores_non_member: test scores with / without the target
            (``scores``).
        mu_emp: the largest mu such that "the mechanism is mu-GDP" is refuted at this
            attack's level (from the same bounded test point as eps_emp).
        mu_max_attainable: the largest mu_emp this test size can show.
        eps_of_mu_emp: the epsilon, at the tested delta, of a mu_emp-GDP mechanism:
            what the refuted Gaussian profile corresponds to. Not a bound on the
            mechanism's epsilon (eps_emp is that).
        fpr_upper, fnr_upper: the test point: the upper confidence bounds of the
            FPR and FNR at the chosen threshold (each at ``alpha / 2``).
        refutation_ratio: the largest of eps_emp / epsilon, mu_emp / mu and the
            Renyi ratios over the claimed regions (> 1: the claim is refuted).
        regions_violated: the claimed regions the test point lies outside
            (``lines``, ``gdp``, ``rdp@<order>``, ``zcdp@<order>``).
        classifier: the model a classifier attack trained on the training rounds,
            and the figures it was chosen by (not written for an attack that trains
            none).
    """

    name: str = field(metadata=_KEY)
    eps_emp: float | None
    eps_max_attainable: float | None = None
    auc: float | None = None
    validation_auc: float | None = None
    constant_scores: bool = False
    counts: Counts
    threshold: float | None = None
    direction: Literal[1, -1] | None = None
    alpha: float | None = None
    roc_fpr: tuple[float, ...] = field(default=(), metadata={"json": "roc.fpr"})
    roc_tpr: tuple[float, ...] = field(default=(), metadata={"json": "roc.tpr"})
    fpr_resolution: float | None = None
    tpr_at_low_fpr: tuple[LowFprRate, ...] = ()
    scores_member: tuple[float, ...] = field(
        default=(), metadata={"json": "scores.member"}
    )
    scores_non_member: tuple[float, ...] = field(
        default=(), metadata={"json": "scores.non_member"}
    )
    mu_emp: float | None = None
    mu_max_attainable: float | None = None
    eps_of_mu_emp: float | None = None
    fpr_upper: float | None = None
    fnr_upper: float | None = None
    refutation_ratio: float | None = None
    regions_violated: tuple[str, ...] = ()
    classifier: ClassifierChoice | None = field(default=None, metadata=_OMIT)


@dataclass(frozen=True, kw_only=True, slots=True)
class TargetCandidate:
    """A target ``--target auto`` scored (an entry of ``target_selection``).

    Attributes:
        row: the dataset row.
        auc: the candidate's AUC on the selection rounds.
    """

    row: int
    auc: float


@dataclass(frozen=True, kw_only=True, slots=True)
class AuditWarning:
    """Something that weakens the audit without invalidating it (an entry of
    ``warnings``), said in every report.

    Attributes:
        code: a stable name (``small_release``: fewer released rows per round than
            the attacks are built for).
        message: one sentence saying what and how to fix it.
    """

    code: str
    message: str


@dataclass(frozen=True, kw_only=True, slots=True)
class Claim:
    """The privacy claim the verdict is judged against, summarised over the rounds.

    Attributes:
        epsilon: the largest epsilon any round claimed.
        epsilon_min: the smallest.
        delta: the largest claimed delta.
        accountant: the accountant of the most generous round's claim.
        epsilon_data_independent: its data-independent bound, where it has one.
        reference_epsilon: what a correct accountant charges (the largest over the
            rounds; ``None`` when unknown or unbounded).
        reference_note: why the reference is what it is (``unbounded: ...``).
        iterations: training iterations of the most generous round.
        iterations_mean: mean iterations over the rounds that report them.
        records_seen: records seen per teacher in the most generous round.
        extra: a generator's own claim keys over the rounds: per key, numbers as
            ``{mean, min, max, rounds}``, other values as ``{values, distinct,
            rounds}`` (:func:`dpaudit.audit.games.two_world.analysis.summarise_extra`).
        gdp_mu: the claimed mu-GDP (the largest over the rounds; ``None`` unless
            every round states one).
        zcdp_rho: the claimed rho-zCDP, likewise.
        rdp: the claimed RDP curve ``{"orders": [...], "epsilons": [...]}``: the
            orders every round states, each at the largest epsilon claimed there
            (``null``: infinite).
        reference_rdp: the reference accountant's RDP curve, in the same form.
    """

    epsilon: float | None = None
    epsilon_min: float | None = None
    delta: float | None = None
    accountant: str | None = None
    epsilon_data_independent: float | None = None
    reference_epsilon: float | None = None
    reference_note: str | None = None
    iterations: int | None = None
    iterations_mean: float | None = None
    records_seen: Any = None
    extra: Mapping[str, Mapping[str, Any]] = field(default_factory=_empty)
    gdp_mu: float | None = None
    zcdp_rho: float | None = None
    rdp: Mapping[str, Any] | None = None
    reference_rdp: Mapping[str, Any] | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class Timing:
    """Wall-clock time of the audit, over every session that worked on it.

    Attributes:
        train_seconds: time spent training rounds.
        total_seconds: time in all.
        sessions: the sessions (runs of ``dpaudit audit``) that trained.
        resumed: this result came from a session that continued a stored audit.
        rounds_stored_before: rounds already stored when that session started.
    """

    train_seconds: float | None = None
    total_seconds: float | None = None
    sessions: int | None = None
    resumed: bool | None = None
    rounds_stored_before: int | None = None


_REQUIRED = (
    *("version", "verdict", "eps_emp", "eps_claimed", "counts", "attack", "estimator"),
    *("delta", "attacks", "generator", "dataset", "config", "seed", "rounds"),
)


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
        warnings: what weakens the audit without invalidating it.
        claim: the privacy claim, summarised over the rounds.
        config: every audit setting, as recorded: the audit's
            :class:`~dpaudit.audit.config.model.AuditConfig`.
        timing: wall-clock time of the audit.
        extra: keys of the document this class does not know (kept and written back).
        source: where the result was read from (not written).
        trace: training traces from the audit directory (not written).
        utility: the utility benchmark (``utility.json``), when run.
        mu_emp, mu_max_attainable, eps_of_mu_emp, fpr_upper, fnr_upper, refutation_ratio, regions_violated: the
            headline attack's (see :class:`AttackResult`); ``regions_violated``
            names what the verdict's VIOLATION rests on.
        sequential: the looks of a ``--sequential`` audit (``None`` otherwise).
        dropped_attacks: attack -> why it was dropped before the test (validation
            scores that cannot separate the worlds); ``None`` (not written): none.
        game: ``two-world`` (absent in results of earlier versions) or ``one-run``.
        one_run: the one-run game's counts (``None`` for the two-world game).
        measurements: a measurement transcript's exact privacy (absent otherwise).
        python: the version of the Python that ran the audit, or ``{"audit":
            version, "worker": version}`` where a foreign generator's worker ran
            under ``--python``; None in results written before it was recorded.
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
    target_selection: tuple[TargetCandidate, ...] | None = None
    public_selection: tuple[PublicCandidate, ...] | None = None
    synthetic_rows: int | None = None
    warnings: tuple[AuditWarning, ...] = ()
    claim: Claim = field(default_factory=Claim)
    config: AuditConfig
    generator_options: Mapping[str, Any] | None = None
    seed: int
    rounds: Rounds
    timing: Timing = field(default_factory=Timing)
    utility: Mapping[str, Any] | None = None
    mu_emp: float | None = None
    mu_max_attainable: float | None = None
    eps_of_mu_emp: float | None = None
    fpr_upper: float | None = None
    fnr_upper: float | None = None
    refutation_ratio: float | None = None
    regions_violated: tuple[str, ...] | None = None
    game: Game = "two-world"
    one_run: OneRunSummary | None = None
    python: str | Mapping[str, str] | None = None
    extra: Mapping[str, Any] = field(default_factory=_empty, metadata=_SKIP)
    source: Path | None = field(default=None, metadata=_SKIP)
    trace: Trace | None = field(default=None, metadata=_SKIP)
    sequential: SequentialLooks | None = field(default=None, metadata=_OMIT)
    measurements: MeasurementSummary | None = field(default=None, metadata=_OMIT)
    dropped_attacks: Mapping[str, str] | None = field(default=None, metadata=_OMIT)

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
    def public_seed(self) -> int | str:
        """The public randomness the audit held fixed, as recorded in its config
        (``0``: the root seed's public stream)."""
        return self.config.public_seed

    @property
    def attack_option(self) -> str:
        """The ``attack`` setting as given (``default``, ``all`` or one name)."""
        return self.config.attack

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
        doc.update(to_json(self))
        doc["schema_version"] = SCHEMA_VERSION
        return nan_to_null(doc)  # type: ignore[no-any-return]

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
            data = doc if isinstance(doc, Mapping) else {}
            require(isinstance(doc, Mapping), RESULT_FILE, "a JSON object", doc)
            version = data.get("schema_version")
            require(
                version is not None,
                "schema_version",
                "present (a dpaudit result has one)",
                version,
            )
            require(
                isinstance(version, int) and not isinstance(version, bool),
                "schema_version",
                "an integer",
                version,
            )
            check_choice(version, "schema_version", READABLE_SCHEMA_VERSIONS)
            missing = [k for k in _REQUIRED if k not in data]
            require(
                not missing,
                RESULT_FILE,
                f"a document with every required key (missing: {', '.join(missing)})",
                sorted(data)[:8],
            )
            known = json_keys(cls) | {"schema_version"}
            with reading_recorded():
                return from_json(
                    cls,
                    data,
                    "",
                    extra=freeze({k: v for k, v in data.items() if k not in known}),
                    source=None if source is None else Path(source),
                )
        except InvalidParameterError as err:
            raise InvalidParameterError(f"{where}: {err}") from err
