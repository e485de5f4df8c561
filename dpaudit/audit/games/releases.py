"""Releasing a group of rounds: models trained and sampled, one table per batch,
and the release kinds (what a round releases to the attacks).

:func:`train_and_release` trains and samples a list of rounds (one model per round,
each from its own streams) and is shared by both games and by target selection's
pool. The release of a batch is one table (:class:`Release`), sampled in one
generator pass where the generator offers ``sample_many`` and decoded once; per-model
tables are views made for the attacks.

Randomness (docs/soundness.md): with ``public`` streams (the ``fixed_public`` mode,
for generators declaring ``supports_public_randomness``) every model gets the SAME
public streams (one for fit, one for sample) and its round's own privacy streams;
without, each round's streams feed every draw (the ``independent`` game).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol

import pandas as pd

from dpaudit.audit.config.model import AuditConfig
from dpaudit.audit.config.names import ReleaseKind, TeacherKind
from dpaudit.audit.games.streams import Streams
from dpaudit.audit.games.traits import Traits, generator_traits
from dpaudit.data import Domain
from dpaudit.errors import InvalidParameterError
from dpaudit.generators.base import Generator
from dpaudit.rng import Rngs

if TYPE_CHECKING:
    from dpaudit.generators.registry import GeneratorSpec

PublicStreams = tuple[Rngs, Rngs]


def compact_claim(claim: Mapping[str, Any]) -> dict[str, Any]:
    """A round's claim without its per-iteration trace (kept small in the store)."""
    out = {k: v for k, v in claim.items() if k != "trace"}
    trace = claim.get("trace", {})
    out["trace"] = {
        k: trace[k]
        for k in ("records_seen", "records_unused", "reference_note", "delta_used")
        if k in trace
    }
    # A PATE-GAN ledger is a short histogram; a data-dependent G-PATE ledger can be
    # long and is left out of the store.
    if "ledger" in trace and len(json.dumps(trace["ledger"])) < 20_000:
        out["trace"]["ledger"] = trace["ledger"]
    return out


@dataclass(frozen=True, slots=True)
class Release:
    """The releases of ``models`` models of one batch as one table.

    ``table`` holds ``models * rows`` rows: model ``m``'s release is rows ``m * rows``
    to ``(m + 1) * rows - 1``. Per-model frames (:meth:`frames`) are views made only
    at the boundary with code that takes one table per model (the attacks).
    """

    table: pd.DataFrame
    models: int
    rows: int

    def frames(self) -> list[pd.DataFrame]:
        """One table per model (index ``0 .. rows - 1``), sharing ``table``'s data."""
        index = pd.RangeIndex(self.rows)
        out = []
        for m in range(self.models):
            frame = self.table.iloc[m * self.rows : (m + 1) * self.rows]
            frame.index = index
            out.append(frame)
        return out


def sample_all(
    models: Sequence[Any],
    rows: int,
    rngs: Sequence[Rngs],
    *,
    public: Rngs | None,
    name: str = "generator",
) -> Release:
    """The releases of ``models`` (``rows`` rows each, model ``m`` from ``rngs[m]``
    and the shared public stream ``public``) as one :class:`Release`.

    Models whose class offers ``sample_many(models, n, *, rngs, public_rngs)`` (the
    built-ins) are sampled in one generator pass and decoded once; others (plug-ins)
    by one ``sample`` call each. Both give each model what its own ``sample`` gives.

    Raises:
        InvalidParameterError: a model released another number of rows.
    """
    kind = type(models[0]) if models else None
    sample_many = getattr(kind, "sample_many", None)
    publics = None if public is None else [public] * len(models)
    if sample_many is not None and all(type(m) is kind for m in models):
        table = sample_many(list(models), rows, rngs=list(rngs), public_rngs=publics)
        if len(table) != rows * len(models):
            raise InvalidParameterError(
                f"generator {name!r} released {len(table)} rows for {len(models)} "
                f"models; {rows} each were asked for (the release size must be fixed)."
            )
        return Release(
            table=table.reset_index(drop=True), models=len(models), rows=rows
        )
    extra: dict[str, Any] = {} if public is None else {"public_rng": public}
    frames = []
    for model, g in zip(models, rngs):
        frame = model.sample(rows, rng=g, **extra)
        if len(frame) != rows:
            raise InvalidParameterError(
                f"generator {name!r} released {len(frame)} rows; {rows} were asked "
                "for (the release size must be fixed)."
            )
        frames.append(frame)
    table = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    return Release(table=table, models=len(frames), rows=rows)


def train_and_release(
    make_generator: Callable[[], Generator],
    datasets: Sequence[pd.DataFrame],
    round_rngs: Sequence[Rngs],
    *,
    domain: Domain,
    rows: int,
    public: PublicStreams | None,
    name: str = "generator",
) -> tuple[list[Any], Release]:
    """Trains one model per dataset and releases ``rows`` rows from each.

    Args:
        make_generator: a fresh, unfitted generator.
        datasets: each model's training data.
        round_rngs: each model's round stream (split into fit and sample streams by
            :meth:`Streams.fit_and_sample`); in ``fixed_public`` mode these are the
            privacy streams.
        domain: the public domain.
        rows: rows released per model (must be fixed).
        public: ``(fit, sample)`` public streams shared by every model, or ``None``.
        name: the generator's name, for messages.

    Returns:
        ``(models, release)``, in the order of ``datasets``.

    Raises:
        InvalidParameterError: a model released another number of rows.
    """
    split = [Streams.fit_and_sample(r) for r in round_rngs]
    fit_rngs = [f for f, _ in split]
    sample_rngs = [s for _, s in split]
    generator: Any = make_generator()
    many_public: dict[str, Any] = {}
    if public is not None:
        many_public = {"public_rngs": [public[0]] * len(datasets)}
    if not generator_traits(generator).batched:
        return _fit_and_sample_each(
            make_generator,
            datasets,
            fit_rngs,
            sample_rngs,
            domain=domain,
            rows=rows,
            public=public,
            name=name,
        )
    models = generator.fit_many(datasets, domain=domain, rngs=fit_rngs, **many_public)
    released = sample_all(
        models,
        rows,
        sample_rngs,
        public=None if public is None else public[1],
        name=name,
    )
    return list(models), released


def _fit_and_sample_each(
    make_generator: Callable[[], Generator],
    datasets: Sequence[pd.DataFrame],
    fit_rngs: Sequence[Rngs],
    sample_rngs: Sequence[Rngs],
    *,
    domain: Domain,
    rows: int,
    public: PublicStreams | None,
    name: str,
) -> tuple[list[Any], Release]:
    """One model at a time (generators without ``fit_many``: plug-ins in their
    foreign workers): fit, release, then let the worker free the model (``forget``),
    so a worker holds one fitted model, not a batch of them. Each model draws only
    from its own streams, so the releases equal :func:`sample_all`'s."""
    fit_public = {} if public is None else {"public_rng": public[0]}
    sample_public = {} if public is None else {"public_rng": public[1]}
    models: list[Any] = []
    frames = []
    for data, fit_rng, sample_rng in zip(datasets, fit_rngs, sample_rngs):
        model = make_generator().fit(data, domain=domain, rng=fit_rng, **fit_public)
        frame = model.sample(rows, rng=sample_rng, **sample_public)
        if len(frame) != rows:
            raise InvalidParameterError(
                f"generator {name!r} released {len(frame)} rows; {rows} were asked "
                "for (the release size must be fixed)."
            )
        forget = getattr(model, "forget", None)
        if callable(forget):
            forget()
        models.append(model)
        frames.append(frame)
    table = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    return models, Release(table=table, models=len(frames), rows=rows)


def release(
    make_generator: Callable[[], Generator],
    datasets: Sequence[pd.DataFrame],
    round_rngs: Sequence[Rngs],
    *,
    domain: Domain,
    rows: int,
    public: PublicStreams | None,
    name: str = "generator",
) -> tuple[list[Any], list[pd.DataFrame]]:
    """:func:`train_and_release` with one released table per model:
    ``(models, releases)``, in the order of ``datasets``."""
    models, released = train_and_release(
        make_generator,
        datasets,
        round_rngs,
        domain=domain,
        rows=rows,
        public=public,
        name=name,
    )
    return models, released.frames()


def attack_options(name: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """The options of ``options`` that attack ``name`` accepts."""
    from dpaudit.attacks.registry import attack_options as accepted

    allowed = set(accepted(name))
    return {k: v for k, v in options.items() if k in allowed}


class RoundSource(Protocol):
    """What a release needs of the resolved audit
    (:class:`~dpaudit.audit.games.setup.AuditSetup` is one)."""

    @property
    def config(self) -> AuditConfig: ...

    @property
    def without(self) -> pd.DataFrame: ...

    @property
    def with_target(self) -> pd.DataFrame: ...

    @property
    def target(self) -> pd.DataFrame: ...

    @property
    def synthetic_rows(self) -> int: ...

    @property
    def attacks(self) -> tuple[str, ...]: ...

    @property
    def domain(self) -> Domain: ...

    @property
    def randomness(self) -> str: ...

    def make_generator(self) -> Generator: ...

    def public_streams(self) -> PublicStreams | None: ...

    def attack_rngs(self, n: int) -> list[Rngs]: ...


Features = dict[str, Any]
"""Each attack's features of a group of rounds (``features[name][i]``: round ``i``)."""


class TableRelease:
    """A round releases its synthetic table (black box): the dataset's attacks
    featurise it. The default."""

    name: ReleaseKind = "table"
    white_box = False
    feature_width: int | None = None
    """Columns of an attack's features that say whether the release is constant
    (``None``: all)."""
    memory_factor = 1
    """Models' memory, as a multiple of the models trained at once."""

    def __init__(self, teachers: TeacherKind = "trained") -> None:
        self.teachers = teachers
        #: The rounds' teachers are canaries (``--teachers canary``): a white-box
        #: release's own option; a table release's teachers are always trained.
        self.canary_teachers = teachers == "canary"

    def attack_names(
        self, config: AuditConfig, *, worst_case: bool, continuous: bool
    ) -> tuple[str, ...]:
        """The attacks of the audit: ``config.attack`` expanded for the dataset."""
        from dpaudit.attacks.registry import expand_attacks

        return tuple(
            expand_attacks(config.attack, worst_case=worst_case, continuous=continuous)
        )

    def make_attacks(self, setup: RoundSource) -> dict[str, Any]:
        """The attacks, each from its own stream (disjoint from the rounds')."""
        from dpaudit.attacks.registry import ATTACK_NAMES, make_attack

        rngs = setup.attack_rngs(len(ATTACK_NAMES))
        options = setup.config.attack_options
        return {
            name: make_attack(
                name,
                domain=setup.domain,
                target=setup.target,
                rng=rngs[ATTACK_NAMES.index(name)],
                **attack_options(name, options),
            )
            for name in setup.attacks
        }

    def canary(self, setup: RoundSource) -> pd.DataFrame | None:
        """The record canary teachers vote for (none: teachers as trained)."""
        return None

    def generator_options(self, options: Any, target: pd.DataFrame) -> dict[str, Any]:
        """The generator's options under this release (``options`` as they are)."""
        return dict(options)

    def release_group(
        self,
        setup: RoundSource,
        datasets: Sequence[pd.DataFrame],
        round_rngs: Sequence[Rngs],
        make_generator: Callable[[], Generator],
    ) -> tuple[list[Any], Features]:
        """Trains one model per dataset and releases it to the attacks:
        ``(models, features)``."""
        models, released = train_and_release(
            make_generator,
            datasets,
            round_rngs,
            domain=setup.domain,
            rows=setup.synthetic_rows,
            public=setup.public_streams(),
            name=setup.config.generator,
        )
        frames = released.frames()
        attacks = self.make_attacks(setup)
        return models, {name: a.featurize(frames) for name, a in attacks.items()}

    def check(self, setup: RoundSource, traits: Traits) -> None:
        """Refuses, before anything is written, an audit this release cannot run."""

    def describe(self, config: AuditConfig) -> str | None:
        """What a round released, in words; ``None`` for the synthetic table."""
        return None

    def summarise(self, setup: Any, store: Any, **analysed: Any) -> Any:
        """The result's section of this release kind (``None``: none); ``analysed``:
        the headline ``head``, the ``claim`` and the per-attack ``alpha``."""
        return None


class TranscriptRelease(TableRelease):
    """A round releases every noisy answer of the generator's private mechanism
    (white box: PATE-GAN's noisy votes, G-PATE's Confident-GNMax answers), attacked
    by the exact likelihood-ratio test (docs/soundness.md, "The transcript
    release"); with canary teachers, the adversary's teachers replace teacher
    training ("Canary teachers")."""

    name: ReleaseKind = "transcript"
    white_box = True
    # The likelihood ratio (column 0) equal in every round: every transcript was as
    # likely in both worlds.
    feature_width = 1
    # The replay of a group's transcripts in both worlds (2 x the group).
    memory_factor = 3

    def __init__(
        self, teachers: TeacherKind = "trained", *, words: tuple[str, str]
    ) -> None:
        super().__init__(teachers)
        #: What a transcript holds and what a canary teacher votes, in words (the
        #: generator's registry entry: ``GeneratorSpec.transcript_words``).
        self.words = words

    def attack_names(
        self, config: AuditConfig, *, worst_case: bool, continuous: bool
    ) -> tuple[str, ...]:
        from dpaudit.attacks.likelihood_ratio import LIKELIHOOD_RATIO

        return (LIKELIHOOD_RATIO,)

    def make_attacks(self, setup: RoundSource) -> dict[str, Any]:
        from dpaudit.attacks.likelihood_ratio import (
            LIKELIHOOD_RATIO,
            LikelihoodRatioAttack,
        )

        public = setup.public_streams()
        assert public is not None  # refused by check()
        return {
            LIKELIHOOD_RATIO: LikelihoodRatioAttack(
                generator=setup.make_generator(),  # type: ignore[arg-type]
                domain=setup.domain,
                without=setup.without,
                with_target=setup.with_target,
                public_rng=public[0],
                canary=self.canary(setup),
            )
        }

    def canary(self, setup: RoundSource) -> pd.DataFrame | None:
        return setup.target if self.canary_teachers else None

    def release_group(
        self,
        setup: RoundSource,
        datasets: Sequence[pd.DataFrame],
        round_rngs: Sequence[Rngs],
        make_generator: Callable[[], Generator],
    ) -> tuple[list[Any], Features]:
        """Each model trained with its transcript recorded (every noisy answer; the
        model is the one :func:`train_and_release` trains), then the
        likelihood-ratio attack replays the group's transcripts in both worlds. No
        table is sampled: the transcript is the whole release."""
        public = setup.public_streams()
        assert public is not None  # refused by check()
        fit_rngs = [Streams.fit_and_sample(r)[0] for r in round_rngs]
        generator: Any = make_generator()
        models, transcripts = generator.fit_many_with_transcripts(
            datasets,
            domain=setup.domain,
            rngs=fit_rngs,
            public_rngs=[public[0]] * len(datasets),
            canary=self.canary(setup),
        )
        attacks = self.make_attacks(setup)
        return list(models), {
            name: a.featurize_transcripts(transcripts) for name, a in attacks.items()
        }

    def check(self, setup: RoundSource, traits: Traits) -> None:
        """Refuses a generator that records no transcript (plug-ins, adapters), a
        configuration without one (PATE-GAN's ``single_discriminator`` has no
        votes), or a game without fixed public randomness (the attack replays
        under it)."""
        name = setup.config.generator
        support = traits.transcript_support
        if support is None:
            raise InvalidParameterError(
                f"`release` transcript needs a generator that records its noisy "
                f"answers (dpaudit's pategan and gpate); {name!r} does not: use "
                "--release table."
            )
        reason = support(canary=self.canary_teachers)
        if reason is not None:
            raise InvalidParameterError(
                f"`release` transcript: {reason}; use --release table."
            )
        if setup.randomness != "fixed_public":
            raise InvalidParameterError(
                f"`release` transcript needs fixed public randomness, which {name!r} "
                "does not declare: use --release table."
            )

    def describe(self, config: AuditConfig) -> str | None:
        holds, votes = self.words
        teachers = (
            f"canary teachers: the adversary's, {votes}"
            if self.canary_teachers
            else "the teachers as trained"
        )
        return (
            f"transcript: {holds}, attacked by the exact likelihood ratio; {teachers}"
        )


class MeasurementRelease(TableRelease):
    """A round releases the noisy measurements a plug-in or adapter states
    (``privacy_transcript``, docs/plugins.md), attacked by the exact likelihood
    ratio under the stated noise; fits nothing, samples nothing (docs/soundness.md,
    "The measurement transcript"; the machinery: :mod:`.measurements`)."""

    name: ReleaseKind = "transcript"
    white_box = True
    feature_width = 1  # the log-likelihood ratio

    def canary(self, setup: RoundSource) -> pd.DataFrame | None:
        return setup.target if self.canary_teachers else None

    def generator_options(self, options: Any, target: pd.DataFrame) -> dict[str, Any]:
        from dpaudit.audit.games.measurements import canary_options

        return canary_options(options, target if self.canary_teachers else None)

    def attack_names(
        self, config: AuditConfig, *, worst_case: bool, continuous: bool
    ) -> tuple[str, ...]:
        from dpaudit.attacks.measurements import MEASUREMENT_RATIO

        return (MEASUREMENT_RATIO,)

    def make_attacks(self, setup: RoundSource) -> dict[str, Any]:
        from dpaudit.attacks.measurements import MEASUREMENT_RATIO, MeasurementAttack

        return {
            MEASUREMENT_RATIO: MeasurementAttack(
                without=setup.without,
                with_target=setup.with_target,
                delta=setup.config.delta,
            )
        }

    def release_group(
        self,
        setup: RoundSource,
        datasets: Sequence[pd.DataFrame],
        round_rngs: Sequence[Rngs],
        make_generator: Callable[[], Generator],
    ) -> tuple[list[Any], Features]:
        from dpaudit.audit.games.measurements import fit_and_read

        models, transcripts = fit_and_read(setup, datasets, round_rngs, make_generator)
        attacks = self.make_attacks(setup)
        return models, {
            name: a.featurize_transcripts(transcripts) for name, a in attacks.items()
        }

    def check(self, setup: RoundSource, traits: Traits) -> None:
        from dpaudit.audit.games.measurements import check_measurements

        check_measurements(setup.config, traits, canary=self.canary_teachers)

    def describe(self, config: AuditConfig) -> str | None:
        from dpaudit.audit.games.measurements import describe

        return describe(canary=self.canary_teachers)

    def summarise(self, setup: Any, store: Any, **analysed: Any) -> Any:
        from dpaudit.audit.games.measurements import summarise

        return summarise(setup, store, **analysed)


ReleaseStrategy = TableRelease
"""A release kind (:class:`TableRelease` and its subclasses)."""

TRANSCRIPT_KINDS: Mapping[
    str, Callable[[AuditConfig, GeneratorSpec], ReleaseStrategy]
] = MappingProxyType(
    {
        "replay": lambda config, spec: TranscriptRelease(
            config.teachers, words=spec.transcript_words
        ),
        "measurements": lambda config, spec: MeasurementRelease(config.teachers),
    }
)
"""``--release transcript`` for a generator, by its spec's ``transcript``."""


RELEASE_KINDS: Mapping[str, Callable[[AuditConfig, GeneratorSpec], ReleaseStrategy]] = (
    MappingProxyType(
        {
            "table": lambda config, spec: TableRelease(),
            "transcript": lambda c, spec: TRANSCRIPT_KINDS[spec.transcript](c, spec),
        }
    )
)
"""A release's name (``--release``) -> its kind for a configuration and its
generator's registry entry. A new release kind is a class here and one entry."""


def release_for(
    config: AuditConfig, spec: GeneratorSpec | None = None
) -> ReleaseStrategy:
    """The release kind of ``config``: the one place it is chosen. ``spec``: the
    generator's registry entry as the audit resolved it (:mod:`.resolved`); a
    transcript's is looked up where not given (a report of a stored result)."""
    if spec is None and config.release == "transcript":
        from dpaudit.generators.registry import get_spec

        spec = get_spec(config.generator)
    return RELEASE_KINDS[config.release](config, spec)  # type: ignore[arg-type]
