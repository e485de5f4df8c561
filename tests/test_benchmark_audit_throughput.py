"""benchmarks/audit_throughput.py runs (its smoke mode: a few rounds, one small
batch); no rate is asserted, only that batched sampling gives each model its bits."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path


def test_audit_throughput_smoke(benchmark_smoke: Callable[[str], Path]) -> None:
    rows = json.loads(benchmark_smoke("audit_throughput.py").read_text())["rows"]
    by_row = {r["row"]: r for r in rows}
    assert by_row["batched (4 per fit_many)"]["rounds"] == 4
    assert by_row["one fit per round"]["rounds_per_s"] > 0
    assert by_row["release, sample_many + views"]["same_bits"] is True
