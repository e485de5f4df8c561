"""The audits of the PATE-GAN audit study and the figures it published.

Ganev, Annamalai and De Cristofaro ("The Elusive Pursuit of Replicating PATE-GAN",
2024) audited six PATE-GAN implementations with two attacks: the query-based attack on
the worst-case dataset (four rows (0, 0, 0), target (1, 1, 1)) and GroundHog on Kaggle
Cervical Cancer. :func:`study_plan` lays out the same audits for dpaudit's reference
PATE-GAN, the six variants (docs/bugs.md) and G-PATE, with the study's settings
(epsilon 1, delta 1e-5, lambda 1e-3, k from |D|, the iteration caps of the registry;
docs/bugs.md, "The study's audit settings") and ``--target auto`` on Cervical Cancer.
:data:`PUBLISHED` holds the study's figures (docs/bugs.md, "The study's reference
figures").
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from dpaudit.generators.names import G_PATE, PATE_GAN, PATE_GAN_VARIANTS
from dpaudit.validation import require

__all__ = [
    "PUBLISHED",
    "QUICK",
    "SETTINGS",
    "STUDY_ROUNDS",
    "SUBJECTS",
    "VARIANTS",
    "QuickSettings",
    "StudyAudit",
    "select_audits",
    "study_plan",
]

VARIANTS: tuple[str, ...] = PATE_GAN_VARIANTS
"""The six implementations the study reviewed (dpaudit variants of ``pategan``)."""
SMALL_TABLE_STUDY: frozenset[str] = frozenset({"smartnoise"})
"""Variants that refuse tables under 1,000 rows unless told to run the study's
small-table modification (``small_table="study"``)."""
SUBJECTS: tuple[str, ...] = ("reference", *VARIANTS, G_PATE)
"""What the study command audits: dpaudit's reference PATE-GAN, the variants, G-PATE."""
SETTINGS: Mapping[str, Mapping[str, Any]] = MappingProxyType(
    {
        "worst-case": MappingProxyType(
            {"dataset": "worst-case", "attack": "querybased"}
        ),
        "cervical": MappingProxyType(
            {"dataset": "cervical_cancer", "attack": "groundhog", "target": "auto"}
        ),
    }
)
"""Each of the study's two experiments: dataset, attack (and target selection)."""
STUDY_ROUNDS = 1000
"""The study's rounds per world (400 + 400 test rounds: at most 4.68 at alpha 0.05)."""

PUBLISHED: Mapping[str, Mapping[str, float]] = MappingProxyType(
    {
        "worst-case": MappingProxyType(
            {
                "original": 4.68,
                "updated": 2.18,
                "synthcity": 4.68,
                "turing": 4.68,
                "borealis": 4.53,
                "smartnoise": 4.68,
            }
        ),
        "cervical": MappingProxyType(
            {
                "original": 3.43,
                "updated": 4.68,
                "synthcity": 3.90,
                "turing": 2.05,
                "borealis": 4.63,
                "smartnoise": 4.68,
            }
        ),
    }
)
"""The study's empirical epsilon per experiment and variant (docs/bugs.md); the study
claimed epsilon 1 for each, so each figure is a violation in its own terms."""


@dataclass(frozen=True, kw_only=True, slots=True)
class QuickSettings:
    """What ``--quick`` changes: a smoke run, not a measurement.

    Attributes:
        rounds: rounds per world (unless ``--rounds`` says otherwise).
        worst_case_iterations, real_data_iterations: the iteration caps
            (``max_iterations``) on the worst case and on Cervical Cancer (the study:
            100 and 1,000).
        candidates, selection_rounds: ``--target auto``'s candidates and rounds per
            world of the selection pool (defaults 64 and 100).
    """

    rounds: int = 100
    worst_case_iterations: int = 20
    real_data_iterations: int = 50
    candidates: int = 8
    selection_rounds: int = 20


QUICK = QuickSettings()


@dataclass(frozen=True, kw_only=True, slots=True)
class StudyAudit:
    """One audit of the study.

    Attributes:
        name: its folder under the study's output (``<subject>-<setting>``).
        subject: ``reference``, a variant of :data:`VARIANTS` or ``gpate``.
        setting: a key of :data:`SETTINGS`.
        settings: the ``AuditConfig`` keys it runs with.
        published: the study's figure, or None (the study did not audit it).
    """

    name: str
    subject: str
    setting: str
    settings: Mapping[str, Any] = field(default_factory=dict)
    published: float | None = None

    @property
    def experiment(self) -> str:
        """The setting in words."""
        return (
            "query-based attack, worst-case dataset"
            if self.setting == "worst-case"
            else "GroundHog, Cervical Cancer, --target auto"
        )


def _settings(
    subject: str,
    setting: str,
    *,
    rounds: int | None,
    quick: bool,
    common: Mapping[str, Any],
) -> dict[str, Any]:
    out: dict[str, Any] = {**SETTINGS[setting], **common}
    if subject == G_PATE:
        out["generator"] = G_PATE
    else:
        out["generator"] = PATE_GAN
        if subject != "reference":
            out["variant"] = subject
    if subject in SMALL_TABLE_STUDY:
        # Both of the study's tables are below smartnoise's 1,000 rows: the study's
        # own small-table modification (docs/bugs.md).
        out["generator_options"] = {"small_table": "study"}
    if quick:
        cap = (
            QUICK.worst_case_iterations
            if setting == "worst-case"
            else QUICK.real_data_iterations
        )
        out["generator_options"] = {
            **out.get("generator_options", {}),
            "max_iterations": cap,
        }
        if out.get("target") == "auto":
            out["candidates"] = QUICK.candidates
            out["selection_rounds"] = QUICK.selection_rounds
    chosen = rounds if rounds is not None else (QUICK.rounds if quick else STUDY_ROUNDS)
    out["rounds"] = chosen
    return out


def study_plan(
    *,
    rounds: int | None = None,
    quick: bool = False,
    seed: int = 0,
    randomness: str | None = None,
    device: str | None = None,
    jobs: int | None = None,
    data_dir: str | None = None,
    batch_size: int | None = None,
) -> tuple[StudyAudit, ...]:
    """The study's audits: each subject of :data:`SUBJECTS` in both settings.

    Args:
        rounds: rounds per world (default 1,000, the study's; 100 with ``quick``).
        quick: a smoke run (:data:`QUICK`: fewer rounds, iteration caps, a smaller
            target selection).
        seed: every audit's root seed.
        randomness: ``fixed_public`` or ``independent`` (None: the audit's default).
        device, jobs, batch_size: execution settings (None: the audit's defaults).
        data_dir: folder of the named datasets.

    Returns:
        16 audits, subject by subject, the worst case first.

    Raises:
        InvalidParameterError: ``rounds`` below 5.
    """
    require(
        rounds is None or (isinstance(rounds, int) and rounds >= 5),
        "rounds",
        "an integer >= 5",
        rounds,
    )
    common: dict[str, Any] = {"seed": seed}
    for key, value in (
        ("randomness", randomness),
        ("device", device),
        ("jobs", jobs),
        ("data_dir", data_dir),
        ("batch_size", batch_size),
    ):
        if value is not None:
            common[key] = value
    return tuple(
        StudyAudit(
            name=f"{subject}-{setting}",
            subject=subject,
            setting=setting,
            settings=MappingProxyType(
                _settings(subject, setting, rounds=rounds, quick=quick, common=common)
            ),
            published=PUBLISHED[setting].get(subject),
        )
        for subject in SUBJECTS
        for setting in SETTINGS
    )


def select_audits(
    plan: Sequence[StudyAudit], only: Iterable[str] | None
) -> tuple[StudyAudit, ...]:
    """The audits ``only`` names: subjects (``reference``, ``original``, ...,
    ``gpate``), settings (``worst-case``, ``cervical``) or audit names
    (``original-cervical``). An audit is kept when its name is given, or when it
    matches the subjects given (any, if none) and the settings given (any, if none).

    Example:
        >>> [a.name for a in select_audits(study_plan(), ["reference", "worst-case"])]
        ['reference-worst-case']

    Raises:
        InvalidParameterError: an unknown name.
    """
    words = [w.strip() for w in (only or ()) if w.strip()]
    if not words:
        return tuple(plan)
    names = {a.name for a in plan}
    known = (*SUBJECTS, *SETTINGS, *sorted(names))
    for word in words:
        require(
            word in known,
            "--only",
            "a comma-separated list of "
            + ", ".join((*SUBJECTS, *SETTINGS))
            + " or audit names such as "
            "original-cervical",
            word,
        )
    subjects = {w for w in words if w in SUBJECTS}
    settings = {w for w in words if w in SETTINGS}
    exact = {w for w in words if w in names}
    by_filter = bool(subjects or settings)
    return tuple(
        a
        for a in plan
        if a.name in exact
        or (
            by_filter
            and (not subjects or a.subject in subjects)
            and (not settings or a.setting in settings)
        )
    )
