"""The release kinds: what a round releases to the attacks (the synthetic table, the
noisy answers a generator records, the measurements a plug-in states), their attacks,
checks and words, and :func:`release_for`, the one place a release is chosen.

How a group of rounds is trained and released is :mod:`dpaudit.audit.games.training`
(shared by every release kind, both games and the selections; its names are
re-exported here).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol

import pandas as pd

from dpaudit.audit.config.model import AuditConfig
from dpaudit.audit.config.names import ReleaseKind, TeacherKind
from dpaudit.audit.games.streams import Streams
from dpaudit.audit.games.training import (
    PublicStreams,
    Release,
    compact_claim,
    release,
    sample_all,
    train_and_release,
)
from dpaudit.audit.games.traits import Traits
from dpaudit.data import Domain
from dpaudit.errors import InvalidParameterError
from dpaudit.generators.base import Generator
from dpaudit.rng import Rngs

if TYPE_CHECKING:
    from dpaudit.generators.registry import GeneratorSpec

__all__ = [
    "RELEASE_KINDS",
    "TRANSCRIPT_KINDS",
    "MeasurementRelease",
    "PublicStreams",
    "Release",
    "ReleaseStrategy",
    "RoundSource",
    "TableRelease",
    "TranscriptRelease",
    "attack_options",
    "compact_claim",
    "release",
    "release_for",
    "sample_all",
    "train_and_release",
]


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
