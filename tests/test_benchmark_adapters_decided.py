"""benchmarks/adapters_decided.py's smoke mode: a cell is audited again, larger, until
its verdict is decided (INCONCLUSIVE at 10 rounds per world, then a VIOLATION at the
rounds the result said were needed), and the table is written as JSON."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_smoke_escalates_until_decided(tmp_path: Path, capsys) -> None:
    spec = importlib.util.spec_from_file_location(
        "adapters_decided", ROOT / "benchmarks" / "adapters_decided.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.main(["--smoke", "--out", str(tmp_path)]) == 0
    table = json.loads((tmp_path / "table.json").read_text())
    assert len(table) == 1
    cell = table[0]
    audits = cell["audits"]
    assert [a["verdict"] for a in audits] == ["INCONCLUSIVE", "VIOLATION"]
    assert audits[0]["rounds"] == 10 and audits[1]["rounds"] > 10
    assert cell["verdict"] == "VIOLATION" and cell["why"] == "VIOLATION"
    assert "VIOLATION" in capsys.readouterr().out
