"""An audit's result does not depend on ``--batch-size``, ``--jobs`` or the backend.

Models trained in one batched tensor program agree with their single fits to float32
rounding only (tests/generators/test_nets.py states why), so the audit trains fixed
training groups of rounds (:data:`dpaudit.audit.games.execution.TRAINING_GROUP`), whatever
the batch a worker takes. These tests shrink the group to 4 rounds (the threads of the
default backend share the module) so that a small audit spans several groups and
batches of several sizes cut across them, then compare every stored feature vector bit
for bit and ``result.json`` field for field.

The generator is the ``synthcity`` variant on the continuous worst case: its batched
training is not bitwise equal to single fits (measured on an AMD EPYC: parameters
differ by up to 6e-8 after 50 iterations), and continuous releases carry such
differences into the features. Before training groups, the feature vectors of this
audit differed between ``--batch-size 4`` and ``--batch-size 24`` on that machine.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from dpaudit.audit.config.model import AuditConfig
from dpaudit.audit.games import execution
from dpaudit.audit.run import run_audit

#: What legitimately differs between two runs of one audit: how it ran and how long.
EXECUTION_KEYS = ("batch_size", "jobs", "backend")


def _features(out: Path) -> dict[tuple[int, str], bytes]:
    with sqlite3.connect(out / "audit.sqlite") as conn:
        tables = [
            r[0]
            for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        ]
        assert "features" in tables
        columns = [r[1] for r in conn.execute("PRAGMA table_info(features)")]
        rows = conn.execute(f"SELECT {', '.join(columns)} FROM features").fetchall()
    named = [dict(zip(columns, row)) for row in rows]
    blob = next(c for c in columns if c not in ("round", "attack"))
    return {(int(r["round"]), str(r["attack"])): bytes(r[blob]) for r in named}


def _comparable(out: Path) -> dict[str, Any]:
    result = json.loads((out / "result.json").read_text())
    result.pop("timing", None)
    config = result.get("config", {})
    for key in EXECUTION_KEYS:
        config.pop(key, None)
    return result


@pytest.mark.slow
def test_result_is_the_same_for_any_batch_size_and_jobs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(execution.TRAINING_GROUP, "cpu", 4)
    base = AuditConfig(
        variant="synthcity",
        dataset="worst-case-continuous",
        rounds=12,
        device="cpu",
        seed=3,
        generator_options={"max_iterations": 20},
    )
    runs = {
        "batch 4, 1 job": {"batch_size": 4, "jobs": 1},
        "batch 8, 2 jobs": {"batch_size": 8, "jobs": 2},
        "batch 24, 1 job": {"batch_size": 24, "jobs": 1},
    }
    features: dict[str, dict[tuple[int, str], bytes]] = {}
    results: dict[str, dict[str, Any]] = {}
    for name, settings in runs.items():
        out = tmp_path / name.replace(" ", "").replace(",", "_")
        config = replace(base, **settings)
        run_audit(config, out_dir=out)
        features[name] = _features(out)
        results[name] = _comparable(out)
    first = next(iter(runs))
    assert len(features[first]) >= 24
    for name in runs:
        assert features[name] == features[first], name
        assert results[name] == results[first], name


def test_in_groups_follows_the_round_index_not_the_batch() -> None:
    group = 4
    whole = execution.in_groups(list(range(12)), group)
    assert whole == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]
    # A batch that starts inside a group, or lacks a round (the traced one), splits at
    # the same boundaries.
    assert execution.in_groups([2, 3, 4, 5], group) == [[2, 3], [4, 5]]
    assert execution.in_groups([0, 2, 3, 5], group) == [[0, 2, 3], [5]]
    assert execution.whole_groups(5, group) == 8
    assert execution.whole_groups(8, group) == 8
    assert execution.whole_groups(0, group) == 4
