"""benchmarks/check_power.py runs (its smoke mode: 50 rounds per world); the
figures docs/ci.md and examples/privacy.toml quote come from its recorded run
(benchmarks/records/check_power.json, tests/test_doc_records.py)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path


def test_check_power_smoke(benchmark_smoke: Callable[[str], Path]) -> None:
    rows = json.loads(benchmark_smoke("check_power.py").read_text())["rows"]
    assert [r["rounds"] for r in rows] == [50, 50, 50]
    for row in rows:
        # The looks' maxima grow with their size; the last is below the figure
        # analysed once (its alpha is 0.7 of the audit's).
        assert row["at_looks"] == sorted(row["at_looks"])
        assert row["at_looks"][-1] < row["once"]
