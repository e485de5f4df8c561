"""``dpaudit report``: argument parsing, outputs, errors."""

from __future__ import annotations

import argparse
import json
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

import pytest

from dpaudit.commands import report as report_command
from dpaudit.errors import InvalidParameterError
from dpaudit.reports import write_atomic


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="dpaudit")
    subparsers = parser.add_subparsers(dest="command", required=True)
    report_command.add_parser(subparsers)
    return parser.parse_args(argv)


def test_parser_defaults() -> None:
    args = parse(["report", "runs/a"])
    assert args.dir == Path("runs/a") and args.format == "html" and args.out is None
    assert args.func is report_command.run


def test_parser_refuses_unknown_format() -> None:
    with pytest.raises(SystemExit):
        parse(["report", "x", "--format", "pdf"])


@pytest.mark.parametrize(
    ("fmt", "name"),
    [("md", "report.md"), ("json", "report.json"), ("junit", "junit.xml")],
)
def test_default_output_inside_the_audit_directory(
    audit_dir: Path, fmt: str, name: str
) -> None:
    assert report_command.run(parse(["report", str(audit_dir), "--format", fmt])) == 0
    text = (audit_dir / name).read_text(encoding="utf-8")
    if fmt == "json":
        assert json.loads(text)["verdict"] == "VIOLATION"
    elif fmt == "junit":
        assert ET.fromstring(text).find("./testsuite/testcase/failure") is not None
    else:
        assert text.startswith("## dpaudit: VIOLATION")
    leftovers = [p.name for p in audit_dir.iterdir() if p.name.endswith(".tmp")]
    assert leftovers == []


def test_html_to_explicit_path(audit_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "deep" / "r.html"
    assert report_command.run(parse(["report", str(audit_dir), "--out", str(out)])) == 0
    assert "VIOLATION" in out.read_text(encoding="utf-8")


def test_stdout(audit_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report_command.run(
        parse(["report", str(audit_dir), "--format", "md", "--out", "-"])
    )
    assert capsys.readouterr().out.startswith("## dpaudit: VIOLATION")
    assert not (audit_dir / "report.md").exists()


def test_parent_directory_gives_a_comparison(
    make_audit: Callable[..., Path],
    result_doc: Callable[..., dict],
    consistent_doc: Callable[..., dict],
) -> None:
    make_audit("runs/a", result_doc())
    parent = make_audit("runs/b", consistent_doc()).parent
    assert report_command.run(parse(["report", str(parent), "--format", "md"])) == 0
    assert (
        (parent / "report.md")
        .read_text(encoding="utf-8")
        .startswith("## dpaudit comparison")
    )


def test_missing_directory_is_bad_input(tmp_path: Path) -> None:
    with pytest.raises(InvalidParameterError, match="`DIR` must exist"):
        report_command.run(parse(["report", str(tmp_path / "nope")]))


def test_invalid_result_is_bad_input(tmp_path: Path) -> None:
    (tmp_path / "result.json").write_text('{"schema_version": 7}', encoding="utf-8")
    with pytest.raises(InvalidParameterError, match=r"must be one of 1, 2.*Got 7"):
        report_command.run(parse(["report", str(tmp_path)]))


def test_out_may_not_be_a_directory(audit_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(InvalidParameterError, match="`--out` must be a file path"):
        report_command.run(parse(["report", str(audit_dir), "--out", str(tmp_path)]))


def test_write_atomic_replaces_and_cleans_up(tmp_path: Path) -> None:
    path = tmp_path / "a" / "f.txt"
    write_atomic(path, "one")
    write_atomic(path, "two")
    assert path.read_text(encoding="utf-8") == "two"
    assert sorted(p.name for p in path.parent.iterdir()) == ["f.txt"]


def test_through_the_dpaudit_command(
    audit_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from dpaudit import cli

    assert cli.main(["report", str(audit_dir), "--format", "md", "--out", "-"]) == 0
    assert capsys.readouterr().out.startswith("## dpaudit: VIOLATION")
    # Bad input: a message and exit code 2, no traceback.
    assert cli.main(["report", str(tmp_path / "missing")]) == 2
    assert "`DIR` must exist" in capsys.readouterr().err
