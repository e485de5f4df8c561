"""benchmarks/adapters_audit.py's smoke mode runs: the toy plug-in CopyData audited
through the adapters' path (a worker under --python, here this interpreter)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path


def test_adapters_audit_smoke(benchmark_smoke: Callable[[str], Path]) -> None:
    (row,) = json.loads(benchmark_smoke("adapters_audit.py").read_text())["rows"]
    assert row["row"] == "toy CopyData" and row["rc"] == 0
    assert row["rounds_per_world"] == 10 and row["verdict"] is not None
    assert "--python" in row["command"] and row["seconds"] > 0
