"""Vulnerable-target selection: candidates by isolation, mini-audits, seed streams."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from dpaudit.audit import AuditConfig
from dpaudit.audit import run_audit as run_typed_audit
from dpaudit.audit.games import build_setup
from dpaudit.audit.games.plan import GamePlan
from dpaudit.audit.games.streams import STREAM_INDEX, Streams
from dpaudit.audit.games.two_world.selection import (
    rank_targets,
    select_target,
    selection_streams,
)
from dpaudit.data import Column, Domain
from dpaudit.errors import InvalidParameterError
from dpaudit.rng import Rngs
from dpaudit.worst_case.targets import (
    candidate_targets,
    pool_datasets,
    pool_membership,
    score_candidates,
)

OUTLIER = 13


def run_audit(*args: Any, **kwargs: Any) -> dict[str, Any]:
    """The audit's ``result.json`` document (the typed result's JSON form)."""
    return run_typed_audit(*args, **kwargs).to_json()


@pytest.fixture
def domain() -> Domain:
    return Domain(
        tuple(
            Column(name=n, kind="integer", lower=0.0, upper=10.0)
            for n in ("a", "b", "c")
        )
    )


@pytest.fixture
def planted() -> pd.DataFrame:
    """Ten records, each present twice, and one far outlier at row ``OUTLIER``.

    A duplicated record has a twin in D, so the copy generator's release has a record
    at distance 0 from it in both worlds (the distance attack sees nothing); the
    outlier is unique, so its membership shows (AUC 1).
    """
    base = [[i % 3, (i // 3) % 3, i % 2] for i in range(10)]
    rows = base + base
    rows.insert(OUTLIER, [10, 10, 10])
    return pd.DataFrame(rows, columns=["a", "b", "c"]).astype(np.int64)


def _copy_config(**overrides: object) -> AuditConfig:
    # synthetic_rows = |D ∪ {t}|: the copy generator then releases every record.
    values: dict[str, object] = {
        "generator": "copy",
        "attack": "distance",
        "rounds": 10,
        "batch_size": 20,
        "jobs": 1,
        "candidates": 4,
        "selection_rounds": 10,
        "synthetic_rows": 21,
        "epsilon": 0.1,
    }
    values.update(overrides)
    return AuditConfig(**values)  # type: ignore[arg-type]


# ------------------------------------------------------------------ candidates


def test_planted_outlier_is_the_first_candidate(
    planted: pd.DataFrame, domain: Domain
) -> None:
    candidates = candidate_targets(planted, domain=domain, n=4)
    assert candidates[0] == OUTLIER
    assert len(candidates) == 4
    assert len(set(candidates)) == 4


def test_candidates_are_deterministic_and_ties_go_to_the_lower_index(
    planted: pd.DataFrame, domain: Domain
) -> None:
    first = candidate_targets(planted, domain=domain, n=21)
    assert first == candidate_targets(planted, domain=domain, n=21)
    assert sorted(first) == list(range(21))  # n above |data| gives every row
    # Twins (row i and row i + 10, shifted past the outlier) are equally isolated:
    # the lower index comes first.
    position = {row: k for k, row in enumerate(first)}
    for i in range(10):
        twin = i + 10 if i + 10 < OUTLIER else i + 11
        assert position[i] < position[twin]
    # All records alike: every distance ties, and the order is the row order.
    same = pd.DataFrame({"a": [3] * 7, "b": [4] * 7, "c": [5] * 7})
    assert candidate_targets(same, domain=domain, n=5) == [0, 1, 2, 3, 4]


def test_isolation_is_measured_with_the_public_bounds() -> None:
    # Column "wide" has public bounds [0, 1000]: a raw jump of 10 is 0.01 encoded.
    # Column "narrow" has bounds [0, 1]: a jump of 1 is 1.0 encoded.
    domain = Domain(
        (
            Column(name="wide", kind="integer", lower=0.0, upper=1000.0),
            Column(name="narrow", kind="integer", lower=0.0, upper=1.0),
        )
    )
    data = pd.DataFrame({"wide": [0] * 8 + [10, 0], "narrow": [0] * 8 + [0, 1]})
    assert candidate_targets(data, domain=domain, n=2, neighbours=3) == [9, 8]


def test_candidate_arguments_are_validated(
    planted: pd.DataFrame, domain: Domain
) -> None:
    with pytest.raises(InvalidParameterError, match="`n`"):
        candidate_targets(planted, domain=domain, n=0)
    with pytest.raises(InvalidParameterError, match="`neighbours`"):
        candidate_targets(planted, domain=domain, neighbours=0)
    with pytest.raises(InvalidParameterError, match="at least 2 records"):
        candidate_targets(planted.iloc[:1], domain=domain)


# ------------------------------------------------------------------ selection


def test_select_target_picks_the_leaky_outlier(
    planted: pd.DataFrame, domain: Domain
) -> None:
    config = _copy_config()
    ranking = rank_targets(planted, domain=domain, config=config)
    assert ranking[0][0] == OUTLIER
    assert sorted(row for row, _ in ranking) == sorted(
        candidate_targets(planted, domain=domain, n=4)
    )
    aucs = dict(ranking)
    assert aucs[OUTLIER] == 1.0
    assert all(auc == 0.5 for row, auc in ranking if row != OUTLIER)
    assert select_target(planted, domain=domain, config=config) == OUTLIER


def test_attack_all_ranks_by_the_best_attack(
    planted: pd.DataFrame, domain: Domain
) -> None:
    ranking = rank_targets(
        planted, domain=domain, config=_copy_config(attack="all", candidates=2)
    )
    assert len(ranking) == 2
    assert dict(ranking)[OUTLIER] == 1.0  # the distance attack's AUC, the largest
    assert all(0.0 <= auc <= 1.0 for _, auc in ranking)


def test_target_auto_through_the_runner(
    planted: pd.DataFrame, domain: Domain, tmp_path: Path
) -> None:
    planted.to_csv(tmp_path / "planted.csv", index=False)
    domain.save(tmp_path / "planted.json")
    config = _copy_config(
        dataset=str(tmp_path / "planted.csv"),
        domain=str(tmp_path / "planted.json"),
        target="auto",
        candidates=3,
        rounds=40,
        batch_size=80,
    )
    result = run_audit(config, out_dir=tmp_path / "audit")
    assert result["target_index"] == OUTLIER
    assert result["target"] == {"a": 10, "b": 10, "c": 10}
    assert result["verdict"] == "VIOLATION"


def test_selection_arguments_are_validated(
    planted: pd.DataFrame, domain: Domain
) -> None:
    with pytest.raises(InvalidParameterError, match="`candidates`"):
        select_target(planted, domain=domain, config=_copy_config(candidates=0))
    with pytest.raises(InvalidParameterError, match="`selection_rounds`"):
        select_target(planted, domain=domain, config=_copy_config(selection_rounds=4))


# ------------------------------------------------------------------ seed streams


def _states(rngs: list[Rngs]) -> set[tuple[int, ...]]:
    return {tuple(r.seed_sequence.generate_state(4).tolist()) for r in rngs}


@pytest.mark.parametrize("seed", [0, 1, 12345])
def test_selection_uses_a_disjoint_seed_stream(seed: int) -> None:
    """No stream of the selection pool is a stream of the final game."""
    config = _copy_config(seed=seed, rounds=50, selection_rounds=50)
    final = GamePlan.create(rounds=config.rounds, split=config.split, seed=config.seed)
    pool, attacks, public = selection_streams(config)
    selection = [
        pool,
        attacks,
        public,
        *pool.spawn(2),
        *pool.spawn(2)[1].spawn(100),
        *attacks.spawn(6),
        *public.spawn(2),
    ]
    streams = Streams(seed)
    game = [
        *final.round_rngs(),
        *final.attack_rngs(6),
        streams.plan(),
        streams.public_fit(),
        streams.public_sample(),
    ]
    assert not _states(selection) & _states(game)
    assert selection_streams(config)[0].spawn_key == (STREAM_INDEX["selection"], 0)
    # Deterministic, and different for different root seeds.
    assert _states([selection_streams(_copy_config(seed=seed))[0]]) == _states([pool])
    assert not _states([selection_streams(_copy_config(seed=seed + 1))[0]]) & _states(
        [pool]
    )


def test_pool_design_is_balanced_and_every_model_informs_every_candidate() -> None:
    members, fits = pool_membership(200, 8, rng=Rngs.from_seed(3))
    assert members.shape == (200, 8) and fits.sum() == 100
    # Failure probability of the bounds: P(|Bin(100, 1/2) - 50| > 25) < 1e-6 for each
    # of the 16 (candidate, half) cells.
    for half in (fits, ~fits):
        assert np.all(np.abs(members[half].sum(axis=0) - 50) <= 25)
    data = pd.DataFrame({"a": np.arange(20)})
    datasets = pool_datasets(data, [3, 7], members[:5, :2])
    for rows, frame in zip(members[:5, :2], datasets):
        assert (3 in frame["a"].tolist()) == rows[0]
        assert (7 in frame["a"].tolist()) == rows[1]
        assert len(frame) == 18 + int(rows.sum())


def test_score_candidates_trains_one_pool(
    planted: pd.DataFrame, domain: Domain
) -> None:
    """The pool trains n_models models in all, whatever the number of candidates."""
    calls: list[int] = []

    def release(datasets: object, rngs: object) -> list[pd.DataFrame]:
        frames = list(datasets)  # type: ignore[call-overload]
        calls.append(len(frames))
        return frames  # the copy generator's release, row for row

    from dpaudit.attacks.registry import make_attack
    from dpaudit.audit.stats import roc_auc

    def attacks(target: pd.DataFrame) -> dict[str, object]:
        return {
            "distance": make_attack(
                "distance", domain=domain, target=target, rng=Rngs.from_seed(0)
            )
        }

    ranking = score_candidates(
        planted,
        candidates=[OUTLIER, 0, 1, 2],
        release=release,
        make_attacks=attacks,
        n_models=40,
        rng=Rngs.from_seed(1),
        auc=roc_auc,
    )
    assert calls == [40]
    assert ranking[0] == (OUTLIER, 1.0)
    with pytest.raises(InvalidParameterError, match="`n_models`"):
        score_candidates(
            planted,
            candidates=[0],
            release=release,
            make_attacks=attacks,
            n_models=4,
            rng=Rngs.from_seed(1),
            auc=roc_auc,
        )


def test_final_plan_is_the_unselected_plan(
    planted: pd.DataFrame, domain: Domain, tmp_path: Path
) -> None:
    """Selecting the target does not move the final audit onto other rounds: its
    plan is exactly the plan of the same config with the target given by hand."""
    from dpaudit.audit.games.two_world.selection import resolve_target

    planted.to_csv(tmp_path / "p.csv", index=False)
    domain.save(tmp_path / "p.json")
    common = {
        "dataset": str(tmp_path / "p.csv"),
        "domain": str(tmp_path / "p.json"),
        "candidates": 2,
    }
    resolved, ranking = resolve_target(_copy_config(target="auto", **common))
    assert ranking is not None and resolved.target == OUTLIER
    auto = build_setup(resolved, target_selection=ranking)
    fixed = build_setup(_copy_config(target=OUTLIER, **common))
    assert auto.target_index == OUTLIER and auto.target_selection == ranking
    assert np.array_equal(auto.plan.bits, fixed.plan.bits)
    assert np.array_equal(auto.plan.splits, fixed.plan.splits)
    with pytest.raises(InvalidParameterError, match="`target`"):
        build_setup(_copy_config(target="auto", **common))
