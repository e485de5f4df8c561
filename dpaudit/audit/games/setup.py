"""The audit's setup: the data, the target, the neighbouring pair, derived settings.

:func:`build_setup` turns an :class:`~dpaudit.audit.config.model.AuditConfig` whose target
is resolved (a row, a record, or the dataset's default; ``"auto"`` is resolved first
by :func:`dpaudit.audit.games.two_world.selection.resolve_target`) into an :class:`AuditSetup`, the
deterministic input every worker rebuilds from the config.

Soundness (docs/soundness.md): the generator gets the public domain (rule 2); the
number of released rows is fixed by the configuration and equal in both worlds (rule
3); teacher counts are fixed from |D| for both worlds.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import pandas as pd

from dpaudit.audit.config.model import AuditConfig
from dpaudit.audit.games.looks import audit_looks
from dpaudit.audit.games.plan import GamePlan
from dpaudit.audit.games.releases import ReleaseStrategy
from dpaudit.audit.games.resolved import ResolvedAudit, resolve
from dpaudit.audit.games.streams import Streams
from dpaudit.audit.result.selection import PublicCandidate
from dpaudit.data import Dataset, Domain, load_dataset
from dpaudit.datasets.names import WORST_CASE_NAMES
from dpaudit.errors import InvalidParameterError
from dpaudit.generators.base import Generator
from dpaudit.rng import Rngs
from dpaudit.worst_case.datasets import neighbouring_pair, worst_case_target


@dataclass(frozen=True, kw_only=True)
class AuditSetup:
    """What every job needs, rebuilt deterministically from the config."""

    config: AuditConfig
    dataset: Dataset
    without: pd.DataFrame  # D
    with_target: pd.DataFrame  # D ∪ {target}
    target: pd.DataFrame  # one row
    target_index: int | None
    target_selection: tuple[tuple[int, float], ...] | None
    public_selection: tuple[PublicCandidate, ...] | None
    synthetic_rows: int
    generator_options: Mapping[str, Any]
    attacks: tuple[str, ...]
    plan: GamePlan
    release: ReleaseStrategy
    #: What the audit runs, resolved once (:mod:`~dpaudit.audit.games.resolved`):
    #: the release, the attacks, the rows and the options above are its.
    resolved: ResolvedAudit
    #: Bytes the transcripts one worker holds at once may take (the game sets it
    #: from its memory plan: :func:`~dpaudit.audit.games.memory.transcript_memory`;
    #: ``None``: no limit can be read). A larger transcript is refused on the first
    #: fit that states it, before its round is stored.
    transcript_memory: int | None = None

    @property
    def domain(self) -> Domain:
        return self.dataset.domain

    def make_generator(self) -> Generator:
        return self.resolved.build(self.generator_options)

    def make_attacks(self) -> dict[str, Any]:
        """The audit's attacks (its release kind's)."""
        return self.release.make_attacks(self)

    def attack_rngs(self, n: int) -> list[Rngs]:
        """Streams for the attacks, disjoint from the rounds'."""
        return self.plan.attack_rngs(n)

    @property
    def canary(self) -> pd.DataFrame | None:
        """The target record, when the transcript's teachers are canaries."""
        return self.release.canary(self)

    def supports_public_randomness(self) -> bool:
        """Whether the generator declares ``supports_public_randomness``."""
        return self.resolved.traits().public_randomness

    @property
    def randomness(self) -> str:
        """The mode actually used: ``fixed_public`` only where asked for and the
        generator declares support, else ``independent``."""
        fixed = (
            self.config.randomness == "fixed_public"
            and self.supports_public_randomness()
        )
        return "fixed_public" if fixed else "independent"

    def public_streams(self) -> tuple[Rngs, Rngs] | None:
        """The audit's ``(fit, sample)`` public streams in ``fixed_public`` mode."""
        if self.randomness != "fixed_public":
            return None
        return Streams(self.config.seed).public_candidate(int(self.config.public_seed))


def load_audit_data(config: AuditConfig) -> Dataset:
    """``config``'s dataset and domain, loaded and cast (once per audit: the
    selection phases and :func:`build_setup` take it as an argument)."""
    return load_dataset(
        config.dataset,
        domain=config.domain,
        data_dir=config.data_dir,
        rows=config.dataset_rows,
    )


def build_setup(
    config: AuditConfig,
    *,
    target_selection: tuple[tuple[int, float], ...] | None = None,
    public_selection: tuple[PublicCandidate, ...] | None = None,
    dataset: Dataset | None = None,
    resolved: ResolvedAudit | None = None,
) -> AuditSetup:
    """Loads the data, takes the target and fixes every derived setting
    (:func:`assemble_setup`), then builds the generator and checks it
    (:func:`check_generator`).

    Args:
        config: the audit; ``target`` must not be ``"auto"`` (resolve it first with
            :func:`dpaudit.audit.games.two_world.selection.resolve_target`).
        target_selection: the ranking that chose ``config.target``, recorded in the
            result.
        public_selection: the ranking that chose ``config.public_seed``, recorded in
            the result.
        dataset: ``config``'s dataset, already loaded (:func:`load_audit_data`): an
            audit loads and casts its data once and hands it to each phase.
        resolved: the audit as resolved once (:func:`~.resolved.resolve`);
            resolved here where not given.

    Raises:
        InvalidParameterError: on bad input, before anything is written.
    """
    if config.target == "auto" and config.target_record is None:
        raise InvalidParameterError(
            "`target` must be resolved before the setup is built (run_audit resolves "
            "'auto' with dpaudit.audit.games.two_world.selection.resolve_target). Got 'auto'."
        )
    if config.public_seed == "auto":
        raise InvalidParameterError(
            "`public_seed` must be resolved before the setup is built (run_audit "
            "resolves 'auto' with dpaudit.audit.games.two_world.selection.resolve_public_seed). Got "
            "'auto'."
        )
    if dataset is None:
        dataset = load_audit_data(config)
    setup = assemble_setup(
        config,
        dataset=dataset,
        target_selection=target_selection,
        public_selection=public_selection,
        resolved=resolved,
    )
    check_generator(setup)
    return setup


def assemble_setup(
    config: AuditConfig,
    *,
    dataset: Dataset,
    target_selection: tuple[tuple[int, float], ...] | None = None,
    public_selection: tuple[PublicCandidate, ...] | None = None,
    resolved: ResolvedAudit | None = None,
) -> AuditSetup:
    """:func:`build_setup` without the generator: the target, the neighbouring pair
    and every derived setting, checked in this process (no worker starts).

    Raises:
        InvalidParameterError: on bad input.
    """
    domain = dataset.domain
    target_index: int | None = None
    if config.target_record is not None:
        target = pd.DataFrame([dict(config.target_record)])
        base = dataset.train
    elif config.target is None and dataset.name in WORST_CASE_NAMES:
        target = worst_case_target(domain)
        base = dataset.train
    elif config.target is None:
        raise InvalidParameterError(
            f"dataset {dataset.name!r} needs a target: pass --target ROW, --target auto "
            "or --target-record JSON."
        )
    else:
        target_index = int(config.target)
        if target_index >= len(dataset.train):
            raise InvalidParameterError(
                f"`target` must be a row index below {len(dataset.train)}. "
                f"Got {target_index}."
            )
        target = dataset.train.iloc[[target_index]].reset_index(drop=True)
        base = dataset.train.drop(index=dataset.train.index[target_index])
    without, with_target = neighbouring_pair(base, target, domain=domain)
    target = with_target.iloc[[-1]].reset_index(drop=True)
    if resolved is None:
        resolved = resolve(config, dataset=dataset)
    release = resolved.release
    return AuditSetup(
        config=config,
        resolved=resolved,
        release=release,
        dataset=dataset,
        without=without,
        with_target=with_target,
        target=target,
        target_index=target_index,
        target_selection=target_selection,
        public_selection=public_selection,
        synthetic_rows=resolved.synthetic_rows,
        generator_options=release.generator_options(resolved.generator_options, target),
        attacks=resolved.attacks,
        plan=GamePlan.create(
            rounds=config.rounds,
            split=config.fractions,
            seed=config.seed,
            looks=audit_looks(config).per_world if config.sequential else (),
        ),
    )


def check_generator(setup: AuditSetup) -> None:
    """Builds ``setup``'s generator and lets the release check it: bad options and a
    plug-in that breaks its contract are refused here, before anything trains. For a
    plug-in this starts its first worker process (the import runs there), so
    :func:`draft_setup`'s checks, which need none, come first.

    Raises:
        InvalidParameterError, PluginError: the generator cannot be audited so.
    """
    if "canary" in setup.generator_options:
        # A generator that cannot take canary teachers is refused as such, before
        # its options are checked with the target record among them.
        options = dict(setup.generator_options)
        del options["canary"]
        plain = replace(setup, generator_options=options)
        setup.release.check(plain, setup.resolved.traits(plain.make_generator()))
    generator = setup.make_generator()  # refuses bad options now, not in training
    setup.release.check(setup, setup.resolved.traits(generator))


def draft_setup(
    config: AuditConfig, *, dataset: Dataset, resolved: ResolvedAudit | None = None
) -> AuditSetup:
    """``config``'s setup for checking, built in this process without any worker.

    Every check of :func:`build_setup` but the generator's runs here (the target, the
    neighbouring pair, the release size, the attacks, the plan), so the audit refuses
    such input before a plug-in's worker starts. ``"auto"`` settings are not
    resolved (that trains models): the draft takes row 0 for ``target = "auto"`` (the
    checks that depend on which row is chosen wait for the choice) and candidate 0
    for ``public_seed = "auto"``.

    Raises:
        InvalidParameterError: bad input.
    """
    if config.target == "auto" and config.target_record is None:
        config = replace(config, target=0)
    if config.public_seed == "auto":
        config = replace(config, public_seed=0)
    return assemble_setup(config, dataset=dataset, resolved=resolved)


#: The audits resolved in this process, by JSON config (the last few): a worker
#: thread's setup reads its audit's own resolution (:func:`register_resolved`).
_RESOLVED: dict[str, ResolvedAudit] = {}


def register_resolved(config_json: str, resolved: ResolvedAudit) -> None:
    """Lets :func:`cached_setup` of ``config_json`` in this process use ``resolved``
    (the audit's own: the registry is consulted once per audit, not per worker
    thread; a worker process resolves once itself)."""
    _RESOLVED[config_json] = resolved
    while len(_RESOLVED) > 4:
        del _RESOLVED[next(iter(_RESOLVED))]


@functools.lru_cache(maxsize=4)
def cached_setup(config_json: str) -> AuditSetup:
    """:func:`build_setup` of a JSON config, cached per worker process."""
    config = AuditConfig.from_mapping(json.loads(config_json))
    return build_setup(config, resolved=_RESOLVED.get(config_json))


@functools.lru_cache(maxsize=4)
def cached_round_rngs(config_json: str) -> list[Rngs]:
    """Every round's stream of a JSON config, cached per worker process."""
    return cached_setup(config_json).plan.round_rngs()
