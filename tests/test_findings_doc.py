"""docs/findings.md: every entry carries the parts a maintainer needs, and its figures
match the records they come from.

Each entry (``## N. ...``) must name the library's file and line (``name.py:LINE``), a
standalone reproduction script under docs/findings/ that exists, parses and imports no
dpaudit, the dpaudit command, a control, and a draft upstream report. Each record of
docs/findings/records.json (written by docs/findings/record.py from an audit's
result.json) must be cited by the doc, with its verdict and eps_emp as measured. Reads
files only: milliseconds.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "findings.md"
FOLDER = ROOT / "docs" / "findings"
RECORDS = FOLDER / "records.json"


def entries() -> dict[int, str]:
    text = DOC.read_text()
    parts = re.split(r"^## (\d+)\. ", text, flags=re.M)
    return {int(parts[i]): parts[i + 1] for i in range(1, len(parts), 2)}


def test_the_doc_has_its_eleven_entries() -> None:
    assert sorted(entries()) == list(range(1, 12))


@pytest.mark.parametrize("number", range(1, 12))
def test_each_entry_has_every_part(number: int) -> None:
    body = entries()[number]
    assert re.search(r"\b[\w/]+\.py:\d+", body), "no library file:line"
    for part in ("**Reproduction**", "**Control", "**Upstream report (draft)"):
        assert part in body, f"entry {number} lacks {part}"
    assert re.search(r"\*\*Commands?\b", body) or "`dpaudit audit" in body
    scripts = re.findall(r"docs/findings/(\d\d_\w+\.py)", body)
    assert scripts, f"entry {number} names no reproduction script"
    for name in scripts:
        assert (FOLDER / name).is_file(), name
    report = body.split("**Upstream report (draft)", 1)[1]
    assert "Title:" in report or re.search(r"finding \d+'s report", report)


def test_each_script_is_standalone() -> None:
    scripts = sorted(FOLDER.glob("[0-9][0-9]_*.py"))
    assert len(scripts) >= 10
    for path in scripts:
        tree = ast.parse(path.read_text())
        assert ast.get_docstring(tree), path.name
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            assert not any(n.split(".")[0] == "dpaudit" for n in names), path.name


def test_each_doc_command_writes_its_own_folder() -> None:
    outs = re.findall(r"--out (audits/[\w./-]+)", DOC.read_text())
    assert outs and len(outs) == len(set(outs)), "two commands share an --out"


def test_the_records_are_quoted_as_measured() -> None:
    records = json.loads(RECORDS.read_text())
    texts = entries()
    assert records
    for key, record in records.items():
        for field in ("command", "date", "dpaudit", "library", "figures"):
            assert record.get(field), (key, field)
        figures = record["figures"]
        entry = texts[int(key.split("-")[0])]
        assert f"`{key}`" in entry, f"record {key} is not cited by its entry"
        assert figures["verdict"] in entry
        assert f"{figures['eps_emp']:.2f}" in entry, (key, figures["eps_emp"])
        out = re.search(r"--out (\S+)", record["command"])
        assert out and out.group(1).startswith("audits/findings-"), key


def test_other_pages_quote_the_findings_records_as_measured() -> None:
    """A line of another page that cites a record of docs/findings/records.json
    (``record `KEY```) states its verdict and its eps_emp (to 2 or 3 decimals)."""
    records = json.loads(RECORDS.read_text())
    cited = 0
    for page in sorted((ROOT / "docs").glob("*.md")):
        if page == DOC:
            continue
        for line in page.read_text().splitlines():
            for key in re.findall(r"records? `([\w-]+)`", line):
                if key not in records:
                    continue
                cited += 1
                figures = records[key]["figures"]
                eps = figures["eps_emp"]
                assert figures["verdict"] in line, (page.name, key)
                assert f"{eps:.2f}" in line or f"{eps:.3f}" in line, (page.name, key)
    assert cited
