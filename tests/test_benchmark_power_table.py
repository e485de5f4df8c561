"""benchmarks/power_table.py runs (its smoke mode: the reference PATE-GAN and the
copy plug-in on the worst case at 10 rounds per world); the figures README.md and
docs/ quote come from its full run."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path


def test_power_table_smoke(benchmark_smoke: Callable[[str], Path]) -> None:
    rows = json.loads(benchmark_smoke("power_table.py").read_text())["rows"]
    assert [(r["dataset"], r["generator"]) for r in rows] == [
        ("worst-case", "reference"),
        ("worst-case", "copy-plugin"),
    ]
    assert all(r["rounds_per_world"] == 10 and r["verdict"] for r in rows)
