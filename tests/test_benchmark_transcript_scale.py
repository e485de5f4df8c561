"""benchmarks/transcript_scale.py runs (its smoke mode: a thousand distinct cells,
decided, and a thousand copies of one cell, refused in one line, each a whole audit
in its own process, plus the transcript path alone)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest


@pytest.mark.slow
def test_transcript_scale_smoke(benchmark_smoke: Callable[[str], Path]) -> None:
    rows = json.loads(benchmark_smoke("transcript_scale.py").read_text())["rows"]
    assert [r["row"] for r in rows] == ["distinct 1000", "repeated 1000"]
    distinct, repeated = rows
    assert distinct["exit"] == 0 and distinct["outcome"] == "INCONCLUSIVE"
    assert repeated["exit"] == 2 and "repeats ['cells'][0]" in repeated["outcome"]
    assert all(r["cpu_s"] > 0 and r["path_cpu_s"] >= 0 for r in rows)
