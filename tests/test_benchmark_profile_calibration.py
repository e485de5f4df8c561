"""benchmarks/profile_calibration.py runs (its smoke mode: 4 simulated audits a row).
The rates have their statistical tests (tests/audit/test_profile_calibration.py)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path


def test_profile_calibration_smoke(benchmark_smoke: Callable[[str], Path]) -> None:
    rows = json.loads(benchmark_smoke("profile_calibration.py").read_text())["rows"]
    assert len(rows) == 8 and all(r["audits"] == 4 for r in rows)
    assert all(0 <= r["violations"] <= 4 for r in rows)
    # Laplace and randomized response have no mu: no ceiling.
    assert rows[1]["ceiling_over_mu"] is None and rows[0]["ceiling_over_mu"] > 0
