"""benchmarks/transcript_canary.py's smoke mode runs (one tiny canary-teacher
transcript audit beside the exact privacy of its transcript) and writes JSON."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_transcript_canary_smoke(tmp_path: Path) -> None:
    out = tmp_path / "canary.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    script = str(ROOT / "benchmarks" / "transcript_canary.py")
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
    assert row["row"] == "reference" and row["teachers"] == 2
    exact = row["exact"]
    # Two iterations of the reference: the target's teacher votes "real" once it
    # has trained on it, no teacher does without it; the exact epsilon is below
    # the claim (the accountant is an upper bound).
    assert exact["n1_with_max"] == 1 and exact["n1_without_max"] == 0
    assert 0 < exact["epsilon"] < row["claim"]
    assert row["verdict"] in ("CONSISTENT", "INCONCLUSIVE")
