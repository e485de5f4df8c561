"""benchmarks/transcript_canary.py's smoke mode runs (one tiny canary-teacher
transcript audit beside the exact privacy of its transcript) and writes JSON."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path


def test_transcript_canary_smoke(benchmark_smoke: Callable[[str], Path]) -> None:
    out = benchmark_smoke("transcript_canary.py")
    (row,) = json.loads(out.read_text())["rows"]
    assert row["row"] == "reference" and row["teachers"] == 2
    exact = row["exact"]
    # Two iterations of the reference: the target's teacher votes "real" once it
    # has trained on it, no teacher does without it; the exact epsilon is below
    # the claim (the accountant is an upper bound).
    assert exact["n1_with_max"] == 1 and exact["n1_without_max"] == 0
    assert 0 < exact["epsilon"] < row["claim"]
    assert row["verdict"] in ("CONSISTENT", "INCONCLUSIVE")
