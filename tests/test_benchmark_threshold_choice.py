"""benchmarks/threshold_choice.py runs (its smoke mode: 3 audits at 50 + 100
validation and test rounds per world, both rules); the figures docs/soundness.md
quotes come from its full run."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from dpaudit.audit.stats.thresholds import POWER_CUT


def test_threshold_choice_smoke(benchmark_smoke: Callable[[str], Path]) -> None:
    rows = json.loads(benchmark_smoke("threshold_choice.py").read_text())["rows"]
    # The first row is the rule as it is: the benchmark's cut is the module's.
    assert [r["cut"] for r in rows] == [POWER_CUT, 1e-9]
    assert all(r["audits"] == 3 and 0.0 < r["ceiling"] < 1.0 for r in rows)
    assert all(0.0 <= r["below_70"] <= 1.0 for r in rows)
