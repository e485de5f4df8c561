"""benchmarks/onerun_transcript.py runs (its smoke mode: a few simulated audits per
row and one real one-run transcript audit of the NoisyMarginals plug-in), and the
figures the docs state come from its record files."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RECORDS = ROOT / "docs" / "records"


def _text(name: str) -> str:
    return " ".join((ROOT / name).read_text(encoding="utf-8").split())


@pytest.mark.slow
def test_onerun_transcript_smoke(benchmark_smoke: Callable[[str], Path]) -> None:
    rows = json.loads(benchmark_smoke("onerun_transcript.py").read_text())["rows"]
    simulated = [r for r in rows if r["row"].startswith("simulated")]
    audits = [r for r in rows if r["row"].startswith("audit")]
    assert len(simulated) == 6 and all(r["audits"] == 3 for r in simulated)
    assert [r.get("bound") for r in simulated] == [None, None] + ["fdp"] * 4
    assert len(audits) == 1 and audits[0]["verdict"] in ("CONSISTENT", "INCONCLUSIVE")
    assert audits[0]["accountant"] == "tight"
    assert "--game one-run --release transcript" in audits[0]["command"]


def test_docs_state_the_simulated_record() -> None:
    """docs/onerun.md states the simulated rows as the record file has them."""
    doc = json.loads((RECORDS / "onerun_transcript_simulated.json").read_text())
    assert not doc["smoke"]
    text = _text("docs/onerun.md")
    for row in doc["rows"]:
        assert f"{row['violations']:,} of {row['audits']:,}" in text, row["row"]
        assert f"{row['mean_eps_emp']:.3f}" in text, row["row"]


def test_docs_state_the_guide_record() -> None:
    """docs/onerun.md states the white-box guide's audits (``--guide``) as the record
    file has them, and docs/plugins.md the worst-case-unique ones."""
    doc = json.loads((RECORDS / "onerun_transcript_guide.json").read_text())
    assert not doc["smoke"] and len(doc["rows"]) == 4
    onerun, plugins = _text("docs/onerun.md"), _text("docs/plugins.md")
    for row in doc["rows"]:
        figures = [
            f"| {row['verdict']} | {row['eps_emp']:.3f} | "
            f"{row['one_run_mu_emp']:.3f} | {row['correct']} of {row['guesses']} | "
            f"{row['wall_seconds']:.0f} s ({row['audit_seconds']:.1f} s) |",
        ]
        for figure in figures:
            assert figure in onerun, (row["row"], figure)
        if row["dataset"] == "worst-case-unique":
            assert f"eps_emp {row['eps_emp']:.3f}, mu_emp " in plugins, row["row"]
            assert f"{row['correct']} of {row['guesses']}" in plugins, row["row"]
    assert doc["rows"][0]["verdict"] == "VIOLATION"
    assert doc["rows"][1]["verdict"] != "VIOLATION"


def test_docs_state_the_unique_library_record() -> None:
    """docs/onerun.md states the worst-case-unique library audits as the record file
    (``--library-dataset worst-case-unique``) has them."""
    doc = json.loads((RECORDS / "onerun_unique_libraries.json").read_text())
    assert not doc["smoke"] and doc["args"]["library_dataset"] == "worst-case-unique"
    text = _text("docs/onerun.md")
    rows = {r["generator"]: r for r in doc["rows"] if r["row"].startswith("audit")}
    assert rows["smartnoise-mst"]["verdict"] == "timed out"
    assert f"no result within {doc['args']['timeout']:.0f} s" in text
    dpmm = rows["dpmm-mst"]
    for figure in (
        f"finished in {dpmm['wall_seconds']:.0f} s, {dpmm['verdict']}",
        f"eps_emp {dpmm['eps_emp']:.3f}, {dpmm['correct']} of {dpmm['guesses']} "
        f"right, AUC {dpmm['auc']:.3f}",
        f"own-cell mu, {dpmm['own_mu']:.3f}, is the exact mu",
        f"loose by {dpmm['claimed'] / dpmm['spent']:.2f}x",
    ):
        assert figure in text, figure
    assert dpmm["own_mu"] == pytest.approx(dpmm["mu_exact"], abs=1e-4)


def test_docs_state_the_library_record(monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/libraries.md's white-box one-run rows are the record's, as the benchmark
    renders them (``--markdown RECORD``)."""
    import importlib.util

    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    spec = importlib.util.spec_from_file_location(
        "onerun_transcript", ROOT / "benchmarks" / "onerun_transcript.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    rows = []
    for record in sorted(RECORDS.glob("onerun_transcript_libraries*.json")):
        doc = json.loads(record.read_text())
        assert not doc["smoke"]
        rows += [r for r in doc["rows"] if r["row"].startswith("audit")]
    assert rows and all(r["fits"] <= 4 for r in rows)
    page = (ROOT / "docs" / "libraries.md").read_text(encoding="utf-8")
    for row in rows:
        assert module.markdown_row(row) in page, row["row"]
