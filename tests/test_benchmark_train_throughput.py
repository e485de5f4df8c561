"""benchmarks/train_throughput.py runs (its smoke mode: two iterations, M = 1 and 4
models). No rate is asserted: README.md quotes the full run's."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path


def test_train_throughput_smoke(benchmark_smoke: Callable[[str], Path]) -> None:
    rows = json.loads(benchmark_smoke("train_throughput.py").read_text())["rows"]
    assert [r["row"] for r in rows] == [
        "sequential loop of single fits",
        "batched M = 1",
        "batched M = 4",
    ]
    assert all(r["model_iterations_per_s"] > 0 for r in rows)
