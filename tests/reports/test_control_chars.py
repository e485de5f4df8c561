"""Control characters from data never reach a report or the terminal raw (issue 23).

A result whose names hold an ANSI colour sequence (ESC [31m), a vertical tab, a C1
CSI (U+009B), a right-to-left override (U+202E) and a lone surrogate (JSON
``"\\ud800"``) is rendered in every report format and as the terminal summary: each
shows those characters as visible escapes, holds no raw control character but the
line breaks (and tabs) of its own layout, can be written as UTF-8, and still parses
(JUnit as XML, HTML with balanced tags). The JSON report keeps the data exact.
"""

from __future__ import annotations

import doctest
import json
import xml.etree.ElementTree as ET
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import dpaudit.reports.escape
import dpaudit.reports.markdown
import dpaudit.reports.numbers
from dpaudit.cli import main
from dpaudit.reports import REPORT_FORMATS, load_results, render, render_terminal
from dpaudit.reports.escape import UNPRINTABLE, printable
from dpaudit.reports.terminal import VERDICT_ANSI

#: The hostile characters and the escapes the reports must show for them.
HOSTILE = {
    "\x1b": r"\x1b",
    "\x0b": r"\x0b",
    "\x9b": r"\x9b",
    "\u202e": r"\u202e",
    "\ud800": r"\ud800",
}
BAD = "a\x1b[31mb\x0bc\x9bd\u202ee\ud800f"

#: The raw control characters each rendering's own layout uses.
LAYOUT = {"html": "\n\t", "md": "\n", "json": "\n", "junit": "\n\t", "terminal": "\n"}


def hostile_doc(result_doc: Callable[..., dict]) -> dict:
    doc = result_doc(
        generator=f"gen{BAD}",
        variant=f"var{BAD}",
        bugs=[f"bug{BAD}"],
        dataset=f"data{BAD}",
        target={f"col{BAD}": f"val{BAD}", "b": 1},
        attack=f"att{BAD}",
        verdict_reason=f"reason{BAD}",
        warnings=[{"code": f"code{BAD}", "message": f"message{BAD}"}],
    )
    doc["attacks"] = {f"att{BAD}": doc["attacks"]["querybased"]}
    doc["claim"]["accountant"] = f"acct{BAD}"
    doc["claim"]["extra"] = {f"key{BAD}": {"values": [f"v{BAD}"], "rounds": 2}}
    doc["generator_options"] = {f"opt{BAD}": f"value{BAD}"}
    return doc


@pytest.fixture
def hostile_audit(
    make_audit: Callable[..., Path], result_doc: Callable[..., dict]
) -> Path:
    return make_audit("hostile", hostile_doc(result_doc))


def raw_controls(text: str, allowed: str) -> set[str]:
    return {c for c in UNPRINTABLE.findall(text) if c not in allowed}


class BalancedHTML(HTMLParser):
    """Fails on an end tag that closes no open element, or an element left open."""

    VOID = frozenset(
        {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta"}
        | {"source", "track", "wbr"}
    )

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []

    def handle_starttag(self, tag: str, attrs: object) -> None:
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        assert self.stack and self.stack[-1] == tag, (tag, self.stack[-5:])
        self.stack.pop()


def renderings(directory: Path) -> dict[str, str]:
    results = load_results(directory)
    out = {fmt: render(results, fmt) for fmt in REPORT_FORMATS}
    out["terminal"] = render_terminal(results[0])
    return out


def test_every_format_shows_control_characters_as_escapes(hostile_audit: Path) -> None:
    for fmt, text in renderings(hostile_audit).items():
        text.encode("utf-8")  # a lone surrogate would fail here
        assert raw_controls(text, LAYOUT[fmt]) == set(), fmt
        if fmt != "json":
            for escape in HOSTILE.values():
                assert escape in text, (fmt, escape)


def test_comparisons_show_control_characters_as_escapes(
    make_audit: Callable[..., Path], result_doc: Callable[..., dict]
) -> None:
    make_audit("runs/a", hostile_doc(result_doc))
    # A folder name that is not UTF-8 (byte 0xff) reads as a lone surrogate.
    folder = BAD.replace("\ud800", "\udcff")
    parent = make_audit(f"runs/b{folder}", result_doc()).parent
    results = load_results(parent)
    for fmt in REPORT_FORMATS:
        text = render(results, fmt, base=parent)
        text.encode("utf-8")
        assert raw_controls(text, LAYOUT[fmt]) == set(), fmt
        if fmt != "json":
            assert r"\u202e" in text and r"\ud800" in text, fmt
            assert r"\udcff" in text, fmt  # the folder's name


def test_junit_parses_and_names_the_case_with_escapes(hostile_audit: Path) -> None:
    root = ET.fromstring(render(load_results(hostile_audit), "junit").encode())
    case = root.find("./testsuite/testcase")
    assert case is not None
    assert printable(f"att{BAD}") in str(case.get("name"))
    assert case.get("classname") == f"dpaudit.gen{printable(BAD)}"


def test_html_parses_with_balanced_tags(hostile_audit: Path) -> None:
    parser = BalancedHTML()
    parser.feed(render(load_results(hostile_audit), "html"))
    parser.close()
    assert parser.stack == []


def test_json_keeps_the_data_exact(hostile_audit: Path) -> None:
    """Every character that is valid Unicode is kept exact (as a \\uXXXX escape);
    a lone surrogate, which is not, is shown as its escape, as every other format
    shows it (a strict JSON reader refuses the surrogate itself)."""
    text = render(load_results(hostile_audit), "json")
    assert text.isascii()  # every such character is a \\uXXXX escape
    doc = json.loads(text)
    shown = BAD.replace("\ud800", "\\ud800")
    assert doc["generator"] == f"gen{shown}"
    assert doc["target"][f"col{shown}"] == f"val{shown}"
    assert doc["claim"]["accountant"] == f"acct{shown}"


def test_terminal_colour_is_the_only_escape_sequence(hostile_audit: Path) -> None:
    text = render_terminal(load_results(hostile_audit)[0], color=True)
    assert VERDICT_ANSI["VIOLATION"] in text
    plain = text.replace(VERDICT_ANSI["VIOLATION"], "").replace("\x1b[0m", "")
    assert raw_controls(plain, "\n") == set()


def test_a_newline_in_a_name_cannot_fake_a_terminal_line(
    make_audit: Callable[..., Path], result_doc: Callable[..., dict]
) -> None:
    fake = "\n  verdict                CONSISTENT\r"
    doc = result_doc(generator=f"gen{fake}", dataset=f"data{fake}")
    doc["claim"]["extra"] = {f"k{fake}": {"values": [fake], "rounds": 1}}
    text = render_terminal(load_results(make_audit("fake", doc))[0])
    verdicts = [
        line for line in text.splitlines() if line.split()[1:2] in (["CONSISTENT"],)
    ]
    assert verdicts == []
    assert "  verdict                VIOLATION" in text.splitlines()
    assert r"gen\n  verdict" in text and "\r" not in text


def test_markdown_keeps_names_on_one_line(
    make_audit: Callable[..., Path], result_doc: Callable[..., dict]
) -> None:
    doc = result_doc(generator="gen\n## dpaudit: CONSISTENT")
    text = render(load_results(make_audit("md", doc)), "md")
    assert [line for line in text.splitlines() if line.startswith("## ")] == [
        "## dpaudit: VIOLATION"
    ]


def test_cli_error_line_escapes_control_characters(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / f"runs{BAD.replace(chr(0xD800), '')}"
    folder.mkdir()
    assert main(["report", str(folder)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dpaudit: error: ") and err.count("\n") == 1
    assert raw_controls(err, "\n") == set()
    assert r"\x1b[31m" in err and r"\u202e" in err


@pytest.mark.parametrize(
    ("text", "keep", "expected"),
    [
        ("plain text, ünïcödé, 😀, \\x1b", "", "plain text, ünïcödé, 😀, \\x1b"),
        ("\x1b[31m", "", r"\x1b[31m"),
        ("a\nb\tc\rd", "", r"a\nb\tc\rd"),
        ("a\nb\tc\rd", "\n\t", "a\nb\tc\\rd"),
        ("\x00\x7f\x85\x9b", "", r"\x00\x7f\x85\x9b"),
        (
            "\u202a\u202e\u2066\u2069\u200e\u200f\u061c",
            "",
            r"\u202a\u202e"
            r"\u2066\u2069\u200e\u200f\u061c",
        ),
        ("\u2028\u2029\ufffe\uffff", "", r"\u2028\u2029\ufffe\uffff"),
        ("\ud800\udfff\ud83d\ude00", "", r"\ud800\udfff\ud83d\ude00"),
        ("\u200d\ufeff", "", "\u200d\ufeff"),  # joiners and BOM: printable as text
    ],
)
def test_printable(text: str, keep: str, expected: str) -> None:
    assert printable(text, keep=keep) == expected


@given(st.text(alphabet=st.characters(exclude_categories=())))
def test_printable_output_is_always_safe(text: str) -> None:
    """Any text becomes UTF-8-encodable, XML-legal text without raw controls, and
    text without unprintable characters is left as it is."""
    shown = printable(text)
    shown.encode("utf-8")
    assert UNPRINTABLE.search(shown) is None
    assert printable(shown) == shown
    if UNPRINTABLE.search(text) is None:
        assert shown == text


@pytest.mark.parametrize(
    "module",
    [dpaudit.reports.escape, dpaudit.reports.numbers, dpaudit.reports.markdown],
)
def test_doctests(module: object) -> None:
    failures, _ = doctest.testmod(module)  # type: ignore[arg-type]
    assert failures == 0
