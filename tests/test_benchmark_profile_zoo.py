"""benchmarks/profile_zoo.py's smoke mode runs (two tiny real audits of zoo
plug-ins) and writes its table as JSON."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path


def test_profile_zoo_smoke(benchmark_smoke: Callable[[str], Path]) -> None:
    rows = json.loads(benchmark_smoke("profile_zoo.py").read_text())["rows"]
    assert [r["row"] for r in rows] == ["rr true", "gaussian 4x"]
    gaussian = rows[1]
    assert gaussian["stated"] == ["gdp_mu", "rdp"] and gaussian["seeds"] == 1
    assert abs(gaussian["mu_true"] - 0.925) < 1e-3
    for row in rows:
        assert 0 <= row["profile_violation_rate"] <= 1 and row["mean_seconds"] > 0
