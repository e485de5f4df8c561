"""benchmarks/end_to_end.py runs (its smoke mode: the default audit at 10 rounds per
world, as a command and by phase in one process). No timing is asserted."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path


def test_end_to_end_smoke(benchmark_smoke: Callable[[str], Path]) -> None:
    rows = json.loads(benchmark_smoke("end_to_end.py").read_text())["rows"]
    command = rows[0]
    assert command["row"] == "dpaudit audit (subprocess)"
    assert command["verdict"] in ("CONSISTENT", "INCONCLUSIVE", "VIOLATION")
    phases = [r for r in rows if r["row"].startswith("phase: ")]
    assert len(phases) == 5
    assert abs(sum(r["cpu_share"] for r in phases) - 1) < 1e-9
