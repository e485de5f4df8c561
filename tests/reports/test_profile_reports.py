"""The claim's privacy profile in result.json and in every report: mu_emp, the test
point, the claimed profile, the regions violated, the trade-off plot."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from dpaudit.audit.result.model import AuditResult, json_keys
from dpaudit.reports import render
from dpaudit.reports.schema import schema_errors
from dpaudit.reports.terminal import render_terminal
from dpaudit.reports.tradeoff_plot import tradeoff_chart

POINT = {
    "mu_emp": 0.61,
    "mu_max_attainable": 4.52,
    "eps_of_mu_emp": 2.31,
    "fpr_upper": 0.031,
    "fnr_upper": 0.64,
    "refutation_ratio": 2.93,
    "regions_violated": ["gdp", "rdp@8"],
}


def _profile_doc(result_doc: Callable[..., dict[str, Any]]) -> dict[str, Any]:
    """A VIOLATION of the claimed profile only: eps_emp 0.8 <= claimed 1."""
    doc = result_doc(verdict_reason="VIOLATION: the bounded test point ... (gdp).")
    doc.update(POINT, eps_emp=0.8)
    doc["claim"] = {
        **doc.get("claim", {}),
        "epsilon": 1.0,
        "delta": 1e-5,
        "gdp_mu": 0.208,
        "zcdp_rho": None,
        "rdp": {"orders": [2.0, 8.0, 64.0], "epsilons": [0.043, 0.173, None]},
        "reference_rdp": None,
    }
    doc["power"].update(
        mu_max_attainable=4.52,
        profile_rounds_needed=25,
        mu_reference=0.208,
        mu_ceiling=0.05,
        mu_to_ceiling=12.2,
        eps_ceiling=0.02,
    )
    head = doc["attacks"][doc["attack"]]
    head.update(POINT, eps_emp=0.8)
    return doc


def test_profile_fields_round_trip_and_conform(
    result_doc: Callable[..., dict[str, Any]],
) -> None:
    doc = _profile_doc(result_doc)
    result = AuditResult.from_json(doc)
    assert result.regions_violated == ("gdp", "rdp@8")
    assert result.claim.gdp_mu == 0.208
    assert result.power is not None and result.power.profile_rounds_needed == 25
    again = result.to_json()
    assert schema_errors(again) == []
    json.dumps(again, allow_nan=False)
    assert AuditResult.from_json(again) == result
    assert again["claim"]["rdp"]["epsilons"][-1] is None
    assert {"mu_emp", "regions_violated", "fpr_upper"} <= json_keys(AuditResult)


def test_every_report_shows_mu_emp_and_the_violated_region(
    result_doc: Callable[..., dict[str, Any]],
) -> None:
    result = AuditResult.from_json(_profile_doc(result_doc))
    texts = {
        "terminal": render_terminal(result),
        "md": render([result], "md"),
        "html": render([result], "html"),
        "junit": render([result], "junit"),
        "json": render([result], "json"),
    }
    texts["md"] = texts["md"].replace("\\_", "_")  # Markdown escapes underscores
    for name, text in texts.items():
        assert "mu_emp" in text, name
        # The RDP orders as one span (json keeps one name per region).
        assert ("rdp@8" if name == "json" else "order 8") in text, name
    for name in ("terminal", "md", "html"):
        # A violation of the profile alone is not said to exceed the claimed epsilon.
        text = " ".join(texts[name].split())
        assert "leaks more than its claimed privacy profile allows" in text, name
        assert "exceeds the claimed epsilon" not in text, name
        assert "eps_of_mu_emp" in text and "not a bound" in text, name
    assert "Trade-off: the claimed regions and the test point" in texts["html"]


def test_tradeoff_chart_draws_each_claimed_region(
    result_doc: Callable[..., dict[str, Any]],
) -> None:
    svg = tradeoff_chart(AuditResult.from_json(_profile_doc(result_doc)))
    assert svg is not None and svg.startswith("<svg")
    assert tradeoff_chart(AuditResult.from_json(result_doc())) is None
