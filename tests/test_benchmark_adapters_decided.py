"""benchmarks/adapters_decided.py's smoke mode: a cell is audited again, larger, until
its verdict is decided (INCONCLUSIVE at 10 rounds per world, then a VIOLATION at the
rounds the result said were needed), and the table is written as JSON (the work
folder's table.json and the harness's --out FILE)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _harness_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """The benchmark imports benchmarks/harness.py, found beside it when run."""
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))


@pytest.mark.slow
def test_smoke_escalates_until_decided(tmp_path: Path, capsys) -> None:
    spec = importlib.util.spec_from_file_location(
        "adapters_decided", ROOT / "benchmarks" / "adapters_decided.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    out = tmp_path / "decided.json"
    assert module.main(["--smoke", "--work-dir", str(tmp_path), "--out", str(out)]) == 0
    table = json.loads((tmp_path / "table.json").read_text())
    rows = json.loads(out.read_text())["rows"]
    assert [r["verdict"] for r in rows] == [c["verdict"] for c in table]
    assert len(table) == 1
    cell = table[0]
    audits = cell["audits"]
    assert [a["verdict"] for a in audits] == ["INCONCLUSIVE", "VIOLATION"]
    assert audits[0]["rounds"] == 10 and audits[1]["rounds"] > 10
    assert cell["verdict"] == "VIOLATION" and cell["why"] == "VIOLATION"
    assert "VIOLATION" in capsys.readouterr().out


@pytest.mark.slow
def test_smoke_cheapest_route(tmp_path: Path) -> None:
    """--route cheapest: a one-run VIOLATION decides a cell alone (CopyData); a one-run
    CONSISTENT decides nothing and the sequential two-world audit follows, stopping
    at the first look that proves the leaking randomized response's VIOLATION."""
    spec = importlib.util.spec_from_file_location(
        "adapters_decided_cheapest", ROOT / "benchmarks" / "adapters_decided.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    argv = ["--smoke", "--route", "cheapest", "--work-dir", str(tmp_path)]
    assert module.main(argv) == 0
    copy, rr = json.loads((tmp_path / "table.json").read_text())
    assert copy["route"] == "one-run" and copy["decided"]
    assert copy["verdict"] == "VIOLATION" and copy["fits_total"] == 1
    assert copy["eps_emp"] <= copy["eps_max_attainable"]
    assert rr["route"] == "one-run then two-world" and rr["decided"]
    one_run, two_world = rr["audits"]
    assert one_run["verdict"] != "VIOLATION"
    assert "decides nothing" in rr["why"]
    assert two_world["verdict"] == "VIOLATION" and two_world["stopped_early"]
    assert two_world["rounds"] < two_world["planned_rounds"] == 100
    assert (
        "--alpha 0.04" in two_world["command"] and "--alpha 0.01" in one_run["command"]
    )
    # --skip-done reuses both cells' audits: nothing is run again.
    assert module.main([*argv, "--skip-done"]) == 0
    again = json.loads((tmp_path / "table.json").read_text())
    assert [a["reused"] for c in again for a in c["audits"]] == [True, True, True]
    assert again[1]["verdict"] == "VIOLATION" and again[1]["why"] == rr["why"]
    assert [c["wall_s_total"] for c in again] == [
        copy["wall_s_total"],
        rr["wall_s_total"],
    ]
    assert (tmp_path / "table.md").read_text().count("\n| ") == 1
    # --no-run tabulates what is there and runs nothing.
    empty = tmp_path / "empty"
    assert (
        module.main(
            ["--smoke", "--route", "cheapest", "--no-run", "--work-dir", str(empty)]
        )
        == 0
    )
    rows = json.loads((empty / "table.json").read_text())
    assert [r["why"] for r in rows] == [
        "one-run not run: no audit in --work-dir (--no-run)"
    ] * 2
