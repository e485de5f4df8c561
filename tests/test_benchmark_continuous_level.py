"""benchmarks/continuous_level.py runs (its smoke mode: three cases at 60 + 60 test
rounds), and what it measures holds: the continuous level's test is valid (size
bound at most alpha) and holds the grid level's (size and oracle at least the
grid's), the randomized test's size bound is alpha, a true claim's detection (a false
alarm) stays at most alpha, and the grid level's figures are the audit's own."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import numpy as np

from dpaudit.audit.stats import calibrated, deciding_counts, exact, violation_ceiling
from dpaudit.audit.stats.levelgap import level_gap, rejection_at

ROOT = Path(__file__).resolve().parents[1]


def test_continuous_level_smoke(benchmark_smoke: Callable[[str], Path]) -> None:
    run = json.loads(benchmark_smoke("continuous_level.py").read_text())
    rows = run["rows"]
    # The sweep (two counts of test rounds a case) and its summary.
    assert len(run["sweep"]) == 4 and set(run["sweep_summary"]) == {
        "4x-lines",
        "1.6x-profile-400",
    }
    for summary in run["sweep_summary"].values():
        assert summary["sizes"] == 2
        assert summary["continuous_max"] >= summary["continuous_mean"] >= 0.0
        rows_swept = [r for r in run["sweep"] if r["case"].startswith(summary["case"])]
        assert len(rows_swept) == 2
    assert len(rows) == 3 and all(r["rounds"] == 60 for r in rows)
    assert any(r["true_claim"] for r in rows) and not all(r["true_claim"] for r in rows)
    for r in rows + run["sweep"]:
        alpha = r["alpha"]
        assert r["size_grid"] <= r["size_continuous"] <= 1.0, r["case"]
        assert r["size_next_grid"] > 1.0  # the grid level is the largest that passes
        assert r["grid_level"] <= r["continuous_level"] < r["next_grid_level"]
        assert 0.0 <= r["gamma"] <= 1.0
        assert abs(r["size_randomized"] - 1.0) < 1e-9
        assert r["oracle_continuous"] >= r["oracle_grid"] >= 0.0, r["case"]
        assert r["oracle_randomized"] >= r["oracle_grid"], r["case"]
        assert r["oracle_randomized_above"] >= r["oracle_continuous"], r["case"]
        if r["true_claim"]:  # detection is a false alarm
            assert r["oracle_randomized"] <= alpha and r["oracle_continuous"] <= alpha


def test_the_grid_level_figures_are_the_audits() -> None:
    """The benchmark's rejection set at the grid level is the audit's deciding set,
    and its oracle is :func:`violation_ceiling`'s (60 + 60 test rounds)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import continuous_level as bench
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    n = 60
    case = next(c for c in bench.cases() if c.key == "4x-lines")
    claim = case.claim
    level = calibrated.claim_level(claim, n, n, alpha=bench.ALPHA, method=bench.METHOD)
    assert level is not None
    deciding = deciding_counts(claim, n, n, alpha=bench.ALPHA, delta=claim.delta)
    outside = calibrated._claim_outside(claim)
    g = rejection_at(float(exact.LEVELS[level]), n, outside)
    np.testing.assert_array_equal(g, deciding)
    row = bench.measure(replace(case, rounds=n))
    ceiling = violation_ceiling(claim, case.fpr, case.fnr, n, n, alpha=bench.ALPHA)
    assert abs(row["oracle_grid"] - ceiling) < 1e-12
    assert row["size_grid"] * bench.ALPHA == exact.size(
        np.asarray(deciding), calibrated._claim_boundary(claim), n
    )
    # The gap's grid level is the audit's, and its continuous level passes the
    # audit's check where the next grid level fails.
    gap = level_gap(claim, n, bench.ALPHA, bench.METHOD)
    assert gap.grid_level == float(exact.LEVELS[level])
    assert gap.grid_level <= gap.continuous_level < gap.next_level
    assert gap.size_grid <= gap.size_continuous <= bench.ALPHA < gap.size_next
