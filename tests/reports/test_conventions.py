"""Conventions of the field in every report: TPR at low FPR with its resolution, the
log-log ROC, the attack set, and the warning about a release too small."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dpaudit.audit.config.serial import to_json
from dpaudit.audit.games.two_world.analysis import (
    MIN_RELEASE_ROWS,
    release_warnings,
    tpr_at_low_fpr,
)
from dpaudit.audit.result.model import LowFprRate
from dpaudit.reports import load_result, render, render_terminal
from dpaudit.reports.plots import roc_chart


def test_tpr_at_low_fpr_is_the_roc_at_or_below_each_target() -> None:
    fpr = [0.0, 0.0, 0.004, 0.008, 0.012, 1.0]
    tpr = [0.0, 0.2, 0.3, 0.45, 0.6, 1.0]
    rates = tpr_at_low_fpr(fpr, tpr, n_non_members=250)  # resolution 0.4%
    assert rates == (
        LowFprRate(fpr=0.001, tpr=None, resolvable=False),
        LowFprRate(fpr=0.01, tpr=0.45, resolvable=True),
    )
    # With 1000 non-members (resolution 0.1%) both are resolvable; at 0.1% only
    # the points at FPR 0 count.
    rates = tpr_at_low_fpr(fpr, tpr, n_non_members=1000)
    assert [r.tpr for r in rates] == [0.2, 0.45]


def test_a_small_release_warns_and_names_the_fix() -> None:
    (warning,) = release_warnings(synthetic_rows=4, training_rows=4, explicit=False)
    assert warning.code == "small_release"
    assert "4 rows per round" in warning.message
    assert "|D| = 4" in warning.message
    assert f"--synthetic-rows {MIN_RELEASE_ROWS}" in warning.message
    assert (
        release_warnings(
            synthetic_rows=MIN_RELEASE_ROWS, training_rows=4, explicit=True
        )
        == ()
    )


@pytest.fixture(scope="module")
def small_release(
    tmp_path_factory: pytest.TempPathFactory,
    documents: tuple[Callable[..., dict[str, Any]], Any],
) -> Path:
    """A CONSISTENT-looking audit of a 5-row CSV that released 4 rows per round,
    with the default attack set."""
    doc = documents[0]()
    doc["synthetic_rows"] = 4
    doc["claim"] = dict(
        doc["claim"],
        extra={
            "noise_multiplier": {"mean": 1.1, "min": 1.0, "max": 1.2, "rounds": 40},
            "optimizer": {"values": ["adam"], "distinct": 1, "rounds": 40},
        },
    )
    doc["config"] = dict(doc["config"], attack="default")
    doc["warnings"] = to_json(
        release_warnings(synthetic_rows=4, training_rows=4, explicit=False)
    )
    attack = doc["attacks"]["querybased"]
    doc["attacks"] = {
        "querybased": attack,
        "moments": dict(attack, eps_emp=0.1),
        "fingerprint": dict(attack, eps_emp=0.0),
    }
    doc["estimator"] = dict(
        doc["estimator"],
        alpha=0.05 / 3,
        confidence=1 - 0.05 / 3,
        correction="bonferroni",
        n_attacks=3,
    )
    directory = tmp_path_factory.mktemp("small") / "tiny"
    directory.mkdir()
    (directory / "result.json").write_text(json.dumps(doc), encoding="utf-8")
    return directory


@pytest.fixture(scope="module")
def texts(small_release: Path) -> dict[str, str]:
    result = load_result(small_release)
    return {
        "html": render([result], "html"),
        "md": render([result], "md"),
        "terminal": render_terminal(result),
        "junit": render([result], "junit"),
        "json": render([result], "json"),
    }


def test_every_report_carries_the_warning(
    small_release: Path, texts: dict[str, str]
) -> None:
    assert [w.code for w in load_result(small_release).warnings] == ["small_release"]
    for fmt in ("html", "md", "terminal", "junit"):
        assert "4 rows per round" in texts[fmt], fmt
        assert "--synthetic-rows 100" in texts[fmt], fmt
    assert json.loads(texts["json"])["warnings"][0]["code"] == "small_release"


def test_reports_show_tpr_at_low_fpr_and_its_resolution(texts: dict[str, str]) -> None:
    md = texts["md"]
    assert "| TPR at FPR 0.1% | TPR at FPR 1% |" in md
    assert "| not resolvable | 1 |" in md
    assert "FPR resolution 1/400 = 0.25%" in md
    assert (
        "not resolvable with 400 non-member test rounds (0.1% needs at least 1000)"
    ) in md
    assert "TPR@0.1% not resolvable, TPR@1% 1" in texts["terminal"]
    assert "TPR at FPR 0.1%" in texts["html"]
    assert "FPR resolution 1/400" in texts["html"]


def test_the_header_names_the_attack_set(texts: dict[str, str]) -> None:
    expected = (
        "attacks querybased, moments, fingerprint (the default set; headline "
        "querybased)"
    )
    assert expected in texts["html"]
    assert expected in texts["terminal"]


def test_log_log_roc_is_drawn_beside_the_linear_one(
    small_release: Path, texts: dict[str, str]
) -> None:
    result = load_result(small_release)
    linear, log = roc_chart(result), roc_chart(result, log=True)
    assert linear is not None and log is not None and linear != log
    assert "log-log (low FPR)" in texts["html"]


def test_reports_show_the_generators_own_claim_keys(texts: dict[str, str]) -> None:
    for fmt in ("html", "md", "terminal"):
        text = texts[fmt].replace("\\_", "_")  # Markdown escapes underscores
        assert "noise_multiplier" in text, fmt
        assert "mean 1.1 (1 to 1.2) over 40 round(s)" in text, fmt
        assert "adam (in 40 round(s))" in text, fmt
    doc = json.loads(texts["json"])
    assert doc["claim"]["extra"]["optimizer"]["values"] == ["adam"]
