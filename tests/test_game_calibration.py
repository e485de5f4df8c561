"""benchmarks/game_calibration.py runs (its smoke mode: a few simulated audits of
each row). No rate is asserted here: the calibration claims have their statistical
tests (tests/audit/test_looks.py, tests/audit/test_onerun.py)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

BENCHMARK = Path(__file__).resolve().parents[1] / "benchmarks" / "game_calibration.py"


def test_game_calibration_smoke(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = importlib.util.spec_from_file_location("game_calibration", BENCHMARK)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "game_calibration", module)  # its dataclass
    spec.loader.exec_module(module)
    rows = module.main(["--smoke"])
    assert len(rows) == 7 and all(r.audits == 4 for r in rows)
    # A sequential audit never trains more than planned, one run fits once.
    once, seq = rows[0], rows[1]
    assert seq.mean_fits <= once.mean_fits == 200
    assert all(r.mean_fits == 1 for r in rows[4:])
    assert "| row | VIOLATION |" in capsys.readouterr().out
