"""benchmarks/gpate_canary.py's smoke mode runs (one tiny G-PATE canary-teacher
transcript audit beside the exact privacy of its transcript) and writes JSON."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path


def test_gpate_canary_smoke(benchmark_smoke: Callable[[str], Path]) -> None:
    out = benchmark_smoke("gpate_canary.py")
    (row,) = json.loads(out.read_text())["rows"]
    exact = row["exact"]
    # Two iterations, k = 2: the target's teacher alone holds it; the exact epsilon
    # of the canary transcript is below the claim (the accountant is an upper bound).
    assert exact["teachers"] == 2 and exact["holders"] == [1, 0], exact
    assert exact["stops"] == [2 * 32 * 5], exact
    assert 0 < exact["epsilon"] < row["claim"]
    assert 0 < exact["mu"] < row["mu_claim"]
    assert row["verdict"] in ("CONSISTENT", "INCONCLUSIVE")
