"""benchmarks/gpate_canary.py's smoke mode runs (one tiny G-PATE canary-teacher
transcript audit beside the exact privacy of its transcript) and writes JSON."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_gpate_canary_smoke(tmp_path: Path) -> None:
    out = tmp_path / "gpate.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    script = str(ROOT / "benchmarks" / "gpate_canary.py")
    done = subprocess.run(
        [sys.executable, script, "--smoke", "--out", str(out)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    (row,) = json.loads(out.read_text())["rows"]
    exact = row["exact"]
    # Two iterations, k = 2: the target's teacher alone holds it; the exact epsilon
    # of the canary transcript is below the claim (the accountant is an upper bound).
    assert exact["teachers"] == 2 and exact["holders"] == [1, 0], exact
    assert exact["stops"] == [2 * 32 * 5], exact
    assert 0 < exact["epsilon"] < row["claim"]
    assert 0 < exact["mu"] < row["mu_claim"]
    assert row["verdict"] in ("CONSISTENT", "INCONCLUSIVE")
