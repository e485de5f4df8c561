"""Average-case audits on real data, end to end through ``run_audit``.

The deliberately leaky toy generator ``copy`` (it releases its training data) is
audited on 60 rows of the bundled Cervical Cancer data, given as a CSV file with its
public domain: every attack must flag it (VIOLATION) with the largest eps_emp the
test rounds can show.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dpaudit.attacks.registry import ATTACK_NAMES
from dpaudit.audit import AuditConfig
from dpaudit.audit import run_audit as run_typed_audit
from dpaudit.audit.stats import calibrated
from dpaudit.data import load_cervical_cancer
from dpaudit.errors import DataError
from dpaudit.worst_case.targets import candidate_targets

N_ROWS = 60
# 40 rounds per world: 16 train, 8 validation, 16 test. Validation needs >= 8 rounds
# per world for a zero-error threshold to show eps > 0 at the Bonferroni level of six
# attacks (alpha / 12 per rate), so that the threshold is chosen on evidence.
ROUNDS = 40
CLAIM = 0.1  # what `copy` claims; far below what a perfect attack shows


def run_audit(*args: Any, **kwargs: Any) -> dict[str, Any]:
    """The audit's ``result.json`` document (the typed result's JSON form)."""
    return run_typed_audit(*args, **kwargs).to_json()


@pytest.fixture(scope="module")
def real_data(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """60 Cervical Cancer rows as ``data.csv`` + ``domain.json``, and a target row."""
    folder = tmp_path_factory.mktemp("cervical")
    dataset = load_cervical_cancer()
    table = dataset.train.iloc[:N_ROWS].reset_index(drop=True)
    table.to_csv(folder / "data.csv", index=False)
    dataset.domain.save(folder / "domain.json")
    target = candidate_targets(table, domain=dataset.domain, n=1)[0]
    # The target is unique: without it, no released record equals it.
    assert (table == table.iloc[target]).all(axis=1).sum() == 1
    return {
        "csv": str(folder / "data.csv"),
        "domain": str(folder / "domain.json"),
        "table": table,
        "target": target,
        "folder": folder,
    }


def _config(real_data: dict[str, Any], **overrides: Any) -> AuditConfig:
    values: dict[str, Any] = {
        "generator": "copy",
        "dataset": real_data["csv"],
        "domain": real_data["domain"],
        "target": real_data["target"],
        "attack": "distance",
        "rounds": ROUNDS,
        # The same rounds for every attack set (distance alone would get no
        # training rounds by default).
        "split": (0.4, 0.2, 0.4),
        "batch_size": 2 * ROUNDS,
        "jobs": 1,
        "epsilon": CLAIM,
        # |D ∪ {t}| released rows: in world 1 the release holds every training
        # record, the target included; world 0 releases D plus one resampled row.
        "synthetic_rows": N_ROWS,
        "seed": 3,
    }
    values.update(overrides)
    return AuditConfig(**values)


@pytest.fixture(scope="module")
def distance_result(real_data: dict[str, Any]) -> dict[str, Any]:
    return run_audit(_config(real_data), out_dir=real_data["folder"] / "distance")


def _assert_perfect_violation(result: dict[str, Any], attack: str) -> None:
    n0, n1 = (
        result["estimator"]["test_non_members"],
        result["estimator"]["test_members"],
    )
    assert (n0, n1) == (16, 16)
    assert result["verdict"] == "VIOLATION"
    assert result["attack"] == attack
    assert result["eps_claimed"] == CLAIM
    assert result["auc"] == 1.0
    assert result["counts"] == {"tp": n1, "fp": 0, "tn": n0, "fn": 0}
    assert result["eps_emp"] == result["eps_max_attainable"] > CLAIM
    assert result["eps_max_attainable"] == pytest.approx(
        calibrated.eps_max_attainable(
            n0, n1, delta=result["delta"], alpha=result["estimator"]["alpha"]
        )
    )


def test_copy_is_a_violation_for_the_distance_attack(
    distance_result: dict[str, Any], real_data: dict[str, Any]
) -> None:
    _assert_perfect_violation(distance_result, "distance")
    assert distance_result["estimator"]["correction"] == "none"
    assert distance_result["dataset"] == "data"
    assert distance_result["target_index"] == real_data["target"]
    assert distance_result["synthetic_rows"] == N_ROWS


def test_copy_is_a_violation_for_groundhog(real_data: dict[str, Any]) -> None:
    result = run_audit(
        _config(real_data, attack="groundhog"),
        out_dir=real_data["folder"] / "groundhog",
    )
    _assert_perfect_violation(result, "groundhog")


def test_all_attacks_on_the_same_rounds_with_bonferroni(
    real_data: dict[str, Any], distance_result: dict[str, Any]
) -> None:
    result = run_audit(
        _config(real_data, attack="all"), out_dir=real_data["folder"] / "all"
    )
    n = len(ATTACK_NAMES)
    assert set(result["attacks"]) == set(ATTACK_NAMES)
    estimator = result["estimator"]
    assert estimator["correction"] == "bonferroni"
    assert estimator["n_attacks"] == n
    assert estimator["alpha"] == pytest.approx(0.05 / n)
    assert estimator["confidence"] == pytest.approx(1 - 0.05 / n)
    for entry in result["attacks"].values():
        assert entry["alpha"] == pytest.approx(0.05 / n)
    # The head result is the best attack's.
    best = max(entry["eps_emp"] for entry in result["attacks"].values())
    assert result["eps_emp"] == best
    assert result["attacks"][result["attack"]]["eps_emp"] == best
    assert result["verdict"] == "VIOLATION"
    # The corrected bound is smaller than one attack's at the full alpha...
    assert result["eps_max_attainable"] == pytest.approx(
        calibrated.eps_max_attainable(16, 16, delta=result["delta"], alpha=0.05 / n)
    )
    assert result["eps_max_attainable"] < distance_result["eps_max_attainable"]
    # ... and the distance attack reaches it, on the very rounds of the single run.
    distance = result["attacks"]["distance"]
    assert distance["eps_emp"] == result["eps_max_attainable"]
    assert distance["scores"] == distance_result["attacks"]["distance"]["scores"]
    assert result["rounds"] == distance_result["rounds"]


def test_out_of_domain_target_record_is_refused(
    real_data: dict[str, Any], tmp_path: Path
) -> None:
    record = real_data["table"].iloc[0].to_dict()
    record["Age"] = 500  # the public bounds are [13, 84]
    out = tmp_path / "refused"
    config = _config(real_data, target=None, target_record=record)
    with pytest.raises(DataError, match=r"column 'Age' has the value .*500") as err:
        run_audit(config, out_dir=out)
    assert "outside the domain's bounds [13, 84]" in str(err.value)
    assert not out.exists()  # refused before anything is written
