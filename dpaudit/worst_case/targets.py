"""Choosing the most vulnerable target record of a real dataset (``--target auto``).

Average-case audits on real data need a target; a random record is rarely the one a
generator leaks most. Selection works in two stages, as in the audit study:

1. :func:`candidate_targets`: the ``n`` records farthest from the rest of the data
   (largest mean distance to their ``neighbours`` nearest neighbours, measured in
   :meth:`dpaudit.data.Domain.encode`'s space, so every column is scaled by its PUBLIC
   bounds, never by the data's range).
2. :func:`rank_targets`: a mini-audit of each candidate, a small game of
   ``config.selection_rounds`` rounds per world with the configured attack (``all``:
   every attack, and the largest AUC counts); :func:`select_target` returns the
   candidate with the highest AUC (ties: the lower row index).

The selection games are NEVER the final audit's rounds. Their root seed,
:func:`selection_seed`, is drawn from ``SeedSequence([config.seed, SELECTION_KEY])``,
a stream separate from ``SeedSequence(config.seed)`` that the final audit's plan, round
and attack streams are spawned from. Reusing rounds that picked the target to also
bound epsilon would be a winner's-curse bias: the target was chosen *because* the
attack did well on those rounds, so their error rates are optimistic and the
confidence statement of the bound (DESIGN.md, rules 1 and 4) would no longer hold.
With a separate stream, the final audit's rounds are independent of the selection, and
the selected target is just a (data-dependent but round-independent) fixed input.

The mini-audits are ordinary audits run by :func:`dpaudit.audit.runner.run_audit`
(same generator, options, split, estimator, release size and parallelism), each in a
temporary directory that is deleted afterwards.
"""

from __future__ import annotations

import dataclasses
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from dpaudit.data import Domain, load_dataset
from dpaudit.errors import DataError, InvalidParameterError

if TYPE_CHECKING:
    from dpaudit.audit.runner import AuditConfig

#: Mixed with the root seed to derive the selection games' seed ("SELECT").
SELECTION_KEY = 0x5E1EC7
#: Rounds per world a mini-audit needs (one per split, and a usable test set).
MIN_SELECTION_ROUNDS = 5


# ------------------------------------------------------------------ candidates

def candidate_targets(data: pd.DataFrame, *, domain: Domain, n: int = 64,
                      neighbours: int = 5) -> list[int]:
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
        raise InvalidParameterError(f"`n` (candidates) must be an integer >= 1. Got {n!r}.")
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


# ------------------------------------------------------------------ mini-audits

def selection_seed(config: AuditConfig) -> int:
    """Root seed of the selection games, from a stream disjoint from the audit's.

    It is drawn from ``SeedSequence([config.seed, SELECTION_KEY])``, whose entropy
    differs from the final audit's ``SeedSequence(config.seed)``, so the selection
    games' membership bits, splits and per-round streams are independent of the
    final audit's (see the module docstring for why this matters). All candidates
    share it (common random numbers: they are compared on the same bits and splits).
    """
    state = np.random.SeedSequence([config.seed, SELECTION_KEY]).generate_state(
        2, dtype=np.uint32)
    seed = ((int(state[0]) << 32) | int(state[1])) & ((1 << 63) - 1)
    # Never the final audit's root seed (probability 2^-63; handled all the same).
    return seed if seed != config.seed else (seed + 1) & ((1 << 63) - 1)


def selection_config(config: AuditConfig, target: int) -> AuditConfig:
    """The configuration of ``target``'s mini-audit: ``config`` with that target,
    ``config.selection_rounds`` rounds per world and :func:`selection_seed`."""
    return dataclasses.replace(
        config, target=int(target), target_record=None,
        rounds=config.selection_rounds, seed=selection_seed(config),
    )


def _check_selection(config: AuditConfig) -> None:
    if not (isinstance(config.candidates, int) and config.candidates >= 1):
        raise InvalidParameterError(
            f"`candidates` must be an integer >= 1. Got {config.candidates!r}."
        )
    if not (isinstance(config.selection_rounds, int)
            and config.selection_rounds >= MIN_SELECTION_ROUNDS):
        raise InvalidParameterError(
            f"`selection_rounds` must be an integer >= {MIN_SELECTION_ROUNDS} (rounds per "
            f"world of each candidate's mini-audit). Got {config.selection_rounds!r}."
        )


def _same_table(a: pd.DataFrame, b: pd.DataFrame) -> bool:
    return (a.shape == b.shape and list(a.columns) == list(b.columns)
            and a.reset_index(drop=True).equals(b.reset_index(drop=True)))


def _data_overrides(data: pd.DataFrame, domain: Domain, config: AuditConfig,
                    workdir: Path) -> dict[str, Any]:
    """Where the mini-audits read ``data`` from.

    The runner passes the training table of ``config.dataset``: the mini-audits then
    load that same dataset (``{}``), so a row index means the same record in the
    selection and in the final audit. Any other table (a direct library call) is
    written to a CSV with ``domain`` next to it, and the mini-audits read that.
    """
    try:
        loaded = load_dataset(config.dataset, domain=config.domain,
                              data_dir=config.data_dir)
    except InvalidParameterError:
        loaded = None
    if loaded is not None and loaded.domain == domain and _same_table(loaded.train, data):
        return {}
    csv, domain_json = workdir / "selection-data.csv", workdir / "selection-domain.json"
    domain.cast(data).to_csv(csv, index=False, float_format="%.17g")
    domain.save(domain_json)
    return {"dataset": str(csv), "domain": str(domain_json), "data_dir": None}


def rank_targets(data: pd.DataFrame, *, domain: Domain, config: AuditConfig,
                 neighbours: int = 5) -> list[tuple[int, float]]:
    """Mini-audits every candidate; returns ``(row, auc)`` pairs, best first.

    The candidates are :func:`candidate_targets` (``config.candidates`` of them).
    Each one's mini-audit is :func:`selection_config` run by
    :func:`~dpaudit.audit.runner.run_audit` in a temporary directory; its AUC is the
    test-round AUC of ``config.attack`` (``all``: the largest over every attack).

    Returns:
        ``(row position in data, AUC)`` for every candidate, sorted by decreasing AUC,
        equal AUCs by increasing row index; the first pair is :func:`select_target`'s
        choice. Reports show the list as the record of what selection tried.

    Raises:
        InvalidParameterError: ``candidates < 1`` or ``selection_rounds < 5``, or
            anything the mini-audit's configuration is refused for.
    """
    from dpaudit.audit.runner import run_audit

    _check_selection(config)
    candidates = candidate_targets(data, domain=domain, n=config.candidates,
                                   neighbours=neighbours)
    scored: list[tuple[int, float]] = []
    with tempfile.TemporaryDirectory(prefix="dpaudit-select-") as tmp:
        workdir = Path(tmp)
        overrides = _data_overrides(data, domain, config, workdir)
        base = dataclasses.replace(config, **overrides) if overrides else config
        for row in candidates:
            result = run_audit(selection_config(base, row),
                               out_dir=workdir / f"candidate-{row}", progress=False)
            auc = max(float(a["auc"]) for a in result["attacks"].values())
            scored.append((row, auc))
    scored.sort(key=lambda pair: (-pair[1], pair[0]))
    return scored


def select_target(data: pd.DataFrame, *, domain: Domain, config: AuditConfig) -> int:
    """The most vulnerable record of ``data`` for ``config`` (``--target auto``).

    The candidate whose mini-audit reached the highest AUC (ties: the lower row
    index); see :func:`rank_targets`. The selection games use a seed stream disjoint
    from the final audit's, so none of their rounds enters the final estimate.

    Returns:
        The chosen row position in ``data`` (``data.iloc``).
    """
    return rank_targets(data, domain=domain, config=config)[0][0]
