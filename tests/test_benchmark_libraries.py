"""benchmarks/libraries.py: its smoke mode audits one toy plug-in in seconds and
writes docs/libraries.md's table; its cells name what they cannot run and why."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest

from dpaudit.audit.stats.estimators import eps_max_attainable

ROOT = Path(__file__).resolve().parents[1]


def _module() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "libraries", ROOT / "benchmarks" / "libraries.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_smoke_writes_the_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    module = _module()
    assert module.main(["--smoke", "--work-dir", str(tmp_path)]) == 0
    rows = json.loads((tmp_path / "table.json").read_text())
    assert len(rows) == 1
    row = rows[0]
    assert row["verdict"] in ("VIOLATION", "CONSISTENT", "INCONCLUSIVE")
    assert row["fits"] == 10 and row["wall_s"] > 0 and row["date"]
    assert row["command"].startswith("dpaudit audit --generator ")
    assert "--out OUT" in row["command"] and str(tmp_path) not in row["command"]
    table = (tmp_path / "table.md").read_text()
    assert table.count("\n") == 3 and row["command"] in table
    assert row["verdict"] in capsys.readouterr().out


def test_cells_say_why_they_are_not_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = _module()
    refused = module.cell_options("synthcity-privbayes", "public", "worst-case")
    assert isinstance(refused, str) and "refuses preprocessing=public" in refused
    assert module.cell_options("synthcity-dpgan", "public", "worst-case") == [
        "preprocessing=public",
        "n_iter=2",
    ]
    monkeypatch.setenv("DPAUDIT_ENV_HOME", str(tmp_path / "none"))
    assert module.main(["--only", "opendp-mst", "--work-dir", str(tmp_path)]) == 0
    rows = json.loads((tmp_path / "table.json").read_text())
    assert len(rows) == 4
    assert all("dpaudit env opendp builds it" in r["why"] for r in rows)
    command = module.shown(
        [
            "python",
            "-m",
            "dpaudit",
            "audit",
            "--python",
            "/x/envs/opendp/bin/python",
            "--out",
            "/tmp/o",
            "--force",
        ]
    )
    assert command == (
        "dpaudit audit --python ~/.cache/dpaudit/envs/opendp/bin/python --out OUT"
    )


def test_the_tables_attainable_maximum_is_the_codes() -> None:
    """docs/libraries.md's two-world cells (20 rounds per world, 70% testing, one
    attack) could show at most the figure it states."""
    text = " ".join((ROOT / "docs" / "libraries.md").read_text().split())
    figure = eps_max_attainable(14, 14, delta=1e-5)
    assert f"at 20 rounds per world the attainable maximum is {figure:.2f}" in text


def test_docs_state_the_onerun_bounds_record() -> None:
    """docs/libraries.md's black-box one-run rows (every bound from the same fit) are
    the record's (benchmarks/records/libraries.json), as the benchmark renders them
    (``--markdown RECORD``), and the section holds no other row."""
    module = _module()
    record = json.loads(
        (ROOT / "benchmarks" / "records" / "libraries.json").read_text()
    )
    assert record["command"].startswith("python benchmarks/libraries.py --game one-run")
    page = (ROOT / "docs" / "libraries.md").read_text(encoding="utf-8")
    section = page.split("## Black-box one-run audits, every bound", 1)[1]
    section = section.split("\n## ", 1)[0]
    assert module.BOUNDS_HEADER in section
    rows = record["figures"]["rows"]
    assert rows
    for row in rows:
        assert module.bounds_row(row) in section, row["cell"]
        if row.get("verdict") is not None:
            assert set(row["bounds"]) == {"steinke", "fdp", "order"}
    table = section.split(module.BOUNDS_HEADER, 1)[1].split("\n\n", 1)[0]
    assert table.strip().count("\n") + 1 == len(rows)
