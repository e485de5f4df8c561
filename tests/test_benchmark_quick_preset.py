"""benchmarks/quick_preset.py's smoke mode runs one tiny `dpaudit check` of the
Laplace marginals plug-in (examples/) under the quick preset, in process, and
records the check's exit code per seed."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path


def test_quick_preset_smoke(benchmark_smoke: Callable[[str], Path]) -> None:
    rows = json.loads(benchmark_smoke("quick_preset.py").read_text())["rows"]
    assert [r["row"] for r in rows] == ["overclaim, rounds 10"]
    row = rows[0]
    assert row["seeds"] == 1 and len(row["checks"]) == 1
    check = row["checks"][0]
    assert check["exit"] in (0, 1, 4) and check["error"] is None
    assert row["exit_1"] == (check["exit"] == 1)
    assert 0.0 <= row["ci_low"] <= row["rate"] <= row["ci_high"] <= 1.0
