"""benchmarks/zoo_calibration.py's smoke mode runs (a tiny real audit of the zoo's
Gaussian claiming 2.5, and one of its true claim) and writes the detection and
false-alarm rows with their Clopper-Pearson intervals, the oracle beside each, and
every audit."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path


def test_zoo_calibration_smoke(benchmark_smoke: Callable[[str], Path]) -> None:
    out = json.loads(benchmark_smoke("zoo_calibration.py").read_text())
    rows = {r["row"]: r for r in out["rows"]}
    assert list(rows) == ["gaussian 1.6x", "gaussian true", "true claims pooled"]
    detect, true = rows["gaussian 1.6x"], rows["gaussian true"]
    assert detect["kind"] == "detection" and true["kind"] == "false alarm"
    assert detect["audits"] == true["audits"] == 1
    for row in rows.values():
        assert 0.0 <= row["ci_low"] <= row["rate"] <= row["ci_high"] <= 1.0
    assert 0.0 <= detect["oracle"] <= 1.0
    # A true claim: the best threshold's false alarm is at most the level.
    assert 0.0 <= true["oracle"] <= true["per_attack_alpha"] + 1e-9
    assert detect["test_rounds"] == "4+4"
    assert [a["row"] for a in out["audits"]] == ["gaussian 1.6x", "gaussian true"]
    assert all(a["claim"]["gdp_mu"] > 0 for a in out["audits"])
