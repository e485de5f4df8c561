"""benchmarks/measurement_audits.py's smoke mode runs (one honest and one
quarter-noise audit of the toy that states its transcript) and writes JSON."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest


@pytest.mark.slow
def test_measurement_audits_smoke(benchmark_smoke: Callable[[str], Path]) -> None:
    doc = json.loads(benchmark_smoke("measurement_audits.py").read_text())
    rows = {r["row"]: r for r in doc["rows"]}
    assert set(rows) == {"honest", "quarter noise"}
    assert set(doc["violations"]) == {"honest", "quarter noise"}
    for row in rows.values():
        assert row["mu_exact"] > 0
        assert row["spent"] == pytest.approx(row["claimed"], rel=1e-9)
