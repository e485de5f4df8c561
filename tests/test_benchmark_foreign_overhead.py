"""benchmarks/foreign_overhead.py runs (its smoke mode: this checkout against itself,
one toy audit each at 10 rounds per world). No timing is asserted."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path


def test_foreign_overhead_smoke(benchmark_smoke: Callable[[str], Path]) -> None:
    run = json.loads(benchmark_smoke("foreign_overhead.py").read_text())
    assert [r["row"] for r in run["rows"]] == [
        "run 1 before",
        "run 1 after",
        "median before",
        "median after",
    ]
    assert all(r["train_s"] > 0 for r in run["rows"])
    assert set(run["after_over_before"]) == {"wall", "train"}
