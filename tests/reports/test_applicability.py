"""Reports show what applies: trace figures by the generator's design (teachers,
accountant), no "(reference)" for a plug-in, unfinished audits listed in a
comparison, and a print stylesheet."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dpaudit import cli
from dpaudit.reports import render
from dpaudit.reports.model import find_unfinished, load_result, load_results
from dpaudit.reports.traceview import TRACE_SOURCE, trace_view, variant_text

TEACHERLESS_CLAIM = {
    "epsilon": 1.0,
    "delta": 1e-5,
    "accountant": "none (nominal epsilon)",
    "trace": {
        "records_seen": [4, 4],
        "ledger": {"gap_counts": [0, 0, 0], "queries": 0},
        "non_private_events": ["data_bounds", "single_discriminator"],
        "teachers": 0,
        "accounted": False,
    },
}


def _teacherless(directory: Path) -> None:
    (directory / "trace" / "trace.json").write_text(
        json.dumps(TEACHERLESS_CLAIM), encoding="utf-8"
    )


def test_teacherless_trace_shows_no_teacher_or_epsilon_figures(
    make_audit: Callable[..., Path], result_doc: Callable[..., dict[str, Any]]
) -> None:
    directory = make_audit("original", result_doc(variant="original"), trace=True)
    html_with_teachers = render(load_results(directory), "html")
    assert "Records seen per teacher" in html_with_teachers
    assert "Epsilon over training iterations" in html_with_teachers
    _teacherless(directory)
    result = load_result(directory)
    view = trace_view(result)
    assert not view.teachers and not view.accountant and len(view.notes) == 2
    html = render([result], "html")
    assert "Records seen per teacher" not in html
    assert "Teacher losses" not in html
    assert "Epsilon over training iterations" not in html
    assert "no teacher partitions" in html and "No epsilon curve" in html
    assert "none (nominal epsilon)" in html
    # The traces are captioned as coming from the audit's first with-target round
    # (dpaudit.audit.games.two_world.rounds.trace_round), not from an extra fit.
    assert TRACE_SOURCE.startswith("These traces come from the audit's first round")
    assert "extra fit" not in TRACE_SOURCE
    assert "the audit&#39;s first round of the with-target world" in html


def test_variant_label_of_plugins_and_builtins(
    make_audit: Callable[..., Path], result_doc: Callable[..., dict[str, Any]]
) -> None:
    plugin = load_result(
        make_audit("plugin", result_doc(generator="mypkg.synth:Gen", variant=None))
    )
    builtin = load_result(
        make_audit("ref", result_doc(generator="pategan", variant=None))
    )
    assert variant_text(plugin) == "— (plug-in)"
    assert variant_text(builtin) == "— (reference implementation)"
    html = render([plugin], "html")
    row = re.search(r"<th>variant</th><td[^>]*>([^<]*)</td>", html)
    assert row is not None and row.group(1) == "— (plug-in)"
    compare = render([plugin, builtin], "md", compare=True)
    assert "— (plug-in)" in compare and "— (reference implementation)" in compare


def test_comparison_lists_unfinished_audits(
    tmp_path: Path,
    make_audit: Callable[..., Path],
    result_doc: Callable[..., dict[str, Any]],
    capsys: Any,
) -> None:
    make_audit("done", result_doc())
    stopped = tmp_path / "stopped"
    stopped.mkdir()
    (stopped / "audit.sqlite").write_bytes(b"")
    unfinished = find_unfinished(tmp_path)
    assert [u.path for u in unfinished] == ["stopped"]
    assert unfinished[0].status == "INTERRUPTED"
    results = load_results(tmp_path)
    html = render(results, "html", base=tmp_path, compare=True, unfinished=unfinished)
    assert "2 audit(s) under" in html and "1 did not finish" in html
    assert "Audits without a result" in html and "tag-INTERRUPTED" in html
    md = render(results, "md", base=tmp_path, compare=True, unfinished=unfinished)
    assert "1 of 2 audit(s) found a violation; 1 did not finish" in md
    assert "| **INTERRUPTED** | stopped |" in md
    doc = json.loads(
        render(results, "json", base=tmp_path, compare=True, unfinished=unfinished)
    )
    assert doc["unfinished"] == [
        {"path": "stopped", "status": "INTERRUPTED", "reason": unfinished[0].reason}
    ]
    assert [a["path"] for a in doc["audits"]] == ["done"]
    # Through the command: the interrupted audit is reported, not skipped.
    assert cli.main(["report", str(tmp_path), "--format", "md", "--out", "-"]) == 0
    captured = capsys.readouterr()
    assert "**INTERRUPTED**" in captured.out
    assert "1 audit(s) without a result" in captured.err
    # Only unfinished audits: still a report, saying so.
    (tmp_path / "done" / "result.json").unlink()
    assert cli.main(["report", str(tmp_path), "--format", "html", "--out", "-"]) == 0
    assert "INCOMPLETE" in capsys.readouterr().out


def test_html_has_a_print_stylesheet(
    make_audit: Callable[..., Path], result_doc: Callable[..., dict[str, Any]]
) -> None:
    html = render(load_results(make_audit("a", result_doc())), "html")
    assert "@media print" in html
    block = html[html.index("@media print") :]
    assert "@page" in block and "print-color-adjust: exact" in block
    assert "break-inside: avoid" in block and "overflow: visible" in block
