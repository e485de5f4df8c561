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
from dataclasses import dataclass
from typing import Any

import pandas as pd

from dpaudit.attacks.likelihood_ratio import LIKELIHOOD_RATIO, LikelihoodRatioAttack
from dpaudit.attacks.registry import ATTACK_NAMES, expand_attacks, make_attack
from dpaudit.audit.config.model import AuditConfig
from dpaudit.audit.games.looks import audit_looks
from dpaudit.audit.games.plan import GamePlan
from dpaudit.audit.games.streams import Streams
from dpaudit.data import Dataset, Domain, load_dataset
from dpaudit.datasets.names import WORST_CASE_NAMES
from dpaudit.errors import InvalidParameterError
from dpaudit.generators.base import Generator
from dpaudit.generators.registry import audit_options, generator_factory
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
    public_selection: tuple[tuple[int, float], ...] | None
    synthetic_rows: int
    generator_options: Mapping[str, Any]
    attacks: tuple[str, ...]
    plan: GamePlan

    @property
    def domain(self) -> Domain:
        return self.dataset.domain

    def make_generator(self) -> Generator:
        cfg = self.config
        factory = generator_factory(cfg.generator, worker=cfg.worker_options())
        return factory(epsilon=cfg.epsilon, delta=cfg.delta, **self.generator_options)

    def make_attacks(self) -> dict[str, Any]:
        if self.config.release == "transcript":
            public = self.public_streams()
            assert public is not None  # refused in build_setup
            return {
                LIKELIHOOD_RATIO: LikelihoodRatioAttack(
                    generator=self.make_generator(),  # type: ignore[arg-type]
                    domain=self.domain,
                    without=self.without,
                    with_target=self.with_target,
                    public_rng=public[0],
                    canary=self.canary,
                )
            }
        rngs = self.plan.attack_rngs(len(ATTACK_NAMES))
        return {
            name: make_attack(
                name,
                domain=self.domain,
                target=self.target,
                rng=rngs[ATTACK_NAMES.index(name)],
                **attack_options(name, self.config.attack_options),
            )
            for name in self.attacks
        }

    @property
    def canary(self) -> pd.DataFrame | None:
        """The target record, when the transcript's teachers are canaries."""
        return self.target if self.config.teachers == "canary" else None

    def supports_public_randomness(self) -> bool:
        """Whether the generator declares ``supports_public_randomness``."""
        return bool(getattr(self.make_generator(), "supports_public_randomness", False))

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


def attack_options(name: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """The options of ``options`` that attack ``name`` accepts."""
    from dpaudit.attacks.registry import attack_options as accepted

    allowed = set(accepted(name))
    return {k: v for k, v in options.items() if k in allowed}


def audit_generator_options(
    config: AuditConfig, *, n_rows: int, worst_case: bool
) -> dict[str, Any]:
    """The generator options an audit uses, for ``|D| = n_rows``.

    The generator registry holds each generator's audit defaults
    (:func:`dpaudit.generators.registry.audit_options`): device, variant and bug
    flags; teachers from ``|D|`` (fixed for both worlds: a k that changed with the
    target's presence would itself leak membership); the study's lambda and iteration
    caps (100 on the worst case, 1,000 on real data); small-table noise calibration.
    Options the user set win.
    """
    return audit_options(
        config.generator,
        config.generator_options,
        n_rows=n_rows,
        worst_case=worst_case,
        epsilon=config.epsilon,
        delta=config.delta,
        device=config.device,
        variant=config.variant,
        bugs=config.bugs,
    )


def load_audit_data(config: AuditConfig) -> Dataset:
    """``config``'s dataset and domain, loaded and cast (once per audit: the
    selection phases and :func:`build_setup` take it as an argument)."""
    return load_dataset(
        config.dataset,
        domain=config.domain,
        data_dir=config.data_dir,
        rows=config.dataset_rows,
    )


def release_rows(config: AuditConfig, *, n_rows: int, worst_case: bool) -> int:
    """Rows released per round: the configured number, else 100 on the worst case
    and ``|D|`` otherwise (equal in both worlds)."""
    return config.synthetic_rows or (100 if worst_case else n_rows)


def build_setup(
    config: AuditConfig,
    *,
    target_selection: tuple[tuple[int, float], ...] | None = None,
    public_selection: tuple[tuple[int, float], ...] | None = None,
    dataset: Dataset | None = None,
) -> AuditSetup:
    """Loads the data, takes the target and fixes every derived setting.

    Args:
        config: the audit; ``target`` must not be ``"auto"`` (resolve it first with
            :func:`dpaudit.audit.games.two_world.selection.resolve_target`).
        target_selection: the ranking that chose ``config.target``, recorded in the
            result.
        public_selection: the ranking that chose ``config.public_seed``, recorded in
            the result.
        dataset: ``config``'s dataset, already loaded (:func:`load_audit_data`): an
            audit loads and casts its data once and hands it to each phase.

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
    worst_case = dataset.name in WORST_CASE_NAMES
    continuous = dataset.name == WORST_CASE_NAMES[1]
    setup = AuditSetup(
        config=config,
        dataset=dataset,
        without=without,
        with_target=with_target,
        target=target,
        target_index=target_index,
        target_selection=target_selection,
        public_selection=public_selection,
        synthetic_rows=release_rows(config, n_rows=len(without), worst_case=worst_case),
        generator_options=audit_generator_options(
            config, n_rows=len(without), worst_case=worst_case
        ),
        attacks=(
            (LIKELIHOOD_RATIO,)
            if config.release == "transcript"
            else tuple(
                expand_attacks(
                    config.attack, worst_case=worst_case, continuous=continuous
                )
            )
        ),
        plan=GamePlan.create(
            rounds=config.rounds,
            split=config.split,
            seed=config.seed,
            looks=audit_looks(config).per_world if config.sequential else (),
        ),
    )
    generator = setup.make_generator()  # refuses bad options now, not in a worker
    if config.release == "transcript":
        check_transcript_release(setup, generator)
    return setup


def check_transcript_release(setup: AuditSetup, generator: Generator) -> None:
    """Refuses ``release = "transcript"`` where no transcript can be audited: a
    generator that records none (plug-ins, adapters), a configuration without one
    (PATE-GAN's ``single_discriminator`` has no votes),
    or a game without fixed public randomness (the attack replays under it).

    Raises:
        InvalidParameterError: naming the reason and the fix.
    """
    name = setup.config.generator
    support = getattr(generator, "transcript_support", None)
    if support is None:
        raise InvalidParameterError(
            f"`release` transcript needs a generator that records its noisy answers "
            f"(dpaudit's pategan and gpate); {name!r} does not: use --release table."
        )
    reason = support(canary=setup.config.teachers == "canary")
    if reason is not None:
        raise InvalidParameterError(
            f"`release` transcript: {reason}; use --release table."
        )
    if setup.randomness != "fixed_public":
        raise InvalidParameterError(
            f"`release` transcript needs fixed public randomness, which {name!r} "
            "does not declare: use --release table."
        )


@functools.lru_cache(maxsize=4)
def cached_setup(config_json: str) -> AuditSetup:
    """:func:`build_setup` of a JSON config, cached per worker process."""
    return build_setup(AuditConfig.from_mapping(json.loads(config_json)))


@functools.lru_cache(maxsize=4)
def cached_round_rngs(config_json: str) -> list[Rngs]:
    """Every round's stream of a JSON config, cached per worker process."""
    return cached_setup(config_json).plan.round_rngs()
