"""benchmarks/profile_zoo.py's smoke mode runs (two tiny real audits of zoo
plug-ins) and writes its table as JSON."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_profile_zoo_smoke(tmp_path: Path) -> None:
    out = tmp_path / "zoo.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    script = str(ROOT / "benchmarks" / "profile_zoo.py")
    done = subprocess.run(
        [sys.executable, script, "--smoke", "--out", str(out)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "rr true" in done.stdout and "gaussian 4x" in done.stdout
    rows = json.loads(out.read_text())["rows"]
    assert [r["row"] for r in rows] == ["rr true", "gaussian 4x"]
    gaussian = rows[1]
    assert gaussian["stated"] == ["gdp_mu", "rdp"] and gaussian["seeds"] == 1
    assert abs(gaussian["mu_true"] - 0.925) < 1e-3
    for row in rows:
        assert 0 <= row["profile_violation_rate"] <= 1 and row["mean_seconds"] > 0
