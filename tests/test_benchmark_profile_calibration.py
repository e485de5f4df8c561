"""benchmarks/profile_calibration.py runs (its smoke mode: 4 simulated audits a row).
The rates have their statistical tests (tests/audit/test_profile_calibration.py)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path


def test_profile_calibration_smoke(benchmark_smoke: Callable[[str], Path]) -> None:
    rows = json.loads(benchmark_smoke("profile_calibration.py").read_text())["rows"]
    # The smoke run makes both tables: the power table's 3 mechanisms x 2 claims at
    # one size, then the 9 calibration rows.
    power, calibration = rows[:6], rows[6:]
    assert len(calibration) == 9 and all(r["audits"] == 4 for r in rows)
    assert all(0 <= r["violations"] <= 4 for r in rows)
    assert all(0 <= r["violations_box"] <= 4 for r in power)
    assert [r["mechanism"] for r in power[::2]] == ["gaussian", "rr", "laplace"]
    # Laplace and randomized response have no mu: no ceiling.
    assert calibration[1]["ceiling_over_mu"] is None
    assert calibration[0]["ceiling_over_mu"] > 0
    assert power[0]["mu_ceiling"] > 0 and power[2]["mu_ceiling"] is None
    # The oracle beside each Gaussian row (a true claim: at most its alpha), and for
    # a claim of the lines alone the oracle of the rule before its own test too.
    assert 0.0 <= calibration[0]["oracle"] <= 0.05 and calibration[1]["oracle"] is None
    lines = {r["row"]: r for r in calibration if r["oracle_eps_rule"] is not None}
    assert len(lines) == 2
    for row in lines.values():
        assert row["oracle_eps_rule"] <= row["oracle"] + 1e-12
