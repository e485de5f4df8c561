"""benchmarks/onerun_tightness.py and benchmarks/onerun_zoo.py: their smoke modes,
the JSON rows, and the figures docs/onerun.md quotes from their record files."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RECORDS = ROOT / "benchmarks" / "records"
KEYS = {"bound", "mu", "canaries", "eps_true", "eps_lo", "fraction"}


def test_onerun_tightness_smoke(benchmark_smoke: Callable[[str], Path]) -> None:
    rows = json.loads(benchmark_smoke("onerun_tightness.py").read_text())["rows"]
    got = {(r["bound"], r["family"]) for r in rows}
    assert {r["counts"] for r in rows} == {"planned", "tenth", None}
    assert got == {
        ("steinke", "lines"),
        ("fdp", "lines"),
        ("fdp", "gdp"),
        ("order", "lines"),
        ("order", "gdp"),
        ("ceiling", "gdp"),
    }
    from dpaudit.audit.games.one_run.counts import plan_counts

    for r in rows:
        assert set(r) >= KEYS
        assert 0.0 <= r["eps_lo"] <= r["eps_true"] * 1.5
        assert r["fraction"] == pytest.approx(r["eps_lo"] / r["eps_true"])
        if r["counts"] == "tenth":  # the counts before planning
            assert r["per_side"] == max(1, r["canaries"] // 10)
        elif r["bound"] != "ceiling":  # the counts the game plans for this bound
            planned = plan_counts(
                canaries=r["canaries"],
                epsilon=r["eps_true"],
                delta=1e-5,
                alpha=0.05,
                bound=r["bound"],
            )
            assert r["per_side"] == planned.guesses_in


def test_onerun_tightness_json_rows() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "onerun_tightness.py"),
            "--smoke",
            "--json",
            "--mu",
            "2",
            "--canaries",
            "100",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    rows = json.loads(done.stdout)
    assert rows and all(set(r) >= KEYS for r in rows)
    assert {(r["mu"], r["canaries"]) for r in rows} == {(2.0, 100)}


def _doc_table(heading: str) -> list[list[str]]:
    """The cells of the first table under ``heading`` in docs/onerun.md."""
    text = (ROOT / "docs" / "onerun.md").read_text()
    part = text.split(heading, 1)[1]
    rows = []
    for line in part.splitlines():
        if line.startswith("| ") and not line.startswith("| ---"):
            rows.append([c.strip() for c in line.strip("|").split("|")])
        elif rows and not line.startswith("|"):
            break
    return rows[1:]


def test_doc_quotes_the_tightness_record() -> None:
    """docs/onerun.md's table of fractions is the record's, to three decimals."""
    record = json.loads((RECORDS / "onerun_tightness.json").read_text())
    figures = record["figures"]
    by_key = {
        (r["bound"], r["family"], r["mu"], r["canaries"]): r
        for r in figures["rows"]
        if r["counts"] != "tenth"
    }
    table = _doc_table("<!-- onerun_tightness record -->")
    assert len(table) == len(by_key)
    for bound, family, mu, canaries, eps_true, eps_lo, fraction, *_ in table:
        row = by_key[(bound, family, float(mu), int(canaries.replace(",", "")))]
        assert eps_true == f"{row['eps_true']:.3f}"
        assert eps_lo == f"{row['eps_lo']:.3f}"
        assert fraction == f"{row['fraction']:.3f}"
    text = (ROOT / "docs" / "onerun.md").read_text()
    assert record["command"] in text


def test_doc_comparisons_are_the_records() -> None:
    """docs/onerun.md's sentences comparing the planned counts with a tenth per side,
    the lines, Steinke's bound and the ceiling quote the record's rows."""
    rows = json.loads((RECORDS / "onerun_tightness.json").read_text())["figures"]
    by_key = {
        (r["bound"], r["family"], r["mu"], r["canaries"], r["counts"]): r["fraction"]
        for r in rows["rows"]
    }

    def f(bound: str, family: str, mu: float, n: int, counts: str | None) -> str:
        return f"{by_key[(bound, family, mu, n, counts)]:.3f}"

    p, t = "planned", "tenth"
    sentences = [
        "the default (`fdp`, gdp, planned counts) reaches {} and {}. With the counts "
        "used before they were planned (a tenth per side, `auto` = `order` from 10,000 "
        "canaries) the same simulated audits give {} and {}".format(
            f("fdp", "gdp", 1.0, 1000, p),
            f("fdp", "gdp", 1.0, 10000, p),
            f("fdp", "gdp", 1.0, 1000, t),
            f("order", "gdp", 1.0, 10000, t),
        ),
        "(mu 0.5, 1, 2: {}, {}, {} against {}, {}, {})".format(
            *(f("fdp", "gdp", mu, 10000, p) for mu in (0.5, 1.0, 2.0)),
            *(f("order", "gdp", mu, 10000, t) for mu in (0.5, 1.0, 2.0)),
        ),
        "at mu 0.5 and 1,000 ({} against {}), is level at mu 2 and 1,000 ({}, the "
        "same 100 per side)".format(
            f("fdp", "gdp", 0.5, 1000, p),
            f("fdp", "gdp", 0.5, 1000, t),
            f("fdp", "gdp", 2.0, 1000, p),
        ),
        "any mechanism, reach {} and {} (`fdp`); Steinke's bound, with counts planned "
        "for it, {} and {} (at a tenth per side {} and {}:".format(
            f("fdp", "lines", 1.0, 1000, p),
            f("fdp", "lines", 1.0, 10000, p),
            f("steinke", "lines", 1.0, 1000, p),
            f("steinke", "lines", 1.0, 10000, p),
            f("steinke", "lines", 1.0, 1000, t),
            f("steinke", "lines", 1.0, 10000, t),
        ),
        "the `ceiling` rows ({} and {})".format(
            f("ceiling", "gdp", 1.0, 1000, None), f("ceiling", "gdp", 1.0, 10000, None)
        ),
        "planned for Steinke's bound give {} and {} at mu 1 and 2".format(
            f("steinke", "lines", 1.0, 10000, p), f("steinke", "lines", 2.0, 10000, p)
        ),
    ]
    text = " ".join((ROOT / "docs" / "onerun.md").read_text().split())
    for sentence in sentences:
        assert sentence in text, sentence


def test_doc_quotes_the_zoo_record() -> None:
    record = json.loads((RECORDS / "onerun_zoo.json").read_text())
    pooled = record["figures"]["pooled"]
    assert pooled["audits"] >= 200
    assert pooled["upper_95_one_sided"] <= record["figures"]["alpha"]
    text = (ROOT / "docs" / "onerun.md").read_text()
    assert record["command"] in text
    quoted = re.search(r"(\d+) VIOLATIONs? of ([\d,]+) real one-run audits", text)
    assert quoted is not None
    assert int(quoted.group(1)) == pooled["violations"]
    assert int(quoted.group(2).replace(",", "")) == pooled["audits"]


@pytest.mark.slow
def test_onerun_zoo_smoke(benchmark_smoke: Callable[[str], Path]) -> None:
    rows = json.loads(benchmark_smoke("onerun_zoo.py").read_text())["rows"]
    assert rows[-1]["row"] == "pooled" and rows[-1]["audits"] == 1


def test_doc_quotes_the_power_rows() -> None:
    """docs/onerun.md's power table (planned counts against a tenth) is the record's."""
    figures = json.loads((RECORDS / "onerun_tightness.json").read_text())["figures"]
    cells: dict[tuple[float, int], dict[str, dict[str, object]]] = {}
    for p in figures["power"]:
        cells.setdefault((p["mu"], p["canaries"]), {})[p["counts"]] = p
    table = _doc_table("<!-- onerun_tightness power -->")
    assert len(table) == len(cells)
    for claim, canaries, true_mu, planned, refuted, tenth, refuted_tenth in table:
        cell = cells[(float(claim.split()[0]), int(canaries.replace(",", "")))]
        got = cell["planned"]
        assert float(true_mu) == got["true_mu"]
        assert planned == f"{got['per_side']:,}"
        assert refuted == f"{got['refuted']} of {got['audits']}"
        assert tenth == f"{cell['tenth']['per_side']:,}"
        assert (
            refuted_tenth == f"{cell['tenth']['refuted']} of {cell['tenth']['audits']}"
        )
