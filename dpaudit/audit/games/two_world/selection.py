"""Resolving ``--target auto``: the audit's side of target selection.

:func:`resolve_target` runs before the setup is built: it ranks the candidates of
:func:`dpaudit.worst_case.targets.candidate_targets` with one shared pool of models
(:func:`dpaudit.worst_case.targets.score_candidates`) trained with the audit's
generator, options, release size and randomness mode, and returns the config with the
chosen row. The pool has ``2 * selection_rounds`` models and draws only from
:meth:`Streams.selection`, a stream disjoint from the final game's rounds, plan,
attacks and public streams (docs/soundness.md).

:func:`resolve_public_seed` resolves ``--public-seed auto`` the same way: after the
target is known, each of ``public_candidates`` public randomness candidates trains
``2 * selection_rounds`` models on the audit's own pair of datasets (fresh privacy
streams of :meth:`Streams.public_selection`, the same for every candidate), and the
candidate under which the audit's attacks separate the worlds best becomes the
audit's fixed public randomness (docs/soundness.md, "Choosing the public
randomness"). On a transcript release (canary teachers) the candidates are ranked
instead by the exact privacy of the canary transcript under each, without selection
rounds (:mod:`.exact_selection`).

Both show progress the way the audit's training does (:func:`progress_bar`, a tqdm
bar on stderr; ``progress=False``, as ``--quiet`` gives, shows nothing): the
selection models trained, then the candidates scored.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dpaudit.attacks.registry import ATTACK_NAMES, expand_attacks, make_attack
from dpaudit.audit.config.model import AuditConfig
from dpaudit.audit.config.serial import from_json
from dpaudit.audit.games.execution import in_groups, training_group
from dpaudit.audit.games.progress import progress_bar
from dpaudit.audit.games.releases import (
    PublicStreams,
    attack_options,
    release,
    release_for,
)
from dpaudit.audit.games.resolved import ResolvedAudit, generator_traits, lookup
from dpaudit.audit.games.rows import audit_generator_options, release_rows
from dpaudit.audit.games.setup import build_setup, load_audit_data
from dpaudit.audit.games.streams import Streams
from dpaudit.audit.games.two_world.exact_selection import rank_by_exact_privacy
from dpaudit.audit.result.selection import PublicCandidate
from dpaudit.audit.stats.thresholds import roc_auc
from dpaudit.data import Dataset, Domain
from dpaudit.errors import InvalidParameterError, StoreError
from dpaudit.generators.base import Generator
from dpaudit.rng import Rngs
from dpaudit.validation import require
from dpaudit.worst_case.targets import candidate_targets, score_candidates

Ranking = tuple[tuple[int, float], ...]
PublicRanking = tuple[PublicCandidate, ...]


def selection_streams(config: AuditConfig) -> tuple[Rngs, Rngs, Rngs]:
    """The selection's ``(pool, attacks, public)`` streams, all children of
    :meth:`Streams.selection` of the audit's root seed."""
    pool, attacks, public = Streams(config.seed).selection().spawn(3)
    return pool, attacks, public


def release_in_batches(
    make_generator: Callable[[], Generator],
    datasets: Sequence[pd.DataFrame],
    rngs: Sequence[Rngs],
    *,
    domain: Domain,
    rows: int,
    public: PublicStreams | None,
    config: AuditConfig,
    on_batch: Callable[[int], None] | None = None,
) -> list[pd.DataFrame]:
    """One release per dataset (:func:`~dpaudit.audit.games.releases.release`), trained in
    the training groups of the device (:func:`~dpaudit.audit.games.execution.in_groups`),
    whatever ``config.batch_size``: a selection pool's models. ``on_batch`` is
    called with the number of models of each group trained (progress)."""
    out: list[pd.DataFrame] = []
    for group in in_groups(range(len(datasets)), training_group(config.device)):
        start, stop = group[0], group[-1] + 1
        _, frames = release(
            make_generator,
            datasets[start:stop],
            rngs[start:stop],
            domain=domain,
            rows=rows,
            public=public,
            name=config.generator,
        )
        out.extend(frames)
        if on_batch is not None:
            on_batch(len(frames))
    return out


def rank_targets(
    data: pd.DataFrame,
    *,
    domain: Domain,
    config: AuditConfig,
    neighbours: int = 5,
    progress: bool = False,
    resolved: ResolvedAudit | None = None,
) -> list[tuple[int, float]]:
    """Ranks ``config.candidates`` candidates of ``data`` by their pool AUC.

    Args:
        data: the training table the final audit will draw the target from.
        domain: its public domain.
        config: the audit (generator, options, attack, release size, randomness,
            ``candidates``, ``selection_rounds``).
        neighbours: nearest neighbours of the isolation score.
        progress: show the pool's models trained and the candidates scored on
            stderr (:func:`progress_bar`).
        resolved: the audit as resolved once (its generator's registry entry and
            capabilities); looked up here where not given.

    Returns:
        ``(row position in data, AUC)`` for every candidate, by decreasing AUC (ties:
        lower row first); the first is :func:`select_target`'s choice.
    """
    require(
        isinstance(config.candidates, int) and config.candidates >= 1,
        "candidates",
        "an integer >= 1",
        config.candidates,
    )
    require(
        isinstance(config.selection_rounds, int) and config.selection_rounds >= 5,
        "selection_rounds",
        "an integer >= 5",
        config.selection_rounds,
    )
    # At most every row but one: a pool model leaves out each candidate by a coin
    # flip, and one that left out every row would train on an empty table.
    candidates = candidate_targets(
        data,
        domain=domain,
        n=min(config.candidates, max(len(data) - 1, 1)),
        neighbours=neighbours,
    )
    n_rows = len(data) - 1  # |D| of the final audit: teachers and release size
    spec = lookup(config) if resolved is None else resolved.spec
    options = audit_generator_options(config, spec, n_rows=n_rows, worst_case=False)
    rows = release_rows(config, n_rows=n_rows, worst_case=False)
    factory = (
        spec.make_factory(worker=config.worker_options())
        if resolved is None
        else resolved.factory
    )

    def make_generator() -> Generator:
        return factory(epsilon=config.epsilon, delta=config.delta, **options)

    pool_rng, attacks_rng, public_rng = selection_streams(config)
    public = None
    traits = (
        generator_traits(make_generator())
        if resolved is None
        else resolved.traits(make_generator())
    )
    if config.randomness == "fixed_public" and traits.public_randomness:
        fit_public, sample_public = public_rng.spawn(2)
        public = (fit_public, sample_public)

    bars: dict[str, Any] = {}  # the scoring bar opens when the pool is trained

    def release_all(
        datasets: Sequence[pd.DataFrame], rngs: Sequence[Rngs]
    ) -> list[pd.DataFrame]:
        with progress_bar(
            "target selection (models)", len(datasets), unit="model", enabled=progress
        ) as bar:
            out = release_in_batches(
                make_generator,
                datasets,
                rngs,
                domain=domain,
                rows=rows,
                public=public,
                config=config,
                on_batch=bar.update,
            )
        bars["scored"] = progress_bar(
            "target selection (candidates scored)",
            len(candidates),
            unit="candidate",
            enabled=progress,
        )
        return out

    names = expand_attacks(config.attack)
    attack_rngs = attacks_rng.spawn(len(ATTACK_NAMES))

    def make_attacks(target: pd.DataFrame) -> dict[str, object]:
        return {
            name: make_attack(
                name,
                domain=domain,
                target=domain.cast(target),
                rng=attack_rngs[ATTACK_NAMES.index(name)],
                **attack_options(name, config.attack_options),
            )
            for name in names
        }

    try:
        return score_candidates(
            domain.cast(data),
            candidates=candidates,
            release=release_all,
            make_attacks=make_attacks,
            n_models=2 * config.selection_rounds,
            rng=pool_rng,
            auc=roc_auc,
            on_scored=lambda row: bars["scored"].update(1),
        )
    finally:
        if "scored" in bars:
            bars["scored"].close()


def select_target(data: pd.DataFrame, *, domain: Domain, config: AuditConfig) -> int:
    """The most vulnerable record of ``data`` for ``config`` (:func:`rank_targets`'s
    first row)."""
    return rank_targets(data, domain=domain, config=config)[0][0]


def resolve_target(
    config: AuditConfig,
    *,
    progress: bool = False,
    dataset: Dataset | None = None,
    resolved: ResolvedAudit | None = None,
) -> tuple[AuditConfig, Ranking | None]:
    """``config`` with ``target = "auto"`` replaced by the selected row, and the
    ranking that chose it (``None`` when there was nothing to select); ``progress``
    shows the selection's progress (:func:`rank_targets`); ``dataset`` is
    ``config``'s data where the caller has loaded it (:func:`load_audit_data`)."""
    if config.target != "auto" or config.target_record is not None:
        return config, None
    if dataset is None:
        dataset = load_audit_data(config)
    ranking = tuple(
        rank_targets(
            dataset.train,
            domain=dataset.domain,
            config=config,
            progress=progress,
            resolved=resolved,
        )
    )
    return dataclasses.replace(config, target=ranking[0][0]), ranking


def rank_public_seeds(
    config: AuditConfig,
    *,
    progress: bool = False,
    dataset: Dataset | None = None,
    resolved: ResolvedAudit | None = None,
) -> list[PublicCandidate]:
    """Ranks the public randomness candidates ``0 .. public_candidates - 1`` of
    ``config`` (target resolved) by how well its attacks separate the worlds.

    Every candidate trains the same ``2 * selection_rounds`` models (the same
    membership bits and privacy streams, from :meth:`Streams.public_selection`, which
    no stream of the final game shares) with its own fixed public streams
    (:meth:`Streams.public_candidate`); each attack is fitted on half of the models
    and scored on the other half.

    ``progress`` shows the models trained, over all candidates, on stderr
    (:func:`progress_bar`). A transcript release ranks by exact privacy instead
    (:func:`.exact_selection.rank_by_exact_privacy`).

    Returns:
        The candidates by decreasing AUC (ties: lower candidate first; the AUC is
        the largest over the audit's attacks); empty where the audit is not
        ``fixed_public`` (the generator does not declare public randomness).
    """
    kind = release_for(config) if resolved is None else resolved.release
    if kind.white_box:
        return rank_by_exact_privacy(
            config, progress=progress, dataset=dataset, resolved=resolved
        )
    base = build_setup(
        dataclasses.replace(config, public_seed=0), dataset=dataset, resolved=resolved
    )
    if base.randomness != "fixed_public":
        return []
    streams = Streams(config.seed)
    pool_rng, attacks_rng = streams.public_selection()
    design, models_rng = pool_rng.spawn(2)
    n_models = 2 * config.selection_rounds
    bits = np.zeros(n_models, dtype=bool)
    bits[design.numpy.permutation(n_models)[: config.selection_rounds]] = True
    fits = np.zeros(n_models, dtype=bool)  # half of each world fits the attacks
    for world in (bits, ~bits):
        rows = np.flatnonzero(world)
        fits[rows[design.numpy.permutation(rows.size)[: rows.size // 2]]] = True
    datasets = [base.with_target if bit else base.without for bit in bits]
    rngs = models_rng.spawn(n_models)  # each model re-derives its own children
    scored = []
    with progress_bar(
        f"public-seed selection ({config.public_candidates} candidates, models)",
        config.public_candidates * n_models,
        unit="model",
        enabled=progress,
    ) as bar:
        for candidate in range(config.public_candidates):
            public = streams.public_candidate(candidate)
            # Fresh generator objects with the same seeds for every candidate: no
            # candidate's score depends on the draws an earlier one consumed.
            attack_rngs = attacks_rng.spawn(len(ATTACK_NAMES))
            releases = release_in_batches(
                base.make_generator,
                datasets,
                rngs,
                domain=base.domain,
                rows=base.synthetic_rows,
                public=public,
                config=config,
                on_batch=bar.update,
            )
            aucs = []
            for name in base.attacks:
                attack = make_attack(
                    name,
                    domain=base.domain,
                    target=base.target,
                    rng=attack_rngs[ATTACK_NAMES.index(name)],
                    **attack_options(name, config.attack_options),
                )
                features = np.asarray(attack.featurize(releases))
                attack.fit(features[fits], bits[fits].astype(np.int64))
                scores = np.asarray(attack.score(features[~fits]), dtype=np.float64)
                aucs.append(float(roc_auc(scores, bits[~fits].astype(np.int64))))
            scored.append(PublicCandidate(candidate=candidate, auc=max(aucs)))
    scored.sort(key=lambda entry: (-(entry.auc or 0.0), entry.candidate))
    return scored


def read_public_ranking(value: Any, where: Path) -> PublicRanking | None:
    """The ranking a store holds (:func:`~dpaudit.audit.storage.outdir.
    stored_public_selection`): ``[candidate, auc]`` pairs (stores written before
    exact rankings) or ``public_selection`` entries.

    Raises:
        StoreError: an entry is neither.
    """
    if value is None:
        return None
    try:
        return tuple(
            from_json(PublicCandidate, entry, "public_selection")
            if isinstance(entry, dict)
            else PublicCandidate(candidate=int(entry[0]), auc=float(entry[1]))
            for entry in value
        )
    except (InvalidParameterError, TypeError, ValueError, IndexError) as err:
        raise StoreError(
            f"{str(where)!r} holds an invalid public seed selection ({err}); start "
            "over with --force."
        ) from err


def resolve_public_seed(
    config: AuditConfig,
    *,
    progress: bool = False,
    dataset: Dataset | None = None,
    resolved: ResolvedAudit | None = None,
) -> tuple[AuditConfig, PublicRanking | None]:
    """``config`` with ``public_seed = "auto"`` replaced by the chosen candidate, and
    the ranking that chose it (``None`` when there was nothing to choose: the
    generator does not declare public randomness, and candidate 0 is kept);
    ``progress`` shows the selection's progress (:func:`rank_public_seeds`)."""
    if config.public_seed != "auto":
        return config, None
    ranking = tuple(
        rank_public_seeds(config, progress=progress, dataset=dataset, resolved=resolved)
    )
    if not ranking:
        return dataclasses.replace(config, public_seed=0), None
    return dataclasses.replace(config, public_seed=ranking[0].candidate), ranking
