"""User data is escaped in every format: a <script> in a column name or a target
value (or any other string from a result) never reaches a report as markup."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

import pytest

from dpaudit.reports import load_results, render

PAYLOAD = "<script>alert('x')</script>"
# Also mathtext: matplotlib must draw "$...$" in a name literally, not fail on it.
ATTACK = PAYLOAD + r" $\alpha_{x$"


def hostile_doc(result_doc: Callable[..., dict]) -> dict:
    doc = result_doc(
        target={PAYLOAD: 1, "b": PAYLOAD, "c": "$x^2$ & <b>bold</b>"},
        generator=f"mypkg.evil:{PAYLOAD}",
        variant=PAYLOAD,
        bugs=[PAYLOAD],
        dataset=f"{PAYLOAD}.csv",
        attack=ATTACK,
    )
    doc["attacks"] = {ATTACK: doc["attacks"]["querybased"]}
    doc["config"]["data_dir"] = PAYLOAD
    doc["config"]["generator_options"] = {PAYLOAD: PAYLOAD}
    doc["claim"]["accountant"] = PAYLOAD
    return doc


@pytest.fixture
def hostile_results(
    make_audit: Callable[..., Path], result_doc: Callable[..., dict]
) -> tuple:
    directory = make_audit("hostile", hostile_doc(result_doc))
    return load_results(directory)


def test_html_escapes_script_in_column_name_and_target_value(
    hostile_results: tuple,
) -> None:
    html = render(hostile_results, "html")
    assert "<script" not in html.lower()
    assert "<b>bold</b>" not in html
    assert "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;" in html
    # The target table shows the hostile column name and value, as text.
    head = html[html.index("<h2>Target record</h2>") :]
    assert head.count("&lt;script&gt;") >= 2


def test_comparison_html_escapes(
    make_audit: Callable[..., Path], result_doc: Callable[..., dict]
) -> None:
    make_audit("runs/a", hostile_doc(result_doc))
    parent = make_audit("runs/b", result_doc()).parent
    html = render(load_results(parent), "html", base=parent)
    assert "<script" not in html.lower()
    assert "&lt;script&gt;" in html


def test_markdown_escapes(hostile_results: tuple) -> None:
    md = render(hostile_results, "md")
    # Every `<` that could open a tag is written &lt;, as the HTML report writes it
    # (a backslash escape is not one to every Markdown renderer), but in the
    # reproduction's code block (one line, no backtick), where it is text.
    prose = re.sub(r"```\n[^`\n]*\n```", "", md)
    assert prose.count("```") == 0 and md.count("```") == 2
    assert not re.search(r"<[A-Za-z/!?]", prose)
    assert "&lt;script>" in md and "\\<script>" not in md


def test_junit_escapes_and_parses(hostile_results: tuple) -> None:
    xml = render(hostile_results, "junit")
    root = ET.fromstring(xml)
    failure = root.find("./testsuite/testcase/failure")
    assert failure is not None
    assert "<script" not in xml  # escaped by ElementTree
    assert PAYLOAD in root.find("./testsuite/testcase").get("name")  # round-trips


def test_json_keeps_data_as_data(hostile_results: tuple) -> None:
    import json

    doc = json.loads(render(hostile_results, "json"))
    assert doc["target"][PAYLOAD] == 1


def test_control_characters_do_not_break_junit(
    make_audit: Callable[..., Path], result_doc: Callable[..., dict]
) -> None:
    doc = result_doc(generator="gen\x00\x1b[31m")
    xml = render(load_results(make_audit("ctrl", doc)), "junit")
    ET.fromstring(xml)
