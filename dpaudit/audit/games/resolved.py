"""The audit resolved once: what it will run, from the settings, the generator's
registry entry and the release.

:func:`resolve` (two-world: from the loaded table) and :func:`resolve_one_run` (from
the canaries' design) build a :class:`ResolvedAudit`: the generator's registry entry,
looked up once per audit (:func:`lookup`), its capabilities (batched training, a
trace switch, what its transcript is), the release kind, the attacks, the rows
(``|D|``, the rows a model trains on, the rows released), the encoded width and the
generator's options. The setup (:mod:`.setup`), the memory plan (:mod:`.memory`),
the execution plan (:mod:`.execution`), the games and the release checks read this
one object, so they cannot disagree on what the audit runs.

What a generator *object* declares (public randomness, canary teachers, a transcript
it records or hands over) is read here and nowhere else (:func:`generator_traits`),
once per audit (:meth:`ResolvedAudit.traits`): for a plug-in that starts its worker,
so it is read when the generator is first built, after every check that needs no
worker.

Worker processes (``--backend loky`` or ``dask``) rebuild the setup from the
configuration and resolve it once per process; threads share the audit's own
(:func:`~dpaudit.audit.games.setup.register_resolved`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from dpaudit.audit.config.model import AuditConfig
from dpaudit.audit.games.lookup import lookup
from dpaudit.audit.games.releases import ReleaseStrategy, release_for
from dpaudit.audit.games.rows import audit_generator_options, release_rows
from dpaudit.audit.games.traits import Traits, generator_traits
from dpaudit.datasets.names import WORST_CASE_NAMES
from dpaudit.generators.base import Generator
from dpaudit.generators.registry import GeneratorSpec

if TYPE_CHECKING:
    from dpaudit.data import Dataset
    from dpaudit.generators.base import GeneratorFactory
    from dpaudit.worst_case.canaries import CanaryDesign

__all__ = [
    "ResolvedAudit",
    "Traits",
    "generator_traits",
    "lookup",
    "resolve",
    "resolve_one_run",
]


@dataclass(frozen=True, kw_only=True)
class ResolvedAudit:
    """What the audit will run, resolved once (module docstring).

    Attributes:
        config: the settings it was resolved from (``target = "auto"`` and
            ``public_seed = "auto"`` may be chosen later: neither changes what is
            resolved here).
        spec: the generator's registry entry.
        release: the release kind (:func:`~.releases.release_for`).
        attacks: the attacks of the release, expanded for the dataset (none in the
            one-run game: it scores its canaries).
        worst_case, continuous: the dataset is a worst case (the continuous one).
        n_rows: ``|D|`` the generator's options are sized for.
        train_rows: the most rows one model trains on (``|D u {target}|``; one-run:
            the base and every canary).
        columns: the table's columns.
        width: the domain's encoded width.
        synthetic_rows: rows released per model.
        generator_options: the generator's options (the registry's audit defaults
            and the user's; the release adds its own: canary teachers).
        batched: the generator trains several models as one program (``fit_many``).
    """

    config: AuditConfig
    spec: GeneratorSpec
    release: ReleaseStrategy
    attacks: tuple[str, ...]
    worst_case: bool
    continuous: bool
    n_rows: int
    train_rows: int
    columns: int
    width: int
    synthetic_rows: int
    generator_options: Mapping[str, Any]
    batched: bool
    factory: GeneratorFactory = field(repr=False)
    _traits: dict[str, Traits] = field(default_factory=dict, repr=False, compare=False)

    @property
    def foreign(self) -> bool:
        """The generator runs in foreign worker processes (plug-ins, adapters)."""
        return self.spec.plugin

    @property
    def trace_switch(self) -> str | None:
        """The option that makes training record its trace (None: it records none)."""
        return self.spec.trace_switch

    @property
    def written(self) -> str:
        """What the audit writes in its output folder, in words: the one-run game
        only ``result.json``; the two-world game its store too, and ``trace/`` for
        a generator that records a training trace."""
        if self.config.game == "one-run":
            return "result.json only, once the result exists"
        if self.trace_switch is None:
            return "result.json and audit.sqlite"
        return "result.json, audit.sqlite and trace/"

    @property
    def transcript(self) -> str:
        """What ``--release transcript`` is for it: ``replay`` or ``measurements``."""
        return self.spec.transcript

    def build(self, options: Mapping[str, Any] | None = None) -> Generator:
        """A fresh, unfitted generator with ``options`` (default: the resolved
        ones); bad options are refused here."""
        chosen = self.generator_options if options is None else options
        config = self.config
        return self.factory(epsilon=config.epsilon, delta=config.delta, **chosen)

    def traits(self, generator: object | None = None) -> Traits:
        """The generator object's capabilities, read once per audit (from
        ``generator`` where given, else from one built with the resolved options:
        for a plug-in that starts its worker)."""
        if "traits" not in self._traits:
            built = self.build() if generator is None else generator
            self._traits["traits"] = generator_traits(built)
        return self._traits["traits"]

    def model_bytes(
        self, generator: object, *, rows: int, width: int, released: int
    ) -> int:
        """One model's memory in training: the registry entry's figure
        (``GeneratorSpec.model_memory``) times the release's memory factor
        (``--release transcript`` replays the group's transcripts in both worlds).
        The one figure of the memory plan and of a CUDA batch."""
        per_model = self.spec.model_bytes(
            generator, rows=rows, width=width, released=released
        )
        return per_model * self.release.memory_factor


def _resolved(
    config: AuditConfig,
    spec: GeneratorSpec,
    *,
    worst_case: bool,
    continuous: bool,
    n_rows: int,
    train_rows: int,
    columns: int,
    width: int,
    synthetic_rows: int,
    two_world: bool,
) -> ResolvedAudit:
    release = release_for(config, spec)
    attacks = (
        release.attack_names(config, worst_case=worst_case, continuous=continuous)
        if two_world
        else ()
    )
    return ResolvedAudit(
        config=config,
        spec=spec,
        release=release,
        attacks=attacks,
        worst_case=worst_case,
        continuous=continuous,
        n_rows=n_rows,
        train_rows=train_rows,
        columns=columns,
        width=max(1, width),
        synthetic_rows=synthetic_rows,
        generator_options=audit_generator_options(
            config, spec, n_rows=n_rows, worst_case=worst_case
        ),
        batched=spec.batched,
        factory=spec.make_factory(worker=config.worker_options()),
    )


def resolve(
    config: AuditConfig, *, dataset: Dataset, spec: GeneratorSpec | None = None
) -> ResolvedAudit:
    """The two-world audit of ``config`` on ``dataset`` (its table loaded), resolved.

    ``|D|`` is the table less the target's row where the target is one of its rows
    (``--target ROW`` or ``auto``), else the table (a worst case's default target,
    ``--target-record``): the setup's neighbouring pair. ``spec``: the registry
    entry where the caller looked it up (:func:`lookup`) already.

    Raises:
        InvalidParameterError, PluginError: an unknown generator, bad variant or
            bug flags, attacks the dataset has not.
    """
    spec = lookup(config) if spec is None else spec
    worst_case = dataset.name in WORST_CASE_NAMES
    picks_row = config.target_record is None and config.target is not None
    n_rows = max(1, len(dataset.train) - (1 if picks_row else 0))
    return _resolved(
        config,
        spec,
        worst_case=worst_case,
        continuous=dataset.name == WORST_CASE_NAMES[1],
        n_rows=n_rows,
        train_rows=n_rows + 1,
        columns=len(dataset.train.columns),
        width=dataset.domain.encoded_dim,
        synthetic_rows=release_rows(config, n_rows=n_rows, worst_case=worst_case),
        two_world=True,
    )


def resolve_one_run(
    config: AuditConfig, *, design: CanaryDesign, spec: GeneratorSpec | None = None
) -> ResolvedAudit:
    """The one-run audit of ``config`` with the canaries' ``design``, resolved.

    The options are sized for the expected table (the base and half the canaries),
    so nothing about the generator depends on which canaries were included; a fit
    trains on at most the base and every canary; it releases ``synthetic_rows``, by
    default as many rows.
    """
    spec = lookup(config) if spec is None else spec
    base = len(design.base)
    return _resolved(
        config,
        spec,
        worst_case=True,
        continuous=config.dataset == WORST_CASE_NAMES[1],
        n_rows=base + config.canaries // 2,
        train_rows=base + config.canaries,
        columns=len(design.base.columns),
        width=design.domain.encoded_dim,
        synthetic_rows=config.synthetic_rows or base + config.canaries,
        two_world=False,
    )
