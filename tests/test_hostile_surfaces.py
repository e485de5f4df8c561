"""Hostile input on the surfaces added since the last battery (issue 51), beside
tests/test_input_battery.py, tests/test_malformed_inputs.py and tests/test_failures.py
(checked alike: one line, exit 2 or 3, no traceback, never "unexpected ... report
it", nothing half-written, within seconds).

The defects found by the battery of 6cf300e, each with its case: a plug-in's claim of
epsilon 1e308 (decided, and reported in every format), HTML payloads in every name of
a result (no raw tag in the Markdown, HTML or JUnit report), a lone surrogate (shown
as its escape in every format, JSON included), transcripts with a repeated cell, one
larger than the memory plan allows, and a million cells. The wire format's fuzz test
is tests/generators/test_wire_fuzz.py.
"""

from __future__ import annotations

import copy
import csv
import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dpaudit.cli import main
from dpaudit.errors import InvalidParameterError
from dpaudit.reports import load_results

PAYLOADS = (
    "<img src=x onerror=alert(1)>",
    "<svg onload=alert(2)>",
    "<script>alert(3)</script>",
)
#: The raw beginnings of the payloads' tags (none may reach a report).
RAW_TAGS = re.compile(r"<img src=x|<svg onload|<script>", re.IGNORECASE)
TOY = ("--rounds", "5", "--synthetic-rows", "5", "--jobs", "1", "--quiet")


def _one_line(capsys: pytest.CaptureFixture[str], code: int, codes=(2,)) -> str:
    err = capsys.readouterr().err
    assert code in codes, err
    assert "Traceback" not in err and "unexpected" not in err, err
    assert "report it" not in err and err.count("\n") == 1, err
    return err


# ------------------------------------------------- a claim of epsilon 1e308

CLAIM_PLUGIN = """
class Gen:
    def __init__(self, *, epsilon, delta, claimed=1e308):
        self.claimed = claimed

    def fit(self, data, *, domain, seed):
        self.data = data
        self.privacy_claim = {"epsilon": self.claimed, "delta": 1e-5}
        return self

    def sample(self, n, *, seed):
        return self.data.sample(n, replace=True, random_state=seed % 2**32
                                ).reset_index(drop=True)
"""


@pytest.fixture
def plugin_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "claim_plugin.py").write_text(CLAIM_PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("claimed", ["1e308", "5e-324"])
def test_an_extreme_claim_is_decided_and_reported(
    capsys, plugin_folder: Path, claimed: str
) -> None:
    """A claim of 1e308 without a profile ended in "unexpected OverflowError" (the
    calibrated test's interval of the claim, then the report's plots): decided now,
    and every report format renders it."""
    out = plugin_folder / "out"
    argv = ["audit", "--generator", "claim_plugin:Gen", "--dataset", "worst-case"]
    code = main([*argv, *TOY, "--option", f"claimed={claimed}", "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    doc = json.loads((out / "result.json").read_text())
    assert doc["eps_claimed"] == float(claimed)
    assert doc["verdict"] in ("INCONCLUSIVE", "CONSISTENT", "VIOLATION")
    assert len(doc["verdict_reason"]) < 600  # 1e+308, not 309 digits
    for fmt in ("html", "md", "junit", "json") if claimed == "1e308" else ("md",):
        report = plugin_folder / f"report.{fmt}"
        code = main(["report", str(out), "--format", fmt, "--out", str(report)])
        assert code == 0, capsys.readouterr().err
        assert report.stat().st_size > 0


# ------------------------------------------- HTML payloads in every name


@pytest.fixture(scope="module")
def payload_audit(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished audit whose column names, categories and dataset name are HTML
    payloads (the copy generator; about two seconds)."""
    folder = tmp_path_factory.mktemp("payloads")
    columns = [PAYLOADS[0], PAYLOADS[1], "c&amp;" + PAYLOADS[2]]
    categories = [PAYLOADS[2], "x" + PAYLOADS[0]]
    rows = [[categories[i % 2 if i in (2, 4) else 0], i % 2, i // 3] for i in range(6)]
    data = folder / f"{PAYLOADS[1]}.csv"
    with data.open("w", newline="") as fh:
        csv.writer(fh).writerows([columns, *rows])
    domain = {
        "columns": [
            {"name": columns[0], "kind": "categorical", "categories": categories},
            {"name": columns[1], "kind": "binary"},
            {"name": columns[2], "kind": "binary"},
        ]
    }
    (folder / "d.json").write_text(json.dumps(domain))
    out = folder / "audit"
    argv = ["audit", "--generator", "copy", "--dataset", str(data), "--domain"]
    code = main(
        [*argv, str(folder / "d.json"), "--target", "2", *TOY, "--out", str(out)]
    )
    assert code == 0
    return out


def _string_leaves(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _string_leaves(item, (*path, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _string_leaves(item, (*path, i))
    elif isinstance(value, str):
        yield path


def _set(doc: Any, path: tuple[Any, ...], value: Any) -> None:
    for part in path[:-1]:
        doc = doc[part]
    doc[path[-1]] = value


def _loads(folder: Path, doc: dict[str, Any]) -> bool:
    (folder / "result.json").write_text(json.dumps(doc))
    try:
        load_results(folder)
    except InvalidParameterError:
        return False
    return True


def test_reports_of_html_payloads_in_every_name_hold_no_raw_tag(
    capsys, tmp_path: Path, payload_audit: Path
) -> None:
    """Every string of the result that a result may hold (all but the enumerations,
    which the loader refuses edited) gets a payload; the Markdown, HTML and JUnit
    reports hold none of the tags raw (the Markdown wrote ``\\<img``, which
    renderers that do not follow CommonMark show as a tag)."""
    folder = tmp_path / "audit"
    shutil.copytree(payload_audit, folder)
    base = json.loads((payload_audit / "result.json").read_text())
    doc = copy.deepcopy(base)
    changed = 0
    for i, path in enumerate(_string_leaves(base)):
        trial = copy.deepcopy(doc)
        _set(trial, path, f"{path[-1]}{PAYLOADS[i % 3]}")
        if _loads(folder, trial):
            doc, changed = trial, changed + 1
    doc["config"]["generator_options"] = {PAYLOADS[0]: PAYLOADS[1]}
    assert _loads(folder, doc)
    assert changed >= 12, changed  # names, reasons, warnings, paths
    for fmt in ("md", "html", "junit"):
        report = tmp_path / f"report.{fmt}"
        code = main(["report", str(folder), "--format", fmt, "--out", str(report)])
        assert code == 0, capsys.readouterr().err
        text = report.read_text(encoding="utf-8")
        if fmt == "md":  # the reproduction's fenced code block is text to every
            text = re.sub(r"```\n[^`\n]*\n```", "", text)  # renderer
            assert "&lt;img src=x" in text
        found = RAW_TAGS.search(text)
        assert found is None, (fmt, text[max(0, found.start() - 80) : found.end()])


def test_a_lone_surrogate_is_shown_as_its_escape_in_every_format(
    capsys, tmp_path: Path, payload_audit: Path
) -> None:
    """A result.json with a lone surrogate (edited by hand, or by an older dpaudit):
    every format shows the same escape, JSON included (it wrote the surrogate,
    which strict JSON readers refuse); bytes that are not UTF-8 are refused by all."""
    folder = tmp_path / "audit"
    shutil.copytree(payload_audit, folder)
    result = folder / "result.json"
    result.write_text(result.read_text().replace('"copy"', '"g\\ud800"', 1))
    for fmt in ("md", "html", "junit", "json"):
        report = tmp_path / f"report.{fmt}"
        code = main(["report", str(folder), "--format", fmt, "--out", str(report)])
        assert code == 0, capsys.readouterr().err
        text = report.read_text(encoding="utf-8")
        assert "\ud800" not in text
        if fmt == "json":
            assert json.loads(text)["generator"] == "g\\ud800"
            assert "\\ud800" not in text.replace("\\\\ud800", "")
        else:  # shown as its escape (Markdown escapes the backslash once more)
            assert re.search(r"g\\+ud800", text), fmt
    capsys.readouterr()
    result.write_bytes(result.read_bytes().replace(b"g\\ud800", b"g\xff", 1))
    for fmt in ("md", "html", "junit", "json"):
        report = tmp_path / f"bytes.{fmt}"
        code = main(["report", str(folder), "--format", fmt, "--out", str(report)])
        assert "not UTF-8 text" in _one_line(capsys, code)
        assert not report.exists()


# ------------------------------------------------------------ transcripts

TRANSCRIPT_PLUGIN = """
import numpy as np

class Gen:
    def __init__(self, *, epsilon, delta, cells=1):
        self.cells = int(cells)

    def fit(self, data, *, domain, seed):
        self.privacy_claim = {"epsilon": 1.0, "delta": 1e-5}
        n = self.cells
        cells = [[1]] * n
        noisy = np.random.default_rng(seed).normal(0, 4.0, size=n)
        self.privacy_transcript = [{"columns": ["a"], "cells": cells,
                                    "noisy": noisy, "noise": {"gaussian": 4.0}}]
        self.data = data
        return self

    def sample(self, n, *, seed):
        return self.data.head(n)
"""


@pytest.fixture
def transcript_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "transcript_plugin.py").write_text(TRANSCRIPT_PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _transcript_audit(*options: str) -> list[str]:
    argv = ["audit", "--generator", "transcript_plugin:Gen", "--dataset", "worst-case"]
    flags = [f for option in options for f in ("--option", option)]
    return [*argv, "--release", "transcript", *TOY, *flags, "--out", "out"]


def test_a_repeated_cell_is_refused(capsys, transcript_folder: Path) -> None:
    code = main(_transcript_audit("cells=2"))
    err = _one_line(capsys, code)
    assert "`privacy_transcript`[0]['cells'][1] repeats ['cells'][0]" in err
    assert not (transcript_folder / "out" / "result.json").exists()


@pytest.mark.slow
def test_a_million_repeated_cells_are_refused_in_seconds(
    capsys, transcript_folder: Path
) -> None:
    """One measurement repeated a million times ran 230 s, then ended in
    "unexpected OverflowError" (the exact epsilon's grid, then the ceiling's
    binomial): refused at the first round now (its time is measured, not asserted:
    about 20 s here on a loaded machine, worker start included)."""
    code = main(_transcript_audit("cells=1000000"))
    assert "repeats ['cells'][0]" in _one_line(capsys, code)


def test_a_transcript_over_the_memory_plan_is_refused_at_the_first_round(
    capsys, transcript_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A transcript larger than the memory available allows a group of them: one
    line naming its size and the plan's, before any of its cells is checked and
    before the round is stored."""
    from dpaudit.audit.games import memory

    free = memory.BASE_BYTES + 64 * 2**20  # the plan of 5 rounds fits
    monkeypatch.setattr(
        memory, "system_limit", lambda: memory.Limit(bytes=free, source="test")
    )
    code = main(_transcript_audit("cells=300000"))  # about 90 MiB
    err = _one_line(capsys, code)
    assert "more than the audit's memory plan allows" in err
    assert not (transcript_folder / "out" / "result.json").exists()
