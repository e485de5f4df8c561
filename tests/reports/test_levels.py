"""One confidence statement everywhere: every rendering of one result states the same
overall and per-attack levels, each named, and the same attainable maximum."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dpaudit.audit.games.estimate import attainable_maximum, per_attack_alpha
from dpaudit.reports import load_result, render, render_terminal
from dpaudit.reports.plots import epsilon_bars

ALPHA = 0.05
N_ATTACKS = 3


def visible_text(html: str) -> str:
    """The page's text, roughly: tags, styles and SVG removed, spaces collapsed."""
    html = re.sub(r"<svg.*?</svg>", " ", html, flags=re.S)
    html = re.sub(r"<style.*?</style>", " ", html, flags=re.S)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def three_attack_doc(
    documents: tuple[Callable[..., dict[str, Any]], Any],
) -> dict[str, Any]:
    """A result of the default set (three attacks, Bonferroni), as the analysis
    writes it: each attack's bound and attainable maximum at alpha / 3."""
    top = attainable_maximum(400, 400, delta=1e-5, alpha=ALPHA, n_attacks=N_ATTACKS)
    doc = documents[0]()
    alpha = per_attack_alpha(ALPHA, N_ATTACKS)
    base = dict(
        doc["attacks"]["querybased"], eps_emp=top, eps_max_attainable=top, alpha=alpha
    )
    doc["attacks"] = {
        "querybased": base,
        "moments": dict(base, eps_emp=0.4, auc=0.6),
        "fingerprint": dict(base, eps_emp=0.0, auc=0.5),
    }
    doc["eps_emp"] = doc["eps_max_attainable"] = top
    doc["power"] = dict(doc["power"], eps_max_attainable=top)
    doc["estimator"] = dict(
        doc["estimator"],
        alpha=alpha,
        confidence=1 - alpha,
        correction="bonferroni",
        n_attacks=N_ATTACKS,
        overall_alpha=ALPHA,
        overall_confidence=1 - ALPHA,
    )
    doc["verdict_reason"] = None
    return doc


@pytest.fixture(scope="module")
def renderings(
    tmp_path_factory: pytest.TempPathFactory, documents: tuple[Any, Callable[..., Path]]
) -> dict[str, str]:
    directory = documents[1](
        tmp_path_factory.mktemp("levels") / "audit", three_attack_doc(documents)
    )
    result = load_result(directory)
    return {
        "html": visible_text(render([result], "html")),
        "md": render([result], "md"),
        "terminal": render_terminal(result),
        "junit": render([result], "junit"),
        "json": render([result], "json"),
    }


def test_the_two_levels_and_their_names() -> None:
    # 1 - 0.05 = 95% overall; 1 - 0.05 / 3 = 98.3% per attack.
    assert attainable_maximum(
        400, 400, delta=1e-5, alpha=0.05, n_attacks=3
    ) == pytest.approx(4.44, abs=0.005)


@pytest.mark.parametrize("fmt", ["html", "md", "terminal", "junit"])
def test_every_text_format_states_both_levels_named(
    renderings: dict[str, str], fmt: str
) -> None:
    text = renderings[fmt]
    assert "95% overall confidence" in text
    assert re.search(r"98\.3% per[- ]attack", text)
    # Every percentage stated as a level is one of the two, and named.
    levels = re.findall(
        r"(\d+(?:\.\d+)?)%[ ,]+(overall|per[- ]attack|confidence)", text
    )
    assert levels, fmt
    for value, name in levels:
        assert name != "confidence", f"{fmt}: an unnamed level {value}% confidence"
        expected = "95" if name == "overall" else "98.3"
        assert value == expected, (fmt, value, name)


@pytest.mark.parametrize("fmt", ["html", "md", "terminal", "junit"])
def test_every_text_format_states_the_same_attainable_maximum(
    renderings: dict[str, str], fmt: str
) -> None:
    text = renderings[fmt]
    stated = re.findall(
        r"(?:attainable maximum|max attainable|eps_max_attainable"
        r"|largest eps_emp this test size can show)[^0-9]{0,60}"
        r"(\d+\.\d+)(?![\d%])",
        text,
    )
    assert stated, fmt
    # Written with two decimals (JUnit properties carry six digits: the same number).
    assert {round(float(s), 2) for s in stated} == {4.44}, (fmt, stated)


def test_the_json_records_both_levels_and_one_maximum(
    renderings: dict[str, str],
) -> None:
    doc = json.loads(renderings["json"])
    est = doc["estimator"]
    assert est["overall_alpha"] == pytest.approx(ALPHA)
    assert est["overall_confidence"] == pytest.approx(1 - ALPHA)
    assert est["alpha"] == pytest.approx(ALPHA / N_ATTACKS)
    assert est["confidence"] == pytest.approx(1 - ALPHA / N_ATTACKS)
    tops = {
        doc["eps_max_attainable"],
        doc["power"]["eps_max_attainable"],
        *(a["eps_max_attainable"] for a in doc["attacks"].values()),
    }
    assert len(tops) == 1 and round(tops.pop(), 2) == 4.44


def test_the_bar_chart_names_both_levels(tmp_path: Path, documents: Any) -> None:
    result = load_result(documents[1](tmp_path / "a", three_attack_doc(documents)))
    bars = {name: label for name, _, label, _ in epsilon_bars(result)}
    (emp,) = [n for n in bars if n.startswith("eps_emp")]
    assert "95% overall" in emp and "98.3% per attack" in emp
    assert bars["max attainable\n(this test size)"] == "4.44"


def test_an_older_result_without_overall_level_reads_it_from_the_split(
    tmp_path: Path, documents: Any
) -> None:
    doc = three_attack_doc(documents)
    for key in ("overall_alpha", "overall_confidence"):
        del doc["estimator"][key]
    result = load_result(documents[1](tmp_path / "old", doc))
    assert result.estimator.overall_alpha == pytest.approx(ALPHA)
    assert "95% overall confidence (98.3% per attack" in render_terminal(result)
