"""benchmarks/onerun_rules.py runs (its smoke mode: a few simulated audits per row
and rule). No rate is asserted here: the calibration has its statistical tests
(tests/audit/test_onerun.py)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path


def test_onerun_rules_smoke(benchmark_smoke: Callable[[str], Path]) -> None:
    rows = json.loads(benchmark_smoke("onerun_rules.py").read_text())["rows"]
    assert len(rows) == 15 and all(r["audits"] == 4 for r in rows)
    assert {r["row"].rsplit(", ", 1)[1] for r in rows} == {"count", "threshold", "both"}
    assert all(0 <= r["mean_eps_emp"] <= r["mean_attainable"] for r in rows)
