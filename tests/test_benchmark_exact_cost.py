"""benchmarks/exact_cost.py runs (its smoke mode: the default audit's exact-test calls
on 40 + 40 test rounds, once). tests/audit/test_exact_fast.py tests the code."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path


def test_exact_cost_smoke(benchmark_smoke: Callable[[str], Path]) -> None:
    timed, filled, read, peak = json.loads(
        benchmark_smoke("exact_cost.py").read_text()
    )["rows"]
    assert timed["test_rounds"] == peak["test_rounds"] == read["test_rounds"] == 40
    assert filled["cpu_seconds"] >= 0 and read["cpu_seconds"] >= 0
    assert timed["cpu_seconds"] > 0 and peak["peak_mib"] > 0
    parts = [v for k, v in timed.items() if k.endswith("_s")]
    assert len(parts) == 5 and all(v >= 0 for v in parts)
    assert abs(sum(parts) - timed["cpu_seconds"]) < 1e-9
