"""benchmarks/memory_plan.py runs (its smoke mode: the TOML's billion rounds refused
before anything is written). tests/audit/test_memory_plan.py tests the plan."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path


def test_memory_plan_smoke(benchmark_smoke: Callable[[str], Path]) -> None:
    (row,) = json.loads(benchmark_smoke("memory_plan.py").read_text())["rows"]
    assert row["row"] == "refusal: rounds = 1e9 (TOML)"
    assert row["exit"] == 2 and row["lines"] == 1 and not row["folder_created"]
    assert "rounds" in row["message"] and row["peak_mib"] > 0
