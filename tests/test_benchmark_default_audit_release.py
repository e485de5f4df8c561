"""benchmarks/default_audit_release.py runs (its smoke mode: one public seed, three
iterations); docs/soundness.md, "The default audit", has the measured table."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path


def test_default_audit_release_smoke(benchmark_smoke: Callable[[str], Path]) -> None:
    rows = json.loads(benchmark_smoke("default_audit_release.py").read_text())["rows"]
    assert [(r["row"], r["min_width"]) for r in rows] == [
        ("continuous", 1),
        ("continuous", 8),
        ("binary", 1),
        ("binary", 8),
    ]
    assert all(
        r["iterations"] == 3 and r["seeds_d_differs"].endswith("/ 1") for r in rows
    )
