"""Choosing the most vulnerable target record of a real dataset (``--target auto``).

Average-case audits on real data need a target; a random record is rarely the one a
generator leaks most. Selection works in two stages:

1. :func:`candidate_targets`: the ``n`` records farthest from the rest of the data
   (largest mean distance to their ``neighbours`` nearest neighbours, measured in
   :meth:`dpaudit.data.Domain.encode`'s space, so every column is scaled by its PUBLIC
   bounds, never by the data's range).
2. :func:`score_candidates`: one shared pool of models scores every candidate at once
   (the LiRA design of Carlini et al., "Membership inference attacks from first
   principles", IEEE S&P 2022; Meeus et al. 2023 for synthetic data). Each model
   trains on the data with every candidate kept or dropped by an independent fair
   coin, so each model is a member-world model for about half of the candidates and a
   non-member-world model for the rest: every model informs every candidate. For each
   candidate an attack is fitted on half of the models and its AUC measured on the
   other half; the candidate with the highest AUC wins (ties: the lower row index).
   ``M`` models score all candidates, where a mini-audit per candidate trained ``M``
   models for EACH candidate.

The pool is trained in memory (no store, no recursive audit). The audit passes the
pool a random stream disjoint from every stream of the final game
(:meth:`dpaudit.audit.games.streams.Streams.selection`): reusing rounds that picked the
target to also bound epsilon would be a winner's-curse bias (the target was chosen
*because* the attack did well on them), and the confidence statement of the bound
(docs/soundness.md, rules 1 and 4) would no longer hold. With a disjoint stream the
final audit's rounds are independent of the selection, and the selected target is a
(data-dependent but round-independent) fixed input.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from dpaudit.data import Domain
from dpaudit.errors import DataError, InvalidParameterError
from dpaudit.rng import Rngs

#: Models the pool needs at least (both halves must hold members and non-members).
MIN_POOL_MODELS = 10

#: Trains one model per dataset (each from its own stream) and returns the releases.
Release = Callable[[Sequence[pd.DataFrame], Sequence[Rngs]], Sequence[pd.DataFrame]]
#: The attacks aimed at one target record (a one-row frame), by name.
AttackFactory = Callable[[pd.DataFrame], Mapping[str, Any]]


# ------------------------------------------------------------------ candidates


def candidate_targets(
    data: pd.DataFrame, *, domain: Domain, n: int = 64, neighbours: int = 5
) -> list[int]:
    """Positional row indices of the ``n`` most isolated records of ``data``.

    A record's isolation is its mean Euclidean distance to its ``neighbours`` nearest
    other records (scikit-learn ``NearestNeighbors``), in the encoded space of
    :meth:`Domain.encode`: numeric columns scaled to [0, 1] by the domain's public
    bounds, binary columns 0/1, categorical columns one-hot.

    Args:
        data: the table (its columns must fit ``domain``).
        domain: the public domain.
        n: how many candidates (at most ``len(data)``).
        neighbours: nearest neighbours averaged over (at most ``len(data) - 1``).

    Returns:
        Row positions (``data.iloc``), by decreasing mean distance; equal distances
        (duplicate records, for example) in increasing row order. Deterministic.

    Raises:
        InvalidParameterError: ``n`` or ``neighbours`` below 1.
        DataError: ``data`` has fewer than two rows or does not fit ``domain``.
    """
    from sklearn.neighbors import NearestNeighbors

    if not (isinstance(n, int | np.integer) and n >= 1):
        raise InvalidParameterError(
            f"`n` (candidates) must be an integer >= 1. Got {n!r}."
        )
    if not (isinstance(neighbours, int | np.integer) and neighbours >= 1):
        raise InvalidParameterError(
            f"`neighbours` must be an integer >= 1. Got {neighbours!r}."
        )
    if len(data) < 2:
        raise DataError(
            f"target selection needs at least 2 records to measure distances; "
            f"the data has {len(data)}."
        )
    domain.validate(data, name="data")
    encoded = domain.encode(domain.cast(data)).astype(np.float64)
    k = min(int(neighbours), len(data) - 1)
    # k + 1 neighbours: the first is the record itself (distance 0). With exact
    # duplicates the record may be listed after its twin, but the distances (the
    # sorted multiset) are the same either way.
    dist, _ = NearestNeighbors(n_neighbors=k + 1).fit(encoded).kneighbors(encoded)
    isolation = dist[:, 1:].mean(axis=1)
    order = np.lexsort((np.arange(len(data)), -isolation))
    return [int(i) for i in order[: min(int(n), len(data))]]


# ------------------------------------------------------------------ the pool


def pool_membership(
    n_models: int, n_candidates: int, *, rng: Rngs
) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
    """The pool's design: who is in which model, and which models fit the attacks.

    Returns:
        ``members`` (``[n_models, n_candidates]``, fair coins: candidate ``c`` is in
        model ``m``'s data) and ``fits`` (``[n_models]``, exactly half True: the
        models the attacks learn from; the others measure the AUC).
    """
    members = rng.numpy.random((n_models, n_candidates)) < 0.5
    fits = np.zeros(n_models, dtype=bool)
    fits[rng.numpy.permutation(n_models)[: n_models // 2]] = True
    return members, fits


def pool_datasets(
    data: pd.DataFrame, candidates: Sequence[int], members: NDArray[np.bool_]
) -> list[pd.DataFrame]:
    """Each model's training data: ``data`` without the candidates it leaves out."""
    positions = np.asarray(candidates, dtype=np.int64)
    out = []
    for row in members:
        keep = np.ones(len(data), dtype=bool)
        keep[positions[~row]] = False
        out.append(data.iloc[np.flatnonzero(keep)].reset_index(drop=True))
    return out


def score_candidates(
    data: pd.DataFrame,
    *,
    candidates: Sequence[int],
    release: Release,
    make_attacks: AttackFactory,
    n_models: int,
    rng: Rngs,
    auc: Callable[[NDArray[np.float64], NDArray[np.bool_]], float],
    on_scored: Callable[[int], None] | None = None,
) -> list[tuple[int, float]]:
    """Scores every candidate from one shared pool of ``n_models`` models.

    Args:
        data: the table (rows addressed by position).
        candidates: row positions to score (:func:`candidate_targets`).
        release: trains a model on each dataset from each stream and returns one
            release per model (the audit's generator, options and release size).
        make_attacks: the attacks aimed at a target record.
        n_models: models in the pool (at least :data:`MIN_POOL_MODELS`).
        rng: the pool's stream (membership coins, the fit/score halves, the models).
        auc: the AUC of scores against membership (the audit passes
            :func:`dpaudit.audit.stats.thresholds.roc_auc`, the one AUC; chance
            without both classes).
        on_scored: called with each candidate's row once it is scored (progress; it
            changes nothing).

    Returns:
        ``(row, auc)`` for every candidate, by decreasing AUC (ties: lower row
        first); a candidate's AUC is the largest over the attacks, each fitted on the
        pool's fitting half and scored on the other half.

    Raises:
        InvalidParameterError: too few models, or no candidates.
    """
    if not (isinstance(n_models, int) and n_models >= MIN_POOL_MODELS):
        raise InvalidParameterError(
            f"`n_models` must be an integer >= {MIN_POOL_MODELS}. Got {n_models!r}."
        )
    if len(candidates) < 1:
        raise InvalidParameterError(
            f"`candidates` must name at least one row. Got {list(candidates)!r}."
        )
    design_rng, models_rng = rng.spawn(2)
    members, fits = pool_membership(n_models, len(candidates), rng=design_rng)
    releases = list(
        release(pool_datasets(data, candidates, members), models_rng.spawn(n_models))
    )
    scored = []
    for j, row in enumerate(candidates):
        labels = members[:, j]
        target = data.iloc[[row]].reset_index(drop=True)
        aucs = []
        for attack in make_attacks(target).values():
            features = np.asarray(attack.featurize(releases))
            if attack.trains_classifier and len(set(labels[fits].tolist())) < 2:
                aucs.append(0.5)
                continue
            attack.fit(features[fits], labels[fits].astype(np.int64))
            scores = np.asarray(attack.score(features[~fits]), dtype=np.float64)
            aucs.append(auc(scores, labels[~fits]))
        scored.append((int(row), max(aucs)))
        if on_scored is not None:
            on_scored(int(row))
    scored.sort(key=lambda pair: (-pair[1], pair[0]))
    return scored
