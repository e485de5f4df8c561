"""benchmarks/game_calibration.py runs (its smoke mode: a few simulated audits of
each row). No rate is asserted here: the calibration claims have their statistical
tests (tests/audit/test_looks.py, tests/audit/test_onerun.py)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path


def test_game_calibration_smoke(benchmark_smoke: Callable[[str], Path]) -> None:
    rows = json.loads(benchmark_smoke("game_calibration.py").read_text())["rows"]
    assert len(rows) == 7 and all(r["audits"] == 4 for r in rows)
    # A sequential audit never trains more than planned, one run fits once.
    once, seq = rows[0], rows[1]
    assert seq["mean_fits"] <= once["mean_fits"] == 200
    assert all(r["mean_fits"] == 1 for r in rows[4:])
    assert all(r["seconds"] >= 0 for r in rows)
